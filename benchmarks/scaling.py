"""Print the scaling view (1-8 GPUs per intra-node link, 2-16 nodes per fabric) for a 7B full
fine-tune and a 70B pretrain on A100 and H100, the published runs against our prediction, and the
estimator's speed in calls per second.

Run: .venv/bin/python -m benchmarks.scaling            (everything)
     .venv/bin/python -m benchmarks.scaling published  (only the validation table)
"""

from __future__ import annotations

import statistics
import sys
import time

from app.estimator.performance import estimate_performance
from app.estimator.scaling import scaling_view
from app.estimator.specs import Cluster, GpuSpec, ModelSpec, Plan, Workload
from tests.estimator.perf_cases import A100_80_SXM, CASES, H100_SXM, LLAMA2_7B, LLAMA3_70B

# (title, model, workload of ONE replica, plan of one replica, RDMA NICs per node)
SCENARIOS: tuple[tuple[str, ModelSpec, Workload, Plan, int], ...] = (
    (
        "7B full fine-tune, ZeRO-2, 1 GPU = 1 replica, 4 x 2048 tokens per GPU per step",
        LLAMA2_7B,
        Workload(task="full_finetune", seq_len=2048, global_batch=4),
        Plan(zero_stage=2, micro_batch=4),
        1,
    ),
    (
        "70B pretrain, TP 8 + SP per node = 1 replica, ZeRO-1 across replicas, 16 x 4096 tokens per replica per step",
        LLAMA3_70B,
        Workload(task="pretrain", seq_len=4096, global_batch=16),
        Plan(tp=8, zero_stage=1, micro_batch=1, sequence_parallel=True, recompute="selective"),
        8,
    ),
)


def print_view(title: str, model: ModelSpec, workload: Workload, gpu: GpuSpec, plan: Plan, nics: int) -> None:
    print(f"\n## {title} on {gpu.name} (RDMA NICs per node: {nics})\n")
    # speed-up and efficiency count from the baseline (the fewest GPUs that fit, marked *); `fits` no: the model's
    # speed of a run that does not fit, which the API shows as null
    head = ("scope", "link", "gpus", "nodes", "fits", "tokens/s", "speed-up", "eff.")
    print("{:10s} {:14s} {:>5s} {:>5s} {:>4s} {:>12s} {:>9s} {:>6s}".format(*head))
    for row in scaling_view(model, workload, gpu, plan, rdma_nics_per_node=nics):
        fits, base = "yes" if row["fits"] else "no", " *" if row["baseline"] else ""
        print(
            f"{row['scope']:10s} {row['link']:14s} {row['gpus']:5d} {row['nodes']:5d} {fits:>4s} "
            f"{row['tokens_per_s']:12.0f} {row['speedup']:9.2f} {row['efficiency']:6.1%}{base}"
        )


def print_published() -> None:
    """Every validation case: published vs predicted tokens/s per GPU and the relative error."""
    print(f"\n## Published runs vs prediction ({len(CASES)} cases)\n")
    print(f"{'case':55s} {'published':>10s} {'predicted':>10s} {'error':>7s} {'MFU':>6s}")
    errors = []
    for case in CASES:
        perf = estimate_performance(case.model, case.workload, case.plan, case.cluster).performance
        error = perf.tokens_per_s_per_gpu / case.tokens_per_s_per_gpu - 1
        errors.append(abs(error))
        print(
            f"{case.label:55s} {case.tokens_per_s_per_gpu:10.0f} {perf.tokens_per_s_per_gpu:10.0f} "
            f"{error:+7.1%} {perf.mfu:6.1%}"
        )
    print(f"\nmedian |error| {statistics.median(errors):.1%}, worst {max(errors):.1%}")


def calls_per_second(repeats: int = 7) -> float:
    """Distinct plans, as the planner calls it; best of `repeats` in CPU time (robust to a busy box)."""
    cluster = Cluster(gpu=H100_SXM, gpus_per_node=8, nodes=8, inter_node_gbps=3200)
    workload = Workload(task="pretrain", seq_len=4096, global_batch=512)
    plans = [
        Plan(dp=64 // (tp * pp), tp=tp, pp=pp, zero_stage=z, micro_batch=mb)
        for tp in (1, 2, 4, 8)
        for pp in (1, 2, 4, 8)
        for z in (0, 1, 3)
        for mb in (1, 2, 4)
    ]
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        for _ in range(10):
            for plan in plans:
                estimate_performance(LLAMA3_70B, workload, plan, cluster)
        best = min(best, (time.process_time() - start) / (10 * len(plans)))
    return 1.0 / best


def main() -> None:
    if sys.argv[1:] != ["published"]:
        for title, model, workload, plan, nics in SCENARIOS:
            for gpu in (A100_80_SXM, H100_SXM):
                print_view(title, model, workload, gpu, plan, nics)
    print_published()
    print(f"\nestimate_performance: {calls_per_second():,.0f} calls/s (one core, CPU time, best of 7)")


if __name__ == "__main__":
    main()
