"""Why a serving deployment that fits is a near miss: its latency targets missed (by one request, at the peak, or
with clients queued for the KV cache's sequence slots), or clients queued with no target given; and how near it
comes (`shortfall`), which picks the near miss an offer shows. PURE: estimates in, codes with parameters out
(app/text/messages.py words them)."""

from __future__ import annotations

import math
from typing import Any, Protocol

from app.estimator.serving import ServingConfig, ServingEstimate
from app.estimator.serving_sim import LoadLatency
from app.planner.misses import Miss, slo_params


def simulated_miss(cfg: ServingConfig, peak: LoadLatency | None) -> Miss:
    """slo_peak with the simulated percentile at the peak (the SLO's own). A saturated peak's TTFT is None, unbounded
    as the option's latency shows it (serving_schemas.PercentilesOut): the queue grows through any run, and the
    run's percentile measures its length, not a latency (review: 40,040 ms beside saturated true)."""
    q = cfg.slo_percentile
    if peak is None:
        return "slo_peak", {"ttft_ms": None, "tpot_ms": math.inf, "percentile": q, "saturated": True} | slo_params(cfg)
    ttft = None if peak.saturated else peak.ttft.at(q) * 1e3
    reached = {"ttft_ms": ttft, "tpot_ms": peak.tpot.at(q) * 1e3, "percentile": q}
    return "slo_peak", reached | {"saturated": peak.saturated} | slo_params(cfg)


def with_simulated_peak(cfg: ServingConfig, misses: list[Miss], est: ServingEstimate) -> list[Miss]:
    """A shown near miss's latency misses held to its simulation, one source of truth per option (review R3-3: a miss
    limited by the SKU's size quoted the closed forms' "TTFT 589 ms" beside a simulated p99 of 8,244 ms, saturated):
    the closed forms' `slo_peak` becomes the simulated percentile at the peak (or the queue growing without bound),
    and where the simulation misses at the peak with no latency miss cited yet, that miss is added. Unchanged where
    the option carries no simulated latency."""
    if est.latency is None or not slo_params(cfg):
        return misses
    simulated = simulated_miss(cfg, est.latency["peak"])
    steady = [m for m in misses if m[0] == "slo_peak" and "percentile" not in m[1]]
    kept = [m for m in misses if m not in steady]
    cited = any(code in ("slo_peak", "slo_one_request", "kv_slots") for code, _ in kept)
    if est.meets_slo is False and not cited:
        return [simulated, *kept]
    return kept if kept else [simulated]


def slo_miss(cfg: ServingConfig, one: ServingEstimate, peak: ServingEstimate) -> Miss:
    """The latency targets missed, with the TTFT and TPOT reached: by one request at a time, at a concurrency beyond
    the sequences a replica runs (`kv_slots`: the others queue for a slot), or at the peak."""
    reached = one if one.meets_slo is False else peak
    params = {"ttft_ms": reached.ttft_ms, "tpot_ms": reached.tpot_ms} | slo_params(cfg)
    if one.meets_slo is not False and queues_for_slots(cfg, peak):
        return "kv_slots", params | slot_params(cfg, peak)
    if one.meets_slo is False and one.at_percentile_ms is not None:
        # judged on the SLO's percentile of the mix of lengths: cite that, not the mean prompt's figures, which meet
        # the targets (review R5-3: "misses TTFT ≤ 3000 ms: TTFT 956 ms" where the p99 prompt's TTFT was ~20 s)
        ttft, tpot = one.at_percentile_ms
        return "slo_one_request", params | {"ttft_ms": ttft, "tpot_ms": tpot, "percentile": cfg.slo_percentile}
    return ("slo_one_request" if one.meets_slo is False else "slo_peak"), params


def queues_for_slots(cfg: ServingConfig, peak: ServingEstimate) -> bool:
    """Whether the clients asked per replica (`concurrency`) are more than the sequences a replica runs."""
    return cfg.concurrency is not None and 1 <= peak.max_concurrency < cfg.concurrency


def slot_params(cfg: ServingConfig, peak: ServingEstimate) -> dict[str, Any]:
    """The clients asked, the slots a replica runs, the replicas of this shape that would run them all, and the
    TTFT and TPOT with the wait for a slot."""
    clients, slots = cfg.concurrency or 0, peak.max_concurrency
    return {
        "ttft_ms": peak.ttft_ms,
        "tpot_ms": peak.tpot_ms,
        "concurrency": clients,
        "max_concurrency": slots,
        "replicas": math.ceil(clients / slots) * peak.replicas,
    }


def shortfall(misses: list[Miss]) -> float:
    """How far an option's misses leave it from the SLO: the largest latency ÷ target its misses cite (an unbounded
    one, None, infinite), or the peak offered ÷ carried; infinite for a miss that cites neither (a sequence too
    long)."""
    worst = 0.0
    for code, params in misses:
        ratios = [
            math.inf if params[f] is None else params[f] / params[f"slo_{f}"]
            for f in ("ttft_ms", "tpot_ms")
            if f in params and f"slo_{f}" in params
        ]
        if "offered" in params and params.get("carried"):
            ratios.append(params["offered"] / params["carried"])
        if code == "max_nodes":  # the replicas the peak needs ÷ the most the SKU rents
            ratios.append(params["replicas"] / params["most"])
        if code == "kv_slots_wait":  # no target: the clients asked ÷ the slots that run them
            ratios.append(params["concurrency"] / params["max_concurrency"])
        worst = max(worst, max(ratios, default=math.inf))
    return worst


class NearMiss(Protocol):
    """What `miss_key` reads of a deployment (app/planner/serving.py ServingOption)."""

    misses: list[Miss]
    peak: ServingEstimate
    estimate: ServingEstimate


def misses_one_request(option: NearMiss) -> bool:
    return any(code == "slo_one_request" for code, _ in option.misses)


def miss_key(option: NearMiss) -> tuple[bool, bool, float, float, int]:
    """The nearer miss of one offer: a shape that holds one request before one that cannot (a sequence too long for
    its KV cache; review R2 R1: a 120,500-token request cited as "does not fit at TP 2" on servers whose TP 8 holds
    1.36 M tokens), then a shape whose one request at a time meets the SLO before one that misses even
    that (more replicas or a looser percentile can mend the first, nothing but a faster shape the second), then the
    smaller shortfall (the latency reached ÷ its target, the worse of TTFT and TPOT, as each miss cites it), then the
    lower TPOT at the peak, then the larger KV cache (a sequence too long for every degree is reported at the one
    that comes closest). The shortfall before the rest, so a near miss cites the best shape tried: a TTFT target
    missed by a TP 1 and a TP 4 replica is cited at TP 4's TTFT. Two misses are compared on the same footing: both
    by the closed forms, or both simulated (app/planner/serving.py `_verified_misses`)."""
    too_long = any(code == "sequence_too_long" for code, _ in option.misses)
    one_request = misses_one_request(option)
    return too_long, one_request, shortfall(option.misses), option.peak.tpot_ms, -option.estimate.kv_cache_tokens
