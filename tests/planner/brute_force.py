"""Every plan of the search space, no pruning: the reference `tests/planner/test_search.py` compares
the pruned search (app.planner.search) with. ZeRO-1 included, which the search skips by argument. Memory relief's
wider look (app.planner.relief `_widened`) is brute force too: every plan of the space, each stack's account, that
holds the high end of its memory range."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from app.estimator.memory import estimate_memory
from app.estimator.performance import estimate_performance
from app.estimator.specs import Cluster, ModelSpec, Plan, Workload
from app.estimator.vocabulary import OFFLOADS, RECOMPUTES
from app.planner.relief import holds_high_end
from app.planner.search import (
    Evaluated,
    as_held,
    default_global_batch,
    faster,
    fits,
    micro_batches,
    offloads,
    plan_shapes,
    relieved,
)
from app.planner.stacks import as_run, supported


def brute_force(
    model: ModelSpec, workload: Workload, cluster: Cluster, *, micro_batch: int | None = None
) -> Evaluated | None:
    global_batch = default_global_batch(workload)
    workload = replace(workload, global_batch=global_batch) if workload.task != "inference" else workload
    best: Evaluated | None = None
    plans = list(_every_plan(model, workload, cluster, global_batch, micro_batch))
    for plan in plans:
        plan = as_held(model, workload, plan, cluster)  # the stack that runs it, within memory
        memory = estimate_memory(model, workload, plan, cluster)
        if not fits(memory.breakdown, cluster):  # the search's gate (host RAM unknown: the load)
            continue
        candidate = Evaluated(plan, memory, estimate_performance(model, workload, plan, cluster))
        if best is None or faster(candidate, best):
            best = candidate

    def wider(first: Plan, incumbent: Evaluated | None) -> Evaluated | None:
        found = incumbent
        for plan in plans:
            if OFFLOADS.index(plan.offload) > OFFLOADS.index(first.offload):
                continue  # no more offload than the plan found first
            for held in as_run(workload, plan, model):  # each stack's account, the first that holds it
                memory = estimate_memory(model, workload, held, cluster)
                if holds_high_end(model, workload, cluster, held, memory.breakdown):
                    candidate = Evaluated(held, memory, estimate_performance(model, workload, held, cluster))
                    if found is None or faster(candidate, found):
                        found = candidate
                    break
        return found if found is not incumbent else None

    return relieved(model, workload, cluster, best, micro_batch, wider=wider)  # the search's memory relief of its best


def _every_plan(
    model: ModelSpec, workload: Workload, cluster: Cluster, global_batch: int, micro_batch: int | None
) -> Iterator[Plan]:
    for shape in plan_shapes(model, workload, cluster):
        dp = shape.dp
        for zero in (0, 1, 2, 3) if dp > 1 and workload.task != "inference" else (0,):
            for offload in offloads(workload.task, zero, cluster.host_ram_gib is not None):
                for recompute in ("none",) if workload.task == "inference" else RECOMPUTES:
                    for mb in micro_batches(workload, dp, global_batch, micro_batch):
                        plan = replace(shape, zero_stage=zero, offload=offload, recompute=recompute, micro_batch=mb)
                        if supported(workload, plan, model):  # a stack that runs it and builds the model
                            yield plan
