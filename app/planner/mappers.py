"""Estimator and planner results as API responses (app.planner.schemas). Money leaves as decimal
strings, memory as GiB; the plan's summary and the option's explanation are written here, the one
place that turns a plan into words for the API.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from app.common.schemas import mirror
from app.estimator.memory import MemoryEstimate
from app.estimator.memory.band import MemoryBand
from app.estimator.notes import Note
from app.estimator.params import count_params
from app.estimator.performance import (
    CALIBRATED_GENERATIONS,
    UNCALIBRATED_SLOW,
    PerformanceEstimate,
    calibration_distance,
    generation,
)
from app.estimator.specs import GIB, Goodput, MemoryBreakdown, ModelSpec, Plan, Warning_, Workload
from app.estimator.vocabulary import PRETRAINING_TASKS, TERM_MONTHS
from app.planner.availability import Availability
from app.planner.evaluated import Relief
from app.planner.explain import describe_plan, explain
from app.planner.levers import levers_of
from app.planner.offers import Cost
from app.planner.option import Option, Recommendation
from app.planner.schemas import (
    AvailabilityOut,
    ConvertedCostOut,
    CostOut,
    EstimateOut,
    GoodputOut,
    MemoryOut,
    MissOut,
    ModelOut,
    NoteOut,
    OptionOut,
    ParetoPointOut,
    PerformanceOut,
    PlanOut,
    QuoteBodyOut,
    RecommendOut,
    ReferencePriceOut,
    RejectedOut,
    ScalingOut,
    ScalingRowOut,
    SkuRefOut,
    TermCostOut,
    WarningOut,
)
from app.reference.service import ReferenceBook
from app.text import messages

if TYPE_CHECKING:
    from app.planner.serving_option import ServingOption

BILLING_NOTE = (
    "Whole months of the chosen term are billed (a month is 30 days); without tokens, the price is per month."
)


def model_out(model: ModelSpec) -> ModelOut:
    counts = count_params(model)
    return mirror(ModelOut, model, params=counts.total, active_params=counts.active)


def memory_out(memory: MemoryEstimate, band: MemoryBand | None = None) -> MemoryOut:
    """The breakdown in GiB; with `band`, the readings as each tool would take them and the range of the total."""
    b = memory.breakdown
    parts = {
        "weights": b.weights,
        "gradients": b.gradients,
        "optimizer": b.optimizer,
        "activations": b.activations,
        "kv_cache": b.kv_cache,
        "other": b.other,
        "total": b.total,
    }
    out = gib_memory_out(
        parts,
        capacity=b.capacity,
        fits=b.fits,
        limit=b.limit,
        host_ram=b.host_ram,
        host_ram_limit=b.host_ram_limit,
        host_load=b.host_load,
    )
    out.paged_optimizer_gib = round(b.paged_optimizer / GIB, 2)
    if band is not None:
        out.as_measured_gib = {name: round(value / GIB, 2) for name, value in band.readings.items()}
        out.per_gpu_gib_range = [round(band.low / GIB, 2), round(band.high / GIB, 2)]
    return out


def gib_memory_out(
    parts: dict[str, float],
    *,
    capacity: float,
    fits: bool,
    limit: float | None = None,
    host_ram: float = 0.0,
    host_ram_limit: float | None = None,
    host_load: float = 0.0,
) -> MemoryOut:
    """Per-GPU bytes by component, as the response's GiB figures (training and serving alike)."""
    return MemoryOut(
        per_gpu_gib={k: round(v / GIB, 2) for k, v in parts.items()},
        capacity_gib=round(capacity / GIB, 2),
        limit_gib=round(limit / GIB, 2) if limit is not None else None,
        fits=fits,
        host_ram_gib=round(host_ram / GIB, 1),
        host_ram_limit_gib=round(host_ram_limit / GIB, 1) if host_ram_limit is not None else None,
        host_load_gib=round(host_load / GIB, 1),
    )


def performance_out(estimate: PerformanceEstimate) -> PerformanceOut:
    p = estimate.performance
    return mirror(
        PerformanceOut,
        p,
        tokens_per_s_per_gpu_range=_pair(p.tokens_per_s_per_gpu_range),
        time_to_train_hours_range=_pair(p.time_to_train_hours_range),
        gpu_hours_range=_pair(p.gpu_hours_range),
        goodput=goodput_out(p.goodput) if p.goodput else None,
    )


