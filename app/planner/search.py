"""Search of SKU × card/node count × parallel plan. PURE: imports only the estimator and the stack
support matrix (`app.planner.stacks`).

Only plans some training stack runs are searched (stacks.MATRIX): a (ZeRO stage, offload,
recompute) level no stack runs at a shape is skipped, so every plan found names its stack.

Degrees: tensor parallel inside a node, pipeline over the layers, context parallel from 32k-token
sequences, expert parallel for MoE models (inside data parallel); `plan_shapes`.

Shape of the search (after calculon `optimal_execution.py`): generators yield only valid degrees,
every plan is checked for memory first (cheap), and speed is estimated only for plans that fit
and are not dominated by construction:

- Within one (tp, pp, zero, micro-batch), memory savers are tried cheapest-first: for each offload
  level the least recomputation that fits. A plan with more recomputation or more offload than
  one that already fits can only be slower (more FLOPs or more PCIe traffic) for no gain.
- With data parallelism, ZeRO-1 is searched only where no stack runs ZeRO-2 at that shape (pipeline
  parallel under DeepSpeed, anything under Megatron's distributed optimizer): elsewhere ZeRO-2 moves
  the same bytes (reduce-scatter + all-gather equals one all-reduce, ZeRO paper §7.2) and holds less
  memory. ZeRO-0 stays (one
  all-reduce has half the latency terms, which wins for small LoRA gradients), and so does ZeRO-3
  (its prefetched all-gathers can hide where ZeRO-2's post-step all-gather cannot).
- Inside one server, once a plain data-parallel shape (tp = pp = 1) fits without any memory saver,
  tensor and pipeline shapes are skipped: on the same link they only add per-layer all-reduces
  that do not overlap, narrower GEMMs and a bubble. Across nodes this does not hold (tensor
  parallel inside a node divides the gradient traffic on the slower fabric), so all shapes are
  searched there.
- Micro-batches grow until memory runs out; larger micro-batches only help GEMM efficiency, so
  without a pipeline only the largest fitting one is kept.
- Shapes (tp, pp) are searched in order of an upper bound on their speed (compute alone plus the
  pipeline bubble, no recomputation or communication); the search stops at the first shape whose
  bound is below the best plan found (branch and bound: the bound can only overestimate).
- Within one server configuration the monthly price is fixed, so only its fastest plan can be the
  configuration's best option; the ranking then compares configurations.
- Memory relief (relief.py) may trade that plan for a slower one of the same servers at the same price. Where its
  memory range's high end passes the limit, the space is walked a second time with the high-end gate in place of the
  point estimate's (`_holding_high_end`): the fastest plan of any shape that holds the high end, not only the first
  plan's twins, relieves it (review R3-7, R3-8). The second walk reuses the first one's estimates by plan.

`tests/planner/test_search.py` proves on small spaces that this returns the same best option as
brute force over every plan (`tests/planner/brute_force.py`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TypedDict, Unpack

from app.estimator.memory import MemoryEstimate, estimate_memory, memory_breakdown, validate_plan
from app.estimator.performance import (
    TUNING_SPEED,
    PerformanceEstimate,
    estimate_performance,
)
from app.estimator.specs import Cluster, MemoryBreakdown, ModelSpec, Plan, Workload
from app.estimator.vocabulary import (
    OFFLOADS,
    RECOMPUTES,
    Offload,
    Recompute,
)
from app.planner import levers as lever_rules
from app.planner.evaluated import (
    Evaluated as Evaluated,
    faster as faster,
    fits as fits,
    plan_complexity as plan_complexity,
    throughput as _throughput,
    wins as _wins,
)
from app.planner.levers import DEFAULT_LEVERS, Levers, levers_of
from app.planner.relief import (
    RELIEF_MARGIN as RELIEF_MARGIN,
    RELIEF_MAX_SLOWDOWN as RELIEF_MAX_SLOWDOWN,
    holds_high_end,
    relieved,
)
from app.planner.shapes import (  # re-exported: callers import the shapes from the search
    CP_DEGREES as CP_DEGREES,
    CP_MIN_SEQ_LEN as CP_MIN_SEQ_LEN,
    EP_DEGREES as EP_DEGREES,
    FINETUNE_BATCH as FINETUNE_BATCH,
    FINETUNE_STEP_TOKENS as FINETUNE_STEP_TOKENS,
    MAX_PP as MAX_PP,
    MICRO_BATCHES as MICRO_BATCHES,
    TP_DEGREES as TP_DEGREES,
    context_degrees as context_degrees,
    default_global_batch as default_global_batch,
    divisors as divisors,
    expert_degrees as expert_degrees,
    hybrid_shard as hybrid_shard,
    level_plan,
    micro_batches as micro_batches,
    offloads as offloads,
    plan_shapes as plan_shapes,
    runnable_levels,
    zero_stages as zero_stages,
)
from app.planner.speed_bounds import BoundCache, Shape, shapes_by_bound, speed_bound
from app.planner.stacks import as_run, supported


@dataclass(slots=True)
class SearchStats:
    memory_evaluations: int = 0
    performance_evaluations: int = 0
    cached_configurations: int = 0


@dataclass(slots=True)
class PlanSearch:
    """Best plan of one hardware configuration, plus what the search learned on the way."""

    best: Evaluated | None
    closest_miss: MemoryEstimate | None = None  # the least-memory plan tried, when nothing fits
    closest_total: float = float("inf")
    closest_plan: Plan | None = None
    stats: SearchStats = field(default_factory=SearchStats)
    unconstrained_simple: bool = False  # a tp = pp = 1 plan fitted with no memory saver
    bound_cache: BoundCache = field(default_factory=BoundCache)
    # whether some stack runs the levers on a shape searched; a shape some stack runs only without them, or only on a
    # server whose host RAM is known (activation offload): recommend's `levers_unsupported`
    levers_run: bool = False
    levers_block: bool = False
    levers_need_host_ram: bool = False
    # the megatron stack may hold an FP8 pretraining plan with FP8 weights (stacks.as_run `fp8_weights`): the request
    # left plan.fp8_params unstated
    fp8_weights: bool = False
    # a stricter memory gate than `fits` (the wider look of memory relief, `_holding_high_end`); None: `fits` alone;
    # with its GPU side for the leanest level of a ZeRO stage (None: `gpu_fits`), and the most offload it lets through
    gate: Callable[[Plan, MemoryBreakdown], bool] | None = None
    leanest_gate: Callable[[Plan, MemoryBreakdown], bool] | None = None
    most_offload: int = len(OFFLOADS) - 1
    # what one search has sized and timed, by plan, so that the wider look re-walks the space without re-estimating it:
    # each plan's stack accounts (stacks.as_run) with the memory of those counted so far, and each timed plan's speed;
    # emptied when the search returns (the process cache keeps the answer, not these)
    held: dict[Plan, tuple[tuple[Plan, ...], list[MemoryBreakdown]]] = field(default_factory=dict)
    timed: dict[Plan, tuple[PerformanceEstimate, MemoryBreakdown]] = field(default_factory=dict)


_cache: dict[tuple[object, ...], PlanSearch] = {}
_cache_lock = threading.Lock()
_cache_size = 1024


def set_cache_size(entries: int) -> None:
    """How many searches to remember (0: none). A search depends only on the model, the workload
    and the hardware, never on prices, so a price change needs no invalidation."""
    global _cache_size
    _cache_size = entries
    _cache.clear()


def batch_splits(model: ModelSpec, workload: Workload, cluster: Cluster, micro_batch: int | None = None) -> bool:
    """Whether some shape of the cluster has a micro-batch that divides the global batch:
    when none does, no plan exists whatever the memory (the batch, not the model, is the obstacle)."""
    global_batch = default_global_batch(workload)
    return any(
        micro_batches(workload, shape.dp, global_batch, micro_batch) for shape in plan_shapes(model, workload, cluster)
    )


class SearchOptions(TypedDict, total=False):
    """search_plans' keyword arguments: only `micro_batch` and `deadline_hours` change its answer."""

    micro_batch: int | None
    hint: Plan | None
    bound_cache: BoundCache | None
    levers: Levers | None
    deadline_hours: float | None
    fp8_weights: bool


