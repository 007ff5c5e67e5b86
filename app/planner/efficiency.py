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

from app.estimator.specs import Performance
from app.estimator.vocabulary import FULL_TRAINING_TASKS, Task
from app.planner.misses import Miss

# Published large training runs report 30-55 % MFU (PaLM 540B 46.2 %, Chowdhery et al. 2022 Table 3; Megatron-LM
# 3D parallelism on 3,072 A100s 44-52 % of peak, Narayanan et al. 2021 Table 1): below a tenth of the lowest of them,
# 95 % or more of the rented GPU time idles.
MIN_MFU = 0.05
# Exposed communication above 3 × the compute: the GPUs wait on the network three quarters of every step, a plan at
# best a quarter as fast as its compute allows whatever the other overheads (the same idle share as MIN_MFU's runs
# reach only with their own overheads on top).
MAX_EXPOSED_COMM_RATIO = 3.0
INEFFICIENT: Final = "inefficient"


def inefficiency(performance: Performance, task: Task, nodes: int) -> Miss | None:
    """The `inefficient` miss of a training plan, with its figures and what would help (codes worded in
    app/messages.py EFFICIENCY_HELPS: fewer_servers, faster_fabric, more_gpu_memory, lora); None for a sensible
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
