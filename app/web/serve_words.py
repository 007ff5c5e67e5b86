"""What a serving result says first: how many servers, the peak rate it is sized for, and which target
binds (the one the deployment is closest to at that peak). Read from the option's own figures
(`serving.latency`, `serving.utilization`, the KV cache), never recomputed here."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.planner.schemas import OptionOut
from app.text.i18n import Translator

BINDS = ("ttft", "tpot", "throughput", "memory", "saturated")


@dataclass(frozen=True)
class Binding:
    target: str  # one of BINDS
    share: float  # how close to its limit: the peak figure ÷ the target (or the capacity)
    params: dict[str, Any]


def binding(option: OptionOut, slo: dict[str, float], percentile: str) -> Binding | None:
    """The target nearest its limit at the peak rate: TTFT or TPOT at the SLO's percentile ÷ its target,
    throughput as the replicas' utilization at peak, memory as the sequences in flight ÷ what the KV cache
    holds. None without the simulated figures (a concurrency request)."""
    s = option.serving
    if s is None or s.latency is None or s.utilization is None:
        return None
    peak = s.latency.peak
    if peak.saturated:  # the queue grows without bound: no finite latency ÷ target reads true (review R3-6)
        return Binding("saturated", s.utilization.peak, {})
    found: list[Binding] = []
    for name, figures in (("ttft", peak.ttft_ms), ("tpot", peak.tpot_ms)):
        target = slo.get(f"{name}_ms")
        if target:
            value = float(getattr(figures, percentile))
            found.append(Binding(name, value / target, {"value": value, "target": target, "pct": percentile}))
    found.append(Binding("throughput", s.utilization.peak, {"share": s.utilization.peak}))
    if s.max_concurrency > 0:
        # Sequences in flight at peak by Little's law: the average's, scaled by the peak's rate and latency.
        avg_e2e, peak_e2e = s.latency.average.e2e_ms.p50, peak.e2e_ms.p50
        rate_ratio = (s.peak_requests_per_s or s.requests_per_s) / s.requests_per_s if s.requests_per_s else 1.0
        in_flight = s.concurrency * rate_ratio * (peak_e2e / avg_e2e if avg_e2e and peak_e2e else 1.0)
        found.append(Binding("memory", in_flight / s.max_concurrency, {"seqs": in_flight, "max": s.max_concurrency}))
    return max(found, key=lambda b: b.share)


def binding_words(found: Binding | None, t: Translator) -> str:
    if found is None:
        return ""
    p = found.params
    share = t.number(found.share * 100)
    if found.target in ("ttft", "tpot"):
        digits = 0 if found.target == "ttft" else 1
        return t(
            f"serve_binds_{found.target}",
            pct=p["pct"],
            value=t.number(p["value"], digits),
            target=t.number(p["target"], digits),
            share=share,
        )
    if found.target == "saturated":
        return t("serve_binds_saturated")
    if found.target == "throughput":
        return t("serve_binds_throughput", share=share)
    return t("serve_binds_memory", seqs=t.number(p["seqs"]), max=t.number(p["max"]), share=share)


def servers_words(option: OptionOut, t: Translator) -> str:
    return t.plural("serve_servers", option.nodes, n=t.number(option.nodes))


def layout_words(option: OptionOut, t: Translator) -> str:
    """The deployment's layout: replicas × TP (× PP where a replica spans stages), or, for separate pools,
    each pool's replicas × TP; the GPUs are the option's total."""
    s = option.serving
    if s is None:
        return ""
    if s.pools and "prefill" in s.pools and "decode" in s.pools:
        pre, dec = s.pools["prefill"], s.pools["decode"]
        return t("serve_layout_pools", prefill=pre.replicas, prefill_tp=pre.tp, decode=dec.replicas,
                 decode_tp=dec.tp, gpus=option.total_gpus)  # fmt: skip
    tp = option.plan.tp
    pp = s.gpus_per_replica // tp if tp else 1
    key = "serve_layout_pp" if pp > 1 else "serve_layout_ep" if option.plan.ep > 1 else "serve_layout"
    return t.plural(key, s.replicas, replicas=s.replicas, tp=tp, pp=pp, gpus=option.total_gpus)
