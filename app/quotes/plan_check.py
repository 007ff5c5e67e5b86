"""A quote's plan against what it rents: the GPUs the quantity rents must be the GPUs the plan runs
on, the plan must pass the feasibility gate on that SKU (GPU memory within the headroom, host
RAM within the reserve), and the months rented must bill at least the hours the plan takes there (whole
months of the term, as /recommend bills an option: app.planner.offers.billed_months). Runs before a new quote
is priced (app.quotes.service.create_quote's `check_plan`); a plan without parallel degrees, or a quote without
a workload, has nothing to check; without tokens there is no time to check the months against.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, cast

from sqlalchemy.orm import Session

from app.catalog import repository as catalog_repository
from app.catalog.models import Sku, SkuAddon
from app.catalog.service import fabric_addon_of, joining_fabric
from app.common.errors import InvalidInput
from app.estimator.memory import MemoryEstimate, host_need_params
from app.estimator.performance import PerformanceEstimate, estimate_performance
from app.estimator.serving import ServingConfig, ServingEstimate, check_fits, estimate_serving
from app.estimator.serving_levers import check_pipeline
from app.estimator.specs import GIB, Cluster, EstimatorError, MemoryBreakdown, ModelSpec
from app.estimator.vocabulary import MAX_QUOTE_MONTHS, TERM_MONTHS
from app.planner.mappers import memory_out, performance_out
from app.planner.misses import slo_params
from app.planner.offers import DAYS_PER_BILLED_MONTH, Configuration, billed_months
from app.planner.recommend import host_ram_unconfirmed
from app.planner.schemas import HardwareIn, PlanIn, WorkloadIn
from app.planner.search import stated_plan
from app.planner.serving import check_serving_plan
from app.planner.serving_disagg import check_disaggregated
from app.planner.serving_mappers import serving_out
from app.planner.serving_request import plan_config, serving_config
from app.planner.stacks import as_launched, no_stack_warning
from app.planner.workload import SessionOpener, as_rented, resolve_cluster, resolve_model
from app.quotes.caveats import CAVEATS, latency_caveats
from app.quotes.plan_summary import server_summary, stated
from app.quotes.pool_load import KEPT as SERVING_KEPT, pools_load
from app.quotes.service import (
    MAX_NODES,
    annual_refusal,
    refusal,
    units_refusal,
    whole_years,
)

if TYPE_CHECKING:
    from app.quotes.schemas import PoolIn, PoolsIn, QuoteCreate

DEGREES = ("dp", "tp", "pp", "cp")


def _estimator_refusal(field: str, error: EstimatorError, sku: str | None = None) -> InvalidInput:
    """A 422 of the estimator's refusal: `plan_not_fit` on `sku` (or `plan_refused`), the estimator's code and
    figures under `reason` (worded by app.text.messages.quote_check in either language; its English without one)."""
    reason = {"code": error.code, "params": error.params} if error.code else {"message": str(error)}
    return refusal(field, "plan_refused" if sku is None else "plan_not_fit", {"reason": reason, "sku": sku})


@dataclass(frozen=True, slots=True)
class PlanCheck:
    """What a quote's plan recomputes to on the SKU and quantity quoted: the figures the quote freezes
    (`estimate_figures`) and the hours the job takes (None without tokens, or nothing estimated)."""

    figures: dict[str, Any] = field(default_factory=dict)
    hours: float | None = None


def check_quote(session: Session, data: QuoteCreate) -> dict[str, Any]:
    """Raise a 422 naming both numbers when the quantity disagrees with the plan, the plan does not
    fit the SKU, or the months bill fewer hours than the plan takes; else the plan's figures recomputed on the SKU
    and quantity quoted (`estimate_figures`), with the plan's summary worded by the server. An unknown SKU is left to
    the quote service (its own 422). A workload is quoted with the plan it runs (`plan_required` otherwise): a quote
    never states a deployment, a fit or a time the estimator did not compute for the SKU and quantity quoted."""
    if data.workload is not None and not stated(data.plan):
        raise refusal("plan", "plan_required", {"sku": data.sku_id, "quantity": data.quantity})
    checked = check_plan(
        session, sku_id=data.sku_id, quantity=data.quantity, plan=data.plan, workload=data.workload, addons=data.addons
    )
    if checked.hours is not None:
        check_months(data, checked.hours)
    summary = server_summary(data.plan, data.workload)
    return checked.figures | ({"summary": summary} if summary else {})


def check_months(data: QuoteCreate, hours: float) -> None:
    """The months quoted (the term's default when unset) must bill the hours the job takes: whole 30-day months of
    the term, as the option was billed (`billed_months`), so an option's own quote body always passes."""
    months = data.months if data.months is not None else TERM_MONTHS[data.term]
    fewest = billed_months(hours, data.term)
    if months % TERM_MONTHS[data.term] and fewest <= MAX_QUOTE_MONTHS:
        # an annual term's months are whole years: quote those that carry the job (beyond a quote: months_beyond)
        raise annual_refusal(months, max(whole_years(months), fewest))
    if months >= fewest:
        return
    params: dict[str, Any] = {
        "months": months,
        "billed_hours": months * DAYS_PER_BILLED_MONTH * 24,
        "hours": round(hours, 2),
        "fewest_months": fewest,
        "sku": data.sku_id,
        "quantity": data.quantity,
    }
    code = "months_short" if fewest <= MAX_QUOTE_MONTHS else "months_beyond"
    if code == "months_beyond":
        params["max_months"] = MAX_QUOTE_MONTHS
    raise refusal("months", code, params)


def check_plan(
    session: Session,
    *,
    sku_id: str,
    quantity: int,
    plan: PlanIn | None,
    workload: WorkloadIn | None,
    addons: Sequence[str] = (),
) -> PlanCheck:
    pools = getattr(plan, "pools", None)  # a quote's plan (QuotePlan): a disaggregated deployment's pools
    if plan is None or (pools is None and not set(DEGREES) & plan.model_fields_set):
        return PlanCheck()  # no parallel degrees stated: nothing to check the quantity against, nothing to estimate
    sku = catalog_repository.get_sku_by_slug(session, sku_id)
    if sku is None:
        return PlanCheck()
    if pools is not None:
        return PlanCheck(check_pools(session, sku, quantity, pools, workload, addons))
    gpus = plan.dp * plan.tp * plan.pp * plan.cp
    by_card = sku.rental_unit == "card"
    rented = quantity if by_card else quantity * sku.gpus_per_node
    if rented != gpus:
        code, params = _quantity_refusal(session, sku, quantity, rented, gpus)
        raise refusal("quantity", code, params)
    if (refused := units_refusal(sku, quantity)) is not None:
        raise refused  # the plan's GPU count, but not in units the SKU rents
    _check_fabric(session, sku, quantity, plan, workload, addons)
    if workload is None:
        return PlanCheck()
    if workload.task == "serving":
        return _check_serving_fits(session, sku.slug, quantity, by_card, plan, workload)
    return _check_fits(session, sku.slug, quantity, by_card, plan, workload)


def check_pools(
    session: Session, sku: Sku, quantity: int, pools: PoolsIn, workload: WorkloadIn | None, addons: Sequence[str]
) -> dict[str, Any]:
    """A disaggregated plan: each pool's replicas within a server, each pool on whole servers of its own (the
    planner's app.planner.serving_disagg), the KV crossing between them over the SKU's fabric; the quantity must
    rent exactly those servers and the add-ons the fabric, each pool's replica must fit the SKU, and each pool must
    carry the workload's peak within the SLO (app.quotes.pool_load): the figures the quote freezes."""
    shapes = {"prefill": pools.prefill, "decode": pools.decode}
    if sku.rental_unit == "card":
        raise refusal("plan.pools", "pools_cards", {"sku": sku.slug})
    for name, pool in shapes.items():
        if pool.tp > sku.gpus_per_node:
            spans = {"tp": pool.tp, "sku": sku.slug, "gpus_per_node": sku.gpus_per_node}
            raise refusal(f"plan.pools.{name}.tp", "pool_tp_spans", spans)
    servers = {name: math.ceil(pool.gpus / sku.gpus_per_node) for name, pool in shapes.items()}
    params: dict[str, Any] = {
        "quantity": quantity,
        "rented": quantity * sku.gpus_per_node,
        "sku": sku.slug,
        "gpus_per_node": sku.gpus_per_node,
        "prefill_gpus": pools.prefill.gpus,
        "decode_gpus": pools.decode.gpus,
        "servers": sum(servers.values()),
    }
    if quantity != params["servers"]:
        raise refusal("quantity", "quantity_pools", params)
    if (refused := units_refusal(sku, quantity)) is not None:
        raise refused
    offered = catalog_repository.addons_for_sku(session, sku.id)
    if joining_fabric(sku, offered) is None:
        raise refusal(
            "quantity", "quantity_one_server", {key: params[key] for key in ("sku", "quantity", "gpus_per_node")}
        )
    _check_fabric_rented(sku, quantity, offered, addons)
    if workload is None:
        return {}
    return _check_pools_fit(session, sku, quantity, pools, workload)


def _check_pools_fit(session: Session, sku: Sku, quantity: int, pools: PoolsIn, request: WorkloadIn) -> dict[str, Any]:
    """Each pool's replica must run the model on the SKU's GPU (kernels for its formats, one sequence held), and the
    pools carry the peak (app.quotes.pool_load)."""
    if request.task != "serving":
        raise refusal("plan.pools", "pools_not_serving", {})
    try:
        model, _warnings = resolve_model(request.model)
    except EstimatorError:
        return {}  # a model the estimator cannot size is kept for the record, unchecked
    hardware = HardwareIn(sku=sku.slug, nodes=2)  # two servers joined by the fabric: where the KV crosses
    servers = resolve_cluster(hardware, cast("SessionOpener", lambda: nullcontext(session)))[0]
    _check_disaggregated(request)
    shapes: dict[str, PoolIn] = {"prefill": pools.prefill, "decode": pools.decode}
    for name, pool in shapes.items():
        try:
            cfg = serving_config(request)
            check_serving_plan(model, pool.tp, 1)
            check_fits(model, cfg, servers.gpu, pool.tp, 1)
        except EstimatorError as error:
            field = error.field if error.field and not error.field.startswith("plan") else f"plan.pools.{name}"
            raise _estimator_refusal(field, error, sku.slug) from error
    try:
        return pools_load(model, cfg, servers, sku, pools, quantity, request)
    except EstimatorError as error:
        field = error.field if error.field and not error.field.startswith("plan") else "plan.pools"
        raise _estimator_refusal(field, error, sku.slug) from error


def _check_disaggregated(request: WorkloadIn) -> None:
    """Pools on an engine /recommend sizes them for (app.planner.serving_disagg.check_disaggregated): its code and
    figures on the workload's field (`disaggregated_engine`), worded as /recommend's. A load it would refuse is
    refused on its own field (`pools_no_load`: app.quotes.pool_load)."""
    try:
        cfg = serving_config(request)
    except EstimatorError:
        return  # refused on the pool that runs it (_check_pools_fit)
    try:
        check_disaggregated(cfg)
    except EstimatorError as error:
        if error.code == "disaggregated_engine":
            raise refusal(f"workload.{error.field}", error.code, error.params, str(error)) from error


def _joins_servers(sku: Sku, quantity: int, plan: PlanIn, workload: WorkloadIn | None) -> bool:
    """Whether the plan runs over several servers as one: a training (or batch inference) job over them all, a
    serving replica whose tp × pp spans servers; replicas that each fit one server share nothing."""
    if sku.rental_unit == "card" or quantity < 2:
        return False
    if workload is not None and workload.task == "serving":
        return plan.tp * plan.pp > sku.gpus_per_node
    return True


def _check_fabric(
    session: Session, sku: Sku, quantity: int, plan: PlanIn, workload: WorkloadIn | None, addons: Sequence[str]
) -> None:
    """A plan that joins servers runs over the SKU's inter-node fabric, and is sized on it: where the catalog sells
    that fabric as an add-on, the quote must rent it, else its price and time would be a cluster it does not rent
    (the planner's own options always carry it: app.planner.mappers.quote_body)."""
    if not _joins_servers(sku, quantity, plan, workload):
        return
    offered = catalog_repository.addons_for_sku(session, sku.id)
    if joining_fabric(sku, offered) is None:  # nothing but the plain network joins its servers
        params = {"sku": sku.slug, "quantity": quantity, "gpus_per_node": sku.gpus_per_node}
        raise refusal("quantity", "quantity_one_server", params)
    _check_fabric_rented(sku, quantity, offered, addons)


def _check_fabric_rented(sku: Sku, quantity: int, offered: list[SkuAddon], addons: Sequence[str]) -> None:
    """Where the catalog sells the fabric joining the servers as an add-on, the quote must rent it."""
    fabric = fabric_addon_of(sku, offered)
    if fabric is None or fabric.code in addons:
        return
    params = {
        "sku": sku.slug,
        "quantity": quantity,
        "fabric": sku.inter_node_fabric,
        "addon": fabric.code,
        "addon_name": fabric.name,
    }
    raise refusal("addons", "fabric_addon_missing", params)


def _rents(sku: Sku, addons: dict[int, list[SkuAddon]]) -> list[tuple[int, int]]:
    """(quantity, GPUs) a SKU rents for one job: its card counts, or 1 to MAX_NODES whole servers (one where no
    fabric joins them: `joining_fabric`, over the catalog's active add-ons by SKU)."""
    if sku.rental_unit == "card":
        return [(cards, cards) for cards in sorted(sku.card_counts)]
    joined = joining_fabric(sku, addons.get(sku.id, [])) is not None
    most = MAX_NODES if joined else 1
    return [(nodes, nodes * sku.gpus_per_node) for nodes in range(1, most + 1)]


def _quantity_refusal(session: Session, sku: Sku, quantity: int, rented: int, gpus: int) -> tuple[str, dict[str, Any]]:
    """The message code and figures of a quantity that does not rent the plan's GPUs: the whole number of
    units that does; where the SKU cannot rent exactly that many, a SKU of the same GPU that can, and the
    fewest units of this one that carry the plan (never a fraction of a server)."""
    params: dict[str, Any] = {"quantity": quantity, "rented": rented, "gpus": gpus, "sku": sku.slug}
    addons = catalog_repository.active_addons_by_sku(session)  # one query for this SKU and the alternatives
    rents = _rents(sku, addons)
    exact = next((units for units, count in rents if count == gpus), None)
    if exact is not None:
        if sku.rental_unit == "card":
            return "quantity_cards", params
        return "quantity_servers", params | {"gpus_per_node": sku.gpus_per_node, "servers": exact}
    alternative = next(
        (
            (other.slug, units)
            for other in catalog_repository.list_skus(session)
            if other.gpu_type_id == sku.gpu_type_id and other.slug != sku.slug
            for units, count in _rents(other, addons)
            if count == gpus
        ),
        None,
    )
    fits = next(((units, count) for units, count in rents if count >= gpus), None)
    if fits is None:
        params["most_gpus"] = rents[-1][1]
        if alternative is None:
            return "quantity_unrentable", params
        return "quantity_beyond", params | {"alt_sku": alternative[0], "alt_quantity": alternative[1]}
    params |= {"fits_quantity": fits[0], "fits_gpus": fits[1], "idle": fits[1] - gpus}
    if alternative is None:
        return "quantity_replan", params
    return "quantity_elsewhere", params | {"alt_sku": alternative[0], "alt_quantity": alternative[1]}


def _quoted(
    session: Session, sku_id: str, quantity: int, by_card: bool, request: WorkloadIn
) -> tuple[Cluster, ModelSpec] | None:
    """The cluster the quote rents and the model it names, as a plan check reads them; None for a model the
    estimator cannot size (an incomplete pasted config): the quote keeps it for the record, unchecked."""
    hardware = HardwareIn(sku=sku_id, nodes=1 if by_card else quantity, gpus_per_node=quantity if by_card else None)
    # the quote's own session, left open: resolve_cluster closes what the opener gives it
    cluster, _assumed = resolve_cluster(hardware, cast("SessionOpener", lambda: nullcontext(session)))
    try:
        model, _warnings = resolve_model(request.model)
    except EstimatorError:
        return None
    return cluster, model


def _check_serving_fits(
    session: Session, sku_id: str, quantity: int, by_card: bool, plan: PlanIn, request: WorkloadIn
) -> PlanCheck:
    """A serving plan: dp replicas of tp × pp, each must have kernels for its formats and hold one sequence
    (the same feasibility /estimate and /recommend apply). The quote freezes what the deployment serves:
    replicas, TTFT/TPOT and, for a request rate, the simulated percentiles at the average and the peak, with the
    warnings that qualify them (app.quotes.caveats, frozen as notes)."""
    quoted = _quoted(session, sku_id, quantity, by_card, request)
    if quoted is None:
        return PlanCheck()
    cluster, model = quoted
    try:
        cfg = plan_config(model, serving_config(request), plan)
        check_serving_plan(model, plan.tp, plan.pp)
        check_pipeline(cfg.engine, cfg.speculative, plan.pp)
        check_fits(model, cfg, cluster.gpu, plan.tp, plan.pp)
        result = estimate_serving(model, cfg, cluster, tp=plan.tp, pp=plan.pp, replicas=plan.dp)
    except EstimatorError as error:
        field = error.field if error.field and not error.field.startswith("plan") else "plan"
        raise _estimator_refusal(field, error, sku_id) from error
    _check_serving_slo(result, cfg, plan, by_card, cluster.gpus_per_node)
    figures = serving_out(result, cfg).model_dump(mode="json", include=set(SERVING_KEPT))
    return PlanCheck(figures={"serving": figures, CAVEATS: latency_caveats(model, cfg, result, request)})


def _check_serving_slo(
    result: ServingEstimate, cfg: ServingConfig, plan: PlanIn, by_card: bool, gpus_per_node: int
) -> None:
    """A serving quote bills a deployment for the traffic its workload states: a plan whose replicas are saturated at
    the peak, or miss the workload's SLO there (the judgement /estimate gives the same plan), is refused on plan.dp,
    naming the replicas of this shape that carry it and the quantity they rent. A quote is a price for a service
    that holds; a deployment sized below its own targets is re-planned (or its targets relaxed), not frozen."""
    peak = result.latency.get("peak") if result.latency else None
    saturated = peak is not None and peak.saturated
    if result.meets_slo is not False and not saturated:
        return
    q = cfg.slo_percentile
    params: dict[str, Any] = {"replicas": plan.dp, "percentile": q, "saturated": saturated}
    if peak is not None:
        params |= {"ttft_ms": peak.ttft.at(q) * 1e3, "tpot_ms": peak.tpot.at(q) * 1e3}
        params["peak_rps"] = (cfg.requests_per_s or 0.0) * cfg.peak_factor
        params["utilization"] = (result.utilization or {}).get("peak", 0.0)
    else:
        params |= {"ttft_ms": result.ttft_ms, "tpot_ms": result.tpot_ms, "concurrency": cfg.concurrency}
    needed = result.replicas_needed if peak is not None else None
    if needed is not None and needed > plan.dp:
        gpus = needed * plan.tp * plan.pp
        params |= {"needed": needed, "quantity": gpus if by_card else math.ceil(gpus / gpus_per_node)}
    raise refusal("plan.dp", "slo_not_met", params | slo_params(cfg))


def _check_fits(
    session: Session, sku_id: str, quantity: int, by_card: bool, plan: PlanIn, request: WorkloadIn
) -> PlanCheck:
    quoted = _quoted(session, sku_id, quantity, by_card, request)
    if quoted is None:
        return PlanCheck()
    cluster, model = quoted
    spec = plan.spec(request.micro_batch or 1)
    work = as_launched(request.workload(), cluster.gpu, model)  # fp8 where it runs, as /recommend sized the option
    if work.task != "inference":
        work = replace(work, global_batch=plan.global_batch or work.global_batch or spec.dp * spec.micro_batch)
        _check_batch_split(
            work.global_batch or 0, spec.dp, spec.micro_batch, "plan" if plan.global_batch else "workload"
        )
    try:
        held, memory = stated_plan(model, work, spec, cluster)
    except EstimatorError as error:
        raise _estimator_refusal("plan", error) from error
    breakdown = memory.breakdown
    host = {"sku": sku_id, "host_gib": breakdown.host_peak / GIB} | host_need_params(breakdown)
    unconfirmed = not breakdown.host_fits and cluster.host_ram_gib is None and unconfirmed_load(breakdown)
    if not breakdown.host_fits and cluster.host_ram_gib is None and not unconfirmed:
        # first: nothing about the plan can be settled on a server whose host RAM is not known, stack included
        raise refusal("plan", "plan_host_ram_unknown", host)
    no_stack = no_stack_warning(work, held, model)
    if no_stack is not None:
        raise refusal("plan", "plan_no_stack", {"sku": sku_id} | no_stack.params)
    if not breakdown.gpu_fits:
        limit = breakdown.capacity if breakdown.limit is None else breakdown.limit
        figures = {
            "needed_gib": breakdown.total / GIB,
            "limit_gib": limit / GIB,
            "capacity_gib": breakdown.capacity / GIB,
            "headroom": 1 - limit / breakdown.capacity,
        }
        raise refusal("plan", "plan_gpu_memory", {"sku": sku_id} | figures)
    if not breakdown.host_fits and cluster.host_ram_gib is not None:
        limit_gib = (breakdown.host_ram_limit or 0.0) / GIB
        kept = {
            "host_ram_gib": cluster.host_ram_gib,
            "limit_gib": limit_gib,
            "reserve_gib": cluster.host_ram_gib - limit_gib,
        }
        raise refusal("plan", "plan_host_ram", host | kept)
    performance = estimate_performance(model, work, held, as_rented(cluster))
    figures = estimate_figures(memory, performance)
    if unconfirmed:  # quoted on the condition /recommend offered it on (warning host_ram_unconfirmed), printed
        needed = host_ram_unconfirmed(breakdown, Configuration(cluster.gpus_per_node, cluster.nodes))
        figures["host_ram_unconfirmed_gib"] = needed.params["needed_gib"]
        figures["fits"] = True  # the cards hold it; the host RAM is the condition, as on the option
    return PlanCheck(figures, performance.performance.time_to_train_hours)


def unconfirmed_load(breakdown: MemoryBreakdown) -> bool:
    """A plan on a server of unknown host RAM that /recommend offers (app.planner.search.fits): it fits the cards and
    offloads nothing; only loading the model needs host RAM, which the quote states as its condition."""
    return breakdown.gpu_fits and not breakdown.host_ram


def _check_batch_split(global_batch: int, dp: int, micro_batch: int, where: str) -> None:
    """A launched step is dp × micro-batch × accumulation sequences: DeepSpeed asserts train_batch_size ==
    train_micro_batch_size_per_gpu × gradient_accumulation_steps × world size (deepspeed/runtime/config.py
    `_batch_assertion`), and Megatron-LM global_batch_size % (micro_batch_size × data-parallel size) == 0
    (megatron/training/arguments.py); /recommend only offers splits that divide (rejection `batch_split`)."""
    step = dp * micro_batch
    if global_batch % step == 0:
        return
    below = max(step, global_batch // step * step)
    params = {"global_batch": global_batch, "dp": dp, "micro_batch": micro_batch, "step": step, "below": below}
    raise refusal(f"{where}.global_batch", "batch_split", params | {"above": below + step})


def estimate_figures(memory: MemoryEstimate, performance: PerformanceEstimate) -> dict[str, Any]:
    """The figures a quote freezes with its plan, from the estimates /recommend words (app.planner.mappers): time
    to train and GPU-hours with their ranges (none without a token count), throughput per GPU, per-GPU memory
    against its limit. Decimal strings, as the quote's money is: a quote carries no float."""
    perf = performance_out(performance)
    mem = memory_out(memory)
    figures: dict[str, Any] = {
        "time_to_train_hours": _decimal(perf.time_to_train_hours, 2),
        "time_to_train_hours_range": _decimals(perf.time_to_train_hours_range, 2),
        "gpu_hours": _decimal(perf.gpu_hours, 1),
        "gpu_hours_range": _decimals(perf.gpu_hours_range, 1),
        "tokens_per_s_per_gpu": _decimal(perf.tokens_per_s_per_gpu, 0),
        "memory_per_gpu_gib": _decimal(mem.per_gpu_gib["total"], 2),
        "memory_limit_gib": _decimal(mem.limit_gib if mem.limit_gib is not None else mem.capacity_gib, 2),
        "fits": mem.fits,
    }
    return {key: value for key, value in figures.items() if value is not None}


def _decimal(value: float | None, places: int) -> str | None:
    return None if value is None else f"{value:.{places}f}"


def _decimals(values: list[float] | None, places: int) -> list[str] | None:
    return None if values is None else [f"{value:.{places}f}" for value in values]
