"""The stack support matrix (app/planner/stacks.py) and each stack's launch configuration.

The launch configurations are checked against each tool's documented schema (no tool installs
here without PyTorch): DeepSpeed's ZeRO configuration model (deepspeed/runtime/zero/config.py,
`DeepSpeedZeroConfig` with `extra="forbid"`: the keys below are its fields or their aliases) and
its batch assertion (train_batch_size = micro × accumulation × data-parallel size, checked in
deepspeed/runtime/config.py and deepspeed/runtime/pipe/engine.py); Megatron-LM's argument names
(megatron/training/arguments.py); PEFT's `LoraConfig` and transformers' `BitsAndBytesConfig` fields.
"""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from app.estimator.presets import get_preset
from app.estimator.specs import LoraSpec, Plan, Workload
from app.planner.launch import launch_configs
from app.planner.stacks import runs, stack_for

# DeepSpeed "Configuration JSON" top-level keys we may emit, and DeepSpeedZeroConfig fields/aliases.
DS_TOP_KEYS = {
    "train_batch_size",
    "train_micro_batch_size_per_gpu",
    "gradient_accumulation_steps",
    "gradient_clipping",
    "zero_optimization",
    "bf16",
    "fp16",
    "pipeline",
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


def test_deepspeed_pipeline_refuses_zero_2_and_3() -> None:
    # deepspeed/runtime/pipe/engine.py: "ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism"
    for zero in (2, 3):
        plan = Plan(dp=2, pp=2, zero_stage=zero)
        assert not runs("deepspeed", FULL, plan)
        assert not runs("megatron", FULL, plan)  # distributed optimizer = ZeRO-1 only
        assert stack_for(FULL, plan) == "fsdp"  # torchtitan: FSDP2 × pipeline
    assert runs("deepspeed", FULL, Plan(dp=2, pp=2, zero_stage=1))


def test_lora_with_model_parallel_runs_only_on_megatron_and_qlora_nowhere() -> None:
    plan = Plan(dp=2, tp=2)
    assert not runs("deepspeed", LORA, plan) and not runs("fsdp", LORA, plan)
    assert stack_for(LORA, plan) == "megatron"
    assert stack_for(QLORA, plan) is None
    assert stack_for(QLORA, Plan(dp=4, zero_stage=3)) == "deepspeed"


def test_offload_needs_the_stage_each_stack_documents() -> None:
    assert not runs("deepspeed", FULL, Plan(dp=8, zero_stage=2, offload="optimizer_and_params"))
    assert runs("deepspeed", FULL, Plan(dp=8, zero_stage=2, offload="optimizer"))
    assert not runs("fsdp", FULL, Plan(dp=8, zero_stage=3, offload="optimizer"))  # CPUOffloadPolicy moves all
    assert not runs("megatron", FULL, Plan(dp=8, zero_stage=1, offload="optimizer"))
    assert not runs("deepspeed", FULL, Plan(dp=8, zero_stage=2, recompute="selective"))  # HF: whole layers


def _ds(config: dict) -> dict:
    assert set(config) == {"deepspeed"}
    return config["deepspeed"]


def test_deepspeed_batch_arithmetic_is_over_the_data_parallel_ranks_only() -> None:
    model = get_preset("llama-3.1-8b").model
    plan = Plan(dp=4, pp=2, zero_stage=1, micro_batch=2, recompute="full")
    ds = _ds(launch_configs("deepspeed", model, FULL, plan, nodes=1, gpus_per_node=8, global_batch=128))
    config = ds["ds_config"]
    assert set(config) <= DS_TOP_KEYS and set(config["zero_optimization"]) <= DS_ZERO_KEYS
    assert ds["world_size"] == 8 and ds["data_parallel_size"] == 4 == ds["world_size"] // plan.pp
    assert config["train_batch_size"] == 128
    assert config["train_batch_size"] == (
        config["train_micro_batch_size_per_gpu"] * config["gradient_accumulation_steps"] * ds["data_parallel_size"]
    )
    assert config["gradient_accumulation_steps"] == 16
    assert ds["pipeline_module"]["num_stages"] == 2 and config["pipeline"]["activation_checkpoint_interval"] == 1


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
    config = launch_configs("megatron", model, FULL, plan, nodes=8, gpus_per_node=8, global_batch=512)["megatron"]
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


def test_megatron_lora_carries_a_peft_block() -> None:
    model = get_preset("qwen2.5-72b").model
    plan = Plan(dp=1, tp=4, micro_batch=1, recompute="full", sequence_parallel=True)
    config = launch_configs("megatron", model, LORA, plan, nodes=1, gpus_per_node=4, global_batch=128)["megatron"]
    assert config["peft"] == {
        "type": "lora",
        "dim": 16,
        "alpha": 32.0,
        "dropout": 0.0,
        "target_modules": ["linear_qkv", "linear_proj", "linear_fc1", "linear_fc2"],
    }
    assert "--add-qkv-bias" in config["args"]  # Qwen2 has q, k, v biases


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


def _recommend(client: TestClient, **body) -> dict:
    response = client.post("/recommend", json=body)
    assert response.status_code == 200, response.text
    return response.json()


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
