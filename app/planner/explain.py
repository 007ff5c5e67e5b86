"""Plain words for a plan, in the spirit of the company's article: why this split, and the traps.

PURE. Every warning has a stable code (machine-readable) and a message (for people).
"""

from __future__ import annotations

from dataclasses import asdict, replace

from app.estimator.memory.band import MemoryBand
from app.estimator.params import count_params
from app.estimator.performance import estimate_performance, micro_batches
from app.estimator.plan_traps import pipeline_short
from app.estimator.specs import GIB, Cluster, MemoryBreakdown, ModelSpec, Performance, Plan, Warning_, Workload
from app.estimator.vocabulary import FULL_TRAINING_TASKS, PRETRAINING_TASKS
from app.planner.edge import EDGE_PREMIUM, at_edge
from app.planner.offers import Configuration, Offer
from app.text.messages import TASK_LABELS
from app.text.words import EXPLAIN_WORDS, plan_summary

BUBBLE_WARN_FRACTION = 0.10
OFFLOAD_WARN_FRACTION = 0.10


def size_words(params: float) -> str:
    """A parameter count to one decimal under 100 B ("70.6B" for Llama 3.1 70B's 70.55e9, where a whole "71B" would
    read as another model), whole billions above it."""
    if params >= 1e12:
        return f"{params / 1e12:.1f}T"
    if params >= 1e9:
        return f"{params / 1e9:.0f}B" if params >= 1e11 else f"{params / 1e9:.1f}B".replace(".0B", "B")
    return f"{params / 1e6:.0f}M"


def describe_plan(plan: Plan) -> str:
    """'ZeRO-3 over 8 GPUs, no tensor parallel' / 'tensor parallel 4 × pipeline 2 × data parallel 4': the plan's
    words in English, from the one catalog the pages and the quote word it with (app/text/words.py PLAN_WORDS)."""
    return plan_summary(asdict(plan), "en")


def model_state_bytes(model: ModelSpec, workload: Workload) -> float:
    """Unsharded model states for the explanation (16 B/param mixed-precision Adam, ZeRO paper §3)."""
    params = count_params(model).total
    if workload.task in FULL_TRAINING_TASKS:
        return params * (16 if workload.mixed_precision else 8)
    return params * (0.5 if workload.task == "qlora" else 2)


LINK_WORDS = {
    "nvlink2": "NVLink 2",
    "nvlink3": "NVLink 3",
    "nvlink4": "NVLink 4",
    "nvlink5": "NVLink 5",
    "pcie3": "PCIe 3.0",
    "pcie4": "PCIe 4.0",
    "pcie5": "PCIe 5.0",
}  # product names, the same in every language; an NVLink bridge is worded (EXPLAIN_WORDS `link_nvlink-bridge`)
FABRIC_WORDS = {
    "ib-ndr-400": "InfiniBand NDR 400 Gb/s",
    "ib-hdr-200": "InfiniBand HDR 200 Gb/s",
    "roce-200": "RoCE 200 Gb/s",
    "roce-100": "RoCE 100 Gb/s",
}


def link_words(offer: Offer, lang: str = "en") -> str:
    """The link inside the server as the catalog sells it, else the link kind in words."""
    kind = offer.intra_node_link
    return offer.interconnect or LINK_WORDS.get(kind) or EXPLAIN_WORDS[lang].get(f"link_{kind}", kind)


def explain(
    model: ModelSpec,
    workload: Workload,
    offer: Offer,
    config: Configuration,
    plan: Plan,
    memory: MemoryBreakdown,
    lang: str = "en",
    band: MemoryBand | None = None,
) -> str:
    """Plain words for the option (app/text/words.py EXPLAIN_WORDS); every hardware fact (link, fabric, host RAM, NVMe)
    comes from the SKU. An option at the edge of GPU memory (app/planner/edge.py) leads with that risk."""
    lead = _edge_words(memory, band, lang)
    w = EXPLAIN_WORDS[lang]
    what = w["what"].format(size=size_words(count_params(model).total), task=TASK_LABELS["words"][lang][workload.task])
    gpu = offer.gpu.name
    if plan.gpus == 1:
        return lead + w["one"].format(what=what, gpu=gpu, total=memory.total / GIB, capacity=memory.capacity / GIB)
    states_gib = model_state_bytes(model, workload) / GIB
    if config.nodes == 1:
        where = w["where_gpus"].format(gpus=config.gpus, gpu=gpu)
    else:
        where = w["where_servers"].format(nodes=config.nodes, cards=config.cards_per_node, gpu=gpu)
    first = w["many"].format(
        what=what,
        states=w["tib"].format(n=states_gib / 1024) if states_gib >= 1024 else w["gib"].format(n=states_gib),
        plan=plan_summary(asdict(plan), lang),
        where=where,
        link=link_words(offer, lang),
        between=w["between"].format(fabric=_fabric_words(offer, lang)) if config.nodes > 1 else "",
    )
    return lead + first + _why_tp(plan, offer, lang) + _offload_words(plan, offer, memory, lang)


