"""The market a recommendation is searched in: the offers (active SKUs with a price in force) and the
reference cloud prices to compare them with, read through one catalog cache (app.catalog.cache).

A warm request reuses what this process built for the catalog's revision token; a price change
(or a scheduled price or exchange rate taking effect) rebuilds it.

Prices are compared in one currency, the request's (its budget's, else the catalog's): each offer
carries the exchange rate from its own currency into it (`Offer.exchange`), so the pure planner
ranks and budgets converted amounts, and an offer without a known rate is rejected, never ranked
as if USD 20,000 were less than CNY 30,000.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime
from functools import partial
from typing import cast

from sqlalchemy.orm import Session

from app.capacity import service as capacity_service
from app.capacity.ledger import Hold
from app.catalog import repository as catalog_repository
from app.catalog.cache import CatalogCache, catalog_cache
from app.catalog.models import Sku, SkuAddon
from app.catalog.pricing import next_price_change, sku_pricing
from app.catalog.seed_data import SEED_CURRENCY
from app.catalog.service import fabric_addon_of, joining_fabric
from app.common.money import from_minor, quantum
from app.estimator.hardware import get_gpu
from app.estimator.interconnects import inter_node_fabrics, intra_node_kinds
from app.estimator.specs import EstimatorError
from app.estimator.vocabulary import RentalUnit
from app.planner.offers import Exchange, FabricAddon, Offer
from app.reference.service import ExchangeRates, ReferenceBook, build_book, build_rates

log = logging.getLogger("app.planner")
CATALOG_CURRENCY = SEED_CURRENCY  # what a request compares in unless it names a currency: the catalog's


@dataclass(frozen=True, slots=True)
class Market:
    currency: str  # the request's: offers are ranked and budgeted in it, reference totals converted into it
    offers: list[Offer]
    references: ReferenceBook
    rates: ExchangeRates = field(default_factory=lambda: ExchangeRates({}))  # in force, from the catalog cache

    def comparable(self) -> tuple[str, ...]:
        """The currencies some offer's price converts into (its own, or by a rate): worked out where a currency is
        refused (app.planner.service check_currency), never on the way to a recommendation."""
        listed = {offer.currency for offer in self.offers}
        candidates = listed | {currency for pair in self.rates.pairs for currency in pair}
        return tuple(sorted(c for c in candidates if any(self.rates.rate(s, c) is not None for s in listed)))


def load_market(session: Session, currency: str | None = None, *, start: date | None = None) -> Market:
    """The market; with `start`, each tracked offer carries what is held in its regions from that day (read per
    request: quotes hold and release units without a catalog change)."""
    cache = catalog_cache(session)
    target = currency or CATALOG_CURRENCY
    rates = cache.get("exchange_rates", build_rates)
    minor = quantum(target)
    # priced at the price in force when the rental starts (app.capacity.service.priced_at), as its quote is
    priced = _offers_at(cache, capacity_service.priced_at(session, start))
    offers = [replace(offer, exchange=Exchange(target, rates.rate(offer.currency, target), minor)) for offer in priced]
    references = cache.get(f"reference_book:{target}", partial(build_book, currency=target))
    if start is not None and any(offer.availability is not None for offer in offers):
        offers = with_holds(offers, capacity_service.holds_by_sku(session, start=start))
    return Market(target, offers, references, rates)


def _offers_at(cache: CatalogCache, at: datetime | None) -> list[Offer]:
    """The offers at the prices in force at `at` (None: now), cached once per span between the catalog's scheduled
    price changes: each entry says when the next change ends it, and a later start reads the entry built at that
    change. The entries number the changes an admin scheduled, not the start dates requests ask for."""
    name, moment = "offers", None
    while True:
        offers, until = cache.entry(name, partial(load_offers, at=moment))
        if at is None or until is None or at < until:
            return offers
        name, moment = f"offers:{until.isoformat()}", until


def with_holds(offers: list[Offer], holds: dict[tuple[str, str], list[Hold]]) -> list[Offer]:
    """The offers whose SKU's units are held somewhere, with those holds by region (the others as they are)."""
    by_sku: dict[str, dict[str, tuple[Hold, ...]]] = {}
    for (sku_id, region), held in holds.items():
        by_sku.setdefault(sku_id, {})[region] = tuple(held)
    return [replace(offer, holds=by_sku[offer.sku_id]) if offer.sku_id in by_sku else offer for offer in offers]


def load_offers(session: Session, *, at: datetime | None = None) -> tuple[list[Offer], datetime | None]:
    """Active SKUs with a price in force at `at` (default now), as the pure planner sees them, and when a scheduled
    price will change that (a catalog cache builder)."""
    offers = []
    now = at or datetime.now(UTC)
    availability = catalog_repository.availability_by_sku(session)
    addons = catalog_repository.active_addons_by_sku(session)
    skus = catalog_repository.list_skus(session)
    for sku in skus:
        pricing = sku_pricing(sku, at=at)
        if pricing is None:
            continue
        try:
            gpu = get_gpu(sku.gpu_type.slug)
        except EstimatorError:
            # the catalog import refuses such GPU types; one written another way must not stop every request
            log.warning("planner: SKU %s skipped: the estimator has no GPU type %r", sku.slug, sku.gpu_type.slug)
            continue
        fabric = joining_fabric(sku, addons.get(sku.id, []))
        if sku.intra_node_link not in intra_node_kinds() or (fabric is not None and fabric not in inter_node_fabrics()):
            # the admin form and the import refuse such ids (review R1: one typo had every request answer a 422 on
            # a hardware field the customer never sent); one written another way skips its SKU alone
            log.warning("planner: SKU %s skipped: unknown link %r or fabric %r", sku.slug, sku.intra_node_link, fabric)
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
                inter_node_fabric=fabric,
                fabric_addon=fabric_addon(sku, addons.get(sku.id, []), pricing.currency),
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


def fabric_addon(sku: Sku, addons: list[SkuAddon], currency: str) -> FabricAddon | None:
    """The SKU's fabric add-on, when its fabric is one (`fabric_addon_of`): its price a unit a month in the SKU's
    currency, None when priced on consultation or in another currency (a quote leaves both out of its total)."""
    addon = fabric_addon_of(sku, addons)
    if addon is None:
        return None
    priced = addon.amount_minor is not None and addon.currency == currency
    unit_monthly = from_minor(addon.amount_minor, currency) if priced and addon.amount_minor is not None else None
    per_unit = cast(RentalUnit, addon.per_unit)  # a CHECK constraint holds the column to it
    return FabricAddon(addon.code, addon.name, per_unit, unit_monthly, addon.ports_per_server, addon.port_gbps)