def _pair(values: tuple[float, float] | None) -> list[float] | None:
    return [round(values[0], 4), round(values[1], 4)] if values else None


def goodput_out(run: Goodput) -> GoodputOut:
    return GoodputOut(
        factor=round(run.factor, 4),
        compute_hours=run.ideal_hours,
        lost_hours={part: round(hours, 4) for part, hours in run.parts_hours.items()},
        interruptions=round(run.interruptions, 2),
        checkpoint_gib=round(run.checkpoint_bytes / GIB, 1),
        checkpoint_interval_hours=round(run.checkpoint_interval_hours, 3),
        storage_gib=round(run.storage_bytes / GIB, 1),
    )


def plan_out(plan: Plan, global_batch: int | None) -> PlanOut:
    levers = levers_of(plan)
    return mirror(
        PlanOut,
        plan,
        global_batch=global_batch,
        loss=levers.loss,
        attention=levers.attention,
        summary=describe_plan(plan),
    )


def warnings_out(warnings: list[Warning_]) -> list[WarningOut]:
    """Each code once (its first figures), with its English from the catalog (app/text/messages.py WARNINGS)."""
    seen: dict[str, Warning_] = {}
    for w in warnings:
        seen.setdefault(w.code, w)
    return [WarningOut(code=w.code, message=messages.warning(w.code, w.params), params=w.params) for w in seen.values()]


def notes_out(notes: Iterable[Note]) -> list[NoteOut]:
    """The notes as codes with parameters (the API's `assumption_codes`), one for one with `_texts`."""
    return [NoteOut(code=n.code, params=dict(n.params)) for n in dict.fromkeys(notes)]


def _texts(notes: Iterable[Note]) -> list[str]:
    """The notes' English (the API's `assumptions`), each once."""
    return list(dict.fromkeys(n.text for n in notes))


def estimate_out(
    model: ModelSpec,
    workload: Workload,
    plan: Plan,
    memory: MemoryEstimate,
    performance: PerformanceEstimate,
    warnings: list[Warning_],
    notes: list[Note] | None = None,
    band: MemoryBand | None = None,
) -> EstimateOut:
    """The /estimate response; `notes` are what the request left out and the service assumed."""
    stated = list(dict.fromkeys([*(notes or []), *memory.assumptions, *performance.assumptions]))
    return EstimateOut(
        model=model_out(model),
        plan=plan_out(plan, workload.global_batch),
        memory=memory_out(memory, band),
        performance=performance_out(performance),
        warnings=warnings_out(warnings),
        assumptions=_texts(stated),
        assumption_codes=notes_out(stated),
    )


def scaling_out(
    model: ModelSpec, gpu: str, plan: Plan, workload: Workload, rows: list[dict[str, Any]], warnings: list[Warning_]
) -> ScalingOut:
    """The scaling table; a point whose plan does not fit shows no throughput (its speed is no run anyone can make)."""
    unfit = {"tokens_per_s": None, "speedup": None, "efficiency": None}
    return ScalingOut(
        model=model_out(model),
        gpu=gpu,
        base_plan=plan_out(plan, workload.global_batch),
        rows=[ScalingRowOut(**(row if row["fits"] else row | unfit)) for row in rows],
        warnings=warnings_out(warnings),
    )


def reference_out(book: ReferenceBook, option: Option) -> list[ReferencePriceOut]:
    perf = option.evaluated.performance.performance
    return [
        mirror(
            ReferencePriceOut,
            c,
            usd_per_gpu_hour=str(c.usd_per_gpu_hour),
            gpu_hours=str(c.gpu_hours),
            total_usd=str(c.total_usd),
            total_converted=str(c.total_converted) if c.total_converted else None,
        )
        for c in book.compare(gpu_id=option.offer.gpu.id, gpus=option.config.gpus, gpu_hours=perf.gpu_hours)
    ]


def converted_out(cost: Cost) -> ConvertedCostOut | None:
    converted = cost.converted
    if converted is None:
        return None
    return ConvertedCostOut(
        currency=converted.currency,
        rate=str(converted.rate.normalize()),
        monthly_list=str(converted.monthly_list),
        monthly_effective=str(converted.monthly_effective),
        job_total=str(converted.job_total) if converted.job_total is not None else None,
        annual_total=str(converted.annual_total),
    )


