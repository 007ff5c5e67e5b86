from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Depends

from app.api import examples
from app.api.responses import HUB, KEY_RESPONSES, PROBLEM
from app.apikeys.service import Principal
from app.delivery.deps import SessionDep, SettingsDep, UnitOfWorkRoute, optional_scope
from app.hub.service import with_hub_config
from app.planner import service
from app.planner.schemas import RecommendIn, RecommendOut

router = APIRouter(tags=["recommend"], route_class=UnitOfWorkRoute)


@router.post(
    "/recommend",
    summary="Rank rentable configurations (SKU × cards/nodes × parallel plan) by cost and time",
    responses={
        422: {"description": "Invalid input", **PROBLEM},
        503: {"description": "The database or the Hugging Face Hub is down", **PROBLEM},
        **HUB,
        **KEY_RESPONSES,
    },
)
def recommend(
    body: Annotated[RecommendIn, Body(openapi_examples=examples.RECOMMEND)],
    session: SessionDep,
    settings: SettingsDep,
    _key: Annotated[Principal | None, Depends(optional_scope("recommend"))],
) -> RecommendOut:
    return service.run_recommend(session, with_hub_config(session, body, settings=settings))
