"""The entry point: `estimate_serving`, latency, throughput, KV capacity and memory of a deployment of replicas,
with the simulated latencies at the offered load and its peak."""

from __future__ import annotations

import math
from dataclasses import replace

from app.estimator.notes import Note, note
from app.estimator.serving.config import ServingConfig, ServingEstimate
from app.estimator.serving.engines import _batched_tokens, _max_num_seqs, _request_overhead_s
from app.estimator.serving.memo import _hardware, simulations
from app.estimator.serving.memory import (
    held_sequences,
    kv_cache_tokens,
    max_concurrency,
    sequence_kv_tokens,
    serving_memory,
)
from app.estimator.serving.operating_point import (
    _at_percentile,
    _capacity,
    _has_slo,
    _isolated_ttft_s,
    _meets,
    _operating_point,
    _Point,
    _queued,
    _replaced,
    _solve_load,
)
from app.estimator.serving.replicas import replicas_for_slo
from app.estimator.serving.rules import kernel_support, validate_config
from app.estimator.serving.scope import _MEMO
from app.estimator.serving.simulation import _Load, _load, _simulate, meets_at_peak
from app.estimator.serving.step import _Hardware
from app.estimator.serving.waves import wave_point
from app.estimator.serving_levers import check_draft
from app.estimator.specs import Cluster, EstimatorError, GpuSpec, ModelSpec


def _no_sequence_note(cfg: ServingConfig, cache_tokens: int, tp: int) -> Note:
    """Why not even one sequence runs: no room for a cache at all, or a cache shorter than one sequence (under DP
    attention one rank's: a sequence lives on one rank)."""
    if cache_tokens <= 0:
        return note("serving_no_kv_room")
    code = "serving_sequence_too_long_dp" if cfg.dp_attention else "serving_sequence_too_long"
    return note(code, context_len=cfg.context_len, tokens=cache_tokens, tp=tp)


def _over_limit_note(cfg: ServingConfig, gpu: GpuSpec, wanted: int, limit: int) -> Note:
    """More sequences asked than a replica runs: what caps them, the engine's max_num_seqs default or the KV cache."""
    seqs = _max_num_seqs(cfg, gpu)
    if limit == seqs and not cfg.max_num_seqs:
        return note(
            "serving_concurrency_over_seqs", wanted=wanted, limit=limit, engine=cfg.engine, seqs=seqs, gpu=gpu.name
        )
    return note("serving_concurrency_over_kv", wanted=wanted, limit=limit)


def _closed_loop(model: ModelSpec, cfg: ServingConfig, hw: _Hardware, wanted: int, limit: int) -> tuple[_Point, _Point]:
    """The operating point of `wanted` requests in flight on a replica that runs `limit` at once, and the point its SLO
    is judged on: in waves (`cfg.waves`: serving/waves.py) or spread into the steady state, each replacement arriving
    alone (`_replaced`)."""
    running = min(wanted, limit)
    if cfg.waves and cfg.batching != "static":
        point = _queued(wave_point(cfg, hw, running), wanted, limit)
        return point, point
    point = _queued(_replaced(_operating_point(model, cfg, hw, running), cfg, hw, wanted, limit), wanted, limit)
    return point, _at_percentile(model, cfg, hw, point, running)


def estimate_serving(
    model: ModelSpec,
    cfg: ServingConfig,
    cluster: Cluster,
    *,
    tp: int = 1,
    pp: int = 1,
    replicas: int = 1,
    simulate: bool = True,
    replicas_needed: int | None = None,
) -> ServingEstimate:
    """Latency, throughput, KV capacity and memory of `replicas` independent copies of a tp × pp replica.

    For requests_per_s, with `simulate` (the default), the latencies are those of the scheduler simulation at the
    offered load and at its peak (`latency`; ttft_ms, tpot_ms and e2e_latency_ms are the p50s at the offered
    load), meets_slo is judged at the peak on the SLO's percentile, and replicas_needed is the simulated count
    (or the one given). Without it (the search's candidates), the steady-state operating point alone: within an
    answer's scope (scope._MEMO) once per model, traffic, servers, split and replicas (a search on a large catalog
    asks for the same ones on every SKU of a GPU type, in every region)."""
    memo = _MEMO.get()
    if memo is None or (simulate and cfg.requests_per_s is not None):
        return _estimate(model, cfg, cluster, (tp, pp, replicas), simulate, replicas_needed)
    servers = (cluster.gpu.id, cluster.gpus_per_node, cluster.nodes, cluster.intra_node_link, cluster.inter_node_gbps,
               cluster.host_ram_gib, cluster.inter_node_fabric, cluster.memory_headroom)  # fmt: skip
    key = (model, cfg, servers, tp, pp, replicas, replicas_needed)
    found = memo.estimates.get(key)
    if found is None:
        found = memo.estimates[key] = _estimate(model, cfg, cluster, (tp, pp, replicas), simulate, replicas_needed)
    return found


