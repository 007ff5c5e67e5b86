"""A serving estimate as the API's shapes (app/planner/serving_service.py): the `serving` block, its memory,
performance and plan, and the plan's summary."""

from __future__ import annotations

import math
from typing import Any

from app.common.schemas import mirror
from app.estimator.serving import ServingConfig, ServingEstimate
from app.estimator.serving_sim import LoadLatency, Quantiles
from app.estimator.specs import GIB
from app.planner.mappers import gib_memory_out
from app.planner.schemas import MemoryOut, PerformanceOut, PlanOut
from app.planner.serving_option import ServingOption
from app.planner.serving_schemas import (
    UNBOUNDED,
    BindingOut,
    LatencyOut,
    LoadLatencyOut,
    PercentilesOut,
    PoolOut,
    ServingMemoryOut,
    ServingOut,
    UtilizationOut,
)
from app.planner.word_schemas import NoteOut
from app.text.words import serving_summary as words_summary


def _finite(value: float) -> float | None:
    return None if math.isinf(value) or math.isnan(value) else value


def _headroom(estimate: ServingEstimate, option: ServingOption | None) -> float | None:
    """The factor of the peak the replicas carry within the SLO, as held to the simulation for a shown option; None
    where the SLO is missed (a near miss keeps the closed forms' figure, never checked: review R5-8 read 1.217 beside
    meets_slo false) or no sequence fits."""
    if option is None or estimate.max_concurrency < 1 or estimate.meets_slo is False:
        return None
    return round(option.headroom, 3)


def serving_out(estimate: ServingEstimate, cfg: ServingConfig, option: ServingOption | None = None) -> ServingOut:
    mem = estimate.memory
    saturated = estimate.latency is not None and estimate.latency["average"].saturated  # unbounded (_latency_out)
    latency = _latency_out(estimate.latency)
    utilization = (
        UtilizationOut(**{k: round(v, 3) for k, v in estimate.utilization.items()}) if estimate.utilization else None
    )
    max_concurrency = _max_concurrency(estimate, option)
    # the peak the latency.peak was simulated at: the option's, else (/estimate) the offered load × peak_factor
    peak_rps = option.peak.requests_per_s if option else (cfg.requests_per_s or 0.0) * cfg.peak_factor
    in_flight = (estimate.concurrency, max_concurrency, estimate.requests_per_s, peak_rps)
    return mirror(
        ServingOut,
        estimate,
        ttft_ms=None if saturated else _finite(estimate.ttft_ms),
        tpot_ms=_finite(estimate.tpot_ms),
        e2e_latency_ms=None if saturated else _finite(estimate.e2e_latency_ms),
        headroom=_headroom(estimate, option),
        max_concurrency=max_concurrency,
        latency=latency,
        utilization=utilization,
        binding=binding_out(latency, utilization, cfg, in_flight),
        isolated_ttft_ms=estimate.isolated_ttft_ms,
        peak_requests_per_s=option.peak.requests_per_s if option else None,
        pools=_pools_out(option),
        kv_transfer_ms=option.kv_transfer_ms if option else None,
        memory_per_gpu_gib=ServingMemoryOut(
            weights=round(mem.weights / GIB, 2),
            kv_cache=round(mem.kv_cache / GIB, 2),
            activations=round(mem.activations / GIB, 2),
            engine_reserve=round(mem.engine_reserve / GIB, 2),
            total=round(mem.total / GIB, 2),
            capacity=round(mem.capacity / GIB, 2),
        ),
        engine=cfg.engine,
        batching=cfg.batching,
        notes=[n.text for n in estimate.notes],
        note_codes=[NoteOut(code=n.code, params=dict(n.params)) for n in estimate.notes],
    )


def binding_out(
    latency: LoadLatencyOut | None,
    utilization: UtilizationOut | None,
    cfg: ServingConfig,
    in_flight: tuple[float, int, float, float],
) -> BindingOut | None:
    """The target nearest its limit at the peak, from the answer's own figures: TTFT or TPOT at the SLO's percentile
    ÷ its target, throughput as the replicas' utilization at the peak, memory as the sequences in flight at the peak
    ÷ what a replica runs (`in_flight`: the concurrency at the offered load, max_concurrency, the offered and the peak
    requests/s); a saturated peak's queue grows without bound, so no finite latency ÷ target reads true (review
    R3-6). None without the simulated figures (a concurrency request). The web page words it (app/web/serve_words)."""
    if latency is None or utilization is None:
        return None
    peak = latency.peak
    if peak.saturated:
        return BindingOut(target="saturated", share=utilization.peak)
    found: list[BindingOut] = []
    for name, target, figures in (("ttft", cfg.slo_ttft_ms, peak.ttft_ms), ("tpot", cfg.slo_tpot_ms, peak.tpot_ms)):
        value = getattr(figures, cfg.slo_percentile)
        if target and value is not None:
            found.append(BindingOut(target=name, share=value / target))
    found.append(BindingOut(target="throughput", share=utilization.peak))
    concurrency, most, offered, peak_rps = in_flight
    if most > 0:
        # Sequences in flight at the peak by Little's law: the offered load's, scaled by the peak's rate and latency.
        avg_e2e, peak_e2e = latency.average.e2e_ms.p50, peak.e2e_ms.p50
        rate_ratio = (peak_rps or offered) / offered if offered else 1.0
        seqs = concurrency * rate_ratio * (peak_e2e / avg_e2e if avg_e2e and peak_e2e else 1.0)
        found.append(BindingOut(target="memory", share=seqs / most))
    return max(found, key=lambda b: b.share)


