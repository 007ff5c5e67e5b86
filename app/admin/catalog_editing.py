"""Catalog editing rules for admins: SKUs, prices, term discounts, retirement, availability.

Every edit of an existing row names the version it was based on. A stale version is refused with
409 listing the fields changed since that version (with their current values, read from the
audit log) and nothing is written; two saves racing past that check are stopped by SQLAlchemy's
`version_id_col` (UPDATE … WHERE version = n), reported the same way. Every change appends an
audit row with the entity before and after.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from datetime import timedelta
from decimal import Decimal
from typing import Any, NoReturn

from sqlalchemy.orm import Session
from sqlalchemy.orm.exc import StaleDataError

from app.admin import repository
from app.admin.overbooking import Edit, refuse_overbooking
from app.admin.schemas import (
    AddonIn,
    AddonOut,
    AvailabilityIn,
    AvailabilityOut,
    PriceCreate,
    PriceIn,
    PriceOut,
    SkuAdminOut,
    SkuCreate,
    SkuPatch,
)
from app.admin.service import Actor, aware, record
from app.capacity import service as capacity_service
from app.catalog import repository as catalog_repository
from app.catalog.models import Sku, SkuAddon, SkuAvailability, SkuPrice, TermDiscount
from app.catalog.pricing import current_price
from app.catalog.seed_data import SEED_CURRENCY
from app.catalog.service import SKU_COLUMNS, sku_columns
from app.catalog.zone import catalog_moment
from app.common.errors import Conflict, InvalidInput, NotFound
from app.common.money import MoneyError, bp_to_percent, exponent, from_minor, to_minor
from app.common.schemas import mirror
from app.db.base import utcnow
from app.estimator.hardware import load_gpus
from app.estimator.interconnects import inter_node_fabrics, intra_node_kinds
from app.estimator.memory import host_ram_reserve_gib
from app.estimator.vocabulary import Term
from app.text.i18n_admin import ADMIN_EN

BACKDATE_TOLERANCE = timedelta(minutes=5)
_CODE = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")
# API field → ORM attribute, for the plain columns an admin may edit.
SKU_FIELDS = {**SKU_COLUMNS, "indicative_price": "indicative_price"}
NULLABLE_FIELDS = {"host_ram_gib", "inter_node_fabric"}


def addons_of(session: Session, sku: Sku) -> list[Any]:
    return catalog_repository.addons_for_sku(session, sku.id)


# --- reading ------------------------------------------------------------------------------------


def get_sku(session: Session, slug: str) -> Sku:
    sku = catalog_repository.get_sku_by_slug(session, slug)
    if sku is None:
        raise NotFound(f"no SKU {slug!r}")
    return sku


def percent(discount_bp: int) -> str:
    return str(bp_to_percent(discount_bp))


def snapshot(sku: Sku) -> dict[str, Any]:
    """The SKU as the audit log and conflict messages show it (JSON-safe, percent strings)."""
    return {
        "id": sku.slug,
        "gpu": sku.gpu_type.slug,
        **sku_columns(sku),
        "indicative_price": sku.indicative_price,
        "status": sku.status,
        "discounts": {d.term: percent(d.discount_bp) for d in sorted(sku.discounts, key=lambda d: d.term)},
        "version": sku.version,
    }


def price_out(price: SkuPrice, in_force_id: int | None) -> PriceOut:
    return mirror(
        PriceOut,
        price,
        amount=str(from_minor(price.amount_minor, price.currency)),
        effective_from=aware(price.effective_from),
        created_at=aware(price.created_at),
        in_force=price.id == in_force_id,
    )


def sku_admin_out(session: Session, sku: Sku) -> SkuAdminOut:
    current = current_price(sku)
    in_force = current.id if current else None
    prices = [price_out(p, in_force) for p in sorted(sku.prices, key=lambda p: (aware(p.effective_from), p.id))]
    availability = [
        AvailabilityOut(
            region=a.region, units_available=a.units_available, version=a.version, updated_at=aware(a.updated_at)
        )
        for a in repository.availability_for(session, sku.id)
    ]
    addons = [addon_out(a) for a in addons_of(session, sku)]
    data = snapshot(sku)
    return SkuAdminOut(
        **data,
        current_price=price_out(current, in_force) if current else None,
        prices=prices,
        availability=availability,
        addons=addons,
        updated_at=aware(sku.updated_at),
    )


def admin_skus(session: Session) -> list[SkuAdminOut]:
    return [sku_admin_out(session, sku) for sku in catalog_repository.list_skus(session, include_retired=True)]


# --- validation ---------------------------------------------------------------------------------


def price_currency(sku: Sku) -> str:
    """The currency `sku` is priced in: its price in force, else its latest scheduled one, else the catalog's
    (app.catalog.seed_data.SEED_CURRENCY). Its add-ons are priced in it: pricing adds nothing in another."""
    price = current_price(sku) or max(sku.prices, key=lambda p: (aware(p.effective_from), p.id), default=None)
    return price.currency if price is not None else SEED_CURRENCY


def priced_addon_currencies(addons: Iterable[Any]) -> dict[str, str]:
    """The currency of each add-on on sale with an amount (code → currency): a quote adds its amount to the total
    only in the currency of the SKU's price. One priced on consultation (no amount) adds nothing in any currency."""
    return {a.code: a.currency for a in addons if a.status == "active" and a.amount_minor is not None}


