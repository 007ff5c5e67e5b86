"""Catalog export and import as one JSON document, to move a catalog between environments.

Import is validated whole before anything is written: the document's shape by pydantic (422 with
the path of each bad field), then every cross-reference and rule here, all errors at once. Only a
document with no error is applied: SKUs are upserted by id, prices the target lacks are appended
(history is never deleted), discounts, availability and add-ons are set. A SKU whose fields, prices or
discounts change gets its next version, as through the edit API (an edit based on the version before the import
is a 409 naming what the import wrote); a new one starts at version 1, as one created there does. Each changed SKU
leaves an audit row with before/after, and the import itself one more.

The rules the edit API keeps hold here too: a GPU type the estimator has no specification for is
refused (every SKU on it would be unpriceable by the planner), and a SKU that exists here gets no
back-dated price (its history is what past quotes were priced from; a new SKU brings its history
along). An export records when it was made: importing it over catalog changes made here after that
moment (the audit log says which) is a 409 naming them, unless `force` says to overwrite them.
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from sqlalchemy.orm import Session

from app.admin import catalog_editing, repository
from app.admin.overbooking import Edit, overbooking_error
from app.admin.schemas import AddonDoc, AvailabilityDoc, CatalogDoc, ImportReport, SkuDoc
from app.admin.service import Actor, aware, record
from app.catalog import repository as catalog_repository
from app.catalog.models import GpuType, Sku, SkuAddon, SkuAvailability, SkuPrice, TermDiscount
from app.catalog.zone import catalog_moment
from app.common.errors import Conflict, InvalidInput
from app.common.money import MoneyError, from_minor, to_minor
from app.db.base import utcnow
from app.estimator.hardware import load_gpus
from app.text.i18n_admin import ADMIN_EN


def export_catalog(session: Session) -> CatalogDoc:
    gpu_types = [{"id": g.slug, "name": g.name} for g in catalog_repository.list_gpu_types(session)]
    skus = [_sku_doc(session, sku) for sku in catalog_repository.list_skus(session, include_retired=True)]
    return CatalogDoc(exported_at=datetime.now(UTC), gpu_types=gpu_types, skus=skus)


def _sku_doc(session: Session, sku: Sku) -> dict[str, Any]:
    data = catalog_editing.snapshot(sku)
    data.pop("version")
    prices = [
        {
            "amount": str(from_minor(p.amount_minor, p.currency)),
            "currency": p.currency,
            "effective_from": aware(p.effective_from),
            "note": p.note,
        }
        for p in sorted(sku.prices, key=lambda p: (aware(p.effective_from), p.id))
    ]
    availability = [
        {"region": a.region, "units_available": a.units_available} for a in repository.availability_for(session, sku.id)
    ]
    addons = [
        {
            "code": a.code,
            "name": a.name,
            "currency": a.currency,
            "per_unit": a.per_unit,
            "status": a.status,
            "amount": None if a.amount_minor is None else str(from_minor(a.amount_minor, a.currency)),
            "ports_per_server": a.ports_per_server,
            "port_gbps": a.port_gbps,
            "bandwidth_source": a.bandwidth_source,
        }
        for a in catalog_editing.addons_of(session, sku)
    ]
    return {**data, "prices": prices, "availability": availability, "addons": addons}


# Audit entity types of catalog edits (app.admin.catalog_editing) and imports
CATALOG_ENTITIES = ("sku", "sku_price", "sku_availability", "sku_addon", "catalog")


# --- validation ---------------------------------------------------------------------------------


def _err(field: str, message: str) -> dict[str, str]:
    return {"field": field, "message": message, "type": "catalog"}


def _duplicates(values: list[str]) -> set[str]:
    seen: set[str] = set()
    repeated: set[str] = set()
    for value in values:
        (repeated if value in seen else seen).add(value)
    return repeated


def validate(session: Session, doc: CatalogDoc) -> list[dict[str, str]]:
    """Every rule the write would need, checked over the whole document first."""
    errors = [_err("gpu_types", f"GPU type {g!r} appears twice") for g in _duplicates([g.id for g in doc.gpu_types])]
    errors += [_err("skus", f"SKU {s!r} appears twice") for s in _duplicates([s.id for s in doc.skus])]
    estimator_gpus = load_gpus()
    errors += [
        _err(
            f"gpu_types.{i}.id",
            f"the estimator has no specification for GPU type {g.id!r}; known: " + ", ".join(sorted(estimator_gpus)),
        )
        for i, g in enumerate(doc.gpu_types)
        if g.id not in estimator_gpus
    ]
    known_gpus = {g.id for g in doc.gpu_types} | {g.slug for g in catalog_repository.list_gpu_types(session)}
    now = utcnow()
    for i, sku in enumerate(doc.skus):
        errors += _sku_errors(sku, f"skus.{i}.", known_gpus)
        errors += _dropped_regions(session, sku, f"skus.{i}.")
        if sku.gpu in known_gpus and sku.gpu not in estimator_gpus:
            errors.append(_err(f"skus.{i}.gpu", f"the estimator has no specification for GPU type {sku.gpu!r}"))
        errors += _backdated_prices(session, sku, f"skus.{i}.", now)
        errors += _currency_errors(session, sku, f"skus.{i}.", now)
    return errors


def _dropped_regions(session: Session, item: SkuDoc, prefix: str) -> list[dict[str, Any]]:
    """A SKU here whose document leaves out a region still tracking inventory or holding units (review R7-3)."""
    sku = catalog_repository.get_sku_by_slug(session, item.id)
    return [] if sku is None else catalog_editing.dropped_region_errors(session, sku, item.regions, f"{prefix}regions")


def _currency_errors(session: Session, item: SkuDoc, prefix: str, now: datetime) -> list[dict[str, Any]]:
    """The SKU's prices in force or scheduled once the document is applied (its own and those it keeps here) and its
    priced add-ons share one currency, as through the edit API (catalog_editing.price_currency_errors)."""
    sku = catalog_repository.get_sku_by_slug(session, item.id)
    kept = [] if sku is None else sku.prices
    prices: list[tuple[datetime, str, int | None]] = [(aware(p.effective_from), p.currency, None) for p in kept]
    prices += [(aware(p.effective_from), p.currency, j) for j, p in enumerate(item.prices)]
    past = [p for p in prices if p[0] <= now]
    live = [max(past, key=lambda p: p[0])] if past else []
    live += [p for p in prices if p[0] > now]
    addons = catalog_editing.priced_addon_currencies([] if sku is None else catalog_editing.addons_of(session, sku))
    for addon in item.addons:
        addons.pop(addon.code, None)
        if addon.status == "active" and addon.amount is not None:
            addons[addon.code] = addon.currency
    errors = [
        error
        for _, currency, j in live
        if j is not None
        for error in catalog_editing.price_currency_errors(currency, addons, f"{prefix}prices.{j}.currency")
    ]
    if errors:
        return errors
    currencies = [currency for _, currency, _ in live]
    return [
        error
        for j, addon in enumerate(item.addons)
        if addon.status == "active" and addon.amount is not None
        for error in catalog_editing.addon_currency_errors(
            addon.currency, currencies, f"{prefix}addons.{j}.currency", item.id
        )
    ]


def _backdated_prices(session: Session, item: SkuDoc, prefix: str, now: datetime) -> list[dict[str, str]]:
    """Prices an existing SKU lacks must take effect now or later, as through the edit API."""
    sku = catalog_repository.get_sku_by_slug(session, item.id)
    if sku is None:
        return []
    have = {(aware(p.effective_from), p.amount_minor, p.currency) for p in sku.prices}
    errors = []
    for j, price in enumerate(item.prices):
        if not _fits(price.amount, price.currency):
            continue  # reported by _sku_errors
        key = (aware(price.effective_from), to_minor(Decimal(price.amount), price.currency), price.currency)
        if key not in have and key[0] < now - catalog_editing.BACKDATE_TOLERANCE:
            errors.append(
                _err(
                    f"{prefix}prices.{j}.effective_from",
                    "a new price of an existing SKU must take effect now or later (history is not rewritten)",
                )
            )
    return errors


def changes_since(session: Session, doc: CatalogDoc) -> list[str]:
    """Catalog changes recorded here after the document was exported ("sku h100-8x, 2026-11-30 10:02 by a@b")."""
    if doc.exported_at is None:
        return []
    return [
        ADMIN_EN["admin_change_catalog_import"].format(at=f"{aware(entry.at):%Y-%m-%d %H:%M}", actor=entry.actor)
        if entry.entity_type == "catalog"  # an earlier import: worded as one, not "catalog catalog" (review R4-12)
        else f"{entry.entity_type} {entry.entity_id} ({entry.action}, {aware(entry.at):%Y-%m-%d %H:%M} UTC by "
        f"{entry.actor})"
        for entry in repository.catalog_changes_after(session, aware(doc.exported_at), entity_types=CATALOG_ENTITIES)
    ]


def _sku_errors(sku: SkuDoc, prefix: str, known_gpus: set[str]) -> list[dict[str, str]]:
    errors = []
    if sku.gpu not in known_gpus:
        errors.append(_err(f"{prefix}gpu", f"unknown GPU type {sku.gpu!r}; add it to gpu_types"))
    errors += catalog_editing.shape_errors(
        gpu_slug=sku.gpu,
        rental_unit=sku.rental_unit,
        gpus_per_node=sku.gpus_per_node,
        card_counts=sku.card_counts,
        prefix=prefix,
    )
    errors += catalog_editing.host_ram_errors(
        host_ram_gib=sku.host_ram_gib, gpus_per_node=sku.gpus_per_node, prefix=prefix
    )
    errors += catalog_editing.link_errors(
        intra_node_link=sku.intra_node_link, inter_node_fabric=sku.inter_node_fabric, prefix=prefix
    )
    stated: dict[str, int] = {term: catalog_editing.discount_bp(value) for term, value in sku.discounts.items()}
    errors += catalog_editing.discount_errors(stated, f"{prefix}discounts")
    for j, price in enumerate(sku.prices):
        if not _fits(price.amount, price.currency):
            errors.append(_err(f"{prefix}prices.{j}.amount", f"too many decimal places for {price.currency}"))
    for j, addon in enumerate(sku.addons):
        if addon.amount is not None and not _fits(addon.amount, addon.currency):
            errors.append(_err(f"{prefix}addons.{j}.amount", f"too many decimal places for {addon.currency}"))
        errors += catalog_editing.bandwidth_errors(
            addon.ports_per_server, addon.port_gbps, prefix=f"{prefix}addons.{j}."
        )
    for j, slot in enumerate(sku.availability):
        if slot.region not in sku.regions:
            errors.append(_err(f"{prefix}availability.{j}.region", f"not one of the SKU's regions {sku.regions}"))
    errors += [
        _err(f"{prefix}availability", f"region {r!r} appears twice")
        for r in _duplicates([a.region for a in sku.availability])
    ]
    errors += [
        _err(f"{prefix}addons", f"add-on {c!r} appears twice") for c in _duplicates([a.code for a in sku.addons])
    ]
    return errors


def _fits(amount: str, currency: str) -> bool:
    try:
        to_minor(Decimal(amount), currency)
    except MoneyError:
        return False
    return True


# --- applying -----------------------------------------------------------------------------------


def import_catalog(
    session: Session, *, doc: CatalogDoc, actor: Actor, force: bool = False, allow_overbooking: bool = False
) -> ImportReport:
    doc = _in_catalog_time(session, doc)
    errors = validate(session, doc)
    if errors:
        raise InvalidInput(
            f"the catalog has {len(errors)} error(s); nothing was imported: "
            + "; ".join(f"{e['field']}: {e['message']}" for e in errors[:5]),
            errors=errors,
        )
    newer = [] if force else changes_since(session, doc)
    if newer:
        raise Conflict(
            f"the catalog changed here after this export was made ({doc.exported_at:%Y-%m-%d %H:%M} UTC): "
            + "; ".join(newer[:10])
            + ("; …" if len(newer) > 10 else "")
            + ". Export again, or import with force=true to overwrite those changes; nothing was imported."
        )
    if not allow_overbooking:
        _refuse_overbooking(session, doc)
    report = ImportReport(gpu_types_created=[], skus_created=[], skus_updated=[], skus_unchanged=[], prices_added=0)
    for gpu in doc.gpu_types:
        if catalog_repository.get_gpu_type_by_slug(session, gpu.id) is None:
            catalog_repository.add(session, GpuType(slug=gpu.id, name=gpu.name))
            report.gpu_types_created.append(gpu.id)
    for item in doc.skus:
        _apply_sku(session, item, actor, report)
    if not (report.gpu_types_created or report.skus_created or report.skus_updated or report.prices_added):
        return report  # nothing changed: no audit row, so no conflict for the next import (review R4-12)
    record(
        session,
        actor=actor,
        action="catalog.import",
        entity_type="catalog",
        entity_id="catalog",
        before=None,
        after=report.model_dump(),
    )
    return report


def _in_catalog_time(session: Session, doc: CatalogDoc) -> CatalogDoc:
    """`doc` with each price's `effective_from` given without an offset (a bare date: its midnight) read as the
    catalog's wall clock, as through the edit API (catalog_editing.price_row; review R7-4), before anything compares
    it with the prices here."""
    skus = [
        sku.model_copy(
            update={
                "prices": [
                    p.model_copy(update={"effective_from": catalog_moment(p.effective_from, session)})
                    for p in sku.prices
                ]
            }
        )
        for sku in doc.skus
    ]
    return doc.model_copy(update={"skus": skus})


def _refuse_overbooking(session: Session, doc: CatalogDoc) -> None:
    """409 `overbooked` naming every inventory row of the document that would leave more units held by quotes (issued
    or accepted) and maintenance than exist, as the availability endpoint refuses one (app.admin.overbooking). The
    rows are read under their lock, the one a new quote's hold counts under, kept until the import commits."""
    errors = []
    for i, item in enumerate(doc.skus):
        sku = catalog_repository.get_sku_by_slug(session, item.id)
        for j, slot in enumerate([] if sku is None else item.availability):
            assert sku is not None
            row = repository.get_availability(session, sku_pk=sku.id, region=slot.region, lock=True)
            if row is None or slot.units_available >= row.units_available:
                continue
            edit = Edit(sku.id, sku.slug, slot.region, row.units_available, slot.units_available)
            error = overbooking_error(session, edit, field=f"skus.{i}.availability.{j}.units_available")
            errors += [] if error is None else [error]
    if errors:
        raise Conflict(
            "; ".join(e["message"] for e in errors[:5])
            + ". Nothing was imported; import with allow_overbooking=true to save it anyway.",
            errors=errors,
            extra={"code": "overbooked"},
        )