def _search_key(model: ModelSpec, workload: Workload, cluster: Cluster, options: SearchOptions) -> tuple[object, ...]:
    place = (cluster.gpu.id, cluster.gpus_per_node, cluster.nodes, cluster.intra_node_link, cluster.inter_node_fabric)
    rest = (cluster.inter_node_gbps, cluster.host_ram_gib, cluster.memory_headroom, options.get("micro_batch"))
    levers = options.get("levers"), options.get("fp8_weights", False)
    return model, workload, *place, *rest, *levers, options.get("deadline_hours")


@dataclass(frozen=True, slots=True)
class _Call:
    """One cached_search_plans call: what its plain search and the two passes after it (the lever floor, the
    fused-loss fit) all read."""

    model: ModelSpec
    workload: Workload
    cluster: Cluster
    memo: dict[tuple[object, ...], PlanSearch] | None
    options: SearchOptions

    def plain(self, changes: SearchOptions) -> PlanSearch:
        """search_plans alone with `options` changed by `changes`, remembered for the request: the lever floor and the
        fused-loss fit read it, since through cached_search_plans each would call the other again without end."""
        options: SearchOptions = {**self.options, **changes}
        key = ("plain", *_search_key(self.model, self.workload, self.cluster, options))
        if self.memo is not None and key in self.memo:
            return self.memo[key]
        search = search_plans(self.model, self.workload, self.cluster, **options)
        if self.memo is not None:
            self.memo[key] = search
        return search