def price_currency_errors(currency: str, addons: Mapping[str, str], field: str) -> list[dict[str, Any]]:
    """A price in `currency` beside priced add-ons in another one (review R1: the fabric then left every quote's
    total as "priced on consultation")."""
    others = sorted(code for code, other in addons.items() if other != currency)
    if not others:
        return []
    return [coded(field, "price_currency_addons", currency=addons[others[0]], addons=", ".join(others))]


def addon_currency_errors(
    currency: str, price_currencies: Iterable[str], field: str, slug: str
) -> list[dict[str, Any]]:
    """A priced add-on in another currency than a price of the SKU in force or scheduled."""
    others = sorted(set(price_currencies) - {currency})
    return [coded(field, "addon_currency", currency=others[0], sku=slug)] if others else []


def stale_words(current: int | None, sent: int | None) -> str:
    """Why a version check failed, in words: "is at version 3, not 2"; never "not None"."""
    return ADMIN_EN[f"admin_err_{_stale_code(current, sent)}"].format(current=current, sent=sent)


def _stale_code(current: int | None, sent: int | None) -> str:
    if current is None:
        return "stale_missing"
    return "stale_exists" if sent is None else "stale_version"


def stale_error(field: str, now: Any, code: str = "stale_changed", /, **params: Any) -> dict[str, Any]:
    """A 409's entry on `field` (type `stale`, its value now in `current`), worded from `code` (app/text/i18n_admin.py
    `admin_err_<code>`: the admin pages word it in their reader's language) with `params`."""
    return {**coded(field, code, **params), "type": "stale", "current": now}


def version_error(current: int | None, sent: int | None, *, now: Any = None, field: str = "version") -> dict[str, Any]:
    """The version check's entry: at version `current`, not `sent` (either may be null: none yet, or a new one)."""
    code = _stale_code(current, sent)
    return stale_error(field, current if now is None else now, code, current=current, sent=sent)


def _error(field: str, message: str) -> dict[str, str]:
    return {"field": field, "message": message, "type": "catalog"}


def _money_error(field: str, exc: MoneyError, amount: object, currency: str) -> dict[str, Any]:
    """An amount with more decimals than its currency has: the message, and its code and figures for the pages."""
    try:
        places = exponent(currency)
    except MoneyError:  # a currency the catalog does not know: its own message
        return _error(field, str(exc))
    params = {"amount": str(amount), "places": places, "currency": currency}
    return {**_error(field, str(exc)), "code": "decimal_places", "params": params}


def shape_errors(
    *, gpu_slug: str, rental_unit: str, gpus_per_node: int, card_counts: list[int], prefix: str = ""
) -> list[dict[str, Any]]:
    """Card counts and server size the GPU type allows (facts from the estimator's GPU table)."""
    errors = []
    spec = load_gpus().get(gpu_slug)
    if spec is not None and gpus_per_node > spec.max_gpus_per_node:
        errors.append(coded(f"{prefix}gpus_per_node", "gpus_per_node_max", gpu=spec.name, most=spec.max_gpus_per_node))
    if card_counts != sorted(set(card_counts)):
        errors.append(coded(f"{prefix}card_counts", "card_counts_order"))
    if any(count > gpus_per_node for count in card_counts):
        errors.append(coded(f"{prefix}card_counts", "card_counts_range", most=gpus_per_node))
    if rental_unit == "node" and card_counts != [gpus_per_node]:
        errors.append(coded(f"{prefix}card_counts", "card_counts_node", gpus=gpus_per_node))
    if spec is not None and gpu_slug.endswith("-sxm") and any(c & (c - 1) for c in card_counts):
        errors.append(coded(f"{prefix}card_counts", "card_counts_sxm"))
    return errors