def _estimate(
    model: ModelSpec,
    cfg: ServingConfig,
    cluster: Cluster,
    shape: tuple[int, int, int],
    simulate: bool,
    replicas_needed: int | None,
) -> ServingEstimate:
    tp, pp, replicas = shape
    validate_config(cfg)
    check_draft(model, cfg.speculative)
    if tp < 1 or pp < 1 or replicas < 1:
        raise EstimatorError.of("serving_plan_degrees", field="plan")
    if model.layers < pp:
        raise EstimatorError.of("serving_pp_layers", field="plan.pp", pp=pp, layers=model.layers)
    gpu = cluster.gpu
    unsupported = kernel_support(gpu, cfg)
    if unsupported:
        raise EstimatorError(unsupported.text, field=unsupported.field)
    hw = _hardware(model, cfg, cluster, tp, pp)
    memory = serving_memory(model, cfg, gpu, tp, pp)
    cache_tokens = kv_cache_tokens(model, cfg, gpu, tp, pp)
    sequence_tokens = sequence_kv_tokens(model, cfg, gpu, tp, pp)  # under DP attention one rank's
    limit = max_concurrency(model, cfg, gpu, tp, pp)
    held = held_sequences(model, cfg, gpu, tp, pp)  # under load, by the engine's KV rule (steers the load's figures)
    notes: list[Note] = []
    if cfg.context_len > sequence_tokens and limit >= 1:
        code = "serving_max_model_len_over_dp" if cfg.dp_attention else "serving_max_model_len_over"
        notes.append(note(code, context_len=cfg.context_len, tokens=sequence_tokens))
    gpus_per_replica = tp * pp
    judged = None
    if limit < 1:
        point = None
    elif cfg.requests_per_s is not None:
        point = _solve_load(model, cfg, hw, cfg.requests_per_s / replicas, held)
    else:
        wanted = cfg.concurrency if cfg.concurrency is not None else limit
        if wanted > limit:
            notes.append(_over_limit_note(cfg, gpu, wanted, limit))
        point, judged = _closed_loop(model, cfg, hw, wanted, limit)
    if point is None:
        zero = ServingEstimate(
            ttft_ms=math.inf, tpot_ms=math.inf, e2e_latency_ms=math.inf, output_tokens_per_s=0.0,
            output_tokens_per_s_per_gpu=0.0, requests_per_s=0.0, concurrency=0.0, max_concurrency=0,
            kv_cache_tokens=cache_tokens, sequence_kv_tokens=sequence_tokens, replicas=replicas, replicas_needed=None,
            meets_slo=False if _has_slo(cfg) else None, memory=memory, gpus_per_replica=gpus_per_replica,
            bound="memory", notes=notes + [_no_sequence_note(cfg, sequence_tokens, tp)],
        )  # fmt: skip
        return zero
    needed = None
    if cfg.requests_per_s is not None:
        capacity = _capacity(model, cfg, hw, held)
        # the SLO is judged at the peak: the replicas that carry requests_per_s × peak_factor within it
        needed = max(1, math.ceil(cfg.requests_per_s * cfg.peak_factor / capacity - 1e-9)) if capacity > 0 else None
        if point.requests_per_s * replicas < cfg.requests_per_s * (1 - 1e-3):
            carried = point.requests_per_s * replicas
            notes.append(
                note("serving_rate_over_capacity", replicas=replicas, carried=carried, offered=cfg.requests_per_s)
            )
    rps = point.requests_per_s * replicas
    tokens_per_s = rps * cfg.output_tokens
    result = ServingEstimate(
        ttft_ms=point.ttft_s * 1e3,
        tpot_ms=point.tpot_s * 1e3,
        e2e_latency_ms=point.e2e_s * 1e3,
        output_tokens_per_s=tokens_per_s,
        output_tokens_per_s_per_gpu=tokens_per_s / (replicas * gpus_per_replica),
        requests_per_s=rps,
        concurrency=point.concurrency,
        max_concurrency=limit,
        held_sequences=held,
        kv_cache_tokens=cache_tokens,
        sequence_kv_tokens=sequence_tokens,
        replicas=replicas,
        replicas_needed=needed,
        meets_slo=_meets(judged or point, cfg) if _has_slo(cfg) else None,
        memory=memory,
        gpus_per_replica=gpus_per_replica,
        bound=point.bound,
        notes=notes,
        isolated_ttft_ms=(_isolated_ttft_s(model, cfg, hw) - _request_overhead_s(cfg)) * 1e3,
        request_overhead_ms=_request_overhead_s(cfg) * 1e3,
        token_budget=_batched_tokens(cfg, hw.gpu),
        at_percentile_ms=(judged.ttft_s * 1e3, judged.tpot_s * 1e3) if judged not in (None, point) else None,
    )
    if cfg.requests_per_s is None or not simulate:
        return result
    with simulations():
        # by the engine's KV rule, as /recommend's search and launch hold it (simulation.peak_latency, review R10-4)
        load = _load(model, cfg, hw, held)
        return _under_load(result, model, cfg, cluster, (tp, pp, replicas), load, replicas_needed)