def _apply_sku(session: Session, item: SkuDoc, actor: Actor, report: ImportReport) -> None:
    sku = catalog_repository.get_sku_by_slug(session, item.id)
    before = None if sku is None else _full_snapshot(session, sku)
    gpu_type = catalog_repository.get_gpu_type_by_slug(session, item.gpu)
    assert gpu_type is not None  # validation checked every SKU's GPU type, and the import created the new ones
    gpu_type_id = gpu_type.id
    fields = {attr: getattr(item, api) for api, attr in catalog_editing.SKU_FIELDS.items()}
    if sku is None:
        sku = Sku(slug=item.id, gpu_type_id=gpu_type_id, status=item.status, **fields)
        catalog_repository.add(session, sku)
        report.prices_added += _write_sku(session, sku, item, actor, new=True)
    else:
        # an edit saved after the import read the SKU: its UPDATE … WHERE version = n is a 409, as an edit's is
        with catalog_editing.saving(sku, sku.version):
            for attr, value in {**fields, "gpu_type_id": gpu_type_id, "status": item.status}.items():
                if getattr(sku, attr) != value:
                    setattr(sku, attr, value)
            report.prices_added += _write_sku(session, sku, item, actor, new=False)
    session.refresh(sku)
    after = _full_snapshot(session, sku)
    if before is None:
        report.skus_created.append(item.id)
    elif before == after:
        report.skus_unchanged.append(item.id)
        return
    else:
        report.skus_updated.append(item.id)
    record(session, actor=actor, action="sku.import", entity_type="sku", entity_id=sku.slug, before=before, after=after)