def availability_out(availability: Availability | None) -> AvailabilityOut:
    """An option's availability as the API shows it (`from`: the first day its units are free)."""
    if availability is None:  # pragma: no cover - every option shown is placed
        raise ValueError("an option without availability")
    return AvailabilityOut(
        region=availability.region,
        free_units=availability.free_units,
        from_=availability.from_,
        status=availability.status,
    )


def quote_body(option: Option | ServingOption, plan: PlanOut, workload_body: dict[str, Any]) -> QuoteBodyOut:
    """The POST /quotes body of an option: the quote prices `quantity` units for `months`, which is
    the option's job total (offers.price prices per unit after discount, as a quote does); a serving
    deployment rents one term."""
    cost = option.cost
    hours = option.hours if isinstance(option, Option) else None
    plan_body = plan.model_dump() | {"time_to_train_hours": hours}
    addon = option.offer.fabric_addon
    return QuoteBodyOut(
        sku_id=option.offer.sku_id,
        quantity=cost.units,
        term=cost.term,
        months=cost.months if cost.months is not None else TERM_MONTHS[cost.term],
        addons=[addon.code] if addon is not None and joined_nodes(option) > 1 else [],
        region=option.region,
        start_date=option.availability.start if option.availability is not None else None,
        plan={key: value for key, value in plan_body.items() if value is not None},
        workload=workload_body,
    )


def joined_nodes(option: Option | ServingOption) -> int:
    """Servers that work as one over the SKU's fabric: a training option's, or a serving replica's that spans
    servers (replicas that share nothing need no fabric)."""
    if isinstance(option, Option):
        return option.config.nodes
    return option.config.nodes if option.launch.get("needs_infiniband") else 1


def assumptions_out(codes: list[NoteOut]) -> dict[str, Any]:
    """An option's `assumptions` (the English, app/text/messages.py ASSUMPTIONS) and `assumption_codes` (the same as
    codes with parameters, which the pages word in their language)."""
    return {"assumptions": [messages.assumption(a.code, a.params) for a in codes], "assumption_codes": codes}


def calibration_assumptions(model: ModelSpec, workload: Workload, option: Option) -> list[NoteOut]:
    """How the option's training plan differs from every run that calibrated the speed, which widened its range."""
    if workload.task == "inference":
        return []
    plan = option.evaluated.plan
    gen = generation(option.offer.gpu)
    ampere_pretrain = gen == "ampere" and workload.task in PRETRAINING_TASKS
    _slowest, kinds = calibration_distance(
        model.is_moe, plan.offload != "none", gen not in CALIBRATED_GENERATIONS, ampere_pretrain
    )
    return [NoteOut(code=f"uncalibrated_{kind}", params={"factor": UNCALIBRATED_SLOW[kind]}) for kind in kinds]


def fused_fit_assumptions(option: Option) -> list[NoteOut]:
    """`fused_loss_fit` where the search took the fused loss unasked because no plan with the standard loss fits
    (search.py `_fused_fit`): the leanest standard-loss plan's GiB per GPU against the limit."""
    need = option.evaluated.standard_loss_need
    limit = option.evaluated.memory.breakdown.limit
    if need is None or limit is None:
        return []
    return [
        NoteOut(code="fused_loss_fit", params={"needed_gib": round(need / GIB, 2), "limit_gib": round(limit / GIB, 2)})
    ]


