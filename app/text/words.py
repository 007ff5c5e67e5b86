"""A plan, a duration and a count in a reader's words (English or Simplified Chinese): shared by the
wizard's pages and the quote document, so both say the same thing the same way.

English plan summaries are the planner's own (`plan.summary`, app/planner/explain.py); these words
cover Chinese, and English for a plan that came without its summary (a quote posted by a script).
"""

from __future__ import annotations

import math
import re
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
        "cp": "context parallel {n}",
        "dp_n": "data parallel {n}",
        "ep": "expert parallel {n} (each rank holds 1/{n} of the experts)",
        "zero_ranks": "ZeRO-{z} over the data-parallel ranks",
        "hybrid": "hybrid sharding: states sharded within groups of {shard} data-parallel GPUs, replicated across "
        "{groups} groups",
        "offload_optimizer": "optimizer states offloaded to host RAM",
        "offload_optimizer_and_params": "optimizer states and parameters offloaded to host RAM",
        "recompute_selective": "selective activation recomputation",
        "recompute_full": "full activation recomputation",
        "micro_batch": "micro-batch {n}",
        "loss_fused": "fused loss",
        "sep": ", ",
    },
    "zh": {
        "single": "单卡，无需并行",
        "dp": "数据并行",
        "over": "{sharding}，{dp} 张卡，无张量并行",
        "tp": "张量并行 {n}",
        "pp": "流水线 {n}",
        "cp": "上下文并行 {n}",
        "dp_n": "数据并行 {n}",
        "ep": "专家并行 {n}（每张卡持有 1/{n} 的专家）",
        "zero_ranks": "数据并行组内 ZeRO-{z}",
        "hybrid": "混合分片：状态在每 {shard} 张数据并行卡组成的组内分片，在 {groups} 组之间复制",
        "offload_optimizer": "优化器状态卸载到主机内存",
        "offload_optimizer_and_params": "优化器状态与参数卸载到主机内存",
        "recompute_selective": "选择性激活重计算",
        "recompute_full": "完整激活重计算",
        "micro_batch": "微批 {n}",
        "loss_fused": "融合损失函数",
        "sep": "，",
    },
}

# The training stacks by name (app/planner/stacks.py, docs/stacks.md): proper names, with the language's brackets.
STACK_NAMES = {
    "en": {"deepspeed": "DeepSpeed", "fsdp": "torchtitan (FSDP2)", "megatron": "Megatron-LM"},
    "zh": {"deepspeed": "DeepSpeed", "fsdp": "torchtitan（FSDP2）", "megatron": "Megatron-LM"},
}

# Why an option is built as it is (app/planner/explain.py `explain`): the sentences of the API's `explanation`, their
# figures as parameters; a sentence after the first starts with its own separator (a space in English). `page_*`:
# the wizard's shorter sentence where the page has no full explanation in its language (app/web/present.py).
EXPLAIN_WORDS: dict[str, dict[str, str]] = {
    "en": {
        "what": "{size} {task}",
        "one": "{what} fits on one {gpu} ({total:.1f} of {capacity:.1f} GiB): no parallelism needed.",
        "many": "{what} needs {states} of model states: {plan} on {where} ({link} inside each server{between}).",
        "where_gpus": "{gpus} × {gpu}",
        "where_servers": "{nodes} servers × {cards} {gpu}",
        "between": "; {fabric} between them",
        "network": "the network",
        "link_nvlink-bridge": "an NVLink bridge",
        "no_tp": " Tensor parallel not needed.",
        "tp_nvlink": " Tensor parallel {tp} stays inside one server, on its {link}.",
        "tp_pcie": " Tensor parallel {tp} stays inside one server, over {link}: its per-layer all-reduces cross PCIe, "
        "which the step time counts.",
        "offload": " Offload keeps {host_gib:,.0f} GiB per server in host RAM, within the {limit_gib:,.0f} GiB left of "
        "its {ram_gib:,.0f} GiB after the OS and data-loader reserve.",
        "tib": "{n:.1f} TiB",
        "gib": "{n:.0f} GiB",
        "edge": "At the edge of GPU memory: {total:.2f} of the {limit:.2f} GiB limit, and its range reaches {high:.2f} "
        "GiB, past the card's {capacity:.2f}; about one run in four like it needs that much, so the ranking counts it "
        "at {premium:.2f} × its price, after an option that fits at its high end for up to {more:.0%} more. ",
        "page_one": "{what}: one {gpu} holds it ({total} / {capacity} GiB), no parallelism needed.",
        "page_many": "{what}: {plan}, {gpus} GPUs in all ({nodes} servers); {total} / {capacity} GiB per GPU.",
    },
    "zh": {
        "what": "{size} {task}",
        "one": "{what}：单张 {gpu} 即可放下（{total:.1f} / {capacity:.1f} GiB），无需并行。",
        "many": "{what}需要 {states} 的模型状态：{plan}，运行于 {where}（服务器内 {link}{between}）。",
        "where_gpus": "{gpus} × {gpu}",
        "where_servers": "{nodes} 台服务器 × 每台 {cards} 张 {gpu}",
        "between": "；服务器之间 {fabric}",
        "network": "网络",
        "link_nvlink-bridge": "NVLink 桥接器",
        "no_tp": "无需张量并行。",
        "tp_nvlink": "张量并行 {tp} 留在一台服务器内，走其 {link}。",
        "tp_pcie": "张量并行 {tp} 留在一台服务器内，经 {link}：每层的 all-reduce 经过 PCIe，步时已计入。",
        "offload": "卸载在每台服务器的主机内存中占用 {host_gib:,.0f} GiB，"
        "在其 {ram_gib:,.0f} GiB 扣除操作系统与数据加载预留后剩余的 {limit_gib:,.0f} GiB 之内。",
        "tib": "{n:.1f} TiB",
        "gib": "{n:.0f} GiB",
        "edge": "显存处于边缘：估计 {total:.2f} GiB，上限 {limit:.2f} GiB，范围高端 {high:.2f} GiB 已超出显卡的 "
        "{capacity:.2f} GiB；同类运行约四分之一会用到这么多，因此排序按其价格的 {premium:.2f} 倍计，"
        "排在高端也放得下、贵不超过 {more:.0%} 的方案之后。",
        "page_one": "{what}：单张 {gpu} 即可放下（{total} / {capacity} GiB），无需并行。",
        "page_many": "{what}：{plan}，共 {gpus} 张 GPU（{nodes} 台服务器）；每卡显存 {total} / {capacity} GiB。",
    },
}

