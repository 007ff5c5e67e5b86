from __future__ import annotations

from fastapi import APIRouter

from app.catalog import service
from app.catalog.schemas import GpuOut, SkuOut
from app.delivery.deps import SessionDep, UnitOfWorkRoute

router = APIRouter(prefix="/catalog", tags=["catalog"], route_class=UnitOfWorkRoute)


@router.get("/skus", summary="Active server SKUs with list and per-term prices")
def list_skus(session: SessionDep) -> list[SkuOut]:
    return service.public_skus(session)


@router.get("/gpus", summary="GPU types and their cited hardware facts")
def list_gpus(session: SessionDep) -> list[GpuOut]:
    return service.gpu_catalog(session)
