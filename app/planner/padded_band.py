"""The memory band of an answered plan with its batches as the stack feeds them (stacks.as_padded).

Batches of varied length keep one more set of the loss's logits-sized blocks cached in the allocator's pool
(memory VARIED_LENGTH_SLACK, `MemoryBreakdown.length_slack`): the reserved and nvidia-smi readings grow, the live
tensors do not. The gate stays on the point estimate: a cudaMalloc that fails makes PyTorch's caching allocator free
its unused cached blocks and retry (c10/cuda/CUDACachingAllocator.cpp `release_cached_blocks`), and ms-swift's
Qwen-7B LoRA at 8 x 2,048 ran with 76.14 GiB reserved on an 80 GB A100 (docs/source_en/LLM/Benchmark.md at
46922151) where the estimate's live tensors are 48.6 GiB and its gate figure 50.3 GiB; gating on the reserved pool
(78.1 GiB with the slack, above the 75.05 GiB limit) would refuse a run that ran. But where that pool crosses the
limit, the plan runs near the card and a fragmented pool can still fail a large request: there the high end of the
range reaches the gate figure plus the slack, so the option carries `memory_may_exceed` and the ranking prefers, at
equal cost, one that fits with it. Below the limit the range stays the estimator's (band.py; its half-width is the
figure the issue bounds, and the slack is a reading of the pool, not more live memory)."""

from __future__ import annotations

from dataclasses import replace

from app.estimator.compute import NF4_BYTES_PER_PARAM
from app.estimator.memory import varied_length_slack
from app.estimator.memory.band import MemoryBand, may_exceed, memory_band
from app.estimator.memory.estimate import measured_bytes
from app.estimator.specs import GIB, Cluster, MemoryBreakdown, ModelSpec, Plan, Warning_, Workload, plan_with
from app.estimator.vocabulary import BYTES_PER_ELEMENT, RECOMPUTES
from app.planner.levers import fused_relief
from app.planner.stacks import as_padded, supported


def padded_band(model: ModelSpec, workload: Workload, plan: Plan, cluster: Cluster, b: MemoryBreakdown) -> MemoryBand:
    """`memory_band`, its high end raised to the gate figure plus the varied-length slack where that pool crosses the
    limit the gate checks and the range's high end does not."""
    band = memory_band(model, workload, plan, cluster, b)
    limit = b.capacity if b.limit is None else b.limit
    pooled = b.total + b.length_slack
    return replace(band, high=pooled) if pooled > limit and pooled > band.high else band


def pool_crosses_limit(model: ModelSpec, workload: Workload, plan: Plan, cluster: Cluster, b: MemoryBreakdown) -> bool:
    """Whether the plan's reserved reading (`memory.as_measured_gib.reserved`: the allocator's pool, with the
    varied-length slack of the batches its stack feeds, `as_padded`) crosses the limit the gate checks. The search's
    memory relief reads it as the option will (recommend.py `_option`), so a plan whose pool fills the card gives way to
    a relief plan of the same servers and months whose pool does not."""
    limit = b.capacity if b.limit is None else b.limit
    slack = b.length_slack
    if workload.varied_lengths is None:
        padded = as_padded(workload, plan, model)
        if padded.varied_lengths:  # only the slack moves: the live tensors and the gate figure do not
            slack = varied_length_slack(model, padded, plan)
    if slack <= 0.0:  # the pool is the gate figure less NCCL's buffers, within the limit the plan fits
        return False
    return measured_bytes(replace(b, length_slack=slack), plan, cluster, "reserved") > limit


def memory_levers(model: ModelSpec, workload: Workload, plan: Plan) -> list[str]:
    """The memory levers still open to `plan` (what `memory_may_exceed` advises): full activation recompute where it
    recomputes less, a smaller micro-batch above 1, the fused loss where Liger fuses the family's loss; a lever only
    where some stack runs the plan with it (stacks.supported)."""
    if workload.task == "inference":
        return []
    levers = []
    if plan.recompute != RECOMPUTES[-1] and supported(workload, plan_with(plan, recompute=RECOMPUTES[-1]), model):
        levers.append("recompute")
    if plan.micro_batch > 1:
        levers.append("micro_batch")
    fused = fused_relief(model.family, plan)
    if fused is not None and supported(workload, fused, model):
        levers.append("fused_loss")
    return levers


def may_exceed_advice(
    model: ModelSpec, workload: Workload, plan: Plan, band: MemoryBand, breakdown: MemoryBreakdown
) -> Warning_ | None:
    """`memory_may_exceed` (band.may_exceed) with the levers still open to the plan (`memory_levers`): its advice
    names only those."""
    warning = may_exceed(band, breakdown)
    if warning is None:
        return None
    figures = warning.params
    levers = memory_levers(model, workload, plan) + (["qlora"] if _qlora_holds(workload, band, breakdown) else [])
    return Warning_(
        "memory_may_exceed",
        {
            "total_gib": figures["total_gib"],
            "high_gib": figures["high_gib"],
            "limit_gib": figures["limit_gib"],
            "levers": levers,
        },
    )


def _qlora_holds(workload: Workload, band: MemoryBand, breakdown: MemoryBreakdown) -> bool:
    """Whether QLoRA (task `qlora`: the frozen 16-bit base stored as NF4, NF4_BYTES_PER_PARAM) would bring a LoRA
    plan's high end within its limit: the weights a GPU holds shrink to NF4_BYTES_PER_PARAM over their bytes each
    (the adapters, a sliver of them, counted as shrinking too). Review R4-3: Llama 3.1 70B LoRA under a 20,000 budget
    was offered only on 4 x A100 40G at 36.94 of 37.05 GiB, its range reaching 46.91 GiB, where QLoRA on the same
    cards holds 22.2 GiB; the advice named no lever that gets there."""
    stored = BYTES_PER_ELEMENT[workload.precision]  # bytes a base weight takes now
    if workload.task != "lora" or stored <= NF4_BYTES_PER_PARAM or breakdown.limit is None:
        return False
    saved = breakdown.weights * (1 - NF4_BYTES_PER_PARAM / stored)
    return band.high - saved <= breakdown.limit


def pool_warning(band: MemoryBand, breakdown: MemoryBreakdown) -> Warning_ | None:
    """`memory_pool_fills_card`: the plan fits on its point estimate, and its reserved reading (`band.readings`, as
    `memory.as_measured_gib.reserved` shows it: `pool_crosses_limit`'s figure, the caching allocator's pool with the
    slack of the batches its stack feeds) crosses the limit the gate checks. The gate stays on the point estimate
    (module docstring: a failed cudaMalloc frees the cached blocks and retries, and such runs ran), and the reading
    stops at the card's capacity (estimate.measured_bytes); but the run then holds the card full, where /recommend's
    memory relief trades the plan for one whose pool fits (relief.py `_near_limit`). Review R6-4: Llama 3.1 70B QLoRA
    at 16,384 tokens on one H200 read 116.6 GiB, fits, with the pool at the card's 140.0 GiB, and said only that its
    range might exceed the limit."""
    limit = breakdown.capacity if breakdown.limit is None else breakdown.limit
    reserved = band.readings.get("reserved", 0.0)
    if breakdown.total > limit or reserved <= limit:
        return None
    params = {
        "total_gib": round(breakdown.total / GIB, 2),
        "reserved_gib": round(reserved / GIB, 2),
        "limit_gib": round(limit / GIB, 2),
        "capacity_gib": round(breakdown.capacity / GIB, 2),
    }
    return Warning_("memory_pool_fills_card", params)
