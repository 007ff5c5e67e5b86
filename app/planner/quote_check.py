"""A quote's plan against what it rents: the GPUs the quantity rents must be the GPUs the plan runs
on, and the plan must pass the feasibility gate on that SKU (GPU memory within the headroom, host
RAM within the reserve). Runs before a new quote is priced (app.quotes.service.create_quote's
`check_plan`); a plan without parallel degrees, or a quote without a workload, has nothing to check.
"""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import replace
from typing import TYPE_CHECKING, cast

from sqlalchemy.orm import Session

from app.catalog import repository as catalog_repository
from app.errors import InvalidInput
from app.estimator.memory import estimate_memory, gpu_memory_message, host_ram_message, validate_plan
from app.estimator.serving import check_fits
from app.estimator.specs import EstimatorError
from app.planner.schemas import HardwareIn, PlanIn, WorkloadIn
from app.planner.search import as_held
from app.planner.serving import check_serving_plan
from app.planner.serving_service import check_training_levers, serving_config
from app.planner.workload import SessionOpener, resolve_cluster, resolve_model

if TYPE_CHECKING:
    from app.quotes.schemas import QuoteCreate

DEGREES = ("dp", "tp", "pp", "cp")


def _invalid(field: str, message: str) -> InvalidInput:
    return InvalidInput(f"{field}: {message}", errors=[{"field": field, "message": message, "type": "value_error"}])


def check_quote(session: Session, data: QuoteCreate) -> None:
    """Raise a 422 naming both numbers when the quantity disagrees with the plan, or the plan does not
    fit the SKU. An unknown SKU is left to the quote service (its own 422)."""
    check_plan(session, sku_id=data.sku_id, quantity=data.quantity, plan=data.plan, workload=data.workload)


def check_plan(
    session: Session, *, sku_id: str, quantity: int, plan: PlanIn | None, workload: WorkloadIn | None
) -> None:
    if plan is None or not set(DEGREES) & plan.model_fields_set:
        return  # no parallel degrees stated: nothing to check the quantity against
    sku = catalog_repository.get_sku_by_slug(session, sku_id)
    if sku is None:
        return
    gpus = plan.dp * plan.tp * plan.pp * plan.cp
    by_card = sku.rental_unit == "card"
    rented = quantity if by_card else quantity * sku.gpus_per_node
    if rented != gpus:
        unit = "cards" if by_card else f"servers of {sku.gpus_per_node} GPUs"
        needed = gpus if by_card else f"{gpus / sku.gpus_per_node:g}"
        raise _invalid(
            "quantity",
            f"quantity {quantity} rents {rented} GPUs ({quantity} {unit}) but the plan runs on "
            f"dp × tp × pp × cp = {gpus} GPUs; quote quantity {needed}",
        )
    if workload is not None:
        check = _check_serving_fits if workload.task == "serving" else _check_fits
        check(session, sku.slug, quantity, by_card, plan, workload)


def _check_serving_fits(
    session: Session, sku_id: str, quantity: int, by_card: bool, plan: PlanIn, request: WorkloadIn
) -> None:
    """A serving plan: dp replicas of tp × pp, each must have kernels for its formats and hold one sequence
    (the same feasibility /estimate and /recommend apply)."""
    hardware = HardwareIn(sku=sku_id, nodes=1 if by_card else quantity, gpus_per_node=quantity if by_card else None)
    cluster, _assumed = resolve_cluster(hardware, cast("SessionOpener", lambda: nullcontext(session)))
    try:
        model, _warnings = resolve_model(request.model)
    except EstimatorError:
        return  # a model the estimator cannot size is kept for the record, unchecked
    try:
        cfg = serving_config(request)
        check_training_levers(plan)
        check_serving_plan(model, plan.tp, plan.pp)
        check_fits(model, cfg, cluster.gpu, plan.tp, plan.pp)
    except EstimatorError as error:
        field = error.field if error.field and not error.field.startswith("plan") else "plan"
        raise _invalid(field, f"does not fit {sku_id}: {error}") from error


def _check_fits(session: Session, sku_id: str, quantity: int, by_card: bool, plan: PlanIn, request: WorkloadIn) -> None:
    hardware = HardwareIn(sku=sku_id, nodes=1 if by_card else quantity, gpus_per_node=quantity if by_card else None)
    # the quote's own session, left open: resolve_cluster closes what the opener gives it
    cluster, _assumed = resolve_cluster(hardware, cast("SessionOpener", lambda: nullcontext(session)))
    try:
        model, _warnings = resolve_model(request.model)
    except EstimatorError:
        return  # a model the estimator cannot size (an incomplete pasted config) is kept for the record, unchecked
    spec = plan.spec(request.micro_batch or 1)
    work = request.workload()
    if work.task != "inference":
        work = replace(work, global_batch=plan.global_batch or work.global_batch or spec.dp * spec.micro_batch)
    try:
        validate_plan(model, work, spec, cluster)
        memory = estimate_memory(model, work, as_held(model, work, spec, cluster), cluster).breakdown
    except EstimatorError as error:
        raise _invalid("plan", str(error)) from error
    if not memory.gpu_fits:
        raise _invalid("plan", f"does not fit {sku_id}: {gpu_memory_message(memory)}")
    if not memory.host_fits and cluster.host_ram_gib is not None:
        raise _invalid("plan", f"does not fit {sku_id}: {host_ram_message(memory, cluster.host_ram_gib)}")
