"""Idempotent seeding of the catalog: inserts what is missing, never touches what exists.

An admin's later price (a new SkuPrice row) or discount change is therefore never overwritten,
and running the seed twice changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.orm import Session

from app.catalog import repository
from app.catalog.models import GpuType, Sku, SkuAddon, SkuPrice, TermDiscount
from app.catalog.seed_data import ADDONS, GPU_TYPES, SEED_CURRENCY, SKUS
from app.common.money import to_minor


@dataclass
class SeedReport:
    created: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        return "seed: nothing to do" if not self.created else "seed: created " + ", ".join(self.created)


def seed_catalog(session: Session) -> SeedReport:
    report = SeedReport()
    for spec in GPU_TYPES:
        if repository.get_gpu_type_by_slug(session, spec["slug"]) is None:
            repository.add(session, GpuType(slug=spec["slug"], name=spec["name"]))
            report.created.append(f"gpu type {spec['slug']}")
    for spec in SKUS:
        sku = repository.get_sku_by_slug(session, spec["slug"])
        if sku is None:
            sku = _create_sku(session, spec)
            report.created.append(f"sku {spec['slug']}")
        _seed_missing_prices(session, sku, spec, report)
    _seed_missing_addons(session, report)
    return report


def _seed_missing_addons(session: Session, report: SeedReport) -> None:
    for spec in ADDONS:
        sku = repository.get_sku_by_slug(session, spec["sku"])
        if sku is None or repository.get_addon(session, sku.id, spec["code"]) is not None:
            continue
        amount = None if spec["price"] is None else to_minor(spec["price"], SEED_CURRENCY)
        session.add(
            SkuAddon(
                sku_pk=sku.id,
                code=spec["code"],
                name=spec["name"],
                amount_minor=amount,
                currency=SEED_CURRENCY,
                per_unit=spec["per_unit"],
                status="active",
                ports_per_server=spec.get("ports_per_server"),
                port_gbps=spec.get("port_gbps"),
                bandwidth_source=spec.get("bandwidth_source", ""),
            )
        )
        session.flush()
        report.created.append(f"add-on {spec['code']} {spec['sku']}")


def _create_sku(session: Session, spec: dict[str, Any]) -> Sku:
    gpu_type = repository.get_gpu_type_by_slug(session, spec["gpu"])
    assert gpu_type is not None  # seed_catalog creates the GPU types first
    fields = {k: v for k, v in spec.items() if k not in ("gpu", "price", "discounts_bp")}
    sku = Sku(gpu_type_id=gpu_type.id, status="active", **fields)
    repository.add(session, sku)
    return sku


def _seed_missing_prices(session: Session, sku: Sku, spec: dict[str, Any], report: SeedReport) -> None:
    if not sku.prices:
        amount = to_minor(spec["price"], SEED_CURRENCY)
        repository.add(session, SkuPrice(sku=sku, amount_minor=amount, currency=SEED_CURRENCY, note="seed"))
        report.created.append(f"price {spec['slug']}")
    present = {d.term for d in sku.discounts}
    for term, discount_bp in spec["discounts_bp"].items():
        if term not in present:
            repository.add(session, TermDiscount(sku=sku, term=term, discount_bp=discount_bp))
            report.created.append(f"{term} discount {spec['slug']}")