def _under_load(
    result: ServingEstimate,
    model: ModelSpec,
    cfg: ServingConfig,
    cluster: Cluster,
    shape: tuple[int, int, int],
    load: _Load,
    replicas_needed: int | None,
) -> ServingEstimate:
    """The estimate with the simulated latencies at the offered load and its peak, judged at the peak."""
    tp, pp, replicas = shape
    offered = (cfg.requests_per_s or 0.0) / replicas
    peak_rate = offered * cfg.peak_factor
    peak = _simulate(load, peak_rate)
    average = _simulate(load, offered).at_most(peak)  # the same arrivals at the lower rate: no slower than the peak
    if replicas_needed is None:
        found = replicas_for_slo(model, cfg, cluster, tp=tp, pp=pp)
        replicas_needed = found[0] if found else None
    used = {"average": load.utilization(offered, average), "peak": load.utilization(peak_rate, peak)}
    result = _carried(result, cfg, used["average"] if average.saturated else 0.0)
    return replace(
        result,
        ttft_ms=average.ttft.p50 * 1e3,
        tpot_ms=average.tpot.p50 * 1e3,
        e2e_latency_ms=average.e2e.p50 * 1e3,
        replicas_needed=replicas_needed,
        meets_slo=meets_at_peak(peak, cfg) if _has_slo(cfg) else None,
        latency={"average": average, "peak": peak},
        concurrency=min(float(load.limit), average.running),  # what the simulation holds at the offered load
        utilization=used,
        isolated_ttft_ms=(load.isolated_s - _request_overhead_s(cfg)) * 1e3,
        launch_slots=load.slots,
    )


def _carried(result: ServingEstimate, cfg: ServingConfig, used: float) -> ServingEstimate:
    """`result` with the requests/s (and output tokens/s) its replicas carry where the simulation saturates them at
    the offered load (`used` ≥ 1, their busiest resource's utilisation: `_Load.utilization`), not the rate offered:
    that resource completes at most offered ÷ used (review: 8 replicas of DeepSeek-V3 at 10 requests/s, KV slots
    loaded to 1.054, read 10 requests/s carried and a cost per million tokens at that rate)."""
    offered = cfg.requests_per_s or 0.0
    if used < 1.0 or result.requests_per_s <= offered / used:
        return result
    rps = offered / used
    tokens = rps * cfg.output_tokens
    saturated = note("serving_rate_saturated", replicas=result.replicas, carried=rps, offered=offered)
    return replace(
        result, requests_per_s=rps, output_tokens_per_s=tokens,
        output_tokens_per_s_per_gpu=tokens / (result.replicas * result.gpus_per_replica),
        notes=[*result.notes, saturated],
    )  # fmt: skip
