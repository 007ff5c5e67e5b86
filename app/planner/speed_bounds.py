"""Speed bounds for the plan search's branch and bound (app.planner.search). PURE: imports only the estimator.

A shape's bound is the tokens/s no plan of that shape can exceed: its compute and tensor-parallel time per
micro-batch over the 1F1B schedule's slots, plus the offload traffic no overlap hides (`speed_bound`); the search
walks shapes fastest bound first and stops at the first whose bound is below the best plan found. The terms are
memoised per hardware shape (`BoundCache`), shared by the searches of one request on several node counts.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from app.estimator.communication import StepShape, offload_time, per_node, tp_comm, trainable_params_local
from app.estimator.performance import estimate_performance, microbatch_compute_s
from app.estimator.specs import Cluster, ModelSpec, Plan, Workload, plan_with
from app.planner.levers import Levers
from app.planner.shapes import default_global_batch, level_plan, micro_batches, plan_shapes

# Speed-bound terms memoised by shape: (tp, pp, cp, ep, recompute, micro-batch) or ("offload", …) -> seconds.
Shape = tuple[float, Plan, tuple[int, ...]]  # (speed bound, shape, micro-batches that divide the batch)


@dataclass(slots=True)
class BoundCache:
    """What one request learns about one hardware shape (GPU, link, node size), whatever the node count:
    speed-bound terms (`seconds`), and each cluster's shapes sorted by bound (`shapes`, keyed by
    (GPUs per node, nodes, pinned micro-batch)): the time floor and the search ask for both."""

    seconds: dict[tuple[object, ...], float] = field(default_factory=dict)
    shapes: dict[tuple[int, int, int | None, Levers | None], list[Shape]] = field(default_factory=dict)


def throughput_bound(
    model: ModelSpec,
    workload: Workload,
    cluster: Cluster,
    *,
    micro_batch: int | None = None,
    bound_cache: BoundCache | None = None,
    levers: Levers | None = None,
) -> float:
    """Tokens/s no plan on `cluster` can exceed (training: the best shape's speed bound,
    `speed_bound`; inference: `_decode_bound`); 0 when no shape divides the batch."""
    cache = BoundCache() if bound_cache is None else bound_cache
    if workload.task == "inference":
        return _decode_bound(model, workload, cluster, micro_batch or 1, cache)
    global_batch = default_global_batch(workload)
    workload = replace(workload, global_batch=global_batch)
    shapes = shapes_by_bound(model, workload, cluster, global_batch, micro_batch, cache, levers)
    return shapes[0][0] if shapes else 0.0


def _decode_bound(model: ModelSpec, workload: Workload, cluster: Cluster, batch: int, cache: BoundCache) -> float:
    """Decode tokens/s no inference plan exceeds: every GPU decoding at one unsplit replica's rate."""
    return _decode_rate_per_gpu(model, workload, cluster, batch, cache) * cluster.gpus


def _decode_rate_per_gpu(
    model: ModelSpec, workload: Workload, cluster: Cluster, batch: int, cache: BoundCache
) -> float:
    """One GPU's decode tokens/s holding a whole replica. A decode step is max(HBM reads, FLOPs) / tp plus
    tensor-parallel all-reduces, and pipeline stages run one after another (performance._decode_step_s):
    a replica on tp × pp GPUs decodes at most tp times one GPU's rate."""
    key = ("decode", batch)
    if key not in cache.seconds:
        one = replace(cluster, gpus_per_node=1, nodes=1, inter_node_gbps=None, inter_node_fabric=None)
        performance = estimate_performance(model, workload, Plan(micro_batch=batch), one).performance
        cache.seconds[key] = performance.decode_tokens_per_s or 0.0
    return cache.seconds[key]