def cached_search_plans(
    model: ModelSpec,
    workload: Workload,
    cluster: Cluster,
    *,
    memo: dict[tuple[object, ...], PlanSearch] | None = None,
    **options: Unpack[SearchOptions],
) -> tuple[PlanSearch, bool]:
    """search_plans, remembered per (model, workload, hardware, micro-batch); returns (search, was
    cached). The GPU is keyed by its id: its specs are static shipped data. `memo` remembers searches
    for one request whatever the process cache holds: the same hardware shape offered by several SKUs
    or in several regions is searched once (prices never enter a search)."""
    key = _search_key(model, workload, cluster, options)
    if memo is not None and key in memo:
        return memo[key], True
    with _cache_lock:
        cached = _cache.get(key)
    if cached is not None:
        if memo is not None:
            memo[key] = cached
        return cached, True
    call = _Call(model, workload, cluster, memo, options)
    search = _fused_fit(call, _lever_floor(call, call.plain({})))
    if memo is not None:
        memo[key] = search
    with _cache_lock:  # requests run in a thread pool
        if _cache_size:
            if len(_cache) >= _cache_size:
                _cache.pop(next(iter(_cache)))  # oldest first: dicts keep insertion order
            _cache[key] = search
    return search, False


def _lever_floor(call: _Call, search: PlanSearch) -> PlanSearch:
    """`search` (with the request's levers), or its copy whose best is the best plan without the levers, with them,
    where that is faster and holds no more memory: a memory lever never lengthens the time on a configuration
    where the plan without it fits. Memory relief (relief.py) relieves the first plan it finds with its own twins;
    a lever can let a faster plan fit at its estimate whose high end crosses the card, relieved to a slower twin,
    while the plan found without the lever held its high end (review R4-1: Llama 3.1 8B full fine-tune at 8k on an
    8 x A100 80G server took ZeRO-3 with full recompute, 2669 tok/s a GPU, with `loss: fused` where Megatron-LM's
    TP 2 x DP 4 at selective recompute, 3299 tok/s, fits with it). Every lever search asks, not only one whose best
    was relieved to a twin of another shape: the margin's relief (a smaller micro-batch, more recompute) slows a plan
    too, and a lever that saves nothing on the plain search's stack leaves the lever search to slower stacks
    (Megatron-LM's fused cross-entropy keeps the logits as its unfused one: Llama 3.1 8B at 4,096 tokens on 8 x A100
    80G took ZeRO-3 at micro-batch 1, 28,612 tok/s, with `loss: fused`, where Megatron-LM's TP 2 runs 29,774)."""
    levers = call.options.get("levers")
    if levers is None or levers == DEFAULT_LEVERS or search.best is None:
        return search
    plain = call.plain({"levers": None, "hint": None})
    if plain.best is None:
        return search
    global_batch = default_global_batch(call.workload)
    trial = PlanSearch(best=None, stats=search.stats, bound_cache=search.bound_cache, fp8_weights=search.fp8_weights)
    workload = replace(call.workload, global_batch=global_batch)
    micro_batch = call.options.get("micro_batch")
    _try_hint(call.model, workload, call.cluster, plain.best.plan, levers, global_batch, micro_batch, trial)
    found = trial.best
    if found is None or found.memory.breakdown.total > plain.best.memory.breakdown.total:
        return search
    if not _wins(found.throughput, found.plan, search.best):
        return search
    return replace(search, best=found)


