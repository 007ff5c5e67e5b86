"""Plans no engineer would run: a recommendation does not rank a plan that leaves its GPUs nearly idle, and where
nothing better exists it shows it as a near miss that says why and what would help. PURE.

A plan is not a sensible way to run the job when its model FLOPs utilisation is below MIN_MFU, or when the
communication it cannot hide takes more than MAX_EXPOSED_COMM_RATIO × its compute a step (DeepSeek-V3 full
fine-tuning on 8 H100 servers, ZeRO-3 with offload: over one 400 Gb/s port each, MFU 0.48 %, 172 s of exposed
communication against 7.7 s of compute a step, 227 h for ¥800,000; over the catalog's 8 × 400 Gb/s, MFU 1.9 %,
16.8 s against 7.7 s).
"""

from __future__ import annotations

from typing import Any, Final

from app.estimator.specs import GIB, MemoryBreakdown, Performance, Plan, Workload
from app.estimator.vocabulary import FULL_TRAINING_TASKS, Task
from app.planner.misses import Miss, MissCode
from app.planner.shapes import default_global_batch

# Published large training runs report 30-55 % MFU (PaLM 540B 46.2 %, Chowdhery et al. 2022 Table 3; Megatron-LM
# 3D parallelism on 3,072 A100s 44-52 % of peak, Narayanan et al. 2021 Table 1): below a tenth of the lowest of them,
# 95 % or more of the rented GPU time idles.
MIN_MFU = 0.05
# Exposed communication above 3 × the compute: the GPUs wait on the network three quarters of every step, a plan at
# best a quarter as fast as its compute allows whatever the other overheads (the same idle share as MIN_MFU's runs
# reach only with their own overheads on top).
MAX_EXPOSED_COMM_RATIO = 3.0
INEFFICIENT: Final = "inefficient"
# Tensor and pipeline parallelism where the replica's training states take at most this share of a GPU's limit: the
# states fit one GPU with room for the activations, so model parallelism only adds communication. Narayanan et al.
# 2021 (arXiv:2104.04473) §3.3, takeaway 2: the model-parallel size should be just large enough for the parameters
# and their metadata to fit in GPU memory, data parallelism scaling past it. Half: the other half holds the
# activations at micro-batch 1 with recompute (Qwen2.5 0.5B full fine-tune: 8 GiB of states on an 80 GB H100, where
# `fastest` took TP 2 x PP 3 x DP 16 over 12 servers at MFU 14.7 %, review R4-11).
MODEL_PARALLEL_STATES_SHARE = 0.5
NEEDLESS_MODEL_PARALLEL: Final[MissCode] = "model_parallel_unneeded"
IDLE_CODES = frozenset({INEFFICIENT, NEEDLESS_MODEL_PARALLEL})


def needless_model_parallel(plan: Plan, breakdown: MemoryBreakdown, workload: Workload) -> Miss | None:
    """`model_parallel_unneeded` where `plan` splits the model (tensor or pipeline parallel) only to fill GPUs the
    global batch cannot fill by data parallelism alone (it does not divide over them), although the replica's
    training states, unsharded, fit MODEL_PARALLEL_STATES_SHARE of the GPU's limit (the states per GPU scaled back by
    the degrees that shard them: tp x pp, and the ZeRO stage's data-parallel ranks) and memory does not need the
    split (those states with the plan's activations times tp x pp fit the limit). Such a configuration is the wrong
    size for the job: it ranks after the sensible ones (`IDLE_CODES`). None otherwise: where pure data parallelism
    could fill the GPUs the search chose the split for its speed; for inference (tensor parallelism speeds the
    decode); for an expert-parallel or offloading plan (states sharded or held elsewhere)."""
    if workload.task == "inference" or plan.tp * plan.pp == 1 or plan.ep > 1 or plan.offload != "none":
        return None
    global_batch = default_global_batch(workload)
    if breakdown.limit is None or global_batch % plan.gpus == 0:
        return None
    shards, ranks = plan.tp * plan.pp, plan.dp_shard or plan.dp
    weights = breakdown.weights * (ranks if plan.zero_stage >= 3 else 1)
    gradients = breakdown.gradients * (ranks if plan.zero_stage >= 2 else 1)
    optimizer = breakdown.optimizer * (ranks if plan.zero_stage >= 1 else 1)
    states = shards * (weights + gradients + optimizer)
    whole = states + shards * breakdown.activations  # the replica on one GPU at this plan's activations
    if states > MODEL_PARALLEL_STATES_SHARE * breakdown.limit or whole > breakdown.limit:
        return None
    params = {
        "tp": plan.tp,
        "pp": plan.pp,
        "gpus": plan.gpus,
        "global_batch": global_batch,
        "states_gib": round(states / GIB, 1),
        "limit_gib": round(breakdown.limit / GIB, 1),
    }
    return (NEEDLESS_MODEL_PARALLEL, params)


def inefficiency(performance: Performance, task: Task, nodes: int) -> Miss | None:
    """The `inefficient` miss of a training plan, with its figures and what would help (codes worded in
    app/text/messages.py EFFICIENCY_HELPS: fewer_servers, faster_fabric, more_gpu_memory, lora); None for a sensible
    plan, and for inference (no MFU to judge)."""
    mfu = performance.mfu
    breakdown = performance.breakdown_s or {}
    if mfu is None or task == "inference":
        return None
    compute = breakdown.get("compute", 0.0)
    exposed = breakdown.get("exposed_comm", 0.0)
    comm_bound = compute > 0 and exposed > MAX_EXPOSED_COMM_RATIO * compute
    if mfu >= MIN_MFU and not comm_bound:
        return None
    helps = []
    if nodes > 1 and exposed > compute:
        helps += ["fewer_servers", "faster_fabric"]
    if breakdown.get("offload", 0.0) > compute:
        helps.append("more_gpu_memory")
    if task in FULL_TRAINING_TASKS:
        helps.append("lora")
    params: dict[str, Any] = {
        "mfu": mfu,
        "compute_s": round(compute, 2),
        "exposed_comm_s": round(exposed, 2),
        "min_mfu": MIN_MFU,
        "helps": helps,
    }
    return (INEFFICIENT, params)
