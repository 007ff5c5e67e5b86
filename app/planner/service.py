"""Estimate and recommend as services: resolve the request into estimator specs, load the catalog
where needed, run the pure estimator/planner, and shape the response.

`estimate` on a built-in GPU type never touches the database, so it keeps answering when the
database is down; the session is opened lazily through `open_session` only for a SKU.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from functools import partial

from sqlalchemy.orm import Session

from app.catalog import repository as catalog_repository
from app.catalog.models import Sku
from app.catalog.pricing import next_price_change, sku_pricing
from app.catalog.snapshot import catalog_snapshot
from app.errors import InvalidInput, NotFound
from app.estimator.hardware import get_gpu
from app.estimator.memory import (
    MemoryEstimate,
    estimate_memory,
    gpu_memory_message,
    host_ram_message,
    validate_plan,
)
from app.estimator.models import model_from_hf_config, model_from_params, validate_model
from app.estimator.params import count_params
from app.estimator.performance import PerformanceEstimate, estimate_performance, scaling_view
from app.estimator.presets import get_preset
from app.estimator.specs import GIB, Cluster, ModelSpec, Plan, Warning_, Workload
from app.money import quantum
from app.planner import metrics
from app.planner.explain import describe_plan
from app.planner.offers import FABRIC_GBPS, Constraints, Offer
from app.planner.recommend import Option, Recommendation, recommend
from app.planner.schemas import (
    CostOut,
    EstimateIn,
    EstimateOut,
    HardwareIn,
    MemoryOut,
    ModelIn,
    ModelOut,
    OptionOut,
    ParetoPointOut,
    PerformanceOut,
    PlanOut,
    RecommendIn,
    RecommendOut,
    ReferencePriceOut,
    RejectedOut,
    ScalingIn,
    ScalingOut,
    ScalingRowOut,
    SkuRefOut,
    WarningOut,
    WorkloadIn,
)
from app.planner.search import Hardware, default_global_batch, search_plans
from app.reference.service import ReferenceBook, build_book

SessionOpener = Callable[[], Session]
BILLING_NOTE = (
    "Whole months of the chosen term are billed (a month is 30 days); without tokens, the price is per month."
)


# ---- model and hardware ------------------------------------------------------------------------


def resolve_model(spec: ModelIn) -> tuple[ModelSpec, list[Warning_]]:
    if spec.preset is not None:
        model = get_preset(spec.preset).model
        return model, []
    if spec.hf_config is not None:
        model = model_from_hf_config(spec.hf_config, name=spec.name)
        return model, validate_model(model, spec.params)
    if spec.layers is not None:
        model = ModelSpec(
            name=spec.name or "custom",
            layers=spec.layers,
            hidden=spec.hidden,
            heads=spec.heads,
            kv_heads=spec.kv_heads or spec.heads,
            ffn=spec.ffn,
            vocab=spec.vocab,
            mlp=spec.mlp,
            tied_embeddings=spec.tied_embeddings,
            head_dim=spec.head_dim,
            experts=spec.experts,
            experts_per_token=spec.experts_per_token,
            expert_ffn=spec.expert_ffn,
            shared_experts=spec.shared_experts,
            moe_layers=spec.moe_layers if spec.moe_layers is not None else (spec.layers if spec.experts else 0),
        )
        return model, validate_model(model, spec.params)
    model = model_from_params(spec.params, name=spec.name)
    return model, validate_model(model)


def _sku_or_404(session: Session, sku_id: str) -> Sku:
    sku = catalog_repository.get_sku_by_slug(session, sku_id)
    if sku is None:
        raise NotFound(f"no SKU {sku_id!r}; GET /catalog/skus lists them")
    return sku


def resolve_cluster(hardware: HardwareIn, open_session: SessionOpener) -> Cluster:
    if hardware.gpu is not None:
        gpu = get_gpu(hardware.gpu)
        return Cluster(
            gpu=gpu,
            gpus_per_node=hardware.gpus_per_node or 1,
            nodes=hardware.nodes,
            intra_node_link=hardware.intra_node_link,
            inter_node_gbps=_fabric_gbps(hardware),
            host_ram_gib=hardware.host_ram_gib,
            extra=_fabric_extra(hardware.inter_node_fabric),
        )
    with open_session() as session:
        sku = _sku_or_404(session, hardware.sku)
        per_node = hardware.gpus_per_node or sku.gpus_per_node
        if sku.rental_unit == "card" and per_node not in sku.card_counts:
            raise InvalidInput(f"{sku.slug} is rented with {sku.card_counts} cards, not {per_node}")
        fabric = hardware.inter_node_fabric or (sku.inter_node_fabric if hardware.nodes > 1 else None)
        return Cluster(
            gpu=get_gpu(sku.gpu_type.slug),
            gpus_per_node=per_node,
            nodes=hardware.nodes,
            intra_node_link=sku.intra_node_link,
            inter_node_gbps=hardware.inter_node_gbps or FABRIC_GBPS.get(fabric or ""),
            host_ram_gib=hardware.host_ram_gib or sku.host_ram_gib,
            extra=_fabric_extra(fabric),
        )


def _fabric_gbps(hardware: HardwareIn) -> float | None:
    return hardware.inter_node_gbps or FABRIC_GBPS.get(hardware.inter_node_fabric or "")


def _fabric_extra(fabric: str | None) -> dict[str, str]:
    return {"inter_node_fabric": fabric} if fabric else {}


# ---- output shapes -----------------------------------------------------------------------------


def model_out(model: ModelSpec) -> ModelOut:
    counts = count_params(model)
    return ModelOut(
        name=model.name,
        params=counts.total,
        active_params=counts.active,
        layers=model.layers,
        hidden=model.hidden,
        heads=model.heads,
        kv_heads=model.kv_heads,
        ffn=model.ffn,
        vocab=model.vocab,
        approximate=model.approximate,
    )


def memory_out(memory: MemoryEstimate) -> MemoryOut:
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
    return MemoryOut(
        per_gpu_gib={k: round(v / GIB, 2) for k, v in parts.items()},
        capacity_gib=round(b.capacity / GIB, 2),
        limit_gib=round(b.limit / GIB, 2) if b.limit is not None else None,
        fits=b.fits,
        host_ram_gib=round(b.host_ram / GIB, 1),
        host_ram_limit_gib=round(b.host_ram_limit / GIB, 1) if b.host_ram_limit is not None else None,
    )


def performance_out(estimate: PerformanceEstimate) -> PerformanceOut:
    p = estimate.performance
    return PerformanceOut(
        step_time_s=p.step_time_s,
        tokens_per_s=p.tokens_per_s,
        tokens_per_s_per_gpu=p.tokens_per_s_per_gpu,
        mfu=p.mfu,
        breakdown_s=dict(p.breakdown_s),
        time_to_train_hours=p.time_to_train_hours,
        gpu_hours=p.gpu_hours,
        prefill_tokens_per_s=p.prefill_tokens_per_s,
        decode_tokens_per_s=p.decode_tokens_per_s,
        time_per_output_token_ms=p.time_per_output_token_ms,
    )


def plan_out(plan: Plan, global_batch: int | None) -> PlanOut:
    return PlanOut(
        dp=plan.dp,
        tp=plan.tp,
        pp=plan.pp,
        cp=plan.cp,
        ep=plan.ep,
        zero_stage=plan.zero_stage,
        offload=plan.offload,
        recompute=plan.recompute,
        sequence_parallel=plan.sequence_parallel,
        flash_attention=plan.flash_attention,
        micro_batch=plan.micro_batch,
        global_batch=global_batch,
        virtual_stages=plan.virtual_stages,
        summary=describe_plan(plan),
    )


def warnings_out(warnings: list[Warning_]) -> list[WarningOut]:
    seen: dict[str, WarningOut] = {}
    for w in warnings:
        seen.setdefault(w.code, WarningOut(code=w.code, message=w.message))
    return list(seen.values())


# ---- estimate ----------------------------------------------------------------------------------


def estimate(request: EstimateIn, *, open_session: SessionOpener) -> EstimateOut:
    model, model_warnings = resolve_model(request.model)
    workload = request.workload()
    cluster = replace(resolve_cluster(request.hardware, open_session), memory_headroom=request.memory_headroom)
    micro_batch = request.micro_batch or 1
    if request.plan is None:
        workload, plan, memory, perf = _best_plan(model, workload, cluster, request.micro_batch)
    else:
        plan = request.plan.spec(micro_batch)
        workload = _with_global_batch(workload, request.plan.global_batch, plan)
        validate_plan(model, workload, plan, cluster)
        memory = estimate_memory(model, workload, plan, cluster)
        perf = estimate_performance(model, workload, plan, cluster)
    metrics.ESTIMATES.labels("estimate").inc()
    warnings = model_warnings + memory.warnings + perf.warnings
    return EstimateOut(
        model=model_out(model),
        plan=plan_out(plan, workload.global_batch),
        memory=memory_out(memory),
        performance=performance_out(perf),
        warnings=warnings_out(warnings),
        assumptions=list(dict.fromkeys(memory.assumptions + perf.assumptions)),
    )


def _with_global_batch(workload: Workload, plan_global: int | None, plan: Plan) -> Workload:
    if workload.task == "inference":
        return workload
    global_batch = plan_global or workload.global_batch or plan.dp * plan.micro_batch
    if global_batch % (plan.dp * plan.micro_batch):
        raise InvalidInput(
            f"global_batch {global_batch} must be a multiple of dp × micro_batch = {plan.dp * plan.micro_batch}"
        )
    return replace(workload, global_batch=global_batch)


def _best_plan(model: ModelSpec, workload: Workload, cluster: Cluster, micro_batch: int | None):  # noqa: ANN202
    hw = Hardware(
        gpu=cluster.gpu,
        gpus_per_node=cluster.gpus_per_node,
        nodes=cluster.nodes,
        intra_node_link=cluster.intra_node_link or cluster.gpu.intra_node_link,
        inter_node_fabric=cluster.extra.get("inter_node_fabric"),
        inter_node_gbps=cluster.inter_node_gbps,
        host_ram_gib=cluster.host_ram_gib,
        memory_headroom=cluster.memory_headroom,
    )
    started = time.perf_counter()
    search = search_plans(model, workload, hw, micro_batch=micro_batch)
    metrics.record_search(search.stats, time.perf_counter() - started)
    if search.best is None:
        raise InvalidInput(_no_plan_message(model, cluster, search.closest_miss))
    best = search.best
    if workload.task != "inference":
        workload = replace(workload, global_batch=default_global_batch(workload))
    return workload, best.plan, best.memory, best.performance


def _no_plan_message(model: ModelSpec, cluster: Cluster, closest: MemoryEstimate | None) -> str:
    where = f"{cluster.gpus} × {cluster.gpu.name}"
    if closest is None:
        return f"no parallel plan fits {model.name} on {where}"
    memory = closest.breakdown
    if memory.gpu_fits and not memory.host_fits and cluster.host_ram_gib is not None:
        detail = host_ram_message(memory, cluster.host_ram_gib)
    else:
        detail = gpu_memory_message(memory)
    return (
        f"{model.name} does not fit on {where} with any plan (ZeRO-3, recompute and offload included); "
        f"the leanest: {detail} Add GPUs or nodes."
    )


def scaling(request: ScalingIn) -> ScalingOut:
    """Data-parallel speed-up of a workload from 1 to 8 GPUs and over 2-16 nodes, per interconnect."""
    model, model_warnings = resolve_model(request.model)
    workload = request.workload()
    plan = request.plan.spec(request.micro_batch or 1) if request.plan else Plan(micro_batch=request.micro_batch or 1)
    validate_plan(model, workload, plan)
    rows = scaling_view(
        model,
        workload,
        get_gpu(request.gpu),
        plan,
        gpus_per_node=request.gpus_per_node,
        rdma_nics_per_node=request.rdma_nics_per_node,
    )
    metrics.ESTIMATES.labels("scaling").inc()
    return ScalingOut(
        model=model_out(model),
        gpu=request.gpu,
        base_plan=plan_out(plan, workload.global_batch),
        rows=[ScalingRowOut(**row) for row in rows],
    )


# ---- recommend ---------------------------------------------------------------------------------


def load_offers(session: Session) -> tuple[list[Offer], datetime | None]:
    """Active SKUs with a price in force, as the pure planner sees them, and when a scheduled price will
    change that (a snapshot builder: app.catalog.snapshot)."""
    offers = []
    now = datetime.now(UTC)
    availability = catalog_repository.availability_by_sku(session)
    skus = catalog_repository.list_skus(session)
    for sku in skus:
        pricing = sku_pricing(sku)
        if pricing is None:
            continue
        offers.append(
            Offer(
                sku_id=sku.slug,
                name=sku.name,
                gpu=get_gpu(sku.gpu_type.slug),
                regions=tuple(sku.regions),
                rental_unit=sku.rental_unit,
                gpus_per_node=sku.gpus_per_node,
                card_counts=tuple(sku.card_counts),
                intra_node_link=sku.intra_node_link,
                inter_node_fabric=sku.inter_node_fabric,
                host_ram_gib=sku.host_ram_gib,
                currency=pricing.currency,
                unit_monthly_list=pricing.monthly_list,
                discount_bp={term: tp.discount_bp for term, tp in pricing.terms.items()},
                indicative_price=sku.indicative_price,
                money_quantum=quantum(pricing.currency),
                availability=availability.get(sku.id),
            )
        )
    return offers, next_price_change(skus, after=now)


def constraints_of(request: RecommendIn) -> Constraints:
    c = request.constraints
    return Constraints(
        term=c.term,
        max_monthly_budget=c.max_monthly_budget,
        deadline_days=c.deadline_days,
        gpu_types=tuple(c.gpu_types),
        regions=tuple(c.regions),
        max_nodes=c.max_nodes,
        require_infiniband=c.require_infiniband,
        objective=c.objective,
        limit=c.limit,
        memory_headroom=c.memory_headroom,
    )


def recommend_workload(request: WorkloadIn) -> tuple[ModelSpec, Workload, list[Warning_]]:
    model, warnings = resolve_model(request.model)
    workload = request.workload()
    validate_plan(model, workload, Plan(micro_batch=request.micro_batch or 1))
    return model, workload, warnings


def run_recommend(session: Session, request: RecommendIn) -> RecommendOut:
    model, workload, model_warnings = recommend_workload(request)
    snapshot = catalog_snapshot(session)
    offers = snapshot.get("offers", load_offers)
    started = time.perf_counter()
    result = recommend(model, workload, offers, constraints_of(request), micro_batch=request.micro_batch)
    metrics.record_search(result.stats, time.perf_counter() - started, configurations=result.configurations)
    metrics.record_recommendation(len(result.options), len(result.near_misses))
    currency = offers[0].currency if offers else "CNY"
    book = snapshot.get(f"reference_book:{currency}", partial(build_book, currency=currency))
    return recommendation_out(model, result, model_warnings, book)


def reference_out(book: ReferenceBook, option: Option) -> list[ReferencePriceOut]:
    perf = option.evaluated.performance.performance
    return [
        ReferencePriceOut(
            provider=c.provider,
            region=c.region,
            instance_type=c.instance_type,
            gpu_variant=c.gpu_variant,
            usd_per_gpu_hour=str(c.usd_per_gpu_hour),
            gpu_hours=str(c.gpu_hours),
            basis=c.basis,
            total_usd=str(c.total_usd),
            total_converted=str(c.total_converted) if c.total_converted else None,
            converted_currency=c.converted_currency,
            data_date=c.data_date,
            confidence=c.confidence,
        )
        for c in book.compare(gpu_id=option.offer.gpu.id, gpus=option.config.gpus, gpu_hours=perf.gpu_hours)
    ]


def option_out(option: Option, global_batch: int, model_warnings: list[Warning_], book: ReferenceBook) -> OptionOut:
    best = option.evaluated
    cost = option.cost
    return OptionOut(
        rank=option.rank,
        sku=SkuRefOut(id=option.offer.sku_id, name=option.offer.name, gpu=option.offer.gpu.id, region=option.region),
        gpus_per_node=option.config.cards_per_node,
        nodes=option.config.nodes,
        total_gpus=option.config.gpus,
        plan=plan_out(best.plan, global_batch or None),
        memory=memory_out(best.memory),
        performance=performance_out(best.performance),
        cost=CostOut(
            currency=cost.currency,
            term=cost.term,
            units=cost.units,
            monthly_list=str(cost.monthly_list),
            monthly_effective=str(cost.monthly_effective),
            months=cost.months,
            job_total=str(cost.job_total) if cost.job_total is not None else None,
            annual_total=str(cost.annual_total),
            used_hours=cost.used_hours,
            billed_hours=cost.billed_hours,
            note=BILLING_NOTE,
        ),
        availability=option.availability,
        explanation=option.explanation,
        warnings=warnings_out(model_warnings + option.warnings),
        stack=option.stack,
        launch=option.launch,
        miss_reason=option.miss_reason,
        reference_prices=reference_out(book, option),
    )


def recommendation_out(
    model: ModelSpec, result: Recommendation, model_warnings: list[Warning_], book: ReferenceBook
) -> RecommendOut:
    assumptions: list[str] = []
    for option in result.options[:1] or result.near_misses[:1]:
        assumptions = list(
            dict.fromkeys(option.evaluated.memory.assumptions + option.evaluated.performance.assumptions)
        )
    return RecommendOut(
        model=model_out(model),
        options=[option_out(o, result.global_batch, model_warnings, book) for o in result.options],
        near_misses=[option_out(o, result.global_batch, model_warnings, book) for o in result.near_misses],
        rejected=[RejectedOut(sku=r.sku_id, code=r.code, reason=r.reason) for r in result.rejected],
        pareto=[
            ParetoPointOut(sku=o.offer.sku_id, total_gpus=o.config.gpus, cost=str(o.sort_cost), hours=o.hours)
            for o in result.pareto
        ],
        assumptions=assumptions,
        search={
            "configurations": result.configurations,
            "memory_evaluations": result.stats.memory_evaluations,
            "performance_evaluations": result.stats.performance_evaluations,
            "cached_configurations": result.stats.cached_configurations,
        },
    )
