"""A plan, a duration and a count in a reader's words (English or Simplified Chinese): shared by the
wizard's pages and the quote document, so both say the same thing the same way.

English plan summaries are the planner's own (`plan.summary`, app/planner/explain.py); these words
cover Chinese, and English for a plan that came without its summary (a quote posted by a script).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from babel.numbers import format_decimal

LOCALES = {"en": "en_US", "zh": "zh_Hans_CN"}

PLAN_WORDS: dict[str, dict[str, str]] = {
    "en": {
        "single": "one GPU, no parallelism",
        "dp": "data parallel",
        "over": "{sharding} over {dp} GPUs, no tensor parallel",
        "tp": "tensor parallel {n}",
        "pp": "pipeline {n}",
        "dp_n": "data parallel {n}",
        "zero_ranks": "ZeRO-{z} over the data-parallel ranks",
        "offload_optimizer": "optimizer states offloaded to host RAM",
        "offload_optimizer_and_params": "optimizer states and parameters offloaded to host RAM",
        "recompute_selective": "selective activation recomputation",
        "recompute_full": "full activation recomputation",
        "micro_batch": "micro-batch {n}",
        "sep": ", ",
    },
    "zh": {
        "single": "单卡，无需并行",
        "dp": "数据并行",
        "over": "{sharding}，{dp} 张卡，无张量并行",
        "tp": "张量并行 {n}",
        "pp": "流水线 {n}",
        "dp_n": "数据并行 {n}",
        "zero_ranks": "数据并行组内 ZeRO-{z}",
        "offload_optimizer": "优化器状态卸载到主机内存",
        "offload_optimizer_and_params": "优化器状态与参数卸载到主机内存",
        "recompute_selective": "选择性激活重计算",
        "recompute_full": "完整激活重计算",
        "micro_batch": "微批 {n}",
        "sep": "，",
        "explain_one": "{what}：单张 {gpu} 即可放下（{total} / {capacity} GiB），无需并行。",
        "explain_many": "{what}：{plan}，共 {gpus} 张 GPU（{nodes} 台服务器）；每卡显存 {total} / {capacity} GiB。",
    },
}

DURATION_WORDS = {
    "en": {"minutes": "{m} min", "hours": "{n} h", "hours_minutes": "{h} h {m} min", "days": "{n} days"},
    "zh": {"minutes": "{m} 分钟", "hours": "{n} 小时", "hours_minutes": "{h} 小时 {m} 分钟", "days": "{n} 天"},
}

# Counts of tokens or parameters: "100 million", "2.5 billion"; 万 and 亿 in Chinese.
COUNT_WORDS = {
    "en": ((1e12, "{n} trillion"), (1e9, "{n} billion"), (1e6, "{n} million"), (1e3, "{n} thousand")),
    "zh": ((1e12, "{n}万亿"), (1e8, "{n}亿"), (1e4, "{n}万")),
}


def number(value: float, lang: str, digits: int = 0) -> str:
    pattern = "#,##0" + ("." + "#" * digits if digits else "")
    return format_decimal(value, format=pattern, locale=LOCALES.get(lang, "en_US"))


# FSDP's sharding strategies as ZeRO stages (app/planner/schemas.py PlanIn.zero_stage).
FSDP_STAGES = {"no_shard": 0, "shard_grad_op": 2, "full_shard": 3, "hybrid_shard": 3}


def _int(plan: Mapping[str, Any], key: str, default: int = 1) -> int:
    value = plan.get(key, default)
    if isinstance(value, str):
        return FSDP_STAGES.get(value.lower(), default)
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def plan_summary(plan: Mapping[str, Any], lang: str) -> str:
    """The parallel plan in words; English is the planner's own summary where the plan carries it
    (pass a plan without `summary` to word it from its fields alone)."""
    if lang == "en" and isinstance(plan.get("summary"), str) and plan["summary"]:
        return str(plan["summary"])
    w = PLAN_WORDS.get(lang, PLAN_WORDS["en"])
    dp, tp, pp, cp = (_int(plan, key) for key in ("dp", "tp", "pp", "cp"))
    zero = _int(plan, "zero_stage", 0)
    if dp * tp * pp * cp == 1:
        parts = [w["single"]]
    elif tp == 1 and pp == 1:
        parts = [w["over"].format(sharding=f"ZeRO-{zero}" if zero else w["dp"], dp=dp)]
    else:
        degrees = [w["tp"].format(n=tp)] if tp > 1 else []
        degrees += [w["pp"].format(n=pp)] if pp > 1 else []
        degrees += [w["dp_n"].format(n=dp)] if dp > 1 else []
        parts = [" × ".join(degrees)]
        if zero:
            parts.append(w["zero_ranks"].format(z=zero))
    offload, recompute = plan.get("offload", "none"), plan.get("recompute", "none")
    if f"offload_{offload}" in w:
        parts.append(w[f"offload_{offload}"])
    if f"recompute_{recompute}" in w:
        parts.append(w[f"recompute_{recompute}"])
    if "micro_batch" in plan:
        parts.append(w["micro_batch"].format(n=_int(plan, "micro_batch")))
    return w["sep"].join(parts)


def duration(hours: float, lang: str) -> str:
    """Minutes under an hour, hours and minutes under two days, then days."""
    words = DURATION_WORDS.get(lang, DURATION_WORDS["en"])
    minutes = max(1, round(hours * 60))
    if minutes < 60:
        return words["minutes"].format(m=minutes)
    if hours < 48:
        whole, rest = divmod(minutes, 60)
        return words["hours_minutes"].format(h=whole, m=rest) if rest else words["hours"].format(n=whole)
    return words["days"].format(n=number(hours / 24, lang, 1))


def count(value: float, lang: str, digits: int = 2) -> str:
    """A large count in words: 100000000 → "100 million" / "1亿"."""
    if not math.isfinite(value):
        return str(value)
    for scale, template in COUNT_WORDS.get(lang, COUNT_WORDS["en"]):
        if value >= scale:
            return template.format(n=number(value / scale, lang, digits))
    return number(value, lang)
