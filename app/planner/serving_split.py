"""How POST /estimate splits a cluster for serving when the request states no plan (app/planner/serving_service.py):
tp × pp per replica and the replicas, every GPU serving."""

from __future__ import annotations

from app.estimator.interconnects import fabric_of
from app.estimator.serving import ServingConfig, estimate_serving, kv_cache_tokens, max_concurrency, replica_capacity
from app.estimator.serving_levers import check_pipeline, pipelines_with
from app.estimator.specs import Cluster, EstimatorError, ModelSpec
from app.planner.serving_multinode import cross_node_tp
from app.planner.serving_option import TP_DEGREES, valid_tp


def default_split(model: ModelSpec, cfg: ServingConfig, cluster: Cluster) -> tuple[int, int, int]:
    """(tp, pp, replicas), every GPU serving: of the TP degrees within a server that hold a sequence, the one
    whose replicas carry the most (the smaller degree on a tie; the same GPUs, so also the lowest cost per
    token); a model no server holds runs TP over a server and one pipeline stage per server."""
    best: tuple[tuple[bool, float], int] | None = None
    largest_cache = (0, 1)  # (tokens, tp)
    for tp in TP_DEGREES:
        if tp > cluster.gpus_per_node or cluster.gpus % tp or not valid_tp(model, tp):
            continue
        if max_concurrency(model, cfg, cluster.gpu, tp, 1) < 1:
            largest_cache = max(largest_cache, (kv_cache_tokens(model, cfg, cluster.gpu, tp, 1), tp))
            continue
        score = _split_score(model, cfg, cluster, tp, cluster.gpus // tp)
        if best is None or score > best[0]:
            best = (score, tp)
    if best is not None:
        return best[1], 1, cluster.gpus // best[1]
    pipeline = _pipeline_split(model, cfg, cluster)
    if pipeline is not None:
        return pipeline
    where = f"{cluster.nodes} × {cluster.gpus_per_node} × {cluster.gpu.name}"
    if largest_cache[0] > 0:
        raise EstimatorError.of(
            "serving_sequence_kv",
            field="serving.input_tokens",
            context=cfg.context_len,
            where=where,
            tokens=largest_cache[0],
            tp=largest_cache[1],
        )
    code = "serving_no_kv_nodes" if cluster.nodes > 1 else "serving_no_kv"
    raise EstimatorError.of(code, field="hardware", model=model.name, where=where)


def _pipeline_split(model: ModelSpec, cfg: ServingConfig, cluster: Cluster) -> tuple[int, int, int] | None:
    """TP over one server's GPUs, the fewest servers as pipeline stages that hold a sequence."""
    tp = cluster.gpus_per_node
    if cluster.nodes < 2 or not valid_tp(model, tp):
        return None
    for pp in range(2, min(cluster.nodes, model.layers) + 1):
        if cluster.nodes % pp == 0 and max_concurrency(model, cfg, cluster.gpu, tp, pp) >= 1:
            across = _tp_across(model, cfg, cluster, pp)
            if across is not None:
                return across, 1, cluster.nodes // pp
            check_pipeline(cfg.engine, cfg.speculative, pp, field="serving.speculative")
            return tp, pp, cluster.nodes // pp
    return None


def _tp_across(model: ModelSpec, cfg: ServingConfig, cluster: Cluster, servers: int) -> int | None:
    """Where the engine runs no pipeline with the request's speculation: one TP group over `servers` servers joined by
    an RDMA fabric (app/planner/serving_multinode.py), if it holds a sequence; None: the pipeline (or its 422)."""
    if pipelines_with(cfg.engine, cfg.speculative):
        return None
    tp = cross_node_tp(model, cfg, cluster.gpus_per_node, fabric_of(cluster), servers)
    if tp is None or not valid_tp(model, tp) or max_concurrency(model, cfg, cluster.gpu, tp, 1) < 1:
        return None
    return tp


def _split_score(model: ModelSpec, cfg: ServingConfig, cluster: Cluster, tp: int, replicas: int) -> tuple[bool, float]:
    """(meets the SLO or carries the offered load, output tokens/s): at the requested concurrency, or for an
    offered load what the replicas carry within the SLO."""
    if cfg.requests_per_s is None:
        result = estimate_serving(model, cfg, cluster, tp=tp, replicas=replicas)
        return result.meets_slo is not False, result.output_tokens_per_s
    per_replica, _ = replica_capacity(model, cfg, cluster, tp=tp)
    return per_replica * replicas >= cfg.requests_per_s, per_replica * replicas * cfg.output_tokens