def shapes_by_bound(
    model: ModelSpec,
    workload: Workload,
    cluster: Cluster,
    global_batch: int,
    micro_batch: int | None,
    cache: BoundCache,
    levers: Levers | None = None,
) -> list[Shape]:
    """Every shape with an upper bound on its speed, most promising first (ties keep the simpler
    shape first: plan_shapes yields tp, then pp, ascending); remembered in `cache`."""
    key = (cluster.gpus_per_node, cluster.nodes, micro_batch, levers)
    known = cache.shapes.get(key)
    if known is not None:
        return known
    shapes = []
    for degrees in plan_shapes(model, workload, cluster):
        mbs = micro_batches(workload, degrees.dp, global_batch, micro_batch)
        if mbs and not (degrees.cp > 1 and levers is not None and levers.attention == "eager"):  # cp_eager_attention
            shape = plan_with(degrees if levers is None else levers.on(degrees), micro_batch=mbs[-1])
            bound = speed_bound(model, workload, cluster, shape, mbs, global_batch, cache)
            shapes.append((bound, shape, mbs))
    cache.shapes[key] = sorted(shapes, key=lambda item: -item[0])
    return cache.shapes[key]


def speed_bound(
    model: ModelSpec,
    workload: Workload,
    cluster: Cluster,
    shape: Plan,
    mbs: tuple[int, ...],
    global_batch: int,
    cache: BoundCache,
) -> float:
    """Tokens/s no plan of this shape can exceed: per micro-batch, its compute plus its tensor-
    parallel all-reduces (which the model never overlaps), stretched over the 1F1B schedule's
    (m + p - 1) slots (Narayanan et al. 2021 §2.2), plus the offload traffic the model can never
    hide; no DP communication or optimizer step. The per-micro-batch part depends only on
    (tp, pp, recompute, micro-batch), so it is memoised in `cache`."""
    if workload.task == "inference":
        return shape.dp * shape.tp * _decode_rate_per_gpu(model, workload, cluster, mbs[-1], cache)
    offload_key = (
        "offload",
        shape.tp,
        shape.pp,
        shape.cp,
        shape.ep,
        shape.dp,
        shape.dp_shard,
        shape.zero_stage,
        shape.offload,
    )
    seconds = cache.seconds
    if offload_key not in seconds:  # independent of the micro-batch (one per step)
        seconds[offload_key] = _offload_floor_s(model, workload, cluster, shape)
    best = 0.0
    for mb in mbs if shape.pp > 1 else mbs[-1:]:  # without a pipeline, wider is always faster
        key = (shape.tp, shape.pp, shape.cp, shape.ep, shape.recompute, mb)
        if key not in seconds:
            seconds[key] = _microbatch_floor_s(
                model, workload, cluster, level_plan(shape, 0, "none", shape.recompute, mb)
            )
        slots = global_batch // (shape.dp * mb) + shape.pp - 1
        best = max(best, global_batch * workload.seq_len / (slots * seconds[key] + seconds[offload_key]))
    return best


def _offload_floor_s(model: ModelSpec, workload: Workload, cluster: Cluster, plan: Plan) -> float:
    """The least offload time per step: with unbounded compute to overlap and a single micro-batch,
    the model still exposes the unhidden share of each PCIe copy and the whole CPU Adam step
    (communication.offload_time)."""
    if plan.offload == "none":
        return 0.0
    unbounded = StepShape(
        micro_batches=1,
        fwd_s=float("inf"),
        bwd_s=float("inf"),
        attention_s=0.0,
        layers_local=-(-model.layers // plan.pp),
        trainable_local=trainable_params_local(model, workload, plan),
        placement=per_node(plan, cluster.gpus_per_node),
    )
    return offload_time(model, workload, plan, cluster, unbounded)


def _microbatch_floor_s(model: ModelSpec, workload: Workload, cluster: Cluster, plan: Plan) -> float:
    seconds = microbatch_compute_s(model, workload, plan, cluster.gpu)[0]
    if plan.tp > 1:
        shape = StepShape(
            micro_batches=1,
            fwd_s=0.0,
            bwd_s=0.0,
            attention_s=0.0,
            layers_local=-(-model.layers // plan.pp),
            trainable_local=0.0,
            placement=per_node(plan, cluster.gpus_per_node),
        )
        seconds += tp_comm(model, workload, plan, cluster, shape)
    return seconds