def _fused_fit(call: _Call, search: PlanSearch) -> PlanSearch:
    """`search` (no levers asked, no plan fits), or the search with the fused loss where Liger fuses the family's loss
    (levers.fused_relief) and a plan fits with it: Liger's fused cross-entropy never holds the s x vocabulary logits
    and costs no speed (the Trainer's use_liger_kernel; Megatron-LM's keeps them, so none is offered there), so a
    configuration that fits only with it is offered with it, its best carrying the leanest standard-loss plan's bytes
    (`Evaluated.standard_loss_need`, assumption `fused_loss_fit`) (review R4-2: Llama 3.1 8B full fine-tune at 8k on
    4 x A100 40G PCIe was rejected as "the leanest plan still needs 38.4 GiB" where ZeRO-3 with the fused loss holds
    36.6 GiB of the 37.05 GiB limit, 63 % cheaper than the next option). Training only; a search that missed only."""
    levers = call.options.get("levers")
    if search.best is not None or search.closest_miss is None or (levers is not None and levers != DEFAULT_LEVERS):
        return search
    model, workload, cluster = call.model, call.workload, call.cluster
    if workload.task == "inference" or lever_rules.fused_relief(model.family, DEFAULT_LEVERS.on(Plan())) is None:
        return search
    lean = search.closest_plan  # the leanest standard-loss plan tried: where even it misses fused, skip the search
    batched = replace(workload, global_batch=default_global_batch(workload))
    # fused as Liger fuses it: a megatron-stack plan's fused cross-entropy saves nothing (levers.fused_relief)
    liger = None if lean is None else replace(Levers(loss="fused").on(lean), fp32_main_grads=False)
    if liger is None or not fits(memory_breakdown(model, batched, liger, cluster), cluster):
        return search
    fused = call.plain({"levers": Levers(loss="fused")})
    if fused.best is None:
        return search
    need = search.closest_miss.breakdown.total
    return replace(search, best=replace(fused.best, standard_loss_need=need), closest_miss=None)


def search_plans(
    model: ModelSpec,
    workload: Workload,
    cluster: Cluster,
    *,
    micro_batch: int | None = None,
    hint: Plan | None = None,
    bound_cache: BoundCache | None = None,
    levers: Levers | None = None,
    deadline_hours: float | None = None,
    fp8_weights: bool = False,
) -> PlanSearch:
    """The fastest plan that fits on `cluster` (None when none fits), with the search's counts.

    `micro_batch` pins the micro-batch (for inference: the number of concurrent sequences).
    `hint` (e.g. the best plan on one node fewer) is timed first when it fits: a good incumbent
    lets the speed bounds prune from the start. The answer does not depend on it.
    `bound_cache` may be shared by searches on the same GPU type and link (node counts differ):
    a micro-batch's compute and tensor-parallel time do not depend on how many nodes there are.
    `levers` go on every plan, run by the stacks that run them (app/planner/levers.py).
    `deadline_hours` (the request's deadline) bounds memory relief at the slow end of the time range (relief.py).
    `fp8_weights`: the megatron stack holds an FP8 pretraining plan with FP8 weights where it runs them
    (stacks.as_run), as where the request leaves plan.fp8_params unstated."""
    global_batch = default_global_batch(workload)
    if workload.task != "inference":
        workload = replace(workload, global_batch=global_batch)
    cache = BoundCache() if bound_cache is None else bound_cache
    result = PlanSearch(best=None, bound_cache=cache, fp8_weights=fp8_weights)
    if hint is not None:
        _try_hint(model, workload, cluster, hint, levers, global_batch, micro_batch, result)
    shapes = shapes_by_bound(model, workload, cluster, global_batch, micro_batch, result.bound_cache, levers)
    _walk(model, workload, cluster, shapes, result)
    if result.best is None and result.closest_plan is not None:
        result.closest_miss = estimate_memory(model, workload, result.closest_plan, cluster)

    def wider(first: Plan, incumbent: Evaluated | None) -> Evaluated | None:
        return _holding_high_end(model, workload, cluster, shapes, result, first, incumbent)

    result.best = relieved(model, workload, cluster, result.best, micro_batch, deadline_hours, wider)
    result.held, result.timed = {}, {}
    return result