def host_ram_errors(*, host_ram_gib: int | None, gpus_per_node: int, prefix: str = "") -> list[dict[str, Any]]:
    """Host RAM that leaves something after the reserve the planner keeps on every server for the OS and each GPU's
    training process and data loaders (app/estimator/memory/breakdown.py `host_ram_reserve_gib`: GKE's node
    reservation and 6 GiB a GPU, cited there). Review R5-10: 1 GiB on an 8-GPU server was accepted and every option on
    it then planned within 0 GiB of host RAM without a word. Unknown (None) is allowed: options state the condition."""
    if host_ram_gib is None:
        return []
    reserve = host_ram_reserve_gib(host_ram_gib, gpus_per_node)
    if host_ram_gib > reserve:
        return []
    params = {"host_ram_gib": host_ram_gib, "gpus": gpus_per_node, "reserve_gib": f"{reserve:.1f}"}
    return [coded(f"{prefix}host_ram_gib", "host_ram_reserve", **params)]


def link_errors(
    *, intra_node_link: str | None, inter_node_fabric: str | None, prefix: str = ""
) -> list[dict[str, Any]]:
    """A link or fabric the estimator has figures for (app/estimator/data/interconnects.json): another id would
    leave every plan on the SKU unsizeable."""
    errors = []
    if intra_node_link is not None and intra_node_link not in intra_node_kinds():
        known = ", ".join(sorted(intra_node_kinds()))
        errors.append(coded(f"{prefix}intra_node_link", "link_unknown", link=intra_node_link, known=known))
    if inter_node_fabric is not None and inter_node_fabric not in inter_node_fabrics():
        known = ", ".join(sorted(inter_node_fabrics()))
        errors.append(coded(f"{prefix}inter_node_fabric", "fabric_unknown", fabric=inter_node_fabric, known=known))
    return errors


def coded(field: str, code: str, **params: Any) -> dict[str, Any]:
    """A refusal on `field` worded from its code (app/text/i18n_admin.py `admin_err_<code>`: the admin pages word it in
    their reader's language), its values in `params`."""
    return {**_error(field, ADMIN_EN[f"admin_err_{code}"].format(**params)), "code": code, "params": params}


def dropped_region_errors(
    session: Session, sku: Sku, regions: list[str], field: str = "regions"
) -> list[dict[str, Any]]:
    """The SKU's regions `regions` leaves out that still track inventory or hold units (app.capacity.service
    .regions_in_use), refused on `field`: the edit API, the SKU form and the catalog import (review R7-3)."""
    dropped = [region for region in sku.regions if region not in regions]
    in_use = capacity_service.regions_in_use(session, sku_pk=sku.id) if dropped else set()
    kept = [region for region in dropped if region in in_use]
    return [coded(field, "regions_in_use", sku=sku.slug, regions=", ".join(kept))] if kept else []


def _raise_if(errors: list[dict[str, Any]]) -> None:
    if errors:
        _invalid(errors)


def _invalid(errors: list[dict[str, Any]]) -> NoReturn:
    raise InvalidInput("; ".join(f"{e['field']}: {e['message']}" for e in errors[:5]), errors=errors)


def _gpu_type_id(session: Session, slug: str, field: str = "gpu") -> int:
    gpu = catalog_repository.get_gpu_type_by_slug(session, slug)
    if gpu is None:
        known = ", ".join(g.slug for g in catalog_repository.list_gpu_types(session))
        _invalid([coded(field, "gpu_unknown", gpu=slug, known=known)])
    return gpu.id


def discount_bp(value: str) -> int:
    return int(Decimal(value) * 100)


