"""Estimate and recommend as services: each reads request → resolved workload (app.planner.workload)
→ market (app.planner.market, /recommend only) → the pure estimator or search (app.planner.recommend)
→ response (app.planner.mappers).
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any, get_args

from sqlalchemy.orm import Session

from app.capacity import service as capacity_service
from app.catalog import repository as catalog_repository
from app.common.errors import InvalidInput
from app.common.schemas import mirror
from app.estimator.checkpoints import checkpoint_from_config
from app.estimator.hardware import get_gpu
from app.estimator.memory import (
    MemoryEstimate,
    estimate_memory,
    host_load_params,
    host_ram_figures,
    validate_plan,
)
from app.estimator.notes import note
from app.estimator.performance import PerformanceEstimate, estimate_performance, micro_batches
from app.estimator.presets import list_presets, preset_config
from app.estimator.scaling import scaling_view
from app.estimator.specs import GIB, Cluster, EstimatorError, MemoryBreakdown, ModelSpec, Plan, Warning_, Workload
from app.planner import explain, mappers, metrics, serving_service
from app.planner.launch_checkpoint import with_conversion
from app.planner.levers import Levers, fused_relief, levers_params
from app.planner.market import Market, load_market
from app.planner.offers import Constraints, ExclusionCode
from app.planner.option import Recommendation
from app.planner.padded_band import may_exceed_advice, padded_band, pool_warning
from app.planner.recommend import recommend
from app.planner.schemas import (
    EstimateIn,
    EstimateOut,
    RecommendIn,
    RecommendOut,
    ScalingIn,
    ScalingOut,
    WorkloadIn,
)
from app.planner.search import batch_splits, default_global_batch, held_memory, search_plans, stated_plan
from app.planner.stacks import (
    as_launched,
    as_padded,
    check_expert_tp,
    no_stack_warning,
    precision_run_as,
    supported,
)
from app.planner.workload import (
    SessionOpener,
    as_rented,
    checkpoint_warnings,
    resolve_cluster,
    resolve_model,
    resolve_workload,
    shipped_checkpoint,
    with_global_batch,
    with_pretrain_batch,
    within_context,
)
from app.text import messages


def estimate(request: EstimateIn, *, open_session: SessionOpener) -> EstimateOut:
    model, model_warnings = resolve_model(request.model)
    cluster, notes = resolve_cluster(request.hardware, open_session)
    if request.task == "serving":
        metrics.ESTIMATES.labels("estimate").inc()
        return serving_service.estimate(request, model, mappers.model_out(model), model_warnings, (cluster, notes))
    model_warnings = model_warnings + checkpoint_warnings(request.model, model)
    requested = with_pretrain_batch(model, within_context(request))
    model_warnings = model_warnings + explain.task_warnings(model, requested)
    cluster = replace(cluster, memory_headroom=request.memory_headroom)
    workload = as_launched(requested, cluster.gpu, model)  # fp8 only where a stack's launch runs it
    if workload is not requested:
        run_as = precision_run_as(requested, workload, cluster.gpu)
        if request.plan is not None and request.plan.fp8_params:
            # validate_plan would name the 16-bit run-as precision as if the request had asked for it
            code = "fp8_params_gpu" if "gpu" in run_as.params else "fp8_params_stack"
            raise EstimatorError.of(code, field="plan.fp8_params", **run_as.params)
        model_warnings = [*model_warnings, run_as]
    micro_batch = request.micro_batch or 1
    if request.plan is None:
        workload, plan, memory, perf = _best_plan(model, workload, cluster, request.micro_batch)
        notes += [FUSED_LOSS_NOTE] if plan.fused_loss else []
    else:
        plan = request.plan.spec(micro_batch)
        if request.plan.sequence_parallel is None and plan.tp > 1:
            notes.append(SEQUENCE_PARALLEL_NOTE)
        workload, batch_warnings = with_global_batch(workload, request.plan.global_batch, plan)
        model_warnings = model_warnings + batch_warnings
        # review R10-3: a plan that leaves fp8_params unstated is held as /recommend holds it (fp8_params_unstated)
        unstated = "fp8_params" not in request.plan.model_fields_set
        plan, memory = stated_plan(model, workload, plan, cluster, fp8_weights=unstated)
        check_expert_tp(workload, plan, model)  # after the plan's own rules (memory.rules `_expert_tp`)
        no_stack = no_stack_warning(workload, plan, model)
        model_warnings = model_warnings + ([no_stack] if no_stack else [])
        perf = estimate_performance(model, workload, plan, cluster)
    padded = as_padded(workload, plan, model)  # varied_lengths as the plan's stack feeds its data
    if padded.varied_lengths and not workload.varied_lengths:
        workload, memory = padded, estimate_memory(model, padded, plan, cluster)  # the gate does not move
    if request.plan is not None and not memory.breakdown.gpu_fits:
        memory = _fused_fit_advice(model, workload, plan, cluster, memory)
    metrics.ESTIMATES.labels("estimate").inc()
    band = padded_band(model, workload, plan, cluster, memory.breakdown)
    exceed = may_exceed_advice(model, workload, plan, band, memory.breakdown)
    pool = pool_warning(band, memory.breakdown)
    warnings = model_warnings + memory.warnings + perf.warnings + ([exceed] if exceed else [])
    warnings += [pool] if pool else []
    warnings += explain.batch_warnings(model, workload, plan, as_rented(cluster), perf.performance)
    slowdown = explain.offload_warning(plan, perf.performance) if plan.activation_offload else None
    warnings += [slowdown] if slowdown else []  # the states' offload has offload_over_pcie already (memory advice)
    return mappers.estimate_out(model, workload, plan, memory, perf, warnings, notes, band)


SEQUENCE_PARALLEL_NOTE = note("sequence_parallel_on")
# The GPU no-fit warnings of a stated plan (app/estimator/memory/advice.py `_fit_warnings`)
NO_FIT_CODES = ("no_fit", "no_fit_zero3")


def _fused_fit_advice(
    model: ModelSpec, workload: Workload, plan: Plan, cluster: Cluster, memory: MemoryEstimate
) -> MemoryEstimate:
    """`memory` with its GPU no-fit warning carrying `fused_gib` where the fused loss alone makes the stated plan fit
    (levers.fused_relief: the standard loss, a family Liger fuses, not the megatron stack; a stack runs it): the
    lever the automatic plan takes first (`_best_plan`), named before more GPUs or a larger card. Review R6-5: Llama
    3.1 8B LoRA at 8,192 tokens on one RTX 4090 read 31.7 GiB with the standard loss (its fp32 logits, 8,192 x
    128,256 x 4 bytes a copy) and the advice was "about 3 GPUs", where plan.loss fused holds 19.8 GiB on the one."""
    fused = fused_relief(model.family, plan)
    if fused is None or not supported(workload, fused, model):
        return memory
    _held, relieved = stated_plan(model, workload, fused, cluster)
    if not relieved.breakdown.fits:
        return memory
    fused_gib = round(relieved.breakdown.total / GIB, 2)
    warnings = [
        replace(w, params={**w.params, "fused_gib": fused_gib}) if w.code in NO_FIT_CODES else w
        for w in memory.warnings
    ]
    return replace(memory, warnings=warnings)


FUSED_LOSS = Levers(loss="fused")
FUSED_LOSS_NOTE = note("fused_loss_to_fit")


def _best_plan(
    model: ModelSpec, workload: Workload, cluster: Cluster, micro_batch: int | None
) -> tuple[Workload, Plan, MemoryEstimate, PerformanceEstimate]:
    started = time.perf_counter()
    search = search_plans(model, workload, as_rented(cluster), micro_batch=micro_batch)
    closest = search.closest_miss
    fused_tried = search.best is None and fused_relief(model.family, Plan()) is not None
    if fused_tried:
        # no plan holds the standard loss's logits: the fused loss (Liger; Megatron's fused cross-entropy keeps them,
        # levers.fused_relief) is a lever of the same stacks, which /recommend's memory relief takes too (review R7:
        # Llama 3.1 8B LoRA at 32k on one H100 was "does not fit with any plan" at 79.5 GiB, 31.7 GiB with it); the
        # estimate's note says so
        fused = search_plans(model, workload, as_rented(cluster), micro_batch=micro_batch, levers=FUSED_LOSS)
        search = fused if fused.best is not None else search
        closest = _leaner(closest, fused.closest_miss)
    metrics.record_search(search.stats, time.perf_counter() - started)
    if search.best is None:
        if not batch_splits(model, workload, cluster, micro_batch):
            field, code, params = _batch_split(workload, cluster, micro_batch)
            message = messages.batch_split(code, params)
            raise InvalidInput(message, errors=[{"field": field, "message": message, "type": code, "params": params}])
        raise _no_plan_error(model, workload, cluster, closest, fused_tried=fused_tried)
    best = search.best
    if workload.task != "inference":
        workload = replace(workload, global_batch=default_global_batch(workload))
    return workload, best.plan, best.memory, best.performance


def _batch_split(workload: Workload, cluster: Cluster, micro_batch: int | None) -> tuple[str, str, dict[str, Any]]:
    """(field, code, params) of a global batch no plan splits: the micro-batch's fault where it does not divide the
    global batch (no data-parallel degree can help), else the GPU count's."""
    global_batch = default_global_batch(workload)
    if micro_batch is not None and global_batch % micro_batch:
        fits = max(d for d in range(1, min(micro_batch, global_batch) + 1) if global_batch % d == 0)
        return (
            "micro_batch",
            "micro_batch_split",
            {"micro_batch": micro_batch, "global_batch": global_batch, "fits": fits},
        )
    gpus = cluster.gpus
    multiple = -(-global_batch // gpus) * gpus
    params = {"global_batch": global_batch, "gpus": gpus, "gpu": cluster.gpu.name, "multiple": multiple}
    return "global_batch", "gpus_batch_split", params


def _leaner(one: MemoryEstimate | None, other: MemoryEstimate | None) -> MemoryEstimate | None:
    """The closest miss of two searches (the standard loss's and the fused loss's): the one needing less per GPU."""
    if one is None or other is None:
        return one or other
    return other if other.breakdown.total < one.breakdown.total else one


def _no_plan_error(
    model: ModelSpec, workload: Workload, cluster: Cluster, closest: MemoryEstimate | None, *, fused_tried: bool
) -> EstimatorError:
    """`no_plan_fits` on `hardware`: what the search tried, and what would fit by the leanest plan's figures
    (app/estimator/error_words.py NO_PLAN_PARTS), never "add GPUs" where more of them would not help."""
    figures: dict[str, Any] = {
        "model": model.name,
        "gpus": cluster.gpus,
        "gpu": cluster.gpu.name,
        "offload_tried": cluster.host_ram_gib is not None,
        "fused_tried": fused_tried,
    }
    if closest is None:
        return EstimatorError.of("no_plan_fits", field="hardware", would_fit="no_plan", **figures)
    memory = closest.breakdown
    if memory.gpu_fits and not memory.host_fits:
        figures |= _host_short(memory, cluster.host_ram_gib)
    else:
        figures |= _gpu_short(closest, workload.seq_len)
    return EstimatorError.of("no_plan_fits", field="hardware", **figures)


def _host_short(memory: MemoryBreakdown, host_ram_gib: float | None) -> dict[str, Any]:
    """The leanest plan fits the GPUs, not the host: its offload, or the whole-model copies its load holds."""
    known = "host_ram" if host_ram_gib is not None else "host_ram_unknown"
    figures = host_ram_figures(memory, host_ram_gib) if host_ram_gib is not None else {}
    if memory.load_binds:
        return figures | host_load_params(memory) | {"would_fit": f"{known}_load"}
    return figures | {"host_gib": memory.host_ram / GIB, "would_fit": known}


def _gpu_short(closest: MemoryEstimate, seq_len: int) -> dict[str, Any]:
    """The leanest plan over the card's memory, and what would fit by its `no_fit_zero3` (app/estimator/memory
    advice: more GPUs of the type and the larger cards that hold ZeRO-3's states, or activations over the card)."""
    memory = closest.breakdown
    limit = memory.capacity if memory.limit is None else memory.limit
    figures: dict[str, Any] = {"needed_gib": memory.total / GIB, "limit_gib": limit / GIB}
    advice = next((w.params for w in closest.warnings if w.code == "no_fit_zero3"), {})
    if advice.get("activations_exceed"):
        held = (memory.activations + memory.kv_cache + memory.other) / GIB
        return figures | {"would_fit": "activations", "activations_gib": held, "seq_len": seq_len}
    if "fit_gpus" in advice:
        cards = list(advice.get("cards") or [])
        return (
            figures
            | {"fit_gpus": advice["fit_gpus"], "cards": cards}
            | {"would_fit": "more_gpus_cards" if cards else "more_gpus"}
        )
    return figures | {"would_fit": "gpu_memory"}


def scaling(request: ScalingIn) -> ScalingOut:
    """Data-parallel speed-up of a workload from 1 to 8 GPUs and over 2-16 nodes, per interconnect."""
    model, _warnings = resolve_model(request.model)
    workload = within_context(request)
    plan = request.plan.spec(request.micro_batch or 1) if request.plan else Plan(micro_batch=request.micro_batch or 1)
    validate_plan(model, workload, plan)
    try:
        gpu = get_gpu(request.gpu)
    except EstimatorError as error:  # the field as sent: this request's top-level `gpu` (review R5-13)
        error.field = "gpu"
        raise
    rows = scaling_view(
        model,
        workload,
        gpu,
        plan,
        gpus_per_node=request.gpus_per_node,
        rdma_nics_per_node=request.rdma_nics_per_node,
        gate=held_memory,  # POST /estimate's gate: the plan as the stack that runs it holds it
    )
    metrics.ESTIMATES.labels("scaling").inc()
    warnings = _scaling_warnings(rows, request.gpu) + _superlinear(rows, workload, plan)
    return mappers.scaling_out(model, request.gpu, plan, workload, rows, warnings)


def _superlinear(rows: list[dict[str, Any]], workload: Workload, plan: Plan) -> list[Warning_]:
    """`scaling_superlinear`: a point that fits reads an efficiency above 1 (to two decimals) against the baseline,
    with why: each replica keeps its micro-batches (weak scaling) while ZeRO shards the optimizer step over the
    data-parallel ranks (app/estimator/scaling.py `scaling_view`)."""
    fitting = [row for row in rows if row["fits"]]
    best = max(fitting, key=lambda row: row["efficiency"], default=None)
    if best is None or round(best["efficiency"], 2) <= 1.0:
        return []
    base = next(row for row in rows if row["baseline"])
    params = {
        "efficiency": best["efficiency"],
        "gpus": best["gpus"],
        "link": best["link"],
        "baseline_gpus": base["gpus"],
        "zero_stage": plan.zero_stage,
        "micro_batches": micro_batches(workload, plan),
    }
    return [Warning_("scaling_superlinear", params)]


def _scaling_warnings(rows: list[dict[str, Any]], gpu: str) -> list[Warning_]:
    """Where one replica's plan does not fit some points of the scaling table: from how many GPUs it fits
    (`scaling_rows_unfit`), or that it fits none (`scaling_none_fits`, with the leanest point's figures)."""
    unfit = [row for row in rows if not row["fits"]]
    if not unfit:
        return []
    first = rows[0]
    params = {
        "gpu": get_gpu(gpu).name,
        "unit_gpus": first["gpus"],
        "needed_gib": first["per_gpu_gib"],
        "limit_gib": first["limit_gib"],
        "unfit": len(unfit),
    }
    fitting = [row["gpus"] for row in rows if row["fits"]]
    if fitting:
        return [Warning_("scaling_rows_unfit", params | {"fit_gpus": min(fitting)})]
    leanest = min(rows, key=lambda row: (row["per_gpu_gib"], row["gpus"]))
    return [
        Warning_("scaling_none_fits", params | {"least_gib": leanest["per_gpu_gib"], "least_gpus": leanest["gpus"]})
    ]


def run_recommend(session: Session, request: RecommendIn) -> RecommendOut:
    check_gpu_types(session, request.constraints.gpu_types)
    check_regions(session, request.constraints.regions)
    start = capacity_service.start_of(session, request.constraints.start_date, field="constraints.start_date")
    constraints = replace(constraints_of(request), start_date=start)
    if request.task == "serving":
        if request.plan is not None:
            raise EstimatorError.of("serving_training_levers", field="plan")
        model, model_warnings = resolve_model(request.model)
        market = load_market(session, request.constraints.currency, start=start)
        check_currency(request.constraints.currency, market)
        summary = mappers.model_out(model)
        return serving_service.recommendation(
            model, request, market.offers, constraints, summary, model_warnings, currency=market.currency
        )
    model, workload, model_warnings = resolve_workload(request)
    market = load_market(session, request.constraints.currency, start=start)
    check_currency(request.constraints.currency, market)
    started = time.perf_counter()
    levers = recommend_levers(request, workload)
    result = recommend(
        model,
        workload,
        market.offers,
        constraints,
        micro_batch=request.micro_batch,
        levers=levers,
        fp8_weights=fp8_params_unstated(request),
    )
    check_levers_run(result, levers)
    metrics.record_search(result.stats, time.perf_counter() - started, configurations=result.configurations)
    metrics.record_recommendation(len(result.options), len(result.near_misses))
    shipped = shipped_checkpoint(request.model)  # a quantised checkpoint: the launch converts it first
    for option in [*result.options, *result.near_misses]:
        option.launch = with_conversion(option.launch, model, shipped)
    workload_body = request.model_dump(mode="json", include=set(WorkloadIn.model_fields), exclude_none=True)
    return mappers.recommendation_out(
        model, workload, result, model_warnings, market.references, workload_body, currency=market.currency
    )


def recommend_levers(request: RecommendIn, workload: Workload) -> Levers | None:
    """The request's memory levers for every plan of the search; FP8 weights only where the run is in FP8."""
    if request.plan is None:
        return None
    if request.plan.fp8_params and workload.precision != "fp8":
        raise EstimatorError.of("fp8_params_precision", field="plan.fp8_params")
    if request.plan.loss == "chunked":
        raise EstimatorError.of("loss_chunked", field="plan.loss")
    return request.plan.levers()


def fp8_params_unstated(request: RecommendIn) -> bool:
    """Whether the request leaves plan.fp8_params to the planner (no plan, or a plan that does not name it): the
    megatron stack may then hold an FP8 pretraining run with FP8 weights and launch it so (stacks.as_run); a stated
    false keeps 16-bit weights everywhere."""
    return request.plan is None or "fp8_params" not in request.plan.model_fields_set


# Rejections that a constraint decides before any search: they say nothing of whether the levers run
_EXCLUSIONS: frozenset[str] = frozenset(get_args(ExclusionCode))


def check_levers_run(result: Recommendation, levers: Levers | None) -> None:
    """A 422 on `plan` when no SKU searched runs the levers together (every SKU searched rejected as
    `levers_unsupported`, none for host RAM it does not list), naming them and the stacks that run each, rather than
    an empty recommendation."""
    if levers is None or result.options or result.near_misses:
        return
    codes = {r.code if "host_ram_unknown" not in r.params else "levers_host_ram" for r in result.rejected}
    if "levers_unsupported" not in codes or not codes <= _EXCLUSIONS | {"levers_unsupported"}:
        return  # some SKU runs them, or would with its host RAM listed (activation offload)
    params = levers_params(levers)
    raise EstimatorError.of("levers_together", field="plan", levers=params["levers"], runs=params["runs"])


def check_gpu_types(session: Session, requested: list[str]) -> None:
    """A 422 naming the GPU types the catalog does not know, and those it does: a misspelt id would reject every
    SKU and answer an empty recommendation."""
    if not requested:
        return
    allowed = [gpu.slug for gpu in catalog_repository.list_gpu_types(session)]
    _reject_unknown("gpu_types", "unknown_gpu_type", requested, allowed)


def check_currency(requested: str | None, market: Market) -> None:
    """A 422 naming the currency asked when no listed price converts into it (no exchange rate is set), and those
    prices compare in (review R12: "XXX" answered an empty recommendation, every SKU rejected with an operator's
    command)."""
    if requested is None or not market.offers or any(not offer.unconvertible for offer in market.offers):
        return
    _reject_unknown("currency", "unknown_currency", [requested], list(market.comparable()))


def check_regions(session: Session, requested: list[str]) -> None:
    """A 422 naming the regions no listed SKU is offered in, and those they are: a misspelt region would reject
    every SKU and answer an empty recommendation."""
    if not requested:
        return
    allowed = sorted({region for sku in catalog_repository.list_skus(session) for region in sku.regions})
    _reject_unknown("regions", "unknown_region", requested, allowed)


def _reject_unknown(field: str, error_type: str, requested: list[str], allowed: list[str]) -> None:
    """A 422 on `constraints.<field>` naming the requested values not in `allowed`, and those that are (none
    unknown: nothing), worded by its code (app/text/messages.py UNKNOWN)."""
    unknown = [value for value in requested if value not in allowed]
    if not unknown:
        return
    params = {"unknown": unknown, "allowed": allowed}
    message = messages.unknown(error_type, params)
    error = {"field": f"constraints.{field}", "message": message, "type": error_type, "params": params}
    raise InvalidInput(f"constraints.{field}: {message}", errors=[error])


def constraints_of(request: RecommendIn) -> Constraints:
    """The search's constraints: the request's, field for field (its lists as tuples)."""
    c = request.constraints
    return mirror(Constraints, c, gpu_types=tuple(c.gpu_types), regions=tuple(c.regions))


def _checkpoint(preset_id: str) -> dict[str, Any]:
    """The weights the preset's repository ships: a quantised checkpoint's format (what serving sizes by default)."""
    found = checkpoint_from_config(preset_config(preset_id))
    return {"quant_method": found.method, "weights": found.weights, "scheme": found.scheme or None}


def model_presets() -> list[dict[str, Any]]:
    """The shipped model presets with their sizes and sources (GET /models, the MCP tool list_models)."""
    return [
        {
            "id": p.id,
            "name": p.name,
            "kind": p.kind,
            "params": p.published_params,
            "hf_repo": p.hf_repo,
            "source": p.source,
            "layers": p.model.layers,
            "hidden": p.model.hidden,
            "heads": p.model.heads,
            "kv_heads": p.model.kv_heads,
            "vocab": p.model.vocab,
            "variants": dict(p.variants),
            "checkpoint": _checkpoint(p.id),
        }
        for p in list_presets()
    ]
