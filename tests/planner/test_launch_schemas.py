"""Launch blocks checked against the tools' own option lists, extracted from their source and committed
beside this file with the commit they come from (tests/planner/data/):

- megatron_arguments.txt: every flag megatron/training/arguments.py declares (NVIDIA/Megatron-LM core_v0.15.3);
- torchtitan_job_config_keys.txt: every `section.field` of torchtitan/config/job_config.py's JobConfig
  (pytorch/torchtitan v0.2.2);
- megatron_bridge_overrides.txt: every `section.field` of the ConfigContainer sections a Megatron-Bridge recipe
  override sets (NVIDIA-NeMo/Megatron-Bridge v0.6.0 and the Megatron-Core it pins).

Before: the Megatron fine-tune block loaded no checkpoint and named no tokenizer, data, length or schedule,
Llama 3.1 ran without its RoPE scaling and Qwen with Megatron's 1e-5 norm epsilon; the torchtitan block
carried FSDP1's `sharding_strategy` and a `float8` section torchtitan does not have.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.estimator.hardware import get_gpu
from app.estimator.presets import get_preset
from app.estimator.specs import LoraSpec, Plan, Workload
from app.planner.launch import launch_configs
from app.text.messages import launch as launch_text
from tests.factories import recommend as _recommend

DATA = Path(__file__).parent / "data"


def _listed(name: str) -> set[str]:
    lines = (DATA / name).read_text(encoding="utf-8").splitlines()
    return {line.strip() for line in lines if line.strip() and not line.startswith("#")}


MEGATRON_FLAGS = _listed("megatron_arguments.txt")
TORCHTITAN_KEYS = _listed("torchtitan_job_config_keys.txt")
BRIDGE_KEYS = _listed("megatron_bridge_overrides.txt")


def _parsed(args: list[str]) -> dict[str, str | None]:
    """Megatron's argument list as {flag: value}; every flag must be one arguments.py declares."""
    out: dict[str, str | None] = {}
    for entry in args:
        flag, _, value = entry.partition(" ")
        assert flag in MEGATRON_FLAGS, f"{flag} is not a Megatron-LM argument"
        assert flag not in out, f"{flag} given twice"
        out[flag] = value or None
    return out


def _dotted(config: dict[str, Any], prefix: str = "") -> set[str]:
    keys: set[str] = set()
    for key, value in config.items():
        if isinstance(value, dict):
            keys |= _dotted(value, f"{prefix}{key}.")
        else:
            keys.add(f"{prefix}{key}")
    return keys


def _megatron(preset: str, workload: Workload, plan: Plan, nodes: int, global_batch: int) -> dict[str, Any]:
    model = get_preset(preset).model
    return launch_configs("megatron", model, workload, plan, nodes, 8, global_batch)["megatron"]


def _assert_batch_arithmetic(args: dict[str, str | None], data_parallel: int) -> None:
    """Megatron derives gradient accumulation as global ÷ (micro × data parallel) and refuses a remainder."""
    global_batch, micro = int(args["--global-batch-size"] or 0), int(args["--micro-batch-size"] or 0)
    accumulation, remainder = divmod(global_batch, micro * data_parallel)
    assert remainder == 0 and accumulation >= 1
    assert global_batch == micro * data_parallel * accumulation


def test_megatron_llama_3_1_full_fine_tune_runs_the_bridge_sft_recipe_with_the_plan() -> None:
    # Before: pretrain_gpt.py on raw `_text_document` data with --split 949,50,1, no prompt format, no loss masking.
    # Megatron-Bridge v0.6.0 exports llama31_70b_sft_config (src/megatron/bridge/recipes/llama/__init__.py) and
    # scripts/training/run_recipe.py runs it with --mode sft on prompt-completion JSONL (--dataset local-jsonl)
    workload = Workload(task="full_finetune", seq_len=4096, tokens=2e9)
    plan = Plan(dp=2, tp=8, pp=4, zero_stage=1, micro_batch=1, recompute="selective", sequence_parallel=True)
    config = _megatron("llama-3.1-70b", workload, plan, nodes=8, global_batch=512)
    assert "args" not in config and config["recipe"] == "llama31_70b_sft_config"
    assert "run_recipe.py --recipe llama31_70b_sft_config --mode sft --dataset local-jsonl" in config["command"]
    assert config["versions"].keys() == {"megatron-bridge"}
    overrides = _overrides(config["overrides"])
    assert (
        overrides["model.tensor_model_parallel_size"] == "8" and overrides["model.pipeline_model_parallel_size"] == "4"
    )
    assert overrides["model.sequence_parallel"] == "true" and overrides["model.recompute_granularity"] == "selective"
    assert overrides["train.global_batch_size"] == "512" and overrides["train.micro_batch_size"] == "1"
    assert overrides["optimizer.use_distributed_optimizer"] == "true"
    assert int(overrides["train.train_iters"]) == math.ceil(2e9 / (512 * 4096)) == 954
    assert float(overrides["optimizer.lr"]) == 2e-5  # full fine-tuning's peak (SCHEDULES), not LoRA's 2e-4
    assert not any(key.startswith("peft.") for key in overrides)  # every weight trains
    assert any("prompt-completion JSONL" in note for note in config["notes"])