def price_row(session: Session, data: PriceIn, *, actor: Actor, field: str = "") -> SkuPrice:
    """The price's row; an `effective_from` without an offset (a bare date: its midnight) is the catalog's wall
    clock (app.catalog.zone.catalog_moment), the day a rental starting then is priced from (review R7-4)."""
    now = utcnow()
    effective = catalog_moment(data.effective_from, session) if data.effective_from else now
    if effective < now - BACKDATE_TOLERANCE:
        _raise_if([_error(f"{field}effective_from", "must be now or in the future (history is not rewritten)")])
    try:
        minor = to_minor(Decimal(data.amount), data.currency)
    except MoneyError as exc:
        _raise_if([_money_error(f"{field}amount", exc, data.amount, data.currency)])
    return SkuPrice(
        amount_minor=minor,
        currency=data.currency,
        effective_from=effective,
        created_at=now,
        created_by=actor.email,
        note=data.note,
    )


# --- optimistic locking -------------------------------------------------------------------------


def stale(session: Session, sku: Sku, based_on: int) -> Conflict:
    """409 naming each field changed since `based_on`, with its current value, and who changed it."""
    current = snapshot(sku)
    changed: dict[str, Any] = {}
    last = None
    for entry in repository.entity_history(session, entity_types=("sku", "sku_price"), entity_id=sku.slug):
        before, after = entry.before or {}, entry.after or {}
        if after.get("version", 0) <= based_on:
            continue
        last = entry
        if entry.entity_type == "sku_price":  # a new price, audited with the SKU version it made
            changed["price"] = {k: v for k, v in after.items() if k != "version"}
            continue
        changed.update(
            {k: current[k] for k in after if k in current and k != "version" and before.get(k) != after.get(k)}
        )
        # an import's entry carries the price history (catalog_transfer._full_snapshot): its newest added price
        added = [p for p in after.get("prices", ()) if p not in (before.get("prices") or ())]
        if added:
            changed["price"] = added[-1]
    by = {"by": last.actor, "at": aware(last.at).isoformat(timespec="seconds")} if last else {}
    errors = [stale_error("version", sku.version, "stale_sku_by" if by else "stale_sku", current=sku.version,
                          sent=based_on, **by)]  # fmt: skip
    errors += [stale_error(k, v) for k, v in changed.items()]
    if not 1 <= based_on < sku.version:  # a version the SKU never had: nobody changed it since
        return Conflict(
            f"SKU {sku.slug} has no version {based_on}: it is at version {sku.version}. "
            "Nothing was saved; reload and apply your edit again.",
            errors=errors,
        )
    by_words = f" by {by['by']} at {by['at']}" if by else ""
    fields = ", ".join(changed) or "fields the audit log does not name"
    return Conflict(
        f"SKU {sku.slug} was changed{by_words} (version {based_on} → {sku.version}): {fields}. "
        "Nothing was saved; reload and apply your edit again.",
        errors=errors,
    )


def check_version(session: Session, sku: Sku, version: int) -> None:
    if version != sku.version:
        raise stale(session, sku, version)


def flush(session: Session, sku: Sku, version: int) -> None:
    with saving(sku, version, session):
        session.flush()


@contextmanager
def saving(sku: Sku, version: int, session: Session | None = None) -> Iterator[None]:
    """Writes of `sku` based on `version`: a flush inside whose UPDATE … WHERE version = n matches no row (someone
    saved the SKU after it was read) is a 409, nothing saved. Given the `session`, the 409 names what the other save
    changed, as a stale version's does (`stale`; review R6-6: it said only "changed while saving"): the session is
    rolled back and the SKU read again, as the other save committed it."""
    slug = sku.slug  # read now: after a failed flush the session cannot load anything
    try:
        yield
    except StaleDataError as exc:
        if session is not None:
            session.rollback()  # nothing of this request is saved; a new transaction sees the other save
            now = catalog_repository.get_sku_by_slug(session, slug)
            if now is not None and now.version != version:
                raise stale(session, now, version) from exc
        raise Conflict(
            f"SKU {slug} was changed by someone else while saving version {version}; "
            "nothing was saved, reload and apply your edit again.",
            errors=[stale_error("version", None, "stale_race")],
        ) from exc


# --- writing ------------------------------------------------------------------------------------


def discount_errors(discounts: Mapping[str, int], field: str = "discounts") -> list[dict[str, Any]]:
    """A term that commits to fewer months may not be discounted more than a longer one (review R14: a monthly
    discount of 50 % against 10 % annual, one typo, steers every customer off the annual commitment)."""
    monthly, annual = discounts.get("monthly", 0), discounts.get("annual", 0)
    if monthly <= annual:
        return []
    return [coded(f"{field}.monthly", "discount_order", monthly=f"{monthly / 100:g}", annual=f"{annual / 100:g}")]


