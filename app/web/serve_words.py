"""What a serving result says first: how many servers, the peak rate it is sized for, and which target
binds (the one the deployment is closest to at that peak). Read from the option's own figures
(`serving.binding`, decided in the planner, and the figures it cites: `serving.latency`, the KV cache), never
recomputed here."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.planner.schemas import OptionOut
from app.text.i18n import Translator


@dataclass(frozen=True)
class Binding:
    target: str  # as the API's serving.binding.target (app/planner/serving_schemas.py BindingTarget)
    share: float  # how close to its limit: the peak figure ÷ the target (or the capacity)
    params: dict[str, Any]


def binding(option: OptionOut, slo: dict[str, float], percentile: str) -> Binding | None:
    """The target nearest its limit at the peak rate, as the API's `serving.binding` names it (decided once, in
    app/planner/serving_mappers.py `binding_out`), with the figures its words cite: TTFT or TPOT at the SLO's
    percentile and its target, the utilization's share, or the sequences in flight at the peak (share × what a
    replica runs). None without the simulated figures (a concurrency request)."""
    s = option.serving
    if s is None or s.binding is None or s.latency is None:
        return None
    found = s.binding
    if found.target in ("ttft", "tpot"):
        value = float(getattr(getattr(s.latency.peak, f"{found.target}_ms"), percentile))
        params = {"value": value, "target": slo[f"{found.target}_ms"], "pct": percentile}
        return Binding(found.target, found.share, params)
    if found.target == "memory":
        seqs = found.share * s.max_concurrency
        return Binding("memory", found.share, {"seqs": seqs, "max": s.max_concurrency})
    return Binding(found.target, found.share, {"share": found.share} if found.target == "throughput" else {})


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