def test_megatron_full_fine_tune_without_a_sft_recipe_says_it_trains_on_raw_documents() -> None:
    workload = Workload(task="full_finetune", seq_len=4096, tokens=1e9)
    config = _megatron("mixtral-8x7b", workload, Plan(dp=8, ep=8, zero_stage=1), nodes=1, global_batch=128)
    assert "pretrain_gpt.py" in config["command"] and config["versions"].keys() == {"megatron-lm"}
    assert launch_text("megatron_raw_finetune", {}) in config["notes"]
    assert "损失掩码" in launch_text("megatron_raw_finetune", {}, "zh")
    cpt = Workload(task="continued_pretrain", seq_len=4096, tokens=1e9)
    plan = Plan(dp=4, tp=2, zero_stage=1)
    assert "pretrain_gpt.py" in _megatron("llama-3.1-8b", cpt, plan, nodes=1, global_batch=128)["command"]


def test_megatron_llama_3_1_fp8_fine_tune_is_complete_and_every_flag_exists() -> None:
    # an fp8 full fine-tune stays on Megatron-LM (the Bridge launch sets no fp8 recipe): every flag it passes exists
    workload = Workload(task="full_finetune", seq_len=4096, tokens=2e9, precision="fp8")
    plan = Plan(dp=2, tp=8, pp=4, zero_stage=1, micro_batch=1, recompute="selective", sequence_parallel=True)
    config = _megatron("llama-3.1-70b", workload, plan, nodes=8, global_batch=512)
    args = _parsed(config["args"])
    _assert_batch_arithmetic(args, config["data_parallel_size"])
    assert config["data_parallel_size"] == config["world_size"] // (8 * 4) == 2
    # fine-tune: load the converted checkpoint, reset iteration and optimizer, save elsewhere
    assert args["--load"] and "--finetune" in args and args["--save"] and args["--save"] != args["--load"]
    assert (args["--tokenizer-type"], args["--tokenizer-model"]) == ("HuggingFaceTokenizer", "meta-llama/Llama-3.1-70B")
    assert args["--data-path"] and args["--split"] == "949,50,1"
    assert int(args["--train-iters"] or 0) == math.ceil(2e9 / (512 * 4096)) == 954
    assert 1 <= int(args["--save-interval"] or 0) <= 954
    assert float(args["--lr"] or 0) == 2e-5 and args["--lr-decay-style"] == "cosine"
    assert float(args["--min-lr"] or 0) == pytest.approx(2e-6)
    # Llama 3.1 config.json: rope_theta 500,000, rope_scaling llama3 factor 8, rms_norm_eps 1e-5, GQA 8 groups
    architecture = {
        "--normalization": "RMSNorm",
        "--position-embedding-type": "rope",
        "--rotary-base": "500000",
        "--use-rope-scaling": None,
        "--rope-scaling-factor": "8",
        "--norm-epsilon": "1e-05",
        "--swiglu": None,
        "--untie-embeddings-and-output-weights": None,
        "--disable-bias-linear": None,
        "--group-query-attention": None,
        "--num-query-groups": "8",
    }
    assert {flag: args.get(flag, "absent") for flag in architecture} == architecture