def merged_discount_errors(sku: Sku, discounts: Mapping[Term, str], field: str = "discounts") -> list[dict[str, Any]]:
    """discount_errors of the SKU's discounts with `discounts` set (checked before anything is written)."""
    merged = {row.term: row.discount_bp for row in sku.discounts} | {
        term: discount_bp(value) for term, value in discounts.items()
    }
    return discount_errors(merged, field)


def set_discounts(session: Session, sku: Sku, discounts: Mapping[Term, str]) -> bool:
    existing = {d.term: d for d in sku.discounts}
    changed = False
    for term, value in discounts.items():
        bp = discount_bp(value)
        row = existing.get(term)
        if row is None:
            session.add(TermDiscount(sku=sku, term=term, discount_bp=bp))
            changed = True
        elif row.discount_bp != bp:
            row.discount_bp = bp
            changed = True
    if changed:
        sku.updated_at = utcnow()  # the SKU's version guards its discounts too: bump it
    return changed


def create_sku(session: Session, *, data: SkuCreate, actor: Actor) -> Sku:
    if catalog_repository.get_sku_by_slug(session, data.id) is not None:
        raise Conflict(f"a SKU {data.id!r} already exists", errors=[coded("id", "taken")])
    gpu_type_id = _gpu_type_id(session, data.gpu)
    _raise_if(
        shape_errors(
            gpu_slug=data.gpu,
            rental_unit=data.rental_unit,
            gpus_per_node=data.gpus_per_node,
            card_counts=data.card_counts,
        )
        + host_ram_errors(host_ram_gib=data.host_ram_gib, gpus_per_node=data.gpus_per_node)
        + link_errors(intra_node_link=data.intra_node_link, inter_node_fabric=data.inter_node_fabric)
        + discount_errors({term: discount_bp(value) for term, value in data.discounts.items()})
    )
    price = price_row(session, data.price, actor=actor, field="price.")
    fields = {attr: getattr(data, api) for api, attr in SKU_FIELDS.items()}
    sku = Sku(slug=data.id, gpu_type_id=gpu_type_id, status="active", **fields)
    catalog_repository.add(session, sku)
    price.sku = sku
    catalog_repository.add(session, price)
    for term, value in data.discounts.items():
        catalog_repository.add(session, TermDiscount(sku=sku, term=term, discount_bp=discount_bp(value)))
    session.refresh(sku)
    record(
        session,
        actor=actor,
        action="sku.create",
        entity_type="sku",
        entity_id=sku.slug,
        before=None,
        after={**snapshot(sku), "price": {"amount": data.price.amount, "currency": data.price.currency}},
    )
    return sku


def update_sku(session: Session, *, slug: str, data: SkuPatch, actor: Actor) -> Sku:
    sku = get_sku(session, slug)
    check_version(session, sku, data.version)
    sent = data.model_fields_set - {"version"}
    _raise_if(
        [_error(f, "must not be null") for f in sorted(sent) if getattr(data, f) is None and f not in NULLABLE_FIELDS]
    )
    before = snapshot(sku)
    gpu = data.gpu if data.gpu is not None and "gpu" in sent else sku.gpu_type.slug
    merged = {
        f: getattr(data, f) if f in sent else getattr(sku, SKU_FIELDS[f])
        for f in ("rental_unit", "gpus_per_node", "card_counts")
    }
    if "gpu" in sent:
        gpu_type_id = _gpu_type_id(session, gpu)
    links = link_errors(
        intra_node_link=data.intra_node_link if "intra_node_link" in sent else None,
        inter_node_fabric=data.inter_node_fabric if "inter_node_fabric" in sent else None,
    )
    terms = merged_discount_errors(sku, data.discounts) if data.discounts else []
    ram = data.host_ram_gib if "host_ram_gib" in sent else sku.host_ram_gib
    host = host_ram_errors(host_ram_gib=ram, gpus_per_node=merged["gpus_per_node"])
    regions = dropped_region_errors(session, sku, data.regions) if "regions" in sent and data.regions else []
    _raise_if(shape_errors(gpu_slug=gpu, **merged) + host + links + terms + regions)
    for api in sent & SKU_FIELDS.keys():
        if getattr(sku, SKU_FIELDS[api]) != getattr(data, api):
            setattr(sku, SKU_FIELDS[api], getattr(data, api))
    if "gpu" in sent and gpu_type_id != sku.gpu_type_id:
        sku.gpu_type_id = gpu_type_id
    if data.discounts:
        set_discounts(session, sku, data.discounts)
    return _save(session, sku, data.version, before, actor, "sku.update")