def _walk(model: ModelSpec, workload: Workload, cluster: Cluster, shapes: list[Shape], result: PlanSearch) -> None:
    """Shapes fastest bound first, until the bound falls below the best plan found (branch and bound)."""
    for bound, shape, mbs in shapes:
        if cluster.nodes == 1 and result.unconstrained_simple:
            break
        if result.best is not None and bound < result.best.throughput:
            break  # shapes come fastest-bound first: none of the rest can win
        _search_shape(model, workload, cluster, shape, mbs, result)


def _holding_high_end(
    model: ModelSpec,
    workload: Workload,
    cluster: Cluster,
    shapes: list[Shape],
    found: PlanSearch,
    first: Plan,
    incumbent: Evaluated | None,
) -> Evaluated | None:
    """Memory relief's wider look (relief.py `_over_card`): the fastest plan the search's space holds on `cluster`
    whose memory holds the high end of its range (relief.holds_high_end: clear of the margin, at the high end and in
    its reserved reading) and offloads no more than `first` (the plan found first: relief.py `_less_offload`), where it
    beats `incumbent` (the fastest relieved twin of `first`); else None.

    The walk is the first one's with that gate in place of `fits`: its prunings hold under it (a level is skipped for
    speed where a faster one passes the same gate at a micro-batch; micro-batches grow until the gate fails, the high
    end growing with the activations; a stage is skipped where all its savers at once miss the gate's GPU side), its
    estimates are the first walk's where it asked for the same plan, and the faster of `incumbent` and the fastest plan
    the first walk timed that passes the gate bounds it from the start. Only a plan whose high end crosses the limit
    asks for it."""
    most = OFFLOADS.index(first.offload)  # no more offload than the plan found first ("no offload where states fit")
    strict = PlanSearch(best=incumbent, stats=found.stats, bound_cache=found.bound_cache, most_offload=most)
    strict.held, strict.timed = found.held, found.timed  # the first walk's estimates, by plan
    strict.fp8_weights = found.fp8_weights
    strict.gate = lambda plan, memory: (
        OFFLOADS.index(plan.offload) <= most and holds_high_end(model, workload, cluster, plan, memory)
    )
    if first.offload != "optimizer_and_params":
        # below parameter offload (which widens the range: band.py) more savers lower the high end, the reserved
        # reading and the margin's figure with the point estimate, so a stage whose leanest level misses them is skipped
        strict.leanest_gate = lambda plan, memory: holds_high_end(model, workload, cluster, plan, memory, host=False)
    # the fastest plan the first walk timed that passes the gate, where it beats the twin, bounds the walk at once
    for plan, (performance, memory) in sorted(found.timed.items(), key=lambda item: -_throughput(item[1][0])):
        if strict.best is not None and not _wins(_throughput(performance), plan, strict.best):
            break
        if strict.gate(plan, memory):
            strict.best = Evaluated(plan, estimate_memory(model, workload, plan, cluster), performance)
            break
    _walk(model, workload, cluster, shapes, strict)
    return strict.best if strict.best is not incumbent else None