def _edge_words(memory: MemoryBreakdown, band: MemoryBand | None, lang: str) -> str:
    if band is None or not at_edge(memory, band):
        return ""
    limit = memory.capacity if memory.limit is None else memory.limit
    return EXPLAIN_WORDS[lang]["edge"].format(
        total=memory.total / GIB,
        limit=limit / GIB,
        high=band.high / GIB,
        capacity=memory.capacity / GIB,
        premium=EDGE_PREMIUM,
        more=EDGE_PREMIUM - 1,
    )


def _fabric_words(offer: Offer, lang: str) -> str:
    fabric = offer.inter_node_fabric or ""
    return FABRIC_WORDS.get(fabric, fabric or offer.network or EXPLAIN_WORDS[lang]["network"])


def _why_tp(plan: Plan, offer: Offer, lang: str) -> str:
    w = EXPLAIN_WORDS[lang]
    if plan.tp == 1:
        return w["no_tp"]
    return w["tp_nvlink" if offer.intra_node_link.startswith("nvlink") else "tp_pcie"].format(
        tp=plan.tp, link=link_words(offer, lang)
    )


def _offload_words(plan: Plan, offer: Offer, memory: MemoryBreakdown, lang: str) -> str:
    if plan.offload == "none" or not memory.host_ram or offer.host_ram_gib is None:
        return ""
    limit = memory.host_ram_limit / GIB if memory.host_ram_limit is not None else offer.host_ram_gib
    return EXPLAIN_WORDS[lang]["offload"].format(
        host_gib=memory.host_ram / GIB, limit_gib=limit, ram_gib=offer.host_ram_gib
    )


def task_warnings(model: ModelSpec, workload: Workload) -> list[Warning_]:
    """What the task means for this model, whatever the plan: `pretrain` of a model with released weights trains from
    random initialisation, and the launch loads no weights (a customer who meant to go on training the released model
    asks for `continued_pretrain`, which loads them)."""
    if workload.task != "pretrain" or model.hf_repo is None:
        return []
    return [Warning_("starts_from_scratch", {"model": model.name, "repo": model.hf_repo})]


def plan_warnings(
    model: ModelSpec, workload: Workload, plan: Plan, memory: MemoryBreakdown, performance: Performance
) -> list[Warning_]:
    """What the plan's figures mean, whatever server runs it (the server's own: training_offer_warnings)."""
    warnings: list[Warning_] = []
    breakdown = performance.breakdown_s or {}
    step = performance.step_time_s or 0.0
    # a pipeline short of micro-batches is the speed estimate's own `pipeline_few_microbatches`: its bubble once
    short = pipeline_short(micro_batches(workload, plan), plan.pp, plan.virtual_stages)
    if step and breakdown.get("bubble", 0.0) / step > BUBBLE_WARN_FRACTION and not short:
        warnings.append(Warning_("pipeline_bubble", {"bubble": breakdown["bubble"] / step}))
    slowdown = offload_warning(plan, performance)
    warnings += [slowdown] if slowdown else []
    # ZeRO-3 / FSDP over several ranks shards the experts and gathers them block by block: not resident
    sharded = plan.zero_stage == 3 and plan.dp * plan.cp > 1
    if model.is_moe and plan.ep == 1 and workload.task != "inference" and not sharded:
        warnings.append(Warning_("moe_experts_resident"))
    if workload.task == "inference" and memory.kv_cache > memory.weights:
        warnings.append(Warning_("kv_cache_dominates", {"kv_cache_gib": memory.kv_cache / GIB}))
    if model.approximate:
        warnings.append(Warning_("estimate_uncertain"))
    return warnings