# A serving option's plan summary and explanation (app/planner/serving_mappers.py `serving_summary`, serving_service.py
# `option_out`): the layout as replicas × TP (× PP) or a disaggregated deployment's two pools, then what it carries and
# at what latency, and the headroom checked above the peak; figures as parameters, each sentence's separators its own.
SERVE_WORDS: dict[str, dict[str, str]] = {
    "en": {
        "summary": "{replicas} independent replica(s) × TP {tp}",
        "summary_pools": "disaggregated: {prefill} prefill replica(s) × TP {prefill_tp} and {decode} decode replica(s) "
        "× TP {decode_tp}, the KV sent between them over the fabric",
        "shape": "{replicas} replica(s) × TP {tp}",
        "shape_pools": "{prefill} prefill replica(s) × TP {prefill_tp} + {decode} decode replica(s) × TP {decode_tp}",
        "pp": " × PP {pp}",
        "ep": ", DP attention and expert parallel {ep}",
        "explanation": "{shape} on {sku}: {rate} requests/s at {latency}; the peak of {peak} requests/s {headroom}",
        "cannot_hold": "{shape} on {sku}: cannot hold one request",
        "latency": "TTFT {ttft} and TPOT {tpot}",
        "saturated": "more than the replicas carry: the queue grows without bound",
        "headroom_missed": "misses the latency targets (miss_reason)",
        "headroom_met": "with at least {headroom}× headroom (simulated)",
        "headroom_none": "and no headroom verified above it",
        "headroom_facts": " ({facts})",
        "missed_at": "the simulation missed the SLO at {factor}× it",
        "peak_utilisation": "peak utilisation {utilisation}",
        "facts_sep": "; ",
    },
    "zh": {
        "summary": "{replicas} 个独立副本 × TP {tp}",
        "summary_pools": "预填充与解码分离：{prefill} 个预填充副本 × TP {prefill_tp}，"
        "{decode} 个解码副本 × TP {decode_tp}，两者之间经网络传输 KV",
        "shape": "{replicas} 个副本 × TP {tp}",
        "shape_pools": "{prefill} 个预填充副本 × TP {prefill_tp} + {decode} 个解码副本 × TP {decode_tp}",
        "pp": " × PP {pp}",
        "ep": "，数据并行注意力与专家并行 {ep}",
        "explanation": "{shape}，运行于 {sku}：每秒 {rate} 个请求，{latency}；峰值每秒 {peak} 个请求{headroom}",
        "cannot_hold": "{shape}，运行于 {sku}：连一个请求也容纳不下",
        "latency": "首 token 延迟 {ttft}、每 token 延迟 {tpot}",
        "saturated": "超出副本的承载能力：队列无限增长",
        "headroom_missed": "，未达到延迟目标（见 miss_reason）",
        "headroom_met": "，在目标内至少有 {headroom} 倍余量（模拟）",
        "headroom_none": "，峰值之上未验证任何余量",
        "headroom_facts": "（{facts}）",
        "missed_at": "模拟在其 {factor} 倍时未达到 SLO",
        "peak_utilisation": "峰值利用率 {utilisation}",
        "facts_sep": "；",
    },
}