def _try_hint(
    model: ModelSpec,
    workload: Workload,
    cluster: Cluster,
    hint: Plan,
    levers: Levers | None,
    global_batch: int,
    micro_batch: int | None,
    result: PlanSearch,
) -> None:
    gpus = cluster.gpus
    model_parallel = hint.tp * hint.pp * hint.cp
    if hint.tp > cluster.gpus_per_node or gpus % model_parallel:
        return
    dp = gpus // model_parallel
    if hint.cp not in context_degrees(workload, gpus // (hint.tp * hint.pp)):
        return
    if hint.ep not in expert_degrees(model, workload, dp):
        return
    if hint.micro_batch not in micro_batches(workload, dp, global_batch, micro_batch):
        return
    plan = Plan(
        dp=dp,
        tp=hint.tp,
        pp=hint.pp,
        cp=hint.cp,
        ep=hint.ep,
        zero_stage=hint.zero_stage if dp > 1 else 0,
        offload=hint.offload if dp > 1 or hint.offload == "none" else "none",
        recompute=hint.recompute,
        sequence_parallel=hint.sequence_parallel,
        micro_batch=hint.micro_batch,
        dp_shard=hint.dp_shard if hint.dp_shard == hybrid_shard(workload, cluster, dp, hint.tp * hint.cp) else None,
    )
    # the search's own levers, not the hint's: a hint from a search that took the fused loss as memory relief
    # (`_fused_fit`) would put it on a search that named none, where standard-loss plans fit
    plan = (levers or DEFAULT_LEVERS).on(plan)
    if not supported(workload, plan, model):
        return
    plan, memory = _memory(model, workload, cluster, plan, result)
    if _passes(result, cluster, plan, memory):
        _consider(model, workload, cluster, plan, memory, result)


def as_held(model: ModelSpec, workload: Workload, plan: Plan, cluster: Cluster, *, fp8_weights: bool = False) -> Plan:
    """`plan` as the stack that will run it holds it in memory (`_memory`), for a plan the customer or a
    quote states: the same gate /recommend applies (`fp8_weights`: the plan leaves plan.fp8_params unstated, as
    /recommend's search does, stacks.as_run)."""
    return _memory(model, workload, cluster, plan, PlanSearch(best=None, fp8_weights=fp8_weights))[0]


def held_memory(model: ModelSpec, workload: Workload, plan: Plan, cluster: Cluster) -> MemoryBreakdown:
    """The memory of `plan` as the stack that will run it holds it (`as_held`): the gate /estimate's `fits` reads."""
    return _memory(model, workload, cluster, plan, PlanSearch(best=None))[1]


def stated_plan(
    model: ModelSpec, workload: Workload, plan: Plan, cluster: Cluster, *, fp8_weights: bool = False
) -> tuple[Plan, MemoryEstimate]:
    """A plan the customer (/estimate) or a quote states, checked as /recommend sizes its own: valid on the
    cluster (EstimatorError where not), as held (`as_held`; `fp8_weights` where the plan leaves plan.fp8_params
    unstated), with that plan's memory estimate."""
    validate_plan(model, workload, plan, cluster)
    held = as_held(model, workload, plan, cluster, fp8_weights=fp8_weights)
    return held, estimate_memory(model, workload, held, cluster)


def _memory(
    model: ModelSpec, workload: Workload, cluster: Cluster, plan: Plan, result: PlanSearch
) -> tuple[Plan, MemoryBreakdown]:
    """The plan with its memory as the stack that will run it holds it (stacks.as_run): the preferred
    stack's account, else a leaner one another stack runs (Megatron-LM's fp32 gradient buffer or not);
    the last tried, the leanest, when none fits."""
    known = result.held.get(plan)
    if known is None:
        known = result.held[plan] = (as_run(workload, plan, model, fp8_weights=result.fp8_weights), [])
    accounts, memories = known
    for index, accounted in enumerate(accounts):
        if index == len(memories):  # counted once a search, whichever walk asks
            memories.append(memory_breakdown(model, workload, accounted, cluster))
            result.stats.memory_evaluations += 1
        plan, memory = accounted, memories[index]
        if _passes(result, cluster, plan, memory):
            break
    return plan, memory


def _passes(result: PlanSearch, cluster: Cluster, plan: Plan, memory: MemoryBreakdown) -> bool:
    """The search's memory gate: `fits`, and the stricter `PlanSearch.gate` where the walk has one."""
    return fits(memory, cluster) and (result.gate is None or result.gate(plan, memory))


Level = tuple[int, int, int]  # (ZeRO stage, offload index, recompute index)


def _dominates(faster: Level, level: Level) -> bool:
    """`faster` is at least as fast as `level` at any micro-batch both fit: the same ZeRO stage and
    fewer or equal savers on every axis. ZeRO stages are not ordered by speed: ZeRO-2 shards the
    optimizer step that ZeRO-0 repeats, and ZeRO-3 prefetches parameters under the forward pass
    while ZeRO-2's all-gather after the step is exposed."""
    return faster != level and faster[0] == level[0] and faster[1] <= level[1] and faster[2] <= level[2]


def _search_shape(
    model: ModelSpec, workload: Workload, cluster: Cluster, shape: Plan, mbs: tuple[int, ...], result: PlanSearch
) -> None:
    """Every memory-saver level of one (tp, pp, dp) shape, timing only plans no faster level covers.

    Savers only ever reduce memory, so a level fits every micro-batch a faster level fits: those
    plans are dominated (same micro-batch, more work), and only larger micro-batches are tried."""
    recomputes: tuple[Recompute, ...] = ("none",) if workload.task == "inference" else RECOMPUTES
    largest_fit: dict[Level, int] = {}
    runnable = runnable_levels(workload, shape, recomputes, cluster.host_ram_gib is not None, model)
    _note_levers(model, workload, cluster, shape, recomputes, result, ran=any(runnable.values()))
    for zero in (3,) if shape.dp_shard else zero_stages(workload.task, shape.dp):  # hybrid sharding is ZeRO-3
        unconstrained = False
        if not runnable.get(zero) or (zero == 1 and _zero2_covers(model, workload, shape, runnable)):
            continue  # no stack runs it, or ZeRO-2 runs everything ZeRO-1 would, in less memory and as fast
        levels = [
            o
            for o in offloads(workload.task, zero, cluster.host_ram_gib is not None)
            if OFFLOADS.index(o) <= result.most_offload and any((o, r) in runnable[zero] for r in recomputes)
        ]
        if not levels or not _leanest_fits(
            model, workload, cluster, level_plan(shape, zero, levels[-1], recomputes[-1], mbs[0]), result
        ):
            continue  # not even every memory saver at once fits: skip the stage's other levels
        for o, offload in enumerate(levels):
            for r, recompute in enumerate(recomputes):
                if (offload, recompute) not in runnable[zero]:
                    continue
                level = (zero, o, r)
                covered = max((mb for lv, mb in largest_fit.items() if _dominates(lv, level)), default=0)
                base = level_plan(shape, zero, offload, recompute, shape.micro_batch)
                untried = tuple(m for m in mbs if m > covered)
                if (
                    untried
                    and result.best is not None
                    and result.best.throughput
                    > speed_bound(
                        model, workload, cluster, base, untried, workload.global_batch or 1, result.bound_cache
                    )
                ):
                    largest_fit[level] = covered
                    break  # even its compute is too slow, and more recomputation is slower still
                fitting = _fitting_micro_batches(model, workload, cluster, base, list(untried), result)
                largest_fit[level] = fitting[-1][0].micro_batch if fitting else covered
                for plan, memory in _worth_timing(fitting, shape, workload):
                    _consider(model, workload, cluster, plan, memory, result)
                if largest_fit[level] == mbs[-1]:
                    unconstrained = o == 0 and r == 0
                    break  # the largest micro-batch fits: more recompute only adds time
            if largest_fit.get((zero, o, 0)) == mbs[-1]:
                break  # ... and so would more offload
        result.unconstrained_simple |= unconstrained and shape.tp == 1 and shape.pp == 1


def _note_levers(
    model: ModelSpec,
    workload: Workload,
    cluster: Cluster,
    shape: Plan,
    recomputes: tuple[Recompute, ...],
    result: PlanSearch,
    *,
    ran: bool,
) -> None:
    """Whether the shape's levers ruled out every stack that runs it (`PlanSearch.levers_block`)."""
    result.levers_run |= ran
    if ran or levers_of(shape) == DEFAULT_LEVERS:
        return
    known = cluster.host_ram_gib is not None
    result.levers_block |= any(runnable_levels(workload, DEFAULT_LEVERS.on(shape), recomputes, known, model).values())
    if not known:
        result.levers_need_host_ram |= any(runnable_levels(workload, shape, recomputes, True, model).values())


def _zero2_covers(
    model: ModelSpec, workload: Workload, shape: Plan, runnable: dict[int, set[tuple[Offload, Recompute]]]
) -> bool:
    """Whether ZeRO-2 runs every level ZeRO-1 would (in less memory: the stages cost the same time, `dp_comm`) on a
    stack whose speed point (`stacks.as_run`) is no slower at that level, so ZeRO-1 need not be searched."""
    if not runnable[1] <= runnable.get(2, set()):
        return False
    for offload, recompute in runnable[1]:
        one = as_run(workload, level_plan(shape, 1, offload, recompute, 1), model)
        two = as_run(workload, level_plan(shape, 2, offload, recompute, 1), model)
        if max(TUNING_SPEED[p.tuning or "tuned"] for p in one) > min(TUNING_SPEED[p.tuning or "tuned"] for p in two):
            return False
    return True


def _leanest_fits(model: ModelSpec, workload: Workload, cluster: Cluster, plan: Plan, result: PlanSearch) -> bool:
    """Whether every memory saver at once leaves the GPU memory within its limit (the wider look: its GPU side of the
    gate, `PlanSearch.leanest_gate`). Only the GPU side prunes: offload raises the host RAM a plan needs, so a plan
    with less offload may pass the host RAM gate where this one fails it."""
    plan, memory = _memory(model, workload, cluster, plan, result)
    if not fits(memory, cluster):
        _remember_miss(result, plan, memory)
    return memory.gpu_fits if result.leanest_gate is None else result.leanest_gate(plan, memory)


def _worth_timing(
    fitting: list[tuple[Plan, MemoryBreakdown]], shape: Plan, workload: Workload
) -> list[tuple[Plan, MemoryBreakdown]]:
    """Without a pipeline the largest micro-batch is fastest (wider GEMMs, same bytes moved) on one stack: the
    largest each stack's account holds (`stacks.as_run`: a smaller micro-batch may fit Megatron-LM's fp32 gradient
    buffer where a larger one fits only another stack's, whose speed point differs). With a pipeline,
    micro-batches that leave fewer micro-batches per step than stages are skipped (the 1F1B bubble (p-1)/m then
    exceeds half the step) unless nothing else fits."""
    if shape.pp == 1:
        largest = {(plan.tuning, plan.fp32_main_grads): (plan, memory) for plan, memory in fitting}
        return list(largest.values())
    global_batch = workload.global_batch or 1
    enough = [(p, m) for p, m in fitting if global_batch // (shape.dp * p.micro_batch) >= shape.pp]
    return enough or fitting[:1]


def _fitting_micro_batches(
    model: ModelSpec, workload: Workload, cluster: Cluster, base: Plan, mbs: list[int], result: PlanSearch
) -> list[tuple[Plan, MemoryBreakdown]]:
    """Plans with growing micro-batches until memory runs out (activations grow with the batch)."""
    fitting = []
    for mb in mbs:
        plan, memory = _memory(
            model, workload, cluster, level_plan(base, base.zero_stage, base.offload, base.recompute, mb), result
        )
        if not _passes(result, cluster, plan, memory):
            _remember_miss(result, plan, memory)
            break
        fitting.append((plan, memory))
    return fitting


def _consider(
    model: ModelSpec, workload: Workload, cluster: Cluster, plan: Plan, memory: MemoryBreakdown, result: PlanSearch
) -> None:
    """Time a plan that fits (`memory`: as held); keep it (with its full memory estimate: warnings, assumptions) if it
    wins."""
    known = result.timed.get(plan)
    if known is None:
        known = result.timed[plan] = (estimate_performance(model, workload, plan, cluster), memory)
        result.stats.performance_evaluations += 1
    performance = known[0]
    throughput = _throughput(performance)
    if result.best is None or _wins(throughput, plan, result.best):
        result.best = Evaluated(plan, estimate_memory(model, workload, plan, cluster), performance)


def _remember_miss(result: PlanSearch, plan: Plan, memory: MemoryBreakdown) -> None:
    if result.best is None and memory.total < result.closest_total:
        result.closest_total, result.closest_plan = memory.total, plan