def test_megatron_mixtral_moe_flags_and_batch() -> None:
    workload = Workload(task="full_finetune", seq_len=4096, tokens=1e9)
    plan = Plan(dp=4, pp=2, ep=4, zero_stage=1, micro_batch=1, recompute="full")
    config = _megatron("mixtral-8x7b", workload, plan, nodes=1, global_batch=256)
    args = _parsed(config["args"])
    _assert_batch_arithmetic(args, config["data_parallel_size"])
    assert config["data_parallel_size"] == 4 and config["world_size"] == 8
    moe = {
        "--num-experts": "8",
        "--moe-router-topk": "2",
        "--moe-ffn-hidden-size": "14336",
        "--expert-model-parallel-size": "4",
        "--rotary-base": "1000000",
        "--norm-epsilon": "1e-05",
        "--num-query-groups": "8",
    }
    assert {flag: args.get(flag) for flag in moe} == moe
    assert "--use-rope-scaling" not in args  # Mixtral's config.json scales no RoPE
    assert args["--tokenizer-model"] == "mistralai/Mixtral-8x7B-v0.1" and "--finetune" in args
    assert int(args["--train-iters"] or 0) == math.ceil(1e9 / (256 * 4096))


def _overrides(entries: list[str]) -> dict[str, str]:
    """Megatron-Bridge KEY=VALUE overrides as a dict; every key must be a ConfigContainer field."""
    out: dict[str, str] = {}
    for entry in entries:
        key, sep, value = entry.partition("=")
        assert sep and key in BRIDGE_KEYS, f"{key} is not a Megatron-Bridge ConfigContainer field"
        assert key not in out, f"{key} given twice"
        out[key] = value
    return out


def test_megatron_qwen_lora_is_the_bridge_recipe_with_known_overrides() -> None:
    # the recipe builds Qwen2.5-72B from its config.json (epsilon, q/k/v biases): no Megatron-LM flags to get wrong
    workload = Workload(task="lora", seq_len=2048, tokens=1e8, lora=LoraSpec(rank=16))
    plan = Plan(dp=2, tp=4, micro_batch=1, zero_stage=1, recompute="full", sequence_parallel=True)
    config = _megatron("qwen2.5-72b", workload, plan, nodes=1, global_batch=128)
    assert config["recipe"] == "qwen25_72b_peft_config" and "args" not in config
    overrides = _overrides(config["overrides"])
    assert float(overrides["optimizer.lr"]) == 2e-4 and overrides["dataset.seq_length"] == "2048"
    assert overrides["optimizer.use_distributed_optimizer"] == "true"
    accumulation, remainder = divmod(int(overrides["train.global_batch_size"]), plan.micro_batch * plan.dp)
    assert remainder == 0 and accumulation == 64
    assert int(overrides["train.train_iters"]) == math.ceil(1e8 / (128 * 2048))
    assert 1 <= int(overrides["checkpoint.save_interval"]) <= int(overrides["train.train_iters"])


def test_pretraining_starts_from_scratch() -> None:
    workload = Workload(task="pretrain", seq_len=4096, tokens=1e12)
    args = _parsed(_megatron("llama-3.1-8b", workload, Plan(dp=8, zero_stage=1), nodes=1, global_batch=1024)["args"])
    assert args["--load"] == args["--save"] and "--finetune" not in args  # a relaunch resumes, a first run starts
    assert args["--lr-warmup-iters"] == "2000"  # Llama 2's warm-up, a long run