def relief_assumptions(option: Option) -> list[NoteOut]:
    """What memory relief turned on for the high end of the memory range (app/planner/relief.py `_over_card`): a note
    for each lever it turned (`memory_relief_layout` where the plan's layout changed, `_stack` where another stack's
    account holds it, `_recompute`, `_micro_batch`, `_loss` or `_standard_loss`), the last with the high end it cut,
    what it costs in speed and whether the price holds at the slow end of the time range (`relief`: the tail,
    app/text/messages.py RELIEF_TAILS)."""
    relief = option.evaluated.relief
    if relief is None:
        return []
    plan, was, memory = option.evaluated.plan, relief.plan, option.evaluated.memory.breakdown
    changes: list[tuple[str, dict[str, Any]]] = []
    layout, was_layout = _layout(plan), _layout(was)
    if layout != was_layout:  # the search's wider look took another shape, ZeRO stage or offload (relief.py `_widened`)
        changes.append(("memory_relief_layout", layout | {f"was_{key}": value for key, value in was_layout.items()}))
    if option.stack is not None and relief.stack is not None and option.stack != relief.stack:
        changes.append(("memory_relief_stack", {"stack": option.stack, "was_stack": relief.stack}))
    if plan.recompute != was.recompute:
        changes.append(("memory_relief_recompute", {"recompute": plan.recompute, "was": was.recompute}))
    if plan.micro_batch != was.micro_batch:
        changes.append(("memory_relief_micro_batch", {"micro_batch": plan.micro_batch, "was": was.micro_batch}))
    if plan.fused_loss != was.fused_loss:  # the wider look may hold a plan on the standard loss where a twin fused it
        changes.append(("memory_relief_loss" if plan.fused_loss else "memory_relief_standard_loss", {}))
    if not changes:  # every plan the search emits differs from the one it relieves in one of the above; never a 500
        changes.append(("memory_relief_layout", layout | {f"was_{key}": value for key, value in was_layout.items()}))
    notes = [NoteOut(code=code, params=params) for code, params in changes[:-1]]
    code, params = changes[-1]
    return [*notes, NoteOut(code=code, params=params | _relief_tail(option, relief, memory))]


def _layout(plan: Plan) -> dict[str, Any]:
    """The parallel layout of a plan as `memory_relief_layout` states it (the degrees, ZeRO stage, offload, hybrid
    shard): what memory relief changed beside the recompute level, the micro-batch and the loss."""
    return {
        "dp": plan.dp,
        "tp": plan.tp,
        "pp": plan.pp,
        "cp": plan.cp,
        "ep": plan.ep,
        "zero_stage": plan.zero_stage,
        "offload": plan.offload,
        "dp_shard": plan.dp_shard,
    }


def _relief_tail(option: Option, relief: Relief, memory: MemoryBreakdown) -> dict[str, Any]:
    """The figures of the last relief note's tail (app/text/messages.py RELIEF_TAILS) and which tail it takes."""
    slower = 100 * (1 - option.evaluated.throughput / relief.throughput) if relief.throughput else 0.0
    params: dict[str, Any] = {
        "high_gib": round(relief.high / GIB, 2),
        "capacity_gib": round(memory.capacity / GIB, 2),
        "limit_gib": round((memory.capacity if memory.limit is None else memory.limit) / GIB, 2),
        "slower_pct": round(slower),
        "relief": "card" if relief.high > memory.capacity else "limit",
    }
    if relief.slow_months is not None:
        params |= {"relief": "slow_end", "slow_months": relief.slow_months[0], "was_slow_months": relief.slow_months[1]}
    return params


def fabric_assumptions(option: Option | ServingOption) -> list[NoteOut]:
    """Which fabric the speed of a multi-server option assumes, and how the price and quote carry it."""
    offer, nodes = option.offer, joined_nodes(option)
    if nodes < 2 or offer.inter_node_fabric is None:
        return []
    params: dict[str, Any] = {
        "nodes": nodes,
        "fabric": offer.inter_node_fabric,
        "sku": offer.sku_id,
        "gbps": offer.inter_node_gbps or 0.0,
    }
    addon = offer.fabric_addon
    if addon is None:
        return [NoteOut(code="fabric_with_server", params=params)]
    params |= {"addon": addon.code, "addon_name": addon.name}
    if addon.unit_monthly is None:
        return [NoteOut(code="fabric_addon_on_consultation", params=params)]
    monthly = str(option.cost.fabric_monthly)
    return [NoteOut(code="fabric_addon_priced", params=params | {"monthly": monthly, "currency": offer.currency})]