def _save(session: Session, sku: Sku, version: int, before: dict[str, Any], actor: Actor, action: str) -> Sku:
    flush(session, sku, version)
    session.refresh(sku)
    after = snapshot(sku)
    if after != before:
        record(session, actor=actor, action=action, entity_type="sku", entity_id=sku.slug, before=before, after=after)
    return sku


def add_price(session: Session, *, slug: str, data: PriceCreate, actor: Actor) -> Sku:
    """A new price row; the SKU's version guards it as it guards the SKU's fields (review R3: two posts based on
    one version both went in, the last silently winning). The `version` sent is checked first, and the bumped
    version's UPDATE … WHERE version = n (`flush`) refuses the second of two posts racing past that check."""
    sku = get_sku(session, slug)
    based_on = data.version  # required (PriceCreate): a post never overwrites a version it did not see
    check_version(session, sku, based_on)
    if data.terms:
        _raise_if(merged_discount_errors(sku, data.terms, field="terms"))
    _raise_if(price_currency_errors(data.currency, priced_addon_currencies(addons_of(session, sku)), "currency"))
    before = snapshot(sku)
    old = current_price(sku)
    price = price_row(session, data, actor=actor)
    price.sku_pk = sku.id
    catalog_repository.add(session, price)
    terms_changed = set_discounts(session, sku, data.terms) if data.terms else False
    sku.updated_at = utcnow()  # a dirty SKU: its UPDATE writes version n + 1 where the version is still n
    flush(session, sku, based_on)
    session.refresh(sku)
    record(
        session,
        actor=actor,
        action="price.create",
        entity_type="sku_price",
        entity_id=sku.slug,
        before=_price_snapshot(old, based_on),
        after=_price_snapshot(price, sku.version),
    )
    if terms_changed:
        after = snapshot(sku)
        record(
            session, actor=actor, action="sku.update", entity_type="sku", entity_id=sku.slug, before=before, after=after
        )
    return sku


def _price_snapshot(price: SkuPrice | None, version: int) -> dict[str, Any] | None:
    """A price as the audit log shows it, with the SKU version it was in force or written at."""
    if price is None:
        return None
    return {
        "amount": str(from_minor(price.amount_minor, price.currency)),
        "currency": price.currency,
        "effective_from": aware(price.effective_from).isoformat(),
        "note": price.note,
        "version": version,
    }


def set_status(session: Session, *, slug: str, version: int, status: str, actor: Actor) -> Sku:
    """Retire or reactivate. A retired SKU leaves the public catalog and the planner; quotes keep
    their own frozen copy of what they sold, so they stay valid."""
    sku = get_sku(session, slug)
    check_version(session, sku, version)
    if sku.status == status:
        return sku
    before = snapshot(sku)
    sku.status = status
    return _save(session, sku, version, before, actor, "sku.retire" if status == "retired" else "sku.reactivate")


def _availability_snapshot(row: SkuAvailability | None) -> dict[str, Any] | None:
    return None if row is None else {"units_available": row.units_available, "version": row.version}


def set_availability(
    session: Session, *, slug: str, region: str, data: AvailabilityIn, actor: Actor
) -> SkuAvailability:
    sku = get_sku(session, slug)
    if region not in sku.regions:
        _raise_if([_error("region", f"{sku.slug} is sold in {', '.join(sku.regions)}")])
    row = repository.get_availability(session, sku_pk=sku.id, region=region, lock=True)
    if row is None and data.version is not None:
        raise Conflict(
            f"{slug} has no availability figure in {region} yet; send version null",
            errors=[version_error(None, data.version)],
        )
    if row is not None and data.version != row.version:
        raise Conflict(
            f"availability of {slug} in {region} {stale_words(row.version, data.version)}: "
            f"now {row.units_available} units. Nothing was saved.",
            errors=[
                stale_error("units_available", row.units_available),
                version_error(row.version, data.version),
            ],
        )
    before = _availability_snapshot(row)
    if row is not None:
        edit = Edit(sku.id, slug, region, row.units_available, data.units_available)
        refuse_overbooking(session, edit, field="units_available", force=data.force)
    if row is None:
        row = SkuAvailability(sku_pk=sku.id, region=region, units_available=data.units_available)
        session.add(row)
    elif row.units_available == data.units_available:
        return row
    else:
        row.units_available = data.units_available
    try:
        session.flush()
    except StaleDataError as exc:
        raise Conflict(
            f"availability of {slug} in {region} changed while saving; reload",
            errors=[stale_error("units_available", None, "stale_race")],
        ) from exc
    record(
        session,
        actor=actor,
        action="availability.set",
        entity_type="sku_availability",
        entity_id=f"{slug}/{region}",
        before=before,
        after=_availability_snapshot(row),
    )
    return row