def training_offer_warnings(offer: Offer, config: Configuration, workload: Workload) -> list[Warning_]:
    """offer_warnings for a training option on `config`, and `single_server_only`: a pretraining run on a SKU rented
    one server per job, which cannot grow past one server."""
    warnings = offer_warnings(offer, config.nodes)
    if workload.task in PRETRAINING_TASKS and not offer.may_span_nodes:
        warnings.append(Warning_("single_server_only", {"sku": offer.sku_id, "network": offer.network}))
    return warnings


def offer_warnings(offer: Offer, joined_nodes: int) -> list[Warning_]:
    """What the price leaves out: the fabric add-on `joined_nodes` servers working as one need (priced on
    consultation), an indicative price."""
    warnings = []
    if joined_nodes > 1 and offer.fabric_on_consultation:
        warnings.append(
            Warning_("fabric_priced_on_request", {"nodes": joined_nodes, "fabric": offer.inter_node_fabric})
        )
    if offer.indicative_price:
        warnings.append(Warning_("indicative_price"))
    return warnings


# A step wants at least 4 micro-batches per pipeline stage (bubble (p-1)/(m+p-1) under 20 %, Narayanan
# et al. 2021 §2.2), and the data-parallel reduction is paid once per step whatever its size.
MICRO_BATCHES_PER_STAGE = 4
BATCH_GAIN_WARN = 1.25  # say so when the larger batch would raise MFU by a quarter or more


# A generic warning a measured one says better, with its figures: an option that carries the measured one drops the
# generic (planner.recommend._unique). The memory advice's offload_over_pcie ("expect the step to slow down by tens of
# percent") is the states' offload that offload_slowdown measures from the step's breakdown.
SAID_BETTER_BY = {"offload_over_pcie": "offload_slowdown"}


def offload_warning(plan: Plan, performance: Performance) -> Warning_ | None:
    """`offload_slowdown`: offload's exposed PCIe time (`breakdown_s.offload`: the states' ZeRO-Offload and activation
    offload) takes more than OFFLOAD_WARN_FRACTION of a step; worded for activation offload (`activations`) where the
    states stay on the GPU, which the article's measured slowdown of optimizer offload does not describe."""
    step = performance.step_time_s or 0.0
    offload = (performance.breakdown_s or {}).get("offload", 0.0)
    if not step or offload / step <= OFFLOAD_WARN_FRACTION:
        return None
    params = {"share": offload / step, "slowdown": step / (step - offload)}
    if plan.offload == "none":
        return Warning_("offload_slowdown", params | {"activations": True})
    return Warning_("offload_slowdown", params)


def batch_warnings(
    model: ModelSpec, workload: Workload, plan: Plan, cluster: Cluster, performance: Performance
) -> list[Warning_]:
    """`global_batch_small`: so many GPUs share so small a global batch that each data-parallel rank
    runs fewer than 4 micro-batches per pipeline stage (the bubble and the gradient reduction are not
    amortised); the warning names the batch that would, and the MFU the same plan reaches with it."""
    if workload.task == "inference" or not workload.global_batch or performance.mfu is None:
        return []
    steps = workload.global_batch // (plan.dp * plan.micro_batch)
    wanted = MICRO_BATCHES_PER_STAGE * plan.pp
    if steps >= wanted:
        return []
    larger = plan.dp * plan.micro_batch * wanted
    better = estimate_performance(model, replace(workload, global_batch=larger), plan, cluster).performance.mfu
    if better is None or better < performance.mfu * BATCH_GAIN_WARN:
        return []
    return [
        Warning_(
            "global_batch_small",
            {"global_batch": workload.global_batch, "gpus": plan.gpus, "mfu": performance.mfu, "larger": larger}
            | {"better": better, "dp": plan.dp, "steps": steps, "micro_batch": plan.micro_batch, "pp": plan.pp}
            | {"larger_tokens_m": larger * workload.seq_len / 1e6, "wanted": wanted},
        )
    ]