DURATION_WORDS = {
    "en": {
        "milliseconds": "{n} ms",
        "seconds": "{n} s",
        "minutes": "{m} min",
        "hours": "{n} h",
        "hours_minutes": "{h} h {m} min",
        "days": "{n} days",
    },
    "zh": {
        "milliseconds": "{n} 毫秒",
        "seconds": "{n} 秒",
        "minutes": "{m} 分钟",
        "hours": "{n} 小时",
        "hours_minutes": "{h} 小时 {m} 分钟",
        "days": "{n} 天",
    },
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
    """The parallel plan in words (the planner's `plan.summary` is this in English: app/planner/explain.py); English
    is the plan's own summary where it carries one (pass a plan without `summary` to word it from its fields)."""
    if lang == "en" and isinstance(plan.get("summary"), str) and plan["summary"]:
        return str(plan["summary"])
    w = PLAN_WORDS.get(lang, PLAN_WORDS["en"])
    dp, tp, pp, cp, ep = (_int(plan, key) for key in ("dp", "tp", "pp", "cp", "ep"))
    zero = _int(plan, "zero_stage", 0)
    if dp * tp * pp * cp == 1:
        parts = [w["single"]]
    elif tp == 1 and pp == 1 and cp == 1 and ep == 1:
        parts = [w["over"].format(sharding=f"ZeRO-{zero}" if zero else w["dp"], dp=dp)]
    else:
        parts = _degree_words(w, dp=dp, tp=tp, pp=pp, cp=cp, ep=ep, zero=zero)
    shard = plan.get("dp_shard")
    if isinstance(shard, int) and not isinstance(shard, bool) and 0 < shard < dp:  # hybrid sharding (HSDP)
        parts.append(w["hybrid"].format(shard=shard, groups=dp // shard))
    offload, recompute = plan.get("offload", "none"), plan.get("recompute", "none")
    if f"offload_{offload}" in w:
        parts.append(w[f"offload_{offload}"])
    if f"recompute_{recompute}" in w:
        parts.append(w[f"recompute_{recompute}"])
    if "micro_batch" in plan:
        parts.append(w["micro_batch"].format(n=_int(plan, "micro_batch")))
    if plan.get("fused_loss") is True or plan.get("loss") == "fused":  # Plan's field, or the API's PlanOut.loss
        parts.append(w["loss_fused"])
    return w["sep"].join(parts)


def _degree_words(w: Mapping[str, str], *, dp: int, tp: int, pp: int, cp: int, ep: int, zero: int) -> list[str]:
    """'tensor parallel 4 × pipeline 2 × data parallel 4', then how the experts and the states are split."""
    degrees = [w[key].format(n=n) for key, n in (("tp", tp), ("pp", pp), ("cp", cp), ("dp_n", dp)) if n > 1]
    parts = [" × ".join(degrees)]
    if ep > 1:  # experts are sharded inside the data-parallel ranks (dp × tp × pp × cp = GPUs)
        parts.append(w["ep"].format(n=ep))
    if zero:
        parts.append(w["zero_ranks"].format(z=zero))
    return parts


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


# A count and the noun it counts, "(s)" written after the noun in the English catalogs: "4 replica(s)", "8 prefill
# replica(s)", "1 GPU(s)" (up to three words between them, none a number).
_COUNTED = re.compile(r"(?<![\w.])(\d[\d,]*(?:\.\d+)?)((?: [A-Za-z()-]+){0,3}?) ([A-Za-z]+)\(s\)")


def plurals(text: str) -> str:
    """English text with each "noun(s)" agreeing with its count: "1 replica", "4 replicas"; a noun with no count
    before it reads as plural. Chinese text has no plurals and no "(s)"."""
    text = _COUNTED.sub(lambda m: f"{m[1]}{m[2]} {m[3]}{'' if m[1] == '1' else 's'}", text)
    return text.replace("(s)", "s")


def latency(ms: float, lang: str) -> str:
    """A latency in a unit that reads: milliseconds under 10 s (a tenth under 100 ms: "42.7 ms", "1,311 ms"), then
    seconds under two minutes, then the durations' minutes, hours and days (a queue that grows for "35 min")."""
    if not math.isfinite(ms):
        return "∞"
    words = DURATION_WORDS.get(lang, DURATION_WORDS["en"])
    if ms < 100:
        return words["milliseconds"].format(n=f"{ms:.1f}")
    if ms < 10_000:
        return words["milliseconds"].format(n=number(ms, lang))
    if ms < 120_000:
        return words["seconds"].format(n=number(ms / 1e3, lang))
    return duration(ms / 3.6e6, lang)


def count(value: float, lang: str, digits: int = 2) -> str:
    """A large count in words: 100000000 → "100 million" / "1亿"."""
    if not math.isfinite(value):
        return str(value)
    for scale, template in COUNT_WORDS.get(lang, COUNT_WORDS["en"]):
        if value >= scale:
            return template.format(n=number(value / scale, lang, digits))
    return number(value, lang)


def slo_named(params: Mapping[str, Any]) -> list[str]:
    """The targets `{slo}` names: those the reached figures beside them miss (the binding ones; a saturated peak's
    TTFT, None, is unbounded and misses), else every target set (no figures, or none above its target)."""
    targets = [name for name in ("slo_ttft_ms", "slo_tpot_ms") if name in params]
    reached = {name: params.get(name.removeprefix("slo_")) for name in targets}
    unbounded = params.get("saturated") is True  # a reached TTFT of None beside it: no bound, missed
    missed = [
        n
        for n in targets
        if (isinstance(reached[n], int | float) and reached[n] > params[n])
        or (unbounded and n.removeprefix("slo_") in params and reached[n] is None)
    ]
    return missed or targets


def serving_summary(replicas: int, tp: int, pp: int, pools: Mapping[str, Any] | None, lang: str, ep: int = 1) -> str:
    """A serving plan's summary in `lang`: its replicas × TP (× PP; DP attention with expert parallel where `ep` > 1),
    or a disaggregated deployment's two pools (`pools`: each pool's `tp` and `replicas`)."""
    w = SERVE_WORDS.get(lang, SERVE_WORDS["en"])
    if pools:
        pre, dec = pools["prefill"], pools["decode"]
        text = w["summary_pools"].format(
            prefill=pre["replicas"], prefill_tp=pre["tp"], decode=dec["replicas"], decode_tp=dec["tp"]
        )
    else:
        text = w["summary"].format(replicas=replicas, tp=tp) + (w["pp"].format(pp=pp) if pp > 1 else "")
        text += w["ep"].format(ep=ep) if ep > 1 else ""
    return plurals(text) if lang == "en" else text


def serving_explanation(facts: Mapping[str, Any], lang: str) -> str:
    """A serving option's explanation in `lang` from its figures (app/planner/serving_service.py `serving_facts`):
    `replicas`, `tp`, `pp`, `pools`, `sku`, `holds` (False: a shape that holds no request, worded as such alone),
    `requests_per_s`, `ttft_ms`, `tpot_ms`, `saturated`, `peak_rps`, then
    the headroom: `missed` (a near miss on its latency), else `headroom` (a factor met above the peak), else the
    factor the simulation missed at (`missed_at`) and the peak's utilisation (`peak_utilisation`) where known."""
    w = SERVE_WORDS.get(lang, SERVE_WORDS["en"])
    pools = facts.get("pools")
    if pools:
        pre, dec = pools["prefill"], pools["decode"]
        shape = w["shape_pools"].format(
            prefill=pre["replicas"], prefill_tp=pre["tp"], decode=dec["replicas"], decode_tp=dec["tp"]
        )
    else:
        shape = w["shape"].format(replicas=facts["replicas"], tp=facts["tp"])
        shape += w["pp"].format(pp=facts["pp"]) if facts.get("pp", 1) > 1 else ""
        shape += w["ep"].format(ep=facts["ep"]) if facts.get("ep", 1) > 1 else ""
    shape = plurals(shape) if lang == "en" else shape
    if not facts.get("holds", True):  # a shape that holds no request has no latency or load to word
        return w["cannot_hold"].format(shape=shape, sku=facts["sku"])
    if facts.get("saturated"):
        latency_words = w["saturated"]
    else:
        latency_words = w["latency"].format(ttft=latency(facts["ttft_ms"], lang), tpot=latency(facts["tpot_ms"], lang))
    if facts.get("missed"):
        headroom = w["headroom_missed"]
    elif facts.get("headroom", 0.0) > 1.0:
        headroom = w["headroom_met"].format(headroom=f"{facts['headroom']:.2f}")
    else:
        found = [w["missed_at"].format(factor=f"{facts['missed_at']:.2f}")] if facts.get("missed_at") else []
        if facts.get("peak_utilisation") is not None:
            found.append(w["peak_utilisation"].format(utilisation=f"{facts['peak_utilisation']:.2f}"))
        headroom = w["headroom_none"] + (w["headroom_facts"].format(facts=w["facts_sep"].join(found)) if found else "")
    return w["explanation"].format(
        shape=shape,
        sku=facts["sku"],
        rate=f"{facts['requests_per_s']:.3g}",
        latency=latency_words,
        peak=f"{facts['peak_rps']:.3g}",
        headroom=headroom,
    )