def test_torchtitan_keys_exist_in_its_job_config() -> None:
    model = get_preset("llama-3.1-8b").model
    workload = Workload(task="full_finetune", seq_len=4096, tokens=1e9, precision="fp8")
    plans = [
        Plan(dp=32, dp_shard=8, zero_stage=3, recompute="full"),
        Plan(dp=2, tp=2, pp=2, zero_stage=2, micro_batch=2, recompute="selective", sequence_parallel=True),
    ]
    for plan in plans:
        nodes = max(1, plan.gpus // 8)
        config = launch_configs("fsdp", model, workload, plan, nodes, min(8, plan.gpus), 512)["fsdp"]
        assert set(config) == {
            "command",
            "world_size",
            "data_parallel_size",
            "torchtitan",
            "notes",
            "texts",
            "versions",
        }  # no FSDP1 key
        titan = config["torchtitan"]
        unknown = _dotted(titan) - TORCHTITAN_KEYS
        assert not unknown, f"not in torchtitan's JobConfig: {sorted(unknown)}"
        training = titan["training"]
        assert training["steps"] == math.ceil(1e9 / (512 * 4096))
        assert titan["model"]["converters"] == ["quantize.linear.float8"]
        local = training["local_batch_size"]
        assert training["global_batch_size"] % (local * plan.dp) == 0  # torchtitan accumulates the rest


@pytest.mark.parametrize(
    "body",
    [
        {"model": {"preset": "mixtral-8x7b"}, "task": "full_finetune", "tokens": 1e9},
        {"model": {"preset": "llama-3.1-8b"}, "task": "full_finetune", "tokens": 1e9, "seq_len": 4096},
    ],
)
def test_recommended_launch_blocks_use_only_the_tools_options(client: TestClient, body: dict[str, Any]) -> None:
    result = _recommend(client, {**body, "constraints": {"limit": 20}})
    seen = set()
    for option in result["options"]:
        stack, launch = option["stack"], option["launch"][option["stack"]]
        seen.add(stack)
        if stack == "megatron" and "recipe" in launch:  # a model with a Megatron-Bridge SFT recipe (Llama 3.1)
            overrides = _overrides(launch["overrides"])  # every key one the recipe's ConfigContainer has
            batch = {"--global-batch-size": overrides["train.global_batch_size"]}
            _assert_batch_arithmetic(
                batch | {"--micro-batch-size": overrides["train.micro_batch_size"]}, option["plan"]["dp"]
            )
            assert 1 <= int(overrides["checkpoint.save_interval"]) <= int(overrides["train.train_iters"])
        elif stack == "megatron":
            args = _parsed(launch["args"])
            _assert_batch_arithmetic(args, option["plan"]["dp"])
            assert "--finetune" in args
            assert 1 <= int(args["--save-interval"] or 0) <= int(args["--train-iters"] or 0)
        elif stack == "fsdp" and "torchtitan" in launch:
            assert not _dotted(launch["torchtitan"]) - TORCHTITAN_KEYS
            titan = launch["torchtitan"]
            assert 1 <= titan["checkpoint"]["interval"] <= titan["training"]["steps"]
    # torchtitan implements no Mixtral (torchtitan/models at v0.2.2): its data-parallel plans go to DeepSpeed
    assert seen & ({"megatron", "deepspeed"} if body["model"]["preset"] == "mixtral-8x7b" else {"megatron", "fsdp"})
    if body["model"]["preset"] == "mixtral-8x7b":
        assert "fsdp" not in seen


def _bridge(workload: Workload, preset: str = "qwen2.5-72b") -> dict[str, str]:
    plan = Plan(dp=2, tp=4, micro_batch=1, zero_stage=1, recompute="full", sequence_parallel=True)
    return _overrides(_megatron(preset, workload, plan, nodes=1, global_batch=128)["overrides"])


def _megatron_lm_schedule(workload: Workload) -> dict[str, str | None]:
    """What the Megatron-LM launch of the same workload states: the schedule a Bridge launch must follow too."""
    plan = Plan(dp=2, tp=4, micro_batch=1, zero_stage=1, recompute="full", sequence_parallel=True)
    full = Workload(  # fp8: a full fine-tune Megatron-LM runs (a bf16 one of Llama 3.1 runs the Bridge SFT recipe)
        task="full_finetune",
        seq_len=workload.seq_len,
        tokens=workload.tokens,
        optimizer=workload.optimizer,
        precision="fp8",
    )
    return _parsed(_megatron("llama-3.1-8b", full, plan, nodes=1, global_batch=128)["args"])


@pytest.mark.parametrize("optimizer", ["adamw", "sgd"])
def test_bridge_lora_runs_the_optimizer_the_estimate_sized(optimizer: str) -> None:
    # Before: no optimizer.* key but lr and min_lr; the recipe's Adam ran whatever the estimate sized (SGD's one
    # momentum buffer against Adam's two moments).
    workload = Workload(task="lora", seq_len=4096, tokens=1e9, optimizer=optimizer, lora=LoraSpec(rank=16))  # type: ignore[arg-type]
    overrides = _bridge(workload, "qwen3-30b-a3b")
    stated = _megatron_lm_schedule(workload)
    assert overrides["optimizer.optimizer"] == stated["--optimizer"] == ("adam" if optimizer == "adamw" else "sgd")
    if optimizer == "sgd":
        assert float(overrides["optimizer.sgd_momentum"]) == float(stated["--sgd-momentum"] or 0)
        assert not {key for key in overrides if key.startswith("optimizer.adam_")}
    else:
        # the recipes set beta2 0.98 (_peft_common) or 0.95: the launch states its own
        assert float(overrides["optimizer.adam_beta1"]) == float(stated["--adam-beta1"] or 0)
        assert float(overrides["optimizer.adam_beta2"]) == float(stated["--adam-beta2"] or 0)
        assert "optimizer.sgd_momentum" not in overrides
    assert float(overrides["optimizer.weight_decay"]) == float(stated["--weight-decay"] or 0)
    assert float(overrides["optimizer.clip_grad"]) == float(stated["--clip-grad"] or 0)


def test_bridge_lora_decays_over_the_run_it_launches() -> None:
    # Before: train.train_iters=382 under qwen25_72b_peft_config, whose scheduler.lr_decay_iters=100 stood (the
    # learning rate at its floor from step 100), and the recipes' constant weight decay 0.033 replaced 0.1.
    workload = Workload(task="lora", seq_len=2048, tokens=1e8, lora=LoraSpec(rank=16))
    overrides = _bridge(workload)
    stated = _megatron_lm_schedule(workload)
    iters = int(overrides["train.train_iters"])
    assert iters == math.ceil(1e8 / (128 * 2048))
    assert int(overrides["scheduler.lr_decay_iters"]) == iters
    assert int(overrides["scheduler.lr_warmup_iters"]) == math.ceil(iters * 0.03)  # the LoRA warm-up ratio
    assert overrides["scheduler.lr_decay_style"] == stated["--lr-decay-style"] == "cosine"
    assert float(overrides["scheduler.lr_warmup_init"]) == 0.0  # Megatron-LM's --lr-warmup-init default
    assert float(overrides["optimizer.min_lr"]) == pytest.approx(float(overrides["optimizer.lr"]) / 10)
    decay = float(overrides["optimizer.weight_decay"])
    assert float(overrides["scheduler.start_weight_decay"]) == float(overrides["scheduler.end_weight_decay"]) == decay
    assert overrides["scheduler.weight_decay_incr_style"] == "constant"


def test_bridge_lora_without_a_token_count_decays_over_the_iterations_set_later() -> None:
    # No train_iters to state: lr_decay_iters null (ConfigContainer then fills it from train.train_iters) and the
    # warm-up as a share of the run, not the recipe's 100 iterations and 10-50 warm-up steps.
    overrides = _bridge(Workload(task="lora", seq_len=2048, lora=LoraSpec(rank=16)))
    assert "train.train_iters" not in overrides
    assert overrides["scheduler.lr_decay_iters"] == "null"
    assert overrides["scheduler.lr_warmup_iters"] == "0"
    assert float(overrides["scheduler.lr_warmup_fraction"]) == 0.03


def test_recommended_sgd_lora_on_megatron_launches_sgd(client: TestClient) -> None:
    # Before: rank 1, qwen3_30b_a3b_peft_config at pp 4, carried no optimizer.* key naming SGD: the recipe ran Adam.
    body = {"model": {"preset": "qwen3-30b-a3b"}, "task": "lora", "seq_len": 4096, "tokens": 1e9, "optimizer": "sgd"}
    options = [
        o for o in _recommend(client, {**body, "constraints": {"limit": 20}})["options"] if o["stack"] == "megatron"
    ]
    assert options
    for option in options:
        overrides = _overrides(option["launch"]["megatron"]["overrides"])
        assert (overrides["optimizer.optimizer"], overrides["optimizer.sgd_momentum"]) == ("sgd", "0.9")
        assert overrides["scheduler.lr_decay_iters"] == overrides["train.train_iters"]


def test_bridge_moe_lora_splits_the_experts_over_tensor_parallel_as_sized() -> None:
    # Megatron-Bridge v0.6.0's Qwen3-MoE PEFT recipes set expert_tensor_parallel_size 1 (recipes/qwen/h100/
    # qwen3_moe.py): at tp 4 with ep 1 every rank would hold every expert whole, about twice the weights the estimate
    # (experts split over tp, Megatron-Core's default) counted on an 80 GB card.
    workload = Workload(task="lora", seq_len=4096, tokens=1e9, lora=LoraSpec(rank=16))
    moe = _bridge(workload, "qwen3-30b-a3b")
    assert moe["model.expert_tensor_parallel_size"] == moe["model.tensor_model_parallel_size"] == "4"
    assert "model.expert_tensor_parallel_size" in BRIDGE_KEYS
    assert "model.expert_tensor_parallel_size" not in _bridge(workload)  # a dense model has no experts


def test_megatron_fp8_full_fine_tune_on_hopper_runs_the_bridge_sft_recipe_with_its_fp8_recipe() -> None:
    # Before: an fp8 full fine-tune of a model with a Bridge SFT recipe ran pretrain_gpt.py on raw documents (no prompt
    # masking). Megatron-Bridge v0.6.0 takes a registered mixed-precision recipe by name
    # (ConfigContainer.mixed_precision, training/mixed_precision.py); bf16_with_fp8_subchannel_scaling_mixed keeps bf16
    # weights (fp8_param_gather False) and fp32 gradient reduction, as the plan without fp8_params is sized
    model = get_preset("llama-3.1-70b").model
    workload = Workload(task="full_finetune", seq_len=4096, tokens=2e9, precision="fp8")
    plan = Plan(dp=2, tp=8, pp=4, zero_stage=1, micro_batch=1, recompute="selective", sequence_parallel=True)
    config = launch_configs("megatron", model, workload, plan, 8, 8, 512, gpu=get_gpu("h100-80g-sxm"))["megatron"]
    assert config["recipe"] == "llama31_70b_sft_config" and "--mode sft" in config["command"]
    assert config["versions"].keys() == {"megatron-bridge"}
    overrides = _overrides(config["overrides"])
    assert overrides["mixed_precision"] == "bf16_with_fp8_subchannel_scaling_mixed"
    assert set(overrides) <= BRIDGE_KEYS
    assert launch_text("bridge_fp8_blockwise", {}) in config["notes"]
    assert launch_text("megatron_raw_finetune", {}) not in config["notes"]
    # FP8 weights (plan.fp8_params: bf16 gradient buffer, which no Bridge FP8 recipe sets) stay on Megatron-LM
    fp8_weights = replace(plan, fp8_params=True)
    kept = launch_configs("megatron", model, workload, fp8_weights, 8, 8, 512, gpu=get_gpu("h100-80g-sxm"))
    assert "pretrain_gpt.py" in kept["megatron"]["command"]
    # on an A100 fp8 runs as bf16 (compute_precision): the Bridge recipe without any fp8 recipe
    a100 = launch_configs("megatron", model, workload, plan, 8, 8, 512, gpu=get_gpu("a100-80g-sxm"))["megatron"]
    assert "mixed_precision" not in _overrides(a100["overrides"])


def test_the_bridge_launch_sets_the_fused_loss_and_activation_offload_the_plan_was_sized_with() -> None:
    # Before: a Megatron-Bridge SFT or LoRA launch of a plan sized with the fused loss (plan.loss fused, which memory
    # relief may take on its own) named no loss fusion, so the run would hold the logits the estimate left out
    workload = Workload(task="full_finetune", seq_len=131072, tokens=5e8)
    plan = Plan(dp=1, tp=4, cp=2, zero_stage=1, recompute="full", fused_loss=True)
    config = _megatron("llama-3.1-8b", workload, plan, nodes=1, global_batch=4)
    overrides = _overrides(config["overrides"])
    assert config["recipe"] == "llama31_8b_sft_config"
    assert overrides["model.cross_entropy_loss_fusion"] == "true"
    assert overrides["model.cross_entropy_fusion_impl"] == "native"
    assert set(overrides) <= BRIDGE_KEYS
    offload = _megatron("llama-3.1-8b", workload, replace(plan, recompute="none", activation_offload=True), 1, 4)
    offload_overrides = _overrides(offload["overrides"])
    assert offload_overrides["model.cpu_offloading"] == "true"
    assert offload_overrides["model.cpu_offloading_num_layers"] == "31"
