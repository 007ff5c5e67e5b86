"""A plan as ready-to-use launch configuration. PURE.

- DeepSpeed `ds_config.json`: keys from the DeepSpeed configuration docs
  (deepspeed.readthedocs.io, "DeepSpeed Configuration JSON": train_batch_size,
  train_micro_batch_size_per_gpu, gradient_accumulation_steps, bf16/fp16, zero_optimization with
  stage, offload_optimizer / offload_param {device, pin_memory}, overlap_comm, contiguous_gradients).
  DeepSpeed checks train_batch_size = micro × accumulation × data-parallel size.
- torchrun + FSDP: torchrun's documented flags (--nnodes, --nproc-per-node, --rdzv-backend,
  --rdzv-endpoint) and FSDP's ShardingStrategy names (FULL_SHARD ≈ ZeRO-3, SHARD_GRAD_OP ≈ ZeRO-2,
  NO_SHARD = DDP). FSDP's CPUOffload offloads parameters, gradients and the optimizer step together.
- Megatron-LM arguments from `megatron/training/arguments.py` (--tensor-model-parallel-size,
  --pipeline-model-parallel-size, --num-layers-per-virtual-pipeline-stage, --sequence-parallel,
  --use-distributed-optimizer, --recompute-granularity/--recompute-method/--recompute-num-layers,
  --micro-batch-size, --global-batch-size, --group-query-attention/--num-query-groups, --swiglu).
"""

from __future__ import annotations

from typing import Any

from app.estimator.specs import ModelSpec, Plan, Workload

FSDP_STRATEGY = {0: "NO_SHARD", 1: "SHARD_GRAD_OP", 2: "SHARD_GRAD_OP", 3: "FULL_SHARD"}


def accumulation_steps(plan: Plan, global_batch: int) -> int:
    return max(1, global_batch // (plan.dp * plan.micro_batch))


def deepspeed_config(workload: Workload, plan: Plan, global_batch: int) -> dict[str, Any]:
    zero: dict[str, Any] = {"stage": plan.zero_stage, "overlap_comm": True, "contiguous_gradients": True}
    if plan.offload != "none":
        zero["offload_optimizer"] = {"device": "cpu", "pin_memory": True}
    if plan.offload == "optimizer_and_params":
        zero["offload_param"] = {"device": "cpu", "pin_memory": True}
    if plan.zero_stage == 3:
        zero["stage3_gather_16bit_weights_on_model_save"] = True
    config: dict[str, Any] = {
        "train_batch_size": plan.dp * plan.micro_batch * accumulation_steps(plan, global_batch),
        "train_micro_batch_size_per_gpu": plan.micro_batch,
        "gradient_accumulation_steps": accumulation_steps(plan, global_batch),
        "gradient_clipping": 1.0,
        "zero_optimization": zero,
    }
    if workload.precision in ("bf16", "fp8"):
        config["bf16"] = {"enabled": True}
    elif workload.precision == "fp16":
        config["fp16"] = {"enabled": True, "loss_scale": 0}
    return config


def torchrun_fsdp(plan: Plan, nodes: int, gpus_per_node: int, workload: Workload) -> dict[str, Any]:
    command = (
        f"torchrun --nnodes={nodes} --nproc-per-node={gpus_per_node} --rdzv-backend=c10d "
        f"--rdzv-endpoint=$MASTER_ADDR:29500 train.py"
    )
    return {
        "command": command,
        "fsdp": {
            "sharding_strategy": FSDP_STRATEGY[plan.zero_stage],
            "cpu_offload": plan.offload != "none",
            "activation_checkpointing": plan.recompute != "none",
            "mixed_precision": workload.precision if workload.precision != "fp8" else "bf16",
        },
        "applies": plan.tp == 1 and plan.pp == 1,
        "note": "FSDP alone covers data parallel and sharding; tensor or pipeline parallel plans need Megatron-LM "
        "or torchtitan. FSDP's CPU offload also moves parameters (slower than optimizer-only offload).",
    }


def megatron_args(model: ModelSpec, workload: Workload, plan: Plan, global_batch: int) -> list[str]:
    args = [
        f"--tensor-model-parallel-size {plan.tp}",
        f"--pipeline-model-parallel-size {plan.pp}",
        f"--micro-batch-size {plan.micro_batch}",
        f"--global-batch-size {global_batch}",
        f"--seq-length {workload.seq_len}",
        f"--num-layers {model.layers}",
        f"--hidden-size {model.hidden}",
        f"--num-attention-heads {model.heads}",
        f"--ffn-hidden-size {model.ffn}",
    ]
    if model.kv_heads != model.heads:
        args += ["--group-query-attention", f"--num-query-groups {model.kv_heads}"]
    if model.mlp == "swiglu":
        args.append("--swiglu")
    if plan.virtual_stages > 1:
        args.append(f"--num-layers-per-virtual-pipeline-stage {model.layers // (plan.pp * plan.virtual_stages)}")
    if plan.sequence_parallel and plan.tp > 1:
        args.append("--sequence-parallel")
    if plan.zero_stage >= 1:
        args.append("--use-distributed-optimizer")
    if plan.recompute == "selective":
        args.append("--recompute-activations")
    elif plan.recompute == "full":
        args += ["--recompute-granularity full", "--recompute-method uniform", "--recompute-num-layers 1"]
    if plan.cp > 1:
        args.append(f"--context-parallel-size {plan.cp}")
    if workload.precision in ("bf16", "fp8"):
        args.append("--bf16")
    elif workload.precision == "fp16":
        args.append("--fp16")
    if workload.precision == "fp8":
        args.append("--fp8-format hybrid")
    return args


def launch_configs(
    model: ModelSpec, workload: Workload, plan: Plan, nodes: int, gpus_per_node: int, global_batch: int
) -> dict[str, Any]:
    return {
        "deepspeed": deepspeed_config(workload, plan, global_batch),
        "torchrun_fsdp": torchrun_fsdp(plan, nodes, gpus_per_node, workload),
        "megatron": megatron_args(model, workload, plan, global_batch),
    }
