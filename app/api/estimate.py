from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Request

from app.api import examples
from app.api.responses import HUB, PROBLEM
from app.delivery.deps import SessionDep, SettingsDep, UnitOfWorkRoute
from app.hub.service import with_hub_config
from app.planner import service
from app.planner.schemas import EstimateIn, EstimateOut, ScalingIn, ScalingOut

router = APIRouter(tags=["estimate"], route_class=UnitOfWorkRoute)


@router.post(
    "/estimate",
    summary="Per-GPU memory, fit, speed and time to train of a workload on given hardware",
    responses={
        422: {"description": "Invalid input; an unknown `hardware.sku` is one, on that field", **PROBLEM},
        **HUB,
    },
)
def estimate(
    body: Annotated[EstimateIn, Body(openapi_examples=examples.ESTIMATE)],
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
) -> EstimateOut:
    body = with_hub_config(session, body, settings=settings)
    return service.estimate(body, open_session=request.app.state.sessionmaker)


@router.post(
    "/estimate/scaling",
    summary="Speed-up and efficiency from 1 to 8 GPUs and across 2-16 nodes, for each interconnect",
    responses={422: {"description": "Invalid input", **PROBLEM}, **HUB},
)
def estimate_scaling(
    body: Annotated[ScalingIn, Body(openapi_examples=examples.SCALING)], session: SessionDep, settings: SettingsDep
) -> ScalingOut:
    return service.scaling(with_hub_config(session, body, settings=settings))


@router.get("/models", summary="Shipped model presets with their sizes and sources")
def models() -> list[dict[str, Any]]:
    return service.model_presets()
