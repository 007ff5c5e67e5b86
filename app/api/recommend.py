from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body

from app.api import examples
from app.deps import SessionDep, UnitOfWorkRoute
from app.planner import service
from app.planner.schemas import RecommendIn, RecommendOut

router = APIRouter(tags=["recommend"], route_class=UnitOfWorkRoute)
PROBLEM: dict[str, Any] = {"content": {"application/problem+json": {}}}


@router.post(
    "/recommend",
    summary="Rank rentable configurations (SKU × cards/nodes × parallel plan) by cost and time",
    responses={422: {"description": "Invalid input", **PROBLEM}, 503: {"description": "Database down", **PROBLEM}},
)
def recommend(
    body: Annotated[RecommendIn, Body(openapi_examples=examples.RECOMMEND)], session: SessionDep
) -> RecommendOut:
    return service.run_recommend(session, body)
