"""Launch blocks run what the estimate sized: its optimizer, the precision the GPU really runs, the model's own RoPE
and norm constants, and a ZeRO-3 save that fits in host RAM.

Before: every launch named AdamW whatever optimizer was sized (and the memory assumption said "16 B/param for
AdamW" for SGD); an A100 fp8 request got Megatron's --fp8-format (Transformer Engine refuses fp8 below SM89) while
torchtitan's fp8 block had no float8 settings; DeepSeek's Megatron arguments had no YaRN or norm epsilon and its
presets were flagged "derived from a parameter count"; a 405B ZeRO-3 offload plan gathered the whole 16-bit model
into rank 0's host RAM at each save.
"""

from __future__ import annotations

from typing import Any

import pytest

from app.estimator.hardware import get_gpu
from app.estimator.memory import MASTER_BYTES, STATE_FP32_BYTES, estimate_memory, memory_breakdown
from app.estimator.params import count_params
from app.estimator.presets import get_preset
from app.estimator.specs import Cluster, LoraSpec, Plan, Workload
from app.planner.launch import (
    DEEPSPEED_OPTIMIZER,
    MEGATRON_OPTIMIZER,
    TORCHTITAN_OPTIMIZER,
    TRAINER_OPTIM,
    consolidated_save_bytes,
    launch_configs,
    optimizer_name,
)
from app.planner.stacks import STACKS, runs
from tests.planner.test_launch_schemas import TORCHTITAN_KEYS, _dotted, _overrides, _parsed

GIB = 1024**3
OPTIMIZERS = ("adamw", "adamw_8bit", "lion", "sgd", "adafactor")


def _full(optimizer: str = "adamw", precision: str = "bf16") -> Workload:
    return Workload(task="full_finetune", seq_len=4096, tokens=1e9, optimizer=optimizer, precision=precision)  # type: ignore[arg-type]


def _cpt(optimizer: str = "adamw", precision: str = "bf16") -> Workload:
    """Continued pretraining: Megatron-LM's pretrain_gpt.py for every family (a bf16 full fine-tune of a model with a
    Megatron-Bridge SFT recipe runs the recipe)."""
    return Workload(task="continued_pretrain", seq_len=4096, tokens=1e9, optimizer=optimizer, precision=precision)  # type: ignore[arg-type]


