"""The serving part of a printed quote: the traffic it was sized for, the latency targets and the latency the
deployment serves (the simulated percentiles the quote froze), its replicas and servers — in the reader's
language, and never the training words (micro-batch, time to finish) that a serving plan's fields would give."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from app.planner.serving_schemas import ServingIn
from app.quotes.schemas import QuoteOut
from app.text.quote_words import SERVING_LABELS as LABELS

ENGINES = {"vllm": "vLLM", "sglang": "SGLang", "trt-llm": "TensorRT-LLM"}
PERCENT = {"p50": "50%", "p90": "90%", "p99": "99%"}


def _n(value: float, digits: int = 0) -> str:
    return f"{value:,.{digits}f}" if digits else f"{round(value):,}"


def _rate(value: float) -> str:
    return f"{value:,.2f}".rstrip("0").rstrip(".")


def _latency(figures: dict[str, Any], t: dict[str, str]) -> str:
    ttft, tpot = figures["ttft_ms"], figures["tpot_ms"]
    return t["latency_words"].format(
        t50=_n(ttft["p50"]), t90=_n(ttft["p90"]), t99=_n(ttft["p99"]),
        p50=_n(tpot["p50"], 1), p90=_n(tpot["p90"], 1), p99=_n(tpot["p99"], 1),
    )  # fmt: skip


def serving_rows(quote: QuoteOut, lang: str) -> list[tuple[str, str]]:
    """Traffic, lengths, engine, targets, latency (average and peak percentiles), replicas and servers."""
    t = LABELS.get(lang, LABELS["en"])
    workload, plan = dict(quote.workload or {}), dict(quote.plan or {})
    try:
        ask = ServingIn.model_validate(workload.get("serving") or {})
    except ValidationError:
        return []  # a serving block this version cannot read: the quote's lines still state what is rented
    rows: list[tuple[str, str]] = []
    if ask.requests_per_s:
        peak = ask.requests_per_s * ask.peak_factor
        traffic = t["traffic_words"].format(
            rate=_rate(ask.requests_per_s), factor=_rate(ask.peak_factor), peak=_rate(peak)
        )
        rows.append((t["traffic"], traffic))
    elif ask.concurrency:
        rows.append((t["traffic"], t["concurrency_words"].format(n=ask.concurrency)))
    lengths = t["lengths_words"].format(input=_n(ask.input_tokens), output=_n(ask.output_tokens))
    rows.append((t["lengths"], lengths))
    rows.append((t["engine"], ENGINES.get(ask.engine, ask.engine)))
    if ask.slo and (ask.slo.ttft_ms or ask.slo.tpot_ms):
        targets = [t["ttft_target"].format(ms=_n(ask.slo.ttft_ms))] if ask.slo.ttft_ms else []
        targets += (
            [t["tpot_target"].format(ms=_n(ask.slo.tpot_ms, 1).rstrip("0").rstrip("."))] if ask.slo.tpot_ms else []
        )
        rows.append(
            (t["targets"], t["targets_at"].format(targets=t["join"].join(targets), pct=PERCENT[ask.slo.percentile]))
        )
    rows += assumed_rows(ask, t)
    frozen = plan.get("serving")
    served: dict[str, Any] = frozen if isinstance(frozen, dict) else {}
    latency = served.get("latency")
    if isinstance(latency, dict):
        rows.append((t["latency_average"], _latency(latency["average"], t)))
        rows.append((t["latency_peak"], _latency(latency["peak"], t)))
    elif served.get("ttft_ms") is not None and served.get("tpot_ms") is not None:
        rows.append(
            (t["latency_one"], t["latency_one_words"].format(ttft=_n(served["ttft_ms"]), tpot=_n(served["tpot_ms"], 1)))
        )
    if served.get("isolated_ttft_ms") is not None:  # the prefill, and the server's fixed cost where stated apart
        idle = served["isolated_ttft_ms"] + (served.get("request_overhead_ms") or 0.0)
        rows.append((t["isolated"], t["isolated_words"].format(ms=_n(idle))))
    rows.append((t["deployment"], deployment_words(plan, quote.quantity, quote.unit, lang)))
    return rows


def _percent(share: float) -> str:
    return f"{share * 100:.3g}%"


def assumed_rows(ask: ServingIn, t: dict[str, str]) -> list[tuple[str, str]]:
    """What the latency rests on that the customer stated (review R5-4): speculative decoding (its method, the tokens
    drafted a step and their acceptance) and a prefix-cache hit rate above none."""
    rows: list[tuple[str, str]] = []
    spec = ask.speculative
    if spec is not None:
        method = t[f"spec_{spec.method}"].format(draft=spec.draft_model or "")
        words = t["speculative_words"].format(
            method=method, tokens=spec.num_speculative_tokens, acceptance=_percent(spec.acceptance_rate)
        )
        rows.append((t["speculative"], words))
    if ask.prefix_cache_hit_rate > 0:
        rows.append((t["prefix_cache"], t["prefix_cache_words"].format(share=_percent(ask.prefix_cache_hit_rate))))
    return rows


def deployment_words(plan: dict[str, Any], quantity: int, unit: str, lang: str) -> str:
    """Colocated replicas (dp × tp × pp), or a disaggregated plan's two pools (plan.pools), on what is rented."""
    t = LABELS.get(lang, LABELS["en"])
    units = "cards" if unit == "card" else "servers"
    servers = t[f"{units}_one" if quantity == 1 else units].format(n=quantity)
    pools = plan.get("pools")
    if isinstance(pools, dict) and isinstance(pools.get("prefill"), dict) and isinstance(pools.get("decode"), dict):
        pre, dec = pools["prefill"], pools["decode"]
        return t["pools_words"].format(
            prefill=pre["replicas"], prefill_tp=pre["tp"], decode=dec["replicas"], decode_tp=dec["tp"],
            gpus=pre["gpus"] + dec["gpus"], servers=servers,
        )  # fmt: skip
    replicas, tp = int(plan.get("dp") or 1), int(plan.get("tp") or 1) * int(plan.get("pp") or 1)
    return t["deployment_words"].format(replicas=replicas, tp=tp, gpus=replicas * tp, servers=servers)