def addon_out(addon: Any) -> AddonOut:
    amount = None if addon.amount_minor is None else str(from_minor(addon.amount_minor, addon.currency))
    return mirror(AddonOut, addon, amount=amount)


def bandwidth_errors(ports: int | None, gbps: int | None, *, prefix: str = "") -> list[dict[str, str]]:
    """A fabric's bandwidth is ports × Gb/s per port: both given, or neither (an add-on that is not a fabric)."""
    if (ports is None) == (gbps is None):
        return []
    missing = "port_gbps" if gbps is None else "ports_per_server"
    return [_error(f"{prefix}{missing}", "give ports_per_server and port_gbps together, or neither")]


def _bandwidth(data: AddonIn, row: SkuAddon | None) -> dict[str, Any]:
    """The bandwidth fields the edit sends; those it leaves out keep their value (a script that only reprices the
    add-on must not erase the fabric's figure the estimator and the planner size the servers with)."""
    sent = data.model_fields_set
    names = ("ports_per_server", "port_gbps", "bandwidth_source")
    return {name: getattr(data if row is None or name in sent else row, name) for name in names}


def set_addon(session: Session, *, slug: str, code: str, data: AddonIn, actor: Actor) -> Any:
    """Create or edit one add-on of a SKU (e.g. InfiniBand, with its bandwidth); quotes keep the price they were
    issued with."""

    sku = get_sku(session, slug)
    _raise_if([] if _CODE.match(code) else [coded("code", "addon_code")])
    currency = price_currency(sku)
    if data.currency != currency:  # another currency is never added to a total: the add-on would go unpriced
        _invalid(addon_currency_errors(data.currency, [currency], "currency", slug))
    if data.amount is not None and data.status == "active":  # nor in that of a price scheduled to replace it
        later = [p.currency for p in sku.prices if aware(p.effective_from) > utcnow()]
        _raise_if(addon_currency_errors(data.currency, later, "currency", slug))
    amount = None
    if data.amount is not None:
        try:
            amount = to_minor(Decimal(data.amount), data.currency)
        except MoneyError as exc:
            _raise_if([_money_error("amount", exc, data.amount, data.currency)])
    row = next((a for a in addons_of(session, sku) if a.code == code), None)
    if (row.version if row else None) != data.version:
        current = addon_out(row).model_dump() if row else None
        raise Conflict(
            f"add-on {code} of {slug} {stale_words(row.version if row else None, data.version)}; nothing was saved",
            errors=[version_error(row.version if row else None, data.version, now=current)],
        )
    before = addon_out(row).model_dump() if row else None
    bandwidth = _bandwidth(data, row)
    _raise_if(bandwidth_errors(bandwidth["ports_per_server"], bandwidth["port_gbps"]))
    values = {
        "name": data.name,
        "amount_minor": amount,
        "currency": data.currency,
        "per_unit": data.per_unit,
        "status": data.status,
        **bandwidth,
    }
    if row is None:
        row = SkuAddon(sku_pk=sku.id, code=code, **values)
        session.add(row)
    for attr, value in values.items():
        if getattr(row, attr) != value:
            setattr(row, attr, value)
    try:
        session.flush()
    except StaleDataError as exc:
        raise Conflict(
            f"add-on {code} of {slug} changed while saving; reload", errors=[stale_error("version", None, "stale_race")]
        ) from exc
    after = addon_out(row).model_dump()
    if after != before:
        record(
            session,
            actor=actor,
            action="addon.set",
            entity_type="sku_addon",
            entity_id=f"{slug}/{code}",
            before=before,
            after=after,
        )
    return row
