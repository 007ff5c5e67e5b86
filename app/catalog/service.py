"""Catalog rules: what the public catalog shows and how prices are presented."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from sqlalchemy.orm import Session

from app.catalog import repository
from app.catalog.cache import catalog_cache
from app.catalog.models import Sku, SkuAddon
from app.catalog.pricing import as_utc, next_price_change, scheduled_price, sku_pricing
from app.catalog.schemas import GpuOut, GpuRef, PriceOut, ScheduledPriceOut, SkuOut, TermPriceOut
from app.common.money import bp_to_percent, from_minor
from app.common.schemas import mirror
from app.estimator.hardware import load_gpus
from app.estimator.vocabulary import Term

# A SKU's plain columns: API name → ORM attribute (the API says host_nvme for host_nvme_tb).
SKU_COLUMNS = {
    "name": "name",
    "rental_unit": "rental_unit",
    "gpus_per_node": "gpus_per_node",
    "card_counts": "card_counts",
    "intra_node_link": "intra_node_link",
    "interconnect": "interconnect",
    "host_cpu": "host_cpu",
    "host_ram_gib": "host_ram_gib",
    "host_nvme": "host_nvme_tb",
    "network": "network",
    "inter_node_fabric": "inter_node_fabric",
    "infiniband_addon": "infiniband_addon",
    "regions": "regions",
    "notes": "notes",
}


# Add-on codes that join servers over a fabric (the seed's `infiniband-400g`; an admin may add a RoCE one).
FABRIC_ADDON_PREFIXES = ("infiniband", "roce")


def fabric_addon_of(sku: Sku, addons: list[SkuAddon]) -> SkuAddon | None:
    """The active add-on, of the SKU's `addons`, that provides its inter-node fabric; None when the SKU has no
    fabric or the fabric comes with the server (no such add-on is sold). Servers are joined over the fabric only
    where that add-on is rented (the planner prices and quotes it with every multi-server option)."""
    if sku.inter_node_fabric is None:
        return None
    return next((a for a in addons if a.status == "active" and a.code.startswith(FABRIC_ADDON_PREFIXES)), None)


def joining_fabric(sku: Sku, addons: list[SkuAddon]) -> str | None:
    """The fabric the SKU's servers can be joined with: its inter-node fabric, unless the catalog sells that fabric
    as an add-on (`infiniband_addon`) and no fabric add-on is on sale (retired, or never entered), when nothing but
    the plain network joins them and the SKU is rented one server per job (the planner's single_server_only)."""
    if sku.inter_node_fabric is None:
        return None
    if sku.infiniband_addon and fabric_addon_of(sku, addons) is None:
        return None
    return sku.inter_node_fabric


def sku_columns(sku: Sku) -> dict[str, Any]:
    """The plain columns under their API names, JSON-safe (the list columns copied)."""
    data = {api: getattr(sku, attr) for api, attr in SKU_COLUMNS.items()}
    data["card_counts"], data["regions"] = list(sku.card_counts), list(sku.regions)
    return data


def sku_out(sku: Sku) -> SkuOut:
    return SkuOut(
        id=sku.slug,
        **sku_columns(sku),
        gpu=GpuRef(id=sku.gpu_type.slug, name=sku.gpu_type.name),
        status=sku.status,
        version=sku.version,
        price=_price_out(sku),
        next_price=_next_price_out(sku),
    )


def _next_price_out(sku: Sku) -> ScheduledPriceOut | None:
    scheduled = scheduled_price(sku)
    if scheduled is None:
        return None
    monthly_list = str(from_minor(scheduled.amount_minor, scheduled.currency))
    effective_from = as_utc(scheduled.effective_from).isoformat()
    return ScheduledPriceOut(currency=scheduled.currency, monthly_list=monthly_list, effective_from=effective_from)


def _price_out(sku: Sku) -> PriceOut | None:
    pricing = sku_pricing(sku)
    if pricing is None:
        return None
    terms = {
        term: TermPriceOut(
            term=term, discount_percent=str(bp_to_percent(tp.discount_bp)), monthly_effective=str(tp.monthly_effective)
        )
        for term, tp in pricing.terms.items()
    }
    return PriceOut(
        currency=pricing.currency,
        unit=sku.rental_unit,
        monthly_list=str(pricing.monthly_list),
        effective_from=pricing.effective_from.isoformat(),
        indicative=sku.indicative_price,
        terms=terms,
        summary=price_summary(pricing.currency, sku.rental_unit, pricing.monthly_list, terms),
    )


def price_summary(currency: str, unit: str, monthly_list: Decimal, terms: Mapping[Term, TermPriceOut]) -> str:
    """'CNY 2,800.00 per card per month; annual term 20% off: CNY 2,240.00 per card per month.'"""
    per = f"per {'server' if unit == 'node' else unit} per month"
    parts = [f"{currency} {monthly_list:,} {per}"]
    for term, price in terms.items():
        if Decimal(price.discount_percent) > 0:
            effective = Decimal(price.monthly_effective)
            parts.append(f"{term} term {price.discount_percent}% off: {currency} {effective:,} {per}")
    return "; ".join(parts) + "."


def public_skus(session: Session) -> list[SkuOut]:
    """Active SKUs with the price in force (cached per catalog revision: app.catalog.cache)."""
    return catalog_cache(session).get("public_skus", _build_public_skus)


def _build_public_skus(session: Session) -> tuple[list[SkuOut], datetime | None]:
    now = datetime.now(UTC)
    skus = repository.list_skus(session)
    return [sku_out(sku) for sku in skus], next_price_change(skus, after=now)


def gpu_catalog(session: Session | None) -> list[GpuOut]:
    """Hardware facts from the shipped data file; `offered` needs the database (False without one)."""
    offered = {sku.gpu.id for sku in public_skus(session)} if session is not None else set()
    return [
        mirror(
            GpuOut,
            gpu,
            hbm_bandwidth_gb_per_s=round(gpu.hbm_bytes_per_s / 1e9, 1),
            peak_tflops={k: round(v / 1e12, 1) for k, v in gpu.peak_flops.items()},
            nvlink_gb_per_s=round(gpu.nvlink_bytes_per_s / 1e9, 1),
            offered=gpu.id in offered,
        )
        for gpu in load_gpus().values()
    ]