def _max_concurrency(estimate: ServingEstimate, option: ServingOption | None) -> int:
    """What one replica runs at once: what the option's launch admits (--max-num-seqs, serving_launch.replica_max_seqs)
    or, on /estimate under a load, the slots its simulation queued on by the same rule (ServingEstimate.launch_slots:
    review R10-4 read the KV cache's 70 beside a TTFT tail set by the launch's 20); else the KV cache and the
    engine's max_num_seqs."""
    if option is None or option.max_seqs is None:
        return estimate.launch_slots or estimate.max_concurrency
    return option.max_seqs


def _pools_out(option: ServingOption | None) -> dict[str, PoolOut] | None:
    if option is None or not option.pools:
        return None
    used = option.pool_utilization or {}
    return {
        name: PoolOut(
            **pool,
            utilization=UtilizationOut(**{k: round(v, 3) for k, v in used[name].items()}) if name in used else None,
        )
        for name, pool in option.pools.items()
    }


def _percentiles_ms(values: Quantiles) -> PercentilesOut:
    return PercentilesOut(p50=values.p50 * 1e3, p90=values.p90 * 1e3, p99=values.p99 * 1e3)


def _latency_out(latency: dict[str, LoadLatency] | None) -> LoadLatencyOut | None:
    """The simulated percentiles; a saturated load's TTFT and end-to-end latency unbounded (PercentilesOut)."""
    if latency is None:
        return None
    parts = {
        name: LatencyOut(
            ttft_ms=UNBOUNDED if load.saturated else _percentiles_ms(load.ttft),
            tpot_ms=_percentiles_ms(load.tpot),
            e2e_ms=UNBOUNDED if load.saturated else _percentiles_ms(load.e2e),
            saturated=load.saturated,
        )  # fmt: skip
        for name, load in latency.items()
    }
    return LoadLatencyOut(average=parts["average"], peak=parts["peak"])


def memory_out(estimate: ServingEstimate) -> MemoryOut:
    mem = estimate.memory
    parts = {
        "weights": mem.weights,
        "gradients": 0.0,
        "optimizer": 0.0,
        "activations": mem.activations,
        "kv_cache": mem.kv_cache,
        "other": mem.engine_reserve,
        "total": mem.total,
    }
    return gib_memory_out(parts, capacity=mem.capacity, fits=estimate.max_concurrency >= 1)


def performance_out(estimate: ServingEstimate) -> PerformanceOut:
    return PerformanceOut(
        tokens_per_s=estimate.output_tokens_per_s,
        tokens_per_s_per_gpu=estimate.output_tokens_per_s_per_gpu,
        decode_tokens_per_s=estimate.output_tokens_per_s,
        time_per_output_token_ms=_finite(estimate.tpot_ms),
        breakdown_s={"ttft": estimate.ttft_ms / 1e3} if _finite(estimate.ttft_ms) is not None else {},
    )


def serving_summary(replicas: int, tp: int, pp: int, pools: dict[str, Any] | None = None, ep: int = 1) -> str:
    """A serving plan's summary: its replicas × TP (× PP), or a disaggregated deployment's two pools (`pools`: each
    pool's `tp` and `replicas`), in the API's English (app/text/words.py SERVE_WORDS words it in each language). The
    quote words its own plan with it (app.quotes.plan_summary)."""
    return words_summary(replicas, tp, pp, pools, "en", ep)


def plan_out(
    replicas: int, tp: int, pp: int, concurrency: float, pools: dict[str, Any] | None = None, ep: int = 1
) -> PlanOut:
    summary = serving_summary(replicas, tp, pp, pools, ep)
    return PlanOut(
        dp=replicas,
        tp=tp,
        pp=pp,
        cp=1,
        ep=ep,
        zero_stage=0,
        offload="none",
        recompute="none",
        sequence_parallel=False,
        flash_attention=True,
        micro_batch=max(1, math.ceil(concurrency)),
        global_batch=None,
        virtual_stages=1,
        summary=summary,
    )