def option_out(
    model: ModelSpec,
    workload: Workload,
    option: Option,
    global_batch: int,
    model_warnings: list[Warning_],
    book: ReferenceBook,
    workload_body: dict[str, Any] | None = None,
) -> OptionOut:
    best = option.evaluated
    plan = plan_out(best.plan, global_batch or None)
    return placed_option_out(
        option,
        plan=plan,
        memory=_option_memory(option),
        performance=performance_out(best.performance),
        cost=cost_out(option.cost, BILLING_NOTE),
        availability=availability_out(option.availability),
        explanation=explain(
            model, workload, option.offer, option.config, best.plan, best.memory.breakdown, band=option.band
        ),
        warnings=warnings_out(model_warnings + option.warnings),
        stack=option.stack,
        launch=option.launch,
        miss_reason=messages.misses(option.misses),
        misses=[MissOut(code=code, params=params) for code, params in option.misses],
        reference_prices=reference_out(book, option),
        # a near miss billed beyond what a quote rents (quote_months) has no body that would post
        quote=quote_body(option, plan, workload_body) if workload_body is not None and _quotable(option) else None,
        **assumptions_out(
            fabric_assumptions(option)
            + calibration_assumptions(model, workload, option)
            + relief_assumptions(option)
            + fused_fit_assumptions(option)
        ),
    )


def _option_memory(option: Option) -> MemoryOut:
    """An option's memory; `fits` is the gate it passed, which on a server whose host RAM the catalog does not list
    leaves the load to the condition the option states (warning host_ram_unconfirmed, app.planner.search.fits)."""
    out = memory_out(option.evaluated.memory, option.band)
    breakdown = option.evaluated.memory.breakdown
    if option.offer.host_ram_gib is None and breakdown.gpu_fits and not breakdown.host_ram:
        out.fits = True
    return out


def _quotable(option: Option) -> bool:
    return all(code != "quote_months" for code, _params in option.misses)


def placed_option_out(option: Option | ServingOption, **rest: Any) -> OptionOut:
    """An option of either search (training or serving) as the API shows it: where it runs (its rank,
    SKU and region, servers and GPUs) and the `rest`."""
    offer, config = option.offer, option.config
    return OptionOut(
        rank=option.rank,
        sku=SkuRefOut(id=offer.sku_id, name=offer.name, gpu=offer.gpu.id, region=option.region),
        gpus_per_node=config.cards_per_node,
        nodes=config.nodes,
        total_gpus=config.gpus,
        indicative=offer.indicative_price or option.cost.fabric_on_consultation,
        **rest,
    )


def cost_out(cost: Cost, note: str, per_million_output_tokens: str | None = None) -> CostOut:
    """The price of an option; money as decimal strings."""
    return mirror(
        CostOut,
        cost,
        monthly_list=str(cost.monthly_list),
        monthly_effective=str(cost.monthly_effective),
        job_total=str(cost.job_total) if cost.job_total is not None else None,
        annual_total=str(cost.annual_total),
        fabric_monthly=str(cost.fabric_monthly) if cost.fabric_monthly else None,
        per_million_output_tokens=per_million_output_tokens,
        converted=converted_out(cost),
        alternatives=[
            TermCostOut(term=a.term, months=a.months, job_total=str(a.job_total) if a.job_total is not None else None)
            for a in cost.alternatives
        ],
        note=note,
    )


def recommendation_out(
    model: ModelSpec,
    workload: Workload,
    result: Recommendation,
    model_warnings: list[Warning_],
    book: ReferenceBook,
    workload_body: dict[str, Any] | None = None,
    *,
    currency: str,
) -> RecommendOut:
    notes: list[Note] = []
    for option in result.options[:1] or result.near_misses[:1]:
        notes = list(dict.fromkeys(option.evaluated.memory.assumptions + option.evaluated.performance.assumptions))
    return RecommendOut(
        model=model_out(model),
        currency=currency,
        options=[
            option_out(model, workload, o, result.global_batch, model_warnings, book, workload_body)
            for o in result.options
        ],
        near_misses=[
            option_out(model, workload, o, result.global_batch, model_warnings, book, workload_body)
            for o in result.near_misses
        ],
        rejected=[
            RejectedOut(sku=r.sku_id, code=r.code, params=r.params, reason=messages.rejection(r.code, r.params))
            for r in result.rejected
        ],
        pareto=[
            ParetoPointOut(sku=o.offer.sku_id, total_gpus=o.config.gpus, cost=str(o.sort_cost), hours=o.hours)
            for o in result.pareto
        ],
        assumptions=_texts(notes),
        assumption_codes=notes_out(notes),
        stopped_early=result.stopped_early,
        search={
            "configurations": result.configurations,
            "memory_evaluations": result.stats.memory_evaluations,
            "performance_evaluations": result.stats.performance_evaluations,
            "cached_configurations": result.stats.cached_configurations,
        },
    )
