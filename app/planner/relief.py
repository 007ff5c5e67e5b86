"""Memory relief: the plan the search found for a configuration, traded for a lighter one of the same servers where
its memory sits too near the card (app/planner/search.py calls `relieved` on its best plan). PURE: imports only the
estimator and the planner's pure modules."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from app.estimator.memory import estimate_memory, memory_breakdown
from app.estimator.memory.band import high_end as band_high, may_exceed, memory_band
from app.estimator.performance import estimate_performance
from app.estimator.specs import Cluster, MemoryBreakdown, ModelSpec, Plan, Workload, plan_with
from app.estimator.vocabulary import OFFLOADS, RECOMPUTES
from app.planner.efficiency import inefficiency
from app.planner.evaluated import Evaluated, Relief, faster, fits, throughput
from app.planner.levers import fused_relief
from app.planner.offers import billed_months
from app.planner.padded_band import pool_crosses_limit
from app.planner.shapes import micro_batches
from app.planner.stacks import as_run, stack_for, supported

# Memory relief: a plan within RELIEF_MARGIN of its GPU memory limit takes one more level of activation recompute, or
# half its micro-batch, where that costs under RELIEF_MAX_SLOWDOWN of its speed and leaves it clear of the margin.
# The estimate meets measured peaks within a few percent (docs/validation.md, memory), and the caching allocator's
# fragmentation takes a few percent more on a real run: a plan within 3 % of the limit may not start, and an engineer
# who signs it turns on selective recompute first (issue 32, "memory relief first"). Likewise a plan that offloads
# states to host RAM gives way to one that keeps them on the GPUs (less offload, at any recompute level and
# micro-batch) within half its speed and the same billed months (OFFLOAD_RELIEF_MAX_SLOWDOWN): pinned host buffers
# of hundreds of GiB and PCIe traffic are what fails first.
# And a plan that fits on its estimate but not at the high end of its memory range (`memory_may_exceed`) gives way to
# one of its relief plans that fits at the high end within the same speed and billed months: a slower step at the same
# cost is the cheaper risk. Where its reserved reading (the allocator's pool with the slack of padded batches,
# padded_band.pool_crosses_limit) crosses the limit, the run fills the card and a fragmented pool fails large requests:
# it gives way to a relief plan whose pool fits, on the same servers and billed months, so at the same cost, while that
# keeps half its speed (POOL_RELIEF_MAX_SLOWDOWN, the trade the offload relief makes): Llama 3.1 405B LoRA on 8 A100
# takes micro-batch 1 (43.8 GiB reserved, 7 % slower) where micro-batch 2 read 75.11 GiB of 75.05; Mixtral 8x7B LoRA on
# 4 A100 40G takes micro-batch 1 (33.6 of 37.05 GiB, 46 % slower: halving the micro-batch of a plan bound by ZeRO-3
# gathers doubles its traffic a token) where micro-batch 2 read 38.5 and nvidia-smi the whole card. Against the high end
# and the pool the fused loss (levers.fused_relief: Liger through the Trainer, not on the megatron stack, whose fused
# cross-entropy keeps the logits) is among the relief plans, which holds no logits: Llama 3.1 70B full fine-tuning on
# one 8 x H100 server at 8,192 tokens keeps micro-batch 2 at 50.2 GiB with it (high end 65.9) where the standard loss
# read 73.3 (high end 99.0, reserved 78.5 of 75.05); Gemma 2 9B LoRA on one A100 40G (256,000-token vocabulary)
# read 39.0 GiB reserved with the standard loss at full recompute and micro-batch 1, 20.4 with the fused one.
RELIEF_MARGIN = 0.03
RELIEF_MAX_SLOWDOWN = 0.05
# "No offload where the states fit" (issue 32): a plan that offloads states gives way to the fastest plan of its shape
# with less offload that clears the margin and bills no more months of the same rental, while that keeps at least half
# its speed. The ranking lets an option holding the states lead one that offloads them up to OFFLOAD_PREMIUM = 2 × the
# price (app/planner/ranking.py, "Offload last"); on one rental the same months cost the same, and half the speed
# is that premium in time. Before, only a plan within RELIEF_MAX_SLOWDOWN gave way: Gemma 2 9B full fine-tuning at
# 8k tokens with the fused loss kept ZeRO-3 with the optimizer offloaded, recompute off, at 72.9 of 75.05 GiB (high end
# 102 %), where ZeRO-3 with full recompute holds every state on the GPUs at 55 GiB, 10 % slower, in the same month.
OFFLOAD_RELIEF_MAX_SLOWDOWN = 0.5
POOL_RELIEF_MAX_SLOWDOWN = OFFLOAD_RELIEF_MAX_SLOWDOWN
# The search's wider look for the high end (search.py `_holding_high_end`): given the plan found first and the fastest
# relieved twin of it (or None), the fastest plan of any shape on the same servers that holds the high end
# (`holds_high_end`), offloads no more than the first plan and beats the twin; else None.
Wider = Callable[[Plan, Evaluated | None], Evaluated | None]


def relieved(
    model: ModelSpec,
    workload: Workload,
    cluster: Cluster,
    best: Evaluated | None,
    micro_batch: int | None = None,
    deadline_hours: float | None = None,
    wider: Wider | None = None,
) -> Evaluated | None:
    """`best` after memory relief: where it offloads, the fastest plan of its shape with less offload that some stack
    runs, clears RELIEF_MARGIN, bills no more months and keeps (1 − OFFLOAD_RELIEF_MAX_SLOWDOWN) of its speed;
    then, where it sits within RELIEF_MARGIN of the GPU memory limit, the fastest such plan with one more recompute
    level or half the micro-batch (unless pinned) that keeps (1 − RELIEF_MAX_SLOWDOWN) of its speed; then, where the
    high end of its memory range still crosses the limit, the fastest twin that fits there at the same billed months
    (at the slow end of its time range too), else, above the card, the fastest that fits under the card
    (`_over_card`); a relief to the limit keeps the slow end within `deadline_hours` where the first plan's was.
    With `wider` (the search's), a plan of another shape, ZeRO stage, offload or micro-batch that holds the high end
    relieves the first plan where it is faster than every twin that does, on the same terms (`_over_card`).
    Training only (inference has no recompute or offload to trade)."""
    if best is None or workload.task == "inference":
        return best
    if best.plan.offload != "none":
        best = _less_offload(model, workload, cluster, best, micro_batch)
    best = _near_limit(model, workload, cluster, best, micro_batch)
    return _over_card(model, workload, cluster, best, micro_batch, deadline_hours, wider)


def _less_offload(
    model: ModelSpec, workload: Workload, cluster: Cluster, best: Evaluated, micro_batch: int | None
) -> Evaluated:
    plan = best.plan
    mbs = micro_batches(workload, plan.dp, workload.global_batch or 1, micro_batch)
    lighter = [
        plan_with(plan, offload=offload, recompute=recompute, micro_batch=mb)
        for offload in OFFLOADS[: OFFLOADS.index(plan.offload)]
        for recompute in RECOMPUTES
        for mb in mbs
    ]
    slowdown = OFFLOAD_RELIEF_MAX_SLOWDOWN
    return _fastest_within(model, workload, cluster, best, lighter, slowdown=slowdown, same_months=True) or best


def _near_limit(
    model: ModelSpec, workload: Workload, cluster: Cluster, best: Evaluated, micro_batch: int | None
) -> Evaluated:
    plan, memory = best.plan, best.memory.breakdown
    high_end = _exceeds_high_end(model, workload, cluster, plan, memory)
    pooled = pool_crosses_limit(model, workload, plan, cluster, memory)
    if memory.total < _ceiling(memory) and not high_end and not pooled:
        return best
    candidates = []
    level = RECOMPUTES.index(plan.recompute)
    if level + 1 < len(RECOMPUTES):
        candidates.append(plan_with(plan, recompute=RECOMPUTES[level + 1]))
    half = plan.micro_batch // 2
    if micro_batch is None and half >= 1 and half in micro_batches(workload, plan.dp, workload.global_batch or 1):
        candidates.append(plan_with(plan, micro_batch=half))
    fused = fused_relief(model.family, plan)  # against the high end and the pool only: the margin keeps its levers
    risky = candidates + ([fused] if fused is not None else [])
    fits_high = _fastest_within(model, workload, cluster, best, risky, high_end=True) if high_end else None
    if fits_high is None and pooled:  # a pool over the card: half the speed buys the high end, or else the pool
        slowdown = POOL_RELIEF_MAX_SLOWDOWN
        fits_high = _fastest_within(
            model, workload, cluster, best, risky, high_end=True, slowdown=slowdown
        ) or _fastest_within(model, workload, cluster, best, risky, pool=True, slowdown=slowdown)
    if fits_high is not None or memory.total < _ceiling(memory):
        return fits_high or best
    return _fastest_within(model, workload, cluster, best, candidates) or best


# Over the limit: a plan that fits on its point estimate but whose memory range's high end crosses the limit the gate
# checks (the card's capacity less the headroom) carries `memory_may_exceed`. The issue's rule: "A plan fits on its
# point estimate; where the high end crosses the limit the option carries memory_may_exceed, and the ranking prefers,
# at equal cost, the option that fits at the high end." Within one configuration the price is the same while the job
# bills the same months, so such a plan gives way to the fastest twin of its shape (any higher recompute level a stack
# runs, any smaller micro-batch unless pinned, the fused loss, and their combinations) that fits at the high end of its
# range against that limit, whatever the slowdown, as long as it bills no more months at its estimate and at the slow
# end of its time range, nor misses there a deadline the first plan meets, nor drops below the idle floor the first
# plan clears (efficiency.inefficiency: DeepSeek-V3 LoRA on one 8 x H100 server at micro-batch 1 reads MFU 2.6 %
# against micro-batch 2's 5.0 %, and would fall to a near miss). One threshold then decides the relief and the
# warning (review R5: Qwen3-32B full fine-tuning on 8 x A100 80G stopped at micro-batch 1 and selective recompute with
# a high end of 78.1 GiB, under the card's 79.0 but above the 75.05 it may use, and its warning advised the micro-batch
# it already had; without a deadline it now takes full recompute, high end 73.9, in the same month). Where no twin
# does and the high end is above the card itself, the run would fail there: the fastest twin that fits under the card
# at the same months at its estimate is taken, and the option says what its slow end bills (`Relief.slow_months`). The
# option says what changed and what it costs in time (`Evaluated.relief`, assumption `memory_relief_*`). Llama 3.1 8B
# QLoRA on one A100 40G card ranked first at recompute none, 33.6 GiB with a high end of 50.6 GiB above the card's
# 39.0; with the Trainer's gradient checkpointing it takes 10.7 GiB (high end 15.0), 30 % slower, in the same month.
NO_SLOWDOWN_CAP = 1.0


def _over_card(
    model: ModelSpec,
    workload: Workload,
    cluster: Cluster,
    best: Evaluated,
    micro_batch: int | None,
    deadline_hours: float | None,
    wider: Wider | None = None,
) -> Evaluated:
    memory = best.memory.breakdown
    band = memory_band(model, workload, best.plan, cluster, memory)
    over_card = band.high > memory.capacity
    if not over_card and may_exceed(band, memory) is None:
        return best
    twins = relief_twins(model, workload, best.plan, micro_batch)
    cap = NO_SLOWDOWN_CAP
    found = _fastest_within(
        model, workload, cluster, best, twins, high_end=True, slowdown=cap, slow_end=True, deadline_hours=deadline_hours
    )
    if wider is not None:
        found = _widened(workload, cluster, best, found, wider, deadline_hours)
    if found is None and over_card:
        found = _fastest_within(model, workload, cluster, best, twins, high_end=True, slowdown=cap, card=True)
    if found is None:
        return best
    hours = best.performance.performance.time_to_train_hours
    slow_months = (_slow_months(found), _slow_months(best))
    relief = Relief(
        best.plan,
        band.high,
        best.throughput,
        hours,
        slow_months if _bills_more(found, best, True) else None,
        stack_for(workload, best.plan, model),
    )
    return replace(found, relief=relief)


def _widened(
    workload: Workload,
    cluster: Cluster,
    best: Evaluated,
    found: Evaluated | None,
    wider: Wider,
    deadline_hours: float | None,
) -> Evaluated | None:
    """`found` (the fastest twin that holds the high end, or None), or the faster plan of any shape the search's
    `wider` look finds where it takes the twins' terms: no more billed months than `best` at its estimate and at the
    slow end of its time range, no deadline missed there that `best` meets, no drop below the idle floor `best` clears
    (review R3-7: Llama 3.1 70B LoRA at 4k tokens on one 8 x A100 80G server relieved TP 2 x PP 4 at selective
    recompute, high end 86.1 GiB, to full recompute 43 % slower, where TP 4 x PP 2 holds 68.9 GiB at the high end 4 %
    slower; R3-8: Mixtral 8x7B LoRA there relieved ZeRO-3 at micro-batch 2 to micro-batch 1, 35 % slower, where full
    recompute at micro-batch 16 holds it 10 % slower)."""
    other = wider(best.plan, found)
    if other is None or _bills_more(other, best) or _worse_off(other, best, workload, cluster, deadline_hours):
        return found
    return other


def holds_high_end(
    model: ModelSpec,
    workload: Workload,
    cluster: Cluster,
    plan: Plan,
    breakdown: MemoryBreakdown,
    *,
    host: bool = True,
) -> bool:
    """Whether `plan` (held as `breakdown`) may relieve a plan for the high end of its memory range: it fits clear of
    RELIEF_MARGIN, at the high end of its range and in its reserved reading against the limit (`_fastest_within`
    with `high_end`). The gate of the search's wider look (search.py `_holding_high_end`); without `host`, the GPU's
    side alone (the host RAM a plan needs grows with its offload, the GPU memory shrinks)."""
    if not (fits(breakdown, cluster) if host else breakdown.gpu_fits) or breakdown.total >= _ceiling(breakdown):
        return False
    if _exceeds_high_end(model, workload, cluster, plan, breakdown):
        return False
    return not pool_crosses_limit(model, workload, plan, cluster, breakdown)


def relief_twins(model: ModelSpec, workload: Workload, plan: Plan, micro_batch: int | None) -> list[Plan]:
    """`plan` with any higher recompute level, any smaller micro-batch (unless pinned) and the fused loss (where Liger
    fuses the family's loss), alone or together: the levers memory relief turns."""
    levels = RECOMPUTES[RECOMPUTES.index(plan.recompute) :]
    mbs = [plan.micro_batch]
    if micro_batch is None:
        mbs += [mb for mb in micro_batches(workload, plan.dp, workload.global_batch or 1) if mb < plan.micro_batch]
    fused = fused_relief(model.family, plan)
    bases = [plan] + ([fused] if fused is not None else [])
    twins = [plan_with(base, recompute=level, micro_batch=mb) for base in bases for level in levels for mb in mbs]
    return [twin for twin in twins if twin != plan]


def _exceeds_high_end(
    model: ModelSpec,
    workload: Workload,
    cluster: Cluster,
    plan: Plan,
    breakdown: MemoryBreakdown,
    *,
    card: bool = False,
) -> bool:
    """Whether `plan` fits on its estimate (`breakdown`) and the high end of its memory range crosses the limit (with
    `card`: the card's capacity)."""
    high = band_high(model, workload, plan, breakdown)  # memory_band's high end, without its readings
    if card:
        return high > breakdown.capacity
    limit = breakdown.capacity if breakdown.limit is None else breakdown.limit
    return breakdown.total <= limit < high  # band.may_exceed's condition


def _bills_more(found: Evaluated, best: Evaluated, slow_end: bool = False) -> bool:
    """Whether `found`'s job bills more 30-day months than `best`'s on the same rental (the same months bill the
    same whole years on an annual term), with `slow_end` at the slow end of their time ranges; never without a token
    count."""
    if slow_end:
        return _slow_months(found) > _slow_months(best)
    hours, best_hours = (
        found.performance.performance.time_to_train_hours,
        best.performance.performance.time_to_train_hours,
    )
    if hours is None or best_hours is None:
        return False
    return billed_months(hours, "monthly") > billed_months(best_hours, "monthly")


def _worse_off(
    found: Evaluated, best: Evaluated, workload: Workload, cluster: Cluster, deadline_hours: float | None
) -> bool:
    """Whether `found` falls below the idle floor `best` clears (efficiency.inefficiency: the option would drop to a
    near miss), or, at the slow end of its time range, bills more months than `best` or misses the deadline that
    `best` meets there (the deadline's `deadline_within_range`)."""
    if _bills_more(found, best, slow_end=True):
        return True
    idle = inefficiency(found.performance.performance, workload.task, cluster.nodes)
    if idle is not None and inefficiency(best.performance.performance, workload.task, cluster.nodes) is None:
        return True
    if deadline_hours is None:
        return False
    return _slow_hours(best) <= deadline_hours < _slow_hours(found)


def _slow_hours(evaluated: Evaluated) -> float:
    """The slow end of the plan's time range (its estimate without a range; 0 without a token count)."""
    perf = evaluated.performance.performance
    hours = perf.time_to_train_hours_range[1] if perf.time_to_train_hours_range else perf.time_to_train_hours
    return hours or 0.0


def _slow_months(evaluated: Evaluated) -> int:
    """The 30-day months the slow end of the plan's time range bills (its estimate's without a range; 0 without a
    token count)."""
    hours = _slow_hours(evaluated)
    return billed_months(hours, "monthly") if hours else 0


def _ceiling(memory: MemoryBreakdown) -> float:
    """GPU memory a relieved plan stays under: RELIEF_MARGIN below the limit."""
    return (1 - RELIEF_MARGIN) * (memory.capacity if memory.limit is None else memory.limit)


def _fastest_within(
    model: ModelSpec,
    workload: Workload,
    cluster: Cluster,
    best: Evaluated,
    candidates: list[Plan],
    *,
    high_end: bool = False,
    slowdown: float = RELIEF_MAX_SLOWDOWN,
    same_months: bool = False,
    pool: bool = False,
    card: bool = False,
    slow_end: bool = False,
    deadline_hours: float | None = None,
) -> Evaluated | None:
    """The fastest of `candidates` that some stack runs, that fits clear of RELIEF_MARGIN (and, with `high_end`,
    at the high end of its memory range; with `high_end` or `pool`, in its reserved reading), that keeps
    (1 − `slowdown`) of `best`'s speed and, with `high_end`, `same_months` or `pool`, bills no more months than
    `best` (with `slow_end`, at the slow end of the time ranges too, and within `deadline_hours` there where `best`
    is); None when none does. With `card` the high end is
    held to the card's capacity, not the limit."""
    ceiling = _ceiling(best.memory.breakdown)
    chosen: Evaluated | None = None
    for relief in candidates:
        # another level may move the plan to another stack, and so to its speed point (stacks.as_run sets it afresh)
        candidate = plan_with(relief, tuning=None)
        if not supported(workload, candidate, model):
            continue
        held, breakdown = _held(model, workload, cluster, candidate)
        if not fits(breakdown, cluster) or breakdown.total >= ceiling:  # the search's own gate (host RAM unlisted)
            continue
        # the memory checks first: they read the breakdown only, and a twin that fails one needs no speed estimate
        if high_end and _exceeds_high_end(model, workload, cluster, held, breakdown, card=card):
            continue
        if (high_end or pool) and pool_crosses_limit(model, workload, held, cluster, breakdown):
            continue
        performance = estimate_performance(model, workload, held, cluster)
        if throughput(performance) < (1 - slowdown) * best.throughput:
            continue
        found = Evaluated(held, estimate_memory(model, workload, held, cluster), performance)
        if (high_end or same_months or pool) and _bills_more(found, best):
            continue
        if slow_end and _worse_off(found, best, workload, cluster, deadline_hours):
            continue
        if chosen is None or faster(found, chosen):
            chosen = found
    return chosen


def _held(model: ModelSpec, workload: Workload, cluster: Cluster, plan: Plan) -> tuple[Plan, MemoryBreakdown]:
    """The plan with its memory as the stack that will run it holds it (search.py `_memory`): the first account that
    fits, else the last (the leanest)."""
    for accounted in as_run(workload, plan, model):
        plan, memory = accounted, memory_breakdown(model, workload, accounted, cluster)
        if fits(memory, cluster):
            break
    return plan, memory
