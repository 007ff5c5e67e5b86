"""The torchtitan launch of the fsdp stack: torchrun's command and train.toml. PURE.

torchtitan job config (torchtitan/config/job_config.py at v0.2.2, the last release configured by a TOML file;
docs/composability.md): parallelism.{data_parallel_replicate_degree, data_parallel_shard_degree,
tensor_parallel_degree, pipeline_parallel_degree, context_parallel_degree, fsdp_reshard_after_forward,
pipeline_parallel_microbatch_size}, training.{local_batch_size, global_batch_size, seq_len, steps,
mixed_precision_param, mixed_precision_reduce, enable_cpu_offload}, activation_checkpoint.{mode, selective_ac_option},
checkpoint.{initial_load_in_hf, interval}, optimizer, lr_scheduler, model.converters for float8. FSDP2 has no FSDP1
`sharding_strategy`: the shard and replicate degrees say it. The fsdp stack runs no LoRA/QLoRA (data/stacks.json:
torchtune's recipe needs a per-model config this launch did not write).
"""

from __future__ import annotations

from typing import Any

from app.estimator.specs import ModelSpec, Performance, Plan, Workload
from app.estimator.vocabulary import Optimizer
from app.planner.launch.common import (
    MIN_LR_RATIO,
    TORCH_DTYPE,
    Job,
    _note,
    _notes_out,
    _repo,
    _slug,
    _task_notes,
    run_schedule,
)
from app.planner.shapes import stage_layers
from app.planner.stacks import flavor

# The optimizer the estimate sized (trainer.TRAINER_OPTIM), as torchtitan names it: v0.2.2
# torchtitan/components/optimizer.py `build_optimizers` takes {"Adam", "AdamW"}, anything else raises
# NotImplementedError.
TORCHTITAN_OPTIMIZER: dict[Optimizer, str] = {"adamw": "AdamW"}


def _fsdp(job: Job) -> dict[str, Any]:
    model, workload, plan = job.model, job.workload, job.plan
    return {
        "command": job.torchrun("-m torchtitan.train --job.config_file train.toml"),
        **job.world(),
        "torchtitan": torchtitan_config(model, workload, plan, job.global_batch, job.performance),
        **_notes_out([_note("torchtitan_download", repo=_repo(model)), *_task_notes(model, workload)]),
    }


def _torchtitan_stage_split(model: ModelSpec, plan: Plan) -> dict[str, int]:
    """The stage split the estimate sized (app/planner/shapes.py stage_layers), in torchtitan's terms: its
    automatic split counts the embedding as `first_stage_less_layers` layers and the head as `last_stage_less_layers`
    (both default 1, which gives even layer counts uneven stages: 32 layers on PP 4 as 8 | 9 | 8 | 7) and deals the
    layers plus those out evenly (v0.2.2 distributed/pipeline_parallel.py generate_llm_fqn_per_model_part). Setting
    them to the first and last stages' shortfall from the middle stages' count makes every stage hold exactly its
    share of the split: pp × middle effective layers, none left over."""
    split = stage_layers(model.layers, plan.pp) if plan.virtual_stages == 1 else None
    if split is None:
        return {}
    first, middle, last = split
    return {
        "pipeline_parallel_first_stage_less_layers": middle - first,
        "pipeline_parallel_last_stage_less_layers": middle - last,
    }


