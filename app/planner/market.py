"""The market a recommendation is searched in: the offers (active SKUs with a price in force) and the
reference cloud prices to compare them with, read from one catalog snapshot (app.catalog.snapshot).

A warm request reuses what this process built for the catalog's revision token; a price change
(or a scheduled price taking effect) rebuilds it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from typing import cast

from sqlalchemy.orm import Session

from app.catalog import repository as catalog_repository
from app.catalog.pricing import next_price_change, sku_pricing
from app.catalog.snapshot import catalog_snapshot
from app.estimator.hardware import get_gpu
from app.estimator.specs import EstimatorError
from app.estimator.vocabulary import RentalUnit
from app.money import quantum
from app.planner.offers import Offer
from app.reference.service import ReferenceBook, build_book

log = logging.getLogger("app.planner")
DEFAULT_CURRENCY = "CNY"  # the reference book's currency while the catalog has no priced SKU


@dataclass(frozen=True, slots=True)
class Market:
    offers: list[Offer]
    references: ReferenceBook


def load_market(session: Session) -> Market:
    snapshot = catalog_snapshot(session)
    offers = snapshot.get("offers", load_offers)
    currency = offers[0].currency if offers else DEFAULT_CURRENCY
    references = snapshot.get(f"reference_book:{currency}", partial(build_book, currency=currency))
    return Market(offers, references)


def load_offers(session: Session) -> tuple[list[Offer], datetime | None]:
    """Active SKUs with a price in force, as the pure planner sees them, and when a scheduled price will
    change that (a snapshot builder)."""
    offers = []
    now = datetime.now(UTC)
    availability = catalog_repository.availability_by_sku(session)
    skus = catalog_repository.list_skus(session)
    for sku in skus:
        pricing = sku_pricing(sku)
        if pricing is None:
            continue
        try:
            gpu = get_gpu(sku.gpu_type.slug)
        except EstimatorError:
            # the catalog import refuses such GPU types; one written another way must not stop every request
            log.warning("planner: SKU %s skipped: the estimator has no GPU type %r", sku.slug, sku.gpu_type.slug)
            continue
        offers.append(
            Offer(
                sku_id=sku.slug,
                name=sku.name,
                gpu=gpu,
                regions=tuple(sku.regions),
                rental_unit=cast(RentalUnit, sku.rental_unit),  # a CHECK constraint holds the column to it
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
                interconnect=sku.interconnect,
                network=sku.network,
                host_nvme=sku.host_nvme_tb,
            )
        )
    return offers, next_price_change(skus, after=now)