def _write_sku(session: Session, sku: Sku, item: SkuDoc, actor: Actor, *, new: bool) -> int:
    """The document's prices, discounts, availability and add-ons of `sku`, flushed; the prices added. A `new` SKU
    is written at version 1 with them, as catalog_editing.create_sku writes one; an existing one gets its next
    version where its prices or discounts change, as through the edit API."""
    added = _append_prices(session, sku, item, actor)
    if new:
        for term, value in item.discounts.items():
            discount = TermDiscount(sku=sku, term=term, discount_bp=catalog_editing.discount_bp(value))
            catalog_repository.add(session, discount)
    else:
        if added:
            sku.updated_at = utcnow()  # a dirty SKU: its UPDATE writes version n + 1 (catalog_editing.add_price)
        catalog_editing.set_discounts(session, sku, item.discounts)  # bumps the version where they change
    _set_availability(session, sku, item.availability)
    _set_addons(session, sku, item.addons)
    session.flush()
    return added


def _full_snapshot(session: Session, sku: Sku) -> dict[str, Any]:
    doc = _sku_doc(session, sku)
    doc["prices"] = [{**p, "effective_from": p["effective_from"].isoformat()} for p in doc["prices"]]
    return {**doc, "version": sku.version}


def _append_prices(session: Session, sku: Sku, item: SkuDoc, actor: Actor) -> int:
    have = {(aware(p.effective_from), p.amount_minor, p.currency) for p in sku.prices}
    added = 0
    for price in item.prices:
        key = (aware(price.effective_from), to_minor(Decimal(price.amount), price.currency), price.currency)
        if key not in have:
            catalog_repository.add(
                session,
                SkuPrice(
                    sku_pk=sku.id,
                    amount_minor=key[1],
                    currency=price.currency,
                    effective_from=key[0],
                    created_at=utcnow(),
                    created_by=actor.email,
                    note=price.note or "import",
                ),
            )
            have.add(key)
            added += 1
    session.expire(sku, ["prices"])
    return added


def _set_availability(session: Session, sku: Sku, slots: list[AvailabilityDoc]) -> None:
    for slot in slots:
        row = repository.get_availability(session, sku_pk=sku.id, region=slot.region)
        if row is None:
            session.add(SkuAvailability(sku_pk=sku.id, region=slot.region, units_available=slot.units_available))
        elif row.units_available != slot.units_available:
            row.units_available = slot.units_available


def _set_addons(session: Session, sku: Sku, addons: list[AddonDoc]) -> None:

    existing = {a.code: a for a in catalog_editing.addons_of(session, sku)}
    for addon in addons:
        amount = None if addon.amount is None else to_minor(Decimal(addon.amount), addon.currency)
        values = {
            "name": addon.name,
            "amount_minor": amount,
            "currency": addon.currency,
            "per_unit": addon.per_unit,
            "status": addon.status,
            "ports_per_server": addon.ports_per_server,
            "port_gbps": addon.port_gbps,
            "bandwidth_source": addon.bandwidth_source,
        }
        row = existing.get(addon.code)
        if row is None:
            session.add(SkuAddon(sku_pk=sku.id, code=addon.code, **values))
            continue
        for attr, value in values.items():
            if getattr(row, attr) != value:
                setattr(row, attr, value)
