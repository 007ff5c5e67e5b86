"""The stack support matrix (app/planner/stacks.py) and each stack's launch configuration.

The launch configurations are checked against each tool's documented schema (no tool installs
here without PyTorch): DeepSpeed's ZeRO configuration model (deepspeed/runtime/zero/config.py,
`DeepSpeedZeroConfig` with `extra="forbid"`: the keys below are its fields or their aliases) and
its batch assertion (train_batch_size = micro × accumulation × data-parallel size, checked in
deepspeed/runtime/config.py and deepspeed/runtime/pipe/engine.py); Megatron-LM's argument names
(megatron/training/arguments.py); PEFT's `LoraConfig` and transformers' `BitsAndBytesConfig` fields.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from fastapi.testclient import TestClient

from app.estimator.presets import get_preset
from app.estimator.specs import LoraSpec, Plan, Workload
from app.planner.launch import launch_configs
from app.planner.stacks import as_run, builds, runs, stack_for
from tests.factories import recommend as _recommend

# DeepSpeed "Configuration JSON" top-level keys we may emit, and DeepSpeedZeroConfig fields/aliases.
DS_TOP_KEYS = {
    "train_batch_size",
    "train_micro_batch_size_per_gpu",
    "gradient_accumulation_steps",
    "gradient_clipping",
    "zero_optimization",
    "bf16",
    "fp16",
    "optimizer",  # DeepSpeed config docs "Optimizer Parameters" (type, params)
    "zero_force_ds_cpu_optimizer",  # deepspeed/runtime/constants.py ZERO_FORCE_DS_CPU_OPTIMIZER
}
DS_ZERO_KEYS = {
    "stage",
    "overlap_comm",
    "contiguous_gradients",
    "offload_optimizer",
    "offload_param",
    "stage3_gather_16bit_weights_on_model_save",
}
DS_OFFLOAD_KEYS = {"device", "nvme_path", "buffer_count", "pin_memory", "pipeline_read", "pipeline_write", "fast_init"}
PEFT_LORA_KEYS = {"r", "lora_alpha", "lora_dropout", "target_modules", "bias", "task_type"}
BNB_KEYS = {
    "load_in_4bit",
    "bnb_4bit_quant_type",
    "bnb_4bit_use_double_quant",
    "bnb_4bit_compute_dtype",
    "bnb_4bit_quant_storage",
}
FULL = Workload(task="full_finetune")
LORA = Workload(task="lora", lora=LoraSpec(rank=16))
QLORA = Workload(task="qlora", lora=LoraSpec(rank=16))


def test_deepspeed_runs_no_pipeline_under_the_trainer() -> None:
    # The HF Trainer drives engine.forward/backward/step, which PipelineEngine refuses ("Only train_batch() is
    # accessible in pipeline mode.", deepspeed/runtime/pipe/engine.py): no pipeline plan at any ZeRO stage.
    for zero in (0, 1, 2, 3):
        assert not runs("deepspeed", FULL, Plan(dp=2, pp=2, zero_stage=zero))
    assert not runs("deepspeed", FULL, Plan(pp=4))
    for zero in (2, 3):
        plan = Plan(dp=2, pp=2, zero_stage=zero)
        assert not runs("megatron", FULL, plan)  # distributed optimizer = ZeRO-1 only
        assert stack_for(FULL, plan) == "fsdp"  # torchtitan: FSDP2 × pipeline
    assert stack_for(FULL, Plan(dp=2, pp=2, zero_stage=1), get_preset("falcon-7b").model) is None


def test_fsdp_runs_tensor_or_pipeline_parallel_only_with_fsdp_on() -> None:
    # torchtitan maybe_enable_amp: TP/PP without FSDP/HSDP/CP trains in fp32; ParallelDims.fsdp_enabled is
    # dp_shard > 1 or cp > 1, and ZeRO-0 (replicate, DDP) refuses tp/pp.
    for shape in ({"tp": 2, "pp": 2}, {"tp": 4}, {"pp": 4}):
        assert not runs("fsdp", FULL, Plan(**shape))
        assert not runs("fsdp", FULL, Plan(dp=2, zero_stage=0, **shape))
        assert runs("fsdp", FULL, Plan(dp=2, zero_stage=3, **shape))
        assert runs("fsdp", FULL, Plan(dp=2, zero_stage=2, **shape))
        assert runs("fsdp", FULL, Plan(cp=2, **shape))
    assert runs("fsdp", FULL, Plan(dp=4, zero_stage=0)) and runs("fsdp", FULL, Plan())  # DDP / one GPU: autocast
    model = get_preset("llama-3.1-8b").model
    unsharded = Plan(tp=2, pp=2, fp32_main_grads=True)
    assert stack_for(FULL, unsharded, model) == "megatron"  # sized with its fp32 main-grad buffer
    assert stack_for(FULL, Plan(tp=2, pp=2), model) is None  # the lean account is no stack's


def test_data_parallel_lora_goes_to_deepspeed_and_megatron_lora_needs_a_bridge_recipe() -> None:
    llama = get_preset("llama-3.1-8b").model
    for recompute in ("none", "full"):
        assert stack_for(LORA, Plan(recompute=recompute), llama) == "deepspeed"
        assert stack_for(LORA, Plan(dp=4, zero_stage=2, recompute=recompute), llama) == "deepspeed"
    assert not runs("megatron", LORA, Plan(recompute="selective"))  # only Megatron had it: no longer offered
    assert stack_for(LORA, Plan(recompute="selective"), llama) is None
    # llama31_8b_peft_config, the plan as the search holds it (as_run: Megatron-Bridge's account)
    assert [stack_for(LORA, held, llama) for held in as_run(LORA, Plan(tp=2), llama)] == ["megatron"]
    assert builds("megatron", get_preset("qwen2.5-72b").model, "lora", 4)  # qwen25_72b_peft_config
    for preset in ("mixtral-8x22b", "deepseek-v3", "qwen2.5-3b", "llama-2-70b"):  # no Bridge PEFT recipe
        model = get_preset(preset).model
        assert builds("megatron", model, "full_finetune") and not builds("megatron", model, "lora")


def test_the_requested_optimizer_is_one_the_stack_runs() -> None:
    def workload(task: str, optimizer: str) -> Workload:
        return Workload(task=task, optimizer=optimizer, lora=LoraSpec() if task == "lora" else None)  # type: ignore[arg-type]

    sharded = Plan(dp=8, zero_stage=3)
    for optimizer in ("sgd", "adafactor", "lion", "adamw_8bit"):
        assert not runs("fsdp", workload("full_finetune", optimizer), sharded)  # torchtitan: Adam, AdamW only
        assert runs("deepspeed", workload("full_finetune", optimizer), sharded)  # the Trainer's `optim`
    assert runs("fsdp", workload("full_finetune", "adamw"), sharded)
    assert not runs("fsdp", workload("lora", "adamw"), Plan(dp=8, zero_stage=3))  # no LoRA launch on fsdp
    assert runs("megatron", workload("full_finetune", "sgd"), Plan(dp=2, tp=2, zero_stage=1))
    assert not runs("megatron", workload("full_finetune", "adafactor"), Plan(dp=2, tp=2, zero_stage=1))
    # ZeRO-Offload refuses a client optimizer unless it is DeepSpeedCPUAdam / DeepSpeedCPULion (engine.py)
    offloaded = Plan(dp=8, zero_stage=3, offload="optimizer")
    assert runs("deepspeed", workload("full_finetune", "lion"), offloaded)
    assert not runs("deepspeed", workload("full_finetune", "adafactor"), offloaded)
    model = get_preset("llama-3.1-8b").model
    assert stack_for(workload("full_finetune", "sgd"), Plan(dp=2, tp=2, pp=2, zero_stage=3), model) is None


def test_lora_with_model_parallel_runs_only_on_megatron_and_qlora_nowhere() -> None:
    plan = Plan(dp=2, tp=2)
    assert not runs("deepspeed", LORA, plan) and not runs("fsdp", LORA, plan)
    # as the search holds it (as_run): Megatron-Bridge's account, its selective recompute keeping the MLP
    assert [stack_for(LORA, held) for held in as_run(LORA, plan)] == ["megatron"]
    assert stack_for(QLORA, plan) is None
    assert stack_for(QLORA, Plan(dp=4, zero_stage=3)) == "deepspeed"


def test_offload_needs_the_stage_each_stack_documents() -> None:
    assert not runs("deepspeed", FULL, Plan(dp=8, zero_stage=2, offload="optimizer_and_params"))
    assert runs("deepspeed", FULL, Plan(dp=8, zero_stage=2, offload="optimizer"))
    assert not runs("fsdp", FULL, Plan(dp=8, zero_stage=3, offload="optimizer"))  # CPUOffloadPolicy moves all
    assert not runs("megatron", FULL, Plan(dp=8, zero_stage=1, offload="optimizer"))
    assert not runs("deepspeed", FULL, Plan(dp=8, zero_stage=2, recompute="selective"))  # HF: whole layers


def test_zero_offload_runs_on_one_gpu_on_deepspeed_only() -> None:
    """DeepSpeed's ZeRO-Offload trains on a single GPU (its tutorial: GPT-2 10B on one V100 at stage 2 with the
    optimizer on the CPU); torchtitan shards, and so offloads, only over dp_shard > 1."""
    one = Plan(dp=1, zero_stage=2, offload="optimizer")
    assert runs("deepspeed", FULL, one) and stack_for(FULL, one) == "deepspeed"
    assert runs("deepspeed", FULL, Plan(dp=1, zero_stage=3, offload="optimizer_and_params"))
    assert not runs("deepspeed", FULL, Plan(dp=1, zero_stage=2, offload="optimizer_and_params"))  # params: ZeRO-3
    assert not runs("fsdp", FULL, Plan(dp=1, zero_stage=3, offload="optimizer_and_params"))
    assert not runs("megatron", FULL, Plan(dp=1, zero_stage=1, offload="optimizer"))


def test_one_gpu_zero_offload_launch() -> None:
    model = get_preset("llama-3.2-3b").model
    plan = Plan(dp=1, zero_stage=2, offload="optimizer", micro_batch=1)
    ds = _ds(launch_configs("deepspeed", model, FULL, plan, nodes=1, gpus_per_node=1, global_batch=8))
    config, zero = ds["ds_config"], ds["ds_config"]["zero_optimization"]
    assert ds["command"].startswith("deepspeed --num_nodes 1 --num_gpus 1 ")
    assert ds["world_size"] == 1 == ds["data_parallel_size"]
    assert set(config) <= DS_TOP_KEYS and set(zero) <= DS_ZERO_KEYS
    assert zero["stage"] == 2 and zero["offload_optimizer"]["device"] == "cpu" and "offload_param" not in zero
    assert config["optimizer"]["type"] == "AdamW"  # DeepSpeedCPUAdam: the engine refuses a client optimizer here
    assert (config["train_batch_size"], config["gradient_accumulation_steps"]) == (8, 8)


def _ds(config: dict) -> dict:
    assert set(config) == {"deepspeed"}
    return config["deepspeed"]


def test_deepspeed_batch_arithmetic_is_over_the_data_parallel_ranks_only() -> None:
    model = get_preset("llama-3.1-8b").model
    plan = Plan(dp=8, zero_stage=1, micro_batch=1, recompute="full")
    ds = _ds(launch_configs("deepspeed", model, FULL, plan, nodes=1, gpus_per_node=8, global_batch=128))
    config = ds["ds_config"]
    assert set(config) <= DS_TOP_KEYS and set(config["zero_optimization"]) <= DS_ZERO_KEYS
    assert ds["world_size"] == 8 == ds["data_parallel_size"]
    assert config["train_batch_size"] == 128
    assert config["train_batch_size"] == (
        config["train_micro_batch_size_per_gpu"] * config["gradient_accumulation_steps"] * ds["data_parallel_size"]
    )
    assert config["gradient_accumulation_steps"] == 16
    assert "pipeline_module" not in ds and ds["trainer"]["gradient_checkpointing"] is True


def test_deepspeed_offload_and_qlora_settings() -> None:
    model = get_preset("llama-2-70b").model
    plan = Plan(dp=8, zero_stage=3, offload="optimizer_and_params", micro_batch=1, recompute="full")
    ds = _ds(launch_configs("deepspeed", model, QLORA, plan, nodes=1, gpus_per_node=8, global_batch=128))
    zero = ds["ds_config"]["zero_optimization"]
    assert set(zero["offload_optimizer"]) <= DS_OFFLOAD_KEYS and set(zero["offload_param"]) <= DS_OFFLOAD_KEYS
    assert ds["trainer"]["gradient_checkpointing"] is True
    assert set(ds["peft"]) == PEFT_LORA_KEYS
    assert ds["peft"]["r"] == 16 and ds["peft"]["lora_alpha"] == 32
    assert ds["peft"]["target_modules"] == ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
    assert set(ds["quantization"]) == BNB_KEYS
    assert ds["quantization"]["bnb_4bit_quant_type"] == "nf4"
    assert ds["quantization"]["bnb_4bit_quant_storage"] == "bfloat16"  # shardable under ZeRO-3 (PEFT docs)


def test_megatron_describes_a_llama_not_a_gpt2() -> None:
    model = get_preset("llama-3.1-70b").model
    plan = Plan(dp=2, tp=8, pp=4, zero_stage=1, micro_batch=1, recompute="selective", sequence_parallel=True)
    # Megatron-LM's pretrain_gpt.py flags: continued pretraining (a full fine-tune runs the Bridge SFT recipe)
    cpt = replace(FULL, task="continued_pretrain")
    config = launch_configs("megatron", model, cpt, plan, nodes=8, gpus_per_node=8, global_batch=512)["megatron"]
    args = config["args"]
    for flag in (
        "--normalization RMSNorm",
        "--position-embedding-type rope",
        "--rotary-base 500000",  # Llama 3.1's rope_theta (config.json); Megatron's default 10,000 is Llama 2's
        "--swiglu",
        "--untie-embeddings-and-output-weights",
        "--disable-bias-linear",
        "--group-query-attention",
        "--num-query-groups 8",
        "--num-layers 80",
        "--hidden-size 8192",
        "--ffn-hidden-size 28672",
        "--tensor-model-parallel-size 8",
        "--pipeline-model-parallel-size 4",
        "--sequence-parallel",
        "--use-distributed-optimizer",
        "--recompute-activations",
        "--micro-batch-size 1",
        "--global-batch-size 512",
    ):
        assert flag in args, flag
    assert config["world_size"] == 64 and config["data_parallel_size"] == 64 // (8 * 4)
    assert all(a.startswith("--") for a in args)


def test_a_pasted_config_brings_its_rope_base_and_gpt2_has_none() -> None:
    from_config = get_preset("qwen2.5-7b").model
    assert from_config.rope_theta == 1_000_000.0
    plan = Plan(dp=8, micro_batch=1)
    gpt2 = launch_configs("megatron", get_preset("gpt2").model, FULL, plan, nodes=1, gpus_per_node=8, global_batch=64)
    assert not [a for a in gpt2["megatron"]["args"] if a.startswith(("--rotary-base", "--position-embedding-type"))]


def test_megatron_moe_flags_for_mixtral() -> None:
    model = get_preset("mixtral-8x7b").model
    plan = Plan(dp=2, tp=2, pp=2, ep=2, zero_stage=1, micro_batch=1, sequence_parallel=True)
    args = launch_configs("megatron", model, FULL, plan, nodes=1, gpus_per_node=8, global_batch=64)["megatron"]["args"]
    for flag in (
        "--num-experts 8",
        "--moe-router-topk 2",
        "--moe-ffn-hidden-size 14336",
        "--expert-model-parallel-size 2",
        "--rotary-base 1000000",  # Mixtral's rope_theta (config.json)
        "--num-query-groups 8",
        "--normalization RMSNorm",
        "--swiglu",
    ):
        assert flag in args, flag


def test_megatron_lora_launches_the_bridge_peft_recipe() -> None:
    model = get_preset("qwen2.5-72b").model
    plan = Plan(dp=1, tp=4, micro_batch=1, recompute="full", sequence_parallel=True)
    config = launch_configs("megatron", model, LORA, plan, nodes=1, gpus_per_node=4, global_batch=128)["megatron"]
    assert config["recipe"] == "qwen25_72b_peft_config"  # builds Qwen2.5-72B (biases, epsilon) from its config
    assert "run_recipe.py --recipe qwen25_72b_peft_config --mode lora" in config["command"]
    assert "finetune.py" not in config["command"] and "args" not in config and "peft" not in config
    overrides = dict(entry.split("=", 1) for entry in config["overrides"])
    assert overrides["model.tensor_model_parallel_size"] == "4" and overrides["model.sequence_parallel"] == "true"
    assert overrides["model.recompute_granularity"] == "full"
    assert overrides["peft.dim"] == "16" and overrides["peft.alpha"] == "32"
    assert overrides["peft.target_modules"] == "[linear_qkv,linear_proj,linear_fc1,linear_fc2]"
    assert overrides["train.global_batch_size"] == "128" and overrides["train.micro_batch_size"] == "1"


def test_fsdp_torchtitan_degrees_multiply_to_the_world() -> None:
    model = get_preset("llama-3.1-8b").model
    plan = Plan(dp=4, tp=2, zero_stage=3, micro_batch=2, recompute="selective", sequence_parallel=True)
    config = launch_configs("fsdp", model, FULL, plan, nodes=1, gpus_per_node=8, global_batch=128)["fsdp"]
    parallelism = config["torchtitan"]["parallelism"]
    degrees = (
        parallelism["data_parallel_replicate_degree"]
        * parallelism["data_parallel_shard_degree"]
        * parallelism["tensor_parallel_degree"]
        * parallelism["pipeline_parallel_degree"]
        * parallelism["context_parallel_degree"]
    )
    assert degrees == config["world_size"] == 8
    assert parallelism["fsdp_reshard_after_forward"] == "always"
    assert config["torchtitan"]["activation_checkpoint"]["mode"] == "selective"
    assert config["torchtitan"]["training"]["global_batch_size"] == 128


@pytest.mark.parametrize(
    "body",
    [
        {"model": {"preset": "qwen2.5-72b"}, "task": "lora", "tokens": 1e8},
        {"model": {"preset": "llama-2-70b"}, "task": "qlora", "tokens": 1e8},
        {"model": {"preset": "llama-2-70b"}, "task": "full_finetune", "tokens": 1e9},
        {"model": {"preset": "mixtral-8x7b"}, "task": "full_finetune", "tokens": 1e9},
    ],
)
def test_every_option_names_a_stack_that_runs_it(client: TestClient, body: dict) -> None:
    from app.planner.stacks import runs as stack_runs

    result = _recommend(client, **body, constraints={"limit": 50})
    assert result["options"]
    for option in result["options"] + result["near_misses"]:
        p = option["plan"]
        plan = Plan(
            dp=p["dp"], tp=p["tp"], pp=p["pp"], cp=p["cp"], ep=p["ep"], zero_stage=p["zero_stage"],
            offload=p["offload"], recompute=p["recompute"], micro_batch=p["micro_batch"],
        )  # fmt: skip
        workload = Workload(task=body["task"], lora=LoraSpec() if "lora" in body["task"] else None)
        assert option["stack"] is not None and stack_runs(option["stack"], workload, plan), option["plan"]
        assert set(option["launch"]) == {option["stack"]}
        launch = option["launch"][option["stack"]]
        assert launch["world_size"] == option["total_gpus"] == p["dp"] * p["tp"] * p["pp"] * p["cp"]


def test_a_stated_one_gpu_zero_offload_plan_is_launchable(client: TestClient) -> None:
    """/estimate called ZeRO-2 with the optimizer offloaded on one H100 `no_stack` ("No training stack … runs …
    dp 1 … ZeRO 2, offload optimizer") while dp 2 was accepted."""
    body = {
        "model": {"preset": "llama-3.2-3b"},
        "task": "full_finetune",
        "tokens": 1e8,
        "hardware": {"gpu": "h100-80g-sxm", "nodes": 1, "gpus_per_node": 1, "host_ram_gib": 512},
        "plan": {"dp": 1, "zero_stage": 2, "offload": "optimizer"},
    }
    response = client.post("/estimate", json=body)
    assert response.status_code == 200, response.text
    assert "no_stack" not in {warning["code"] for warning in response.json()["warnings"]}
    assert response.json()["memory"]["per_gpu_gib"]["optimizer"] == 0.0  # sized offloaded


def test_zero_one_over_context_parallel_alone_is_megatrons() -> None:
    """A stated dp 1 × cp 2 plan at ZeRO-1 shards its optimizer over the context-parallel ranks: Megatron-LM's
    distributed optimizer (over data × context parallel) with its fp32 main-gradient buffer. torchtitan shards over cp
    with FSDP2 (ZeRO-3), never ZeRO-1, so its lean account (16-bit gradients) must not be the one the gate takes.
    Llama 3.1 405B at tp 8 × pp 8 × cp 2 on 128 H100 with full recompute: Megatron's account holds 4 B/param of
    gradients (6.33B parameters a rank: 24.7 GiB) and does not fit 80 GB; the lean account read 65 GiB and fit."""
    plan = Plan(dp=1, tp=8, pp=8, cp=2, zero_stage=1, recompute="full", sequence_parallel=True)
    model = get_preset("llama-3.1-405b").model
    assert not runs("fsdp", FULL, plan)
    assert runs("megatron", FULL, replace(plan, fp32_main_grads=True))
    accounts = as_run(FULL, plan, model)
    assert [account.fp32_main_grads for account in accounts] == [True]
    assert stack_for(FULL, accounts[0], model) == "megatron"