def torchtitan_config(
    model: ModelSpec, workload: Workload, plan: Plan, global_batch: int, performance: Performance | None = None
) -> dict[str, Any]:
    """train.toml for torchtitan (job_config.py's sections; FSDP2, so no FSDP1 sharding strategy: ZeRO-3 is
    fsdp_reshard_after_forward "always", ZeRO-2 "never", hybrid sharding a replicate degree above 1)."""
    sharded = plan.zero_stage >= 2 and plan.dp > 1
    # hybrid sharding: shard over dp_shard, replicate over the rest (torchtitan runs HSDP when both exceed 1)
    shard = plan.shard_dp if sharded else 1
    parallelism: dict[str, Any] = {
        "data_parallel_replicate_degree": plan.dp // shard,
        "data_parallel_shard_degree": shard,
        "tensor_parallel_degree": plan.tp,
        "pipeline_parallel_degree": plan.pp,
        "context_parallel_degree": plan.cp,
        "fsdp_reshard_after_forward": "always" if plan.zero_stage == 3 else "never",
    }
    if plan.pp > 1:
        parallelism["pipeline_parallel_microbatch_size"] = plan.micro_batch
        parallelism["pipeline_parallel_schedule"] = "Interleaved1F1B" if plan.virtual_stages > 1 else "1F1B"
        parallelism.update(_torchtitan_stage_split(model, plan))
    training: dict[str, Any] = {
        # torchtitan accumulates gradients itself when global > local × data-parallel ranks
        "local_batch_size": global_batch // plan.dp if plan.pp > 1 else plan.micro_batch,
        "global_batch_size": global_batch,
        "seq_len": workload.seq_len,
        "mixed_precision_param": TORCH_DTYPE[workload.precision],
        "mixed_precision_reduce": "float32",
        "enable_cpu_offload": plan.offload != "none",
        "max_norm": 1.0,
        "dataset_path": f"/data/{_slug(model)}",
    }
    # scripts/download_hf_assets.py --repo_id <repo> writes ./assets/hf/<name> (torchtitan's example configs)
    assets = f"./assets/hf/{(model.hf_repo or _slug(model)).rsplit('/', 1)[-1]}"
    # the registered model and flavor (torchtitan/models/*/__init__.py); the stack is only chosen for those
    entry = flavor("fsdp", model)
    named = {"name": entry.name, "flavor": entry.flavor} if entry is not None else {}
    config: dict[str, Any] = {
        "model": {**named, "hf_assets_path": assets},
        "parallelism": parallelism,
        "training": training,
        "activation_checkpoint": {"mode": plan.recompute, "selective_ac_option": "op"},
    }
    run = run_schedule(model, workload, global_batch, performance)
    name = TORCHTITAN_OPTIMIZER[workload.optimizer]
    config["optimizer"] = {"name": name, "lr": run.lr, "weight_decay": 0.1, "beta1": 0.9, "beta2": 0.95}
    config["lr_scheduler"] = {"decay_type": "cosine", "min_lr_factor": MIN_LR_RATIO}
    checkpoint: dict[str, Any] = {"enable": True, "folder": f"{_slug(model)}-{workload.task.replace('_', '-')}"}
    if run.iters is not None:
        training["steps"] = run.iters
        config["lr_scheduler"]["warmup_steps"] = run.warmup_steps
        checkpoint["interval"] = run.save_interval
    if workload.task != "pretrain":  # start from the published weights in hf_assets_path (docs/checkpoint.md)
        checkpoint |= {"initial_load_in_hf": True, "initial_load_model_only": True}
    config["checkpoint"] = checkpoint
    if plan.compiled:  # the estimate counted torch.compile's recomputed pointwise ops (plan.compile)
        # and, with plan.loss "compiled", the loss compiled with it (torchtitan --compile.components)
        config["compile"] = {"enable": True, "components": ["model", "loss"] if plan.compiled_loss else ["model"]}
    if workload.precision == "fp8":
        config |= _torchtitan_float8(shard > 1)
        config["model"]["converters"] = ["quantize.linear.float8"]
    return config


def _torchtitan_float8(sharded: bool) -> dict[str, Any]:
    """torchtitan v0.2.2 float8 training (docs/float8.md, torchtitan/components/quantization/float8.py): the
    quantize.linear.float8 converter swaps nn.Linear for torchao's Float8Linear, tensorwise scaling by default;
    with FSDP sharding it all-gathers the weights in float8 and precomputes their scales in one all-reduce;
    torch.compile fuses the casts ("required for competitive performance"). The converter raises below SM89, so it
    is only emitted where the GPU runs fp8 (`launch_configs`)."""
    float8 = {"enable_fsdp_float8_all_gather": True, "precompute_float8_dynamic_scale_for_fsdp": True}
    return {"quantize": {"linear": {"float8": float8 if sharded else {}}}, "compile": {"enable": True}}