def _launch(stack: str, preset: str, workload: Workload, plan: Plan, **kw: Any) -> dict[str, Any]:
    model = get_preset(preset).model
    nodes = max(1, plan.gpus // 8)
    return launch_configs(stack, model, workload, plan, nodes, min(8, plan.gpus), 256, **kw).get(stack, {})  # type: ignore[arg-type]


# --- the optimizer ---------------------------------------------------------------------------------


@pytest.mark.parametrize("optimizer", ["sgd", "adafactor", "lion", "adamw_8bit"])
def test_deepspeed_trainer_names_the_sized_optimizer(optimizer: str) -> None:
    config = _launch("deepspeed", "llama-3.1-8b", _full(optimizer), Plan(dp=8, zero_stage=3))
    assert config["trainer"]["optim"] == TRAINER_OPTIM[optimizer] != "adamw_torch"
    assert "optimizer" not in config["ds_config"]  # the Trainer builds it (deepspeed_optim_sched)


def test_deepspeed_offload_names_deepspeeds_cpu_optimizer_and_runs_no_other() -> None:
    plan = Plan(dp=8, zero_stage=3, offload="optimizer")
    adamw = _launch("deepspeed", "llama-3.1-8b", _full("adamw"), plan)["ds_config"]
    assert adamw["optimizer"]["type"] == "AdamW" and adamw["optimizer"]["params"]["lr"] == "auto"
    lion = _launch("deepspeed", "llama-3.1-8b", _full("lion"), plan)["ds_config"]
    assert lion["optimizer"]["type"] == "Lion" and "eps" not in lion["optimizer"]["params"]
    # the engine refuses a Trainer-built optimizer under ZeRO-Offload: the matrix does not run one, nor the launch
    for optimizer in ("sgd", "adafactor", "adamw_8bit"):
        assert not runs("deepspeed", _full(optimizer), plan)
        assert optimizer_name("deepspeed", _full(optimizer), plan) is None


@pytest.mark.parametrize("stack", STACKS)
@pytest.mark.parametrize("optimizer", OPTIMIZERS)
@pytest.mark.parametrize("task", ["full_finetune", "lora"])
@pytest.mark.parametrize("offload", ["none", "optimizer"])
def test_every_optimizer_the_matrix_runs_has_a_name_in_the_launch(
    stack: str, optimizer: str, task: str, offload: str
) -> None:
    # data/stacks.json says which optimizers a stack runs; the launch tables name them: the two must agree
    workload = Workload(task=task, seq_len=4096, optimizer=optimizer, lora=LoraSpec() if task == "lora" else None)  # type: ignore[arg-type]
    plan = Plan(dp=8, zero_stage=3, offload=offload)  # type: ignore[arg-type]
    if runs(stack, workload, plan):  # type: ignore[arg-type]
        assert optimizer_name(stack, workload, plan) is not None  # type: ignore[arg-type]


def test_megatron_sgd_launch_is_sgd() -> None:
    args = _parsed(_launch("megatron", "llama-3.1-8b", _cpt("sgd"), Plan(dp=4, tp=2, zero_stage=1))["args"])
    assert args["--optimizer"] == "sgd" and args["--sgd-momentum"] == "0.9"
    assert "--adam-beta1" not in args
    adam = _parsed(_launch("megatron", "llama-3.1-8b", _cpt(), Plan(dp=4, tp=2, zero_stage=1))["args"])
    assert adam["--optimizer"] == "adam" and adam["--adam-beta2"] == "0.95"


def test_fsdp_names_the_optimizer_torchtitan_has() -> None:
    titan = _launch("fsdp", "llama-3.1-8b", _full(), Plan(dp=8, zero_stage=3))["torchtitan"]
    assert titan["optimizer"]["name"] == "AdamW"
    # torchtitan's build_optimizers has Adam and AdamW only: an SGD workload gets no torchtitan launch
    assert optimizer_name("fsdp", _full("sgd"), Plan(dp=8, zero_stage=3)) is None
    assert _launch("fsdp", "llama-3.1-8b", _full("sgd"), Plan(dp=8, zero_stage=3)) == {}
    # the fsdp stack runs no LoRA (data/stacks.json): no torchtune launch for any optimizer
    lora = Workload(task="lora", seq_len=4096, tokens=1e8, lora=LoraSpec(), optimizer="adamw")
    assert optimizer_name("fsdp", lora, Plan(dp=8)) is None and _launch("fsdp", "llama-3.1-8b", lora, Plan(dp=8)) == {}


@pytest.mark.parametrize("stack", STACKS)
@pytest.mark.parametrize("optimizer", OPTIMIZERS)
def test_each_stack_either_names_the_optimizer_or_emits_nothing(stack: str, optimizer: str) -> None:
    """The mapping per stack: a launch exists exactly where the stack has a name for the optimizer, and the name it
    carries is that one."""
    preset = "llama-3.1-8b"
    plan = Plan(dp=8, zero_stage=3) if stack != "megatron" else Plan(dp=4, tp=2, zero_stage=1)
    workload = _full(optimizer)
    name = optimizer_name(stack, workload, plan)  # type: ignore[arg-type]
    config = _launch(stack, preset, workload, plan)
    tables = {"deepspeed": TRAINER_OPTIM, "fsdp": TORCHTITAN_OPTIMIZER, "megatron": MEGATRON_OPTIMIZER}
    assert name == tables[stack].get(optimizer)  # type: ignore[call-overload]
    assert bool(config) == (name is not None)
    if name is None:
        return
    carried = {
        "deepspeed": lambda c: c["trainer"]["optim"],
        "fsdp": lambda c: c["torchtitan"]["optimizer"]["name"],
        # a full fine-tune of Llama 3.1 runs Megatron-Bridge's SFT recipe: Megatron-Core's OptimizerConfig name
        "megatron": lambda c: _overrides(c["overrides"])["optimizer.optimizer"],
    }[stack](config)
    assert carried == name
    assert set(DEEPSPEED_OPTIMIZER) <= set(TRAINER_OPTIM)


@pytest.mark.parametrize("optimizer", ["sgd", "adafactor", "adamw"])
def test_memory_assumption_states_the_sized_optimizers_bytes(optimizer: str) -> None:
    model = get_preset("llama-3.1-8b").model
    cluster = Cluster(gpu=get_gpu("h100-80g-sxm"), gpus_per_node=8)
    estimate = estimate_memory(model, _full(optimizer), Plan(dp=8, zero_stage=3), cluster)
    line = next(a.text for a in estimate.assumptions if a.code == "mixed_precision")
    expected = 2 + 2 + MASTER_BYTES + STATE_FP32_BYTES[optimizer]
    assert f"({expected:g} B/param" in line and optimizer in line
    assert "16 B/param for AdamW" not in line


# --- precision -----------------------------------------------------------------------------------------


def test_a100_fp8_launches_ask_for_no_fp8() -> None:
    a100, fp8 = get_gpu("a100-40g-sxm"), _full(precision="fp8")
    args = _parsed(
        _launch("megatron", "llama-3.1-8b", _cpt(precision="fp8"), Plan(dp=4, tp=2, zero_stage=1), gpu=a100)["args"]
    )
    assert "--bf16" in args and not any(flag.startswith("--fp8") for flag in args)
    titan = _launch("fsdp", "llama-3.1-8b", fp8, Plan(dp=8, zero_stage=3), gpu=a100)["torchtitan"]
    assert "converters" not in titan["model"] and "quantize" not in titan
    assert titan["training"]["mixed_precision_param"] == "bfloat16"


def test_h100_fp8_runs_float8_on_torchtitan_and_transformer_engine_on_megatron() -> None:
    h100, fp8 = get_gpu("h100-80g-sxm"), _full(precision="fp8")
    titan = _launch("fsdp", "llama-3.1-8b", fp8, Plan(dp=8, zero_stage=3), gpu=h100)["torchtitan"]
    assert titan["model"]["converters"] == ["quantize.linear.float8"]
    assert titan["quantize"]["linear"]["float8"]["enable_fsdp_float8_all_gather"] is True
    assert titan["compile"]["enable"] is True
    assert not _dotted(titan) - TORCHTITAN_KEYS
    # Mistral has no Megatron-Bridge SFT recipe: Megatron-LM with Transformer Engine's fp8 flags; Llama 3.1 8B runs
    # the Bridge's SFT recipe with its FP8 mixed-precision recipe (launch/megatron_bridge.py BRIDGE_FP8)
    args = _parsed(_launch("megatron", "mistral-7b", fp8, Plan(dp=4, tp=2, zero_stage=1), gpu=h100)["args"])
    assert args["--fp8-format"] == "hybrid" and args["--fp8-amax-history-len"] == "1024" and "--bf16" in args
    bridge = _launch("megatron", "llama-3.1-8b", fp8, Plan(dp=4, tp=2, zero_stage=1), gpu=h100)
    assert "mixed_precision=bf16_with_fp8_subchannel_scaling_mixed" in bridge["overrides"]
    bf16 = _launch("fsdp", "llama-3.1-8b", _full(), Plan(dp=8, zero_stage=3), gpu=h100)["torchtitan"]
    assert "quantize" not in bf16 and "converters" not in bf16["model"]


# --- DeepSeek's RoPE and norm --------------------------------------------------------------------------


@pytest.mark.parametrize(("preset", "mscale"), [("deepseek-v2-lite", "0.707"), ("deepseek-v3", "1")])
def test_deepseek_megatron_args_carry_yarn_and_epsilon(preset: str, mscale: str) -> None:
    config = _launch("megatron", preset, _full(), Plan(dp=4, tp=2, ep=4, zero_stage=1))
    args = _parsed(config["args"])
    # config.json: rope_scaling yarn factor 40 (mscale, mscale_all_dim), rms_norm_eps 1e-6; Megatron's defaults are
    # 1.0 / 1.0 / 0.0 and 1e-5 (Megatron-LM examples/post_training/modelopt/conf/deepseek-ai/DeepSeek-V2-Lite.sh)
    expected = {
        "--rotary-scaling-factor": "40",
        "--mscale": mscale,
        "--mscale-all-dim": mscale,
        "--norm-epsilon": "1e-06",
        "--rotary-base": "10000",
    }
    assert {flag: args.get(flag, "absent") for flag in expected} == expected
    assert not any("RoPE" in note for note in config["notes"])  # Megatron's MLA flags express this YaRN


def test_shipped_deepseek_presets_are_not_flagged_as_derived_from_a_parameter_count() -> None:
    model = get_preset("deepseek-v2-lite").model
    cluster = Cluster(gpu=get_gpu("h100-80g-sxm"), gpus_per_node=8)
    estimate = estimate_memory(model, _full(), Plan(dp=2, pp=4, zero_stage=1), cluster)  # pp: the trap path
    assert "approximate_model" not in {w.code for w in estimate.warnings}
    assert "MLA attention approximated" in get_preset("deepseek-v2-lite").note


# --- the ZeRO-3 save ----------------------------------------------------------------------------------


def _sku_cluster(nodes: int) -> Cluster:
    # the 8x H100 80G SXM server of the catalog (app/catalog/seed_data.py): 2,048 GiB host RAM per node
    return Cluster(gpu=get_gpu("h100-80g-sxm"), gpus_per_node=8, nodes=nodes, host_ram_gib=2048)


def test_405b_zero3_offload_saves_zero_shards() -> None:
    model = get_preset("llama-3.1-405b").model
    workload = _full()
    plan = Plan(dp=32, zero_stage=3, offload="optimizer_and_params", recompute="full")
    memory = memory_breakdown(model, workload, plan, _sku_cluster(4))
    assert memory.host_fits and memory.host_ram_limit is not None
    gathered = consolidated_save_bytes(model, workload)
    assert gathered == count_params(model).total * 2  # bf16 weights
    assert memory.host_ram + gathered > memory.host_ram_limit  # the plan fits, the gathered save does not
    config = launch_configs("deepspeed", model, workload, plan, 4, 8, 256, memory=memory)["deepspeed"]
    assert config["ds_config"]["zero_optimization"]["stage3_gather_16bit_weights_on_model_save"] is False
    assert any("zero_to_fp32.py" in note and "ZeRO shards" in note for note in config["notes"])


def test_a_save_that_fits_keeps_the_16bit_gather() -> None:
    model = get_preset("llama-3.1-8b").model
    workload = _full()
    plan = Plan(dp=8, zero_stage=3, offload="optimizer")
    memory = memory_breakdown(model, workload, plan, _sku_cluster(1))
    assert memory.host_ram > 0 and memory.host_ram + consolidated_save_bytes(model, workload) < GIB * 2048
    config = launch_configs("deepspeed", model, workload, plan, 1, 8, 256, memory=memory)["deepspeed"]
    assert config["ds_config"]["zero_optimization"]["stage3_gather_16bit_weights_on_model_save"] is True
    assert "notes" not in config


@pytest.mark.parametrize(
    ("preset", "block"),
    [
        ("mixtral-8x7b", "MixtralSparseMoeBlock"),
        ("qwen3-30b-a3b", "Qwen3MoeSparseMoeBlock"),
        ("deepseek-v3", "DeepseekV3MoE"),
    ],
)
def test_deepspeed_zero3_moe_launch_makes_the_sparse_block_a_zero3_leaf(preset: str, block: str) -> None:
    # ZeRO-3's prefetch follows the first step's module order, which MoE routing changes: the block must be a leaf
    # (deepspeed.utils.set_z3_leaf_modules), named to accelerate's DeepSpeedPlugin through this variable
    launch = _launch("deepspeed", preset, _full(), Plan(dp=8, zero_stage=3))
    assert launch["env"] == {"ACCELERATE_DEEPSPEED_MOE_LAYER_CLS_NAMES": block}
    assert launch["command"].startswith(f"ACCELERATE_DEEPSPEED_MOE_LAYER_CLS_NAMES={block} deepspeed ")
    dense = _launch("deepspeed", "llama-3.1-8b", _full(), Plan(dp=8, zero_stage=3))
    assert "env" not in dense and dense["command"].startswith("deepspeed ")
    zero2 = _launch("deepspeed", preset, _full(), Plan(dp=8, zero_stage=2))
    assert "env" not in zero2


def _trainer_mismatches(ds_config: dict[str, Any], trainer: dict[str, Any], world: int) -> list[str]:
    """transformers integrations/deepspeed.py HfTrainerDeepSpeedConfig.trainer_config_process: each of these ds_config
    numbers must equal the TrainingArguments value ("auto" is filled in); trainer_config_finalize raises otherwise.
    TrainingArguments defaults: per_device_train_batch_size 8, gradient_accumulation_steps 1, max_grad_norm 1.0."""
    micro = trainer.get("per_device_train_batch_size", 8)
    steps = trainer.get("gradient_accumulation_steps", 1)
    expected = {
        "train_micro_batch_size_per_gpu": micro,
        "gradient_accumulation_steps": steps,
        "train_batch_size": world * micro * steps,
        "gradient_clipping": trainer.get("max_grad_norm", 1.0),
    }
    return [key for key, value in expected.items() if ds_config.get(key, "auto") not in ("auto", value)]


@pytest.mark.parametrize(
    ("workload", "plan"),
    [
        (Workload(task="lora", seq_len=4096, tokens=2e8, lora=LoraSpec()), Plan(dp=1, micro_batch=1)),
        (Workload(task="qlora", seq_len=2048, tokens=1e8, lora=LoraSpec()), Plan(dp=2, zero_stage=3, micro_batch=2)),
        (_full(), Plan(dp=8, zero_stage=3, micro_batch=4, offload="optimizer")),
    ],
)
def test_the_trainer_accepts_the_deepspeed_config_it_is_launched_with(workload: Workload, plan: Plan) -> None:
    # Before: the trainer block stated no batch, so the Trainer's defaults (8 per device, no accumulation) met
    # ds_config's 1 × 128 and the launch stopped on "DeepSpeed config values that mismatch TrainingArguments"
    launch = _launch("deepspeed", "llama-3.1-8b", workload, plan)
    assert _trainer_mismatches(launch["ds_config"], launch["trainer"], plan.dp) == []
    # and the cosine schedule ends where the sized tokens end (Megatron's --train-iters, torchtitan's steps)
    steps = launch["trainer"]["max_steps"]
    assert steps * 256 * workload.seq_len >= (workload.tokens or 0) > (steps - 1) * 256 * workload.seq_len


def test_a_multi_server_deepspeed_moe_launch_exports_the_leaf_to_every_server() -> None:
    # the runner starts the other servers over pdsh from a hostfile and passes them only .deepspeed_env and its own
    # prefixes (deepspeed/launcher/runner.py): a variable on the command line reached node 0 alone, and without a
    # hostfile a --num_nodes 2 launch stops at once
    launch = _launch("deepspeed", "mixtral-8x7b", _full(), Plan(dp=16, zero_stage=3))
    assert "--hostfile hostfile" in launch["command"] and not launch["command"].startswith("ACCELERATE_")
    assert launch["deepspeed_env"] == ["ACCELERATE_DEEPSPEED_MOE_LAYER_CLS_NAMES=MixtralSparseMoeBlock"]
    assert any(".deepspeed_env" in note and "slots=8" in note for note in launch["notes"])


@pytest.mark.parametrize(("preset", "tp"), [("llama-3.1-8b", 4), ("mixtral-8x7b", 8), ("qwen2.5-72b", 8)])
def test_megatron_pads_the_vocabulary_to_the_checkpoint_s_size(preset: str, tp: int) -> None:
    # Megatron-LM pads the tokenizer's length to a multiple of 128 x tp (Llama 3.1 at tp 4: 128,512), the converted
    # checkpoint keeps config.json's vocab_size (128,256): the embedding did not load
    model = get_preset(preset).model
    args = _parsed(_launch("megatron", preset, _cpt(), Plan(dp=8 // tp if tp < 8 else 1, tp=tp, zero_stage=1))["args"])
    multiple = int(args["--make-vocab-size-divisible-by"] or 0) * tp
    tokenizer = model.vocab - 1  # any length up to vocab_size
    assert -(-tokenizer // multiple) * multiple == model.vocab


def test_megatron_tensor_or_context_parallel_launch_sets_one_device_connection() -> None:
    # megatron/training/arguments.py validate_args (core_v0.15.3) asserts CUDA_DEVICE_MAX_CONNECTIONS == "1" with
    # tp or cp > 1 before Blackwell: the launch stopped there on every A100 and H100
    tp = _launch("megatron", "llama-3.1-8b", _cpt(), Plan(dp=4, tp=2, zero_stage=1))
    assert tp["env"] == {"CUDA_DEVICE_MAX_CONNECTIONS": "1"}
    assert tp["command"].startswith("CUDA_DEVICE_MAX_CONNECTIONS=1 torchrun")
    assert "env" not in _launch("megatron", "llama-3.1-8b", _cpt(), Plan(dp=4, pp=2, zero_stage=1))


def test_megatron_moe_launch_balances_its_experts() -> None:
    # --moe-aux-loss-coeff defaults to 0.0 (arguments.py): Mixtral trained with no load-balancing loss
    args = _parsed(_launch("megatron", "mixtral-8x7b", _full(), Plan(dp=8, ep=8, pp=2, zero_stage=1))["args"])
    assert float(args["--moe-aux-loss-coeff"] or 0) == 1e-2
    deepseek = _parsed(_launch("megatron", "deepseek-v3", _full(), Plan(dp=8, ep=8, pp=8, zero_stage=1))["args"])
    assert "--moe-aux-loss-coeff" not in deepseek and "--moe-router-enable-expert-bias" in deepseek
