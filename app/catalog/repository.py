"""Catalog queries. The only place that writes SQL for the catalog."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.catalog.models import GpuType, Sku, SkuAddon, SkuAvailability, SkuPrice, TermDiscount


def list_gpu_types(session: Session) -> list[GpuType]:
    return list(session.scalars(select(GpuType).order_by(GpuType.slug)))


def get_gpu_type_by_slug(session: Session, slug: str) -> GpuType | None:
    return session.scalar(select(GpuType).where(GpuType.slug == slug))


def list_skus(session: Session, *, include_retired: bool = False) -> list[Sku]:
    query = select(Sku).order_by(Sku.id)
    if not include_retired:
        query = query.where(Sku.status == "active")
    return list(session.scalars(query))


def get_sku_by_slug(session: Session, slug: str) -> Sku | None:
    return session.scalar(select(Sku).where(Sku.slug == slug))


def get_sku(session: Session, pk: int) -> Sku | None:
    return session.get(Sku, pk)


def add(session: Session, row: GpuType | Sku | SkuPrice | TermDiscount) -> None:
    session.add(row)
    session.flush()


def availability_by_sku(session: Session) -> dict[int, dict[str, int]]:
    """Units free per region for each SKU that tracks availability (SKUs without rows are absent)."""
    out: dict[int, dict[str, int]] = {}
    for row in session.scalars(select(SkuAvailability)):
        out.setdefault(row.sku_pk, {})[row.region] = row.units_available
    return out


def active_addons_by_sku(session: Session) -> dict[int, list[SkuAddon]]:
    """Each SKU's active add-ons, by code (SKUs without any are absent)."""
    out: dict[int, list[SkuAddon]] = {}
    query = select(SkuAddon).where(SkuAddon.status == "active").order_by(SkuAddon.sku_pk, SkuAddon.code)
    for row in session.scalars(query):
        out.setdefault(row.sku_pk, []).append(row)
    return out


def addons_for_sku(session: Session, sku_pk: int) -> list[SkuAddon]:
    return list(session.scalars(select(SkuAddon).where(SkuAddon.sku_pk == sku_pk).order_by(SkuAddon.code)))


def get_addon(session: Session, sku_pk: int, code: str) -> SkuAddon | None:
    return session.scalar(select(SkuAddon).where(SkuAddon.sku_pk == sku_pk, SkuAddon.code == code))
