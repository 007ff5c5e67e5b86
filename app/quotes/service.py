"""Quote rules: price a request from the catalog as it stands, freeze it, number it, and move it
through its lifecycle (issued → accepted | cancelled | expired).

Every figure is computed here in integer minor units from the catalog's Decimal prices; the
client sends no prices (any it sends are ignored by the schema). The quote keeps its own copy of
each figure, so later catalog edits never change an issued quote.
"""

from __future__ import annotations

import math
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from importlib.metadata import PackageNotFoundError, version
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy.orm import Session

from app.capacity.service import CapacityTaken, priced_at
from app.catalog import repository as catalog_repository
from app.catalog.models import Sku, SkuAddon
from app.catalog.pricing import sku_pricing
from app.catalog.service import FABRIC_ADDON_PREFIXES, fabric_addon_of, joining_fabric
from app.catalog.zone import catalog_zone
from app.common.errors import Conflict, InvalidInput, NotFound, refused
from app.common.money import bp_to_percent, discounted_line, from_minor, to_minor
from app.common.schemas import mirror
from app.estimator.vocabulary import MAX_QUOTE_MONTHS, QUOTE_STATUSES, TERM_MONTHS, Term
from app.planner.misses import TERM_WARN_RATIO
from app.planner.offers import DAYS_PER_BILLED_MONTH, billed_months
from app.quotes import admission, documents, events, printing, repository, reservations
from app.quotes.caveats import CAVEATS
from app.quotes.models import Quote, QuoteLine
from app.quotes.schemas import (
    CustomerOut,
    QuoteCreate,
    QuoteLineOut,
    QuoteLinks,
    QuoteList,
    QuoteNoteOut,
    QuoteOut,
)
from app.text import messages

PUBLIC_ID_BYTES = 24  # 192 random bits → 32 URL-safe characters
PUBLIC_ID_RE = re.compile(r"^[A-Za-z0-9_-]{32}$")
MAX_NODES = 64
STATUSES = QUOTE_STATUSES


@dataclass(frozen=True, slots=True)
class Created:
    quote: QuoteOut
    created: bool  # False: an idempotent replay of an earlier request


def _now() -> datetime:
    return datetime.now(UTC)


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)  # SQLite returns naive UTC


def estimator_version() -> str:
    try:
        return version("gpu-sizer")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "0.0.0+source"


# ---------------------------------------------------------------- pricing (integer minor units)


def line_amounts(unit_minor: int, quantity: int, months: int, discount_bp: int = 0) -> tuple[int, int, int]:
    """(gross, discount, amount) of a line, all integers, by app.common.money.discounted_line (the discount on the
    line's subtotal, rounded once). Refuses anything but ints (no floats)."""
    for value in (unit_minor, quantity, months, discount_bp):
        if type(value) is not int:
            raise TypeError(f"money arithmetic takes integer minor units, got {type(value).__name__}")
    gross, discount, amount = discounted_line(Decimal(unit_minor), quantity, months, discount_bp, Decimal(1))
    return int(gross), int(discount), int(amount)


def _money(minor: int | None, currency: str) -> str | None:
    return None if minor is None else str(from_minor(minor, currency))


def _resolve_sku(session: Session, sku_id: str) -> Sku:
    sku = catalog_repository.get_sku_by_slug(session, sku_id)
    if sku is None or sku.status != "active":
        active = [s.slug for s in catalog_repository.list_skus(session)]
        raise refusal(
            "sku_id", "sku_retired" if sku is not None else "sku_unknown", {"sku_id": sku_id, "active": active}
        )
    return sku


def refusal(field: str, code: str, params: dict[str, Any], message: str | None = None) -> InvalidInput:
    """A 422 on `field` worded from its code (app.text.messages.QUOTE_CHECKS) unless `message` gives the words (the
    estimator's own, for a plan the SKU cannot run), its figures in `errors[].params`."""
    message = messages.quote_check(code, params) if message is None else message
    return InvalidInput(
        f"{field}: {message}", errors=[{"field": field, "message": message, "type": code, "params": params}]
    )


def units_refusal(sku: Sku, quantity: int) -> InvalidInput | None:
    """The 422 of a quantity the SKU does not rent: a card SKU's cards not one of its card counts; None when it
    rents them. Several servers of a SKU that no fabric joins rent as separate servers (serving replicas, separate
    jobs): a plan that runs one job across them is refused by the plan check (app.quotes.plan_check)."""
    if sku.rental_unit == "card" and quantity not in sku.card_counts:
        params = {"sku": sku.slug, "quantity": quantity, "card_counts": sorted(sku.card_counts)}
        return refusal("quantity", "quantity_card_counts", params)
    return None


def _units(sku: Sku, quantity: int) -> tuple[int, int]:
    """(nodes, cards) for the requested quantity, checked against how the SKU is rented: one of its card counts, or
    whole servers (several of a SKU that no fabric joins are separate servers: `units_refusal`)."""
    if (refused := units_refusal(sku, quantity)) is not None:
        raise refused
    if sku.rental_unit == "card":
        return 1, quantity
    if quantity > MAX_NODES:
        raise refusal("quantity", "quantity_max", {"max_nodes": MAX_NODES})
    return quantity, quantity * sku.gpus_per_node


def whole_years(months: int) -> int:
    """The fewest months of whole years that cover `months` (an annual term bills 12, 24, …)."""
    return TERM_MONTHS["annual"] * math.ceil(months / TERM_MONTHS["annual"])


def annual_refusal(months: int, quote_months: int) -> InvalidInput:
    """An annual term's months are whole years: the 422 names the months to quote instead."""
    return refusal("months", "months_annual", {"months": months, "quote_months": quote_months})


def _months(term: str, months: int | None) -> int:
    if term == "annual":
        months = TERM_MONTHS["annual"] if months is None else months
        if months % TERM_MONTHS["annual"]:
            raise annual_refusal(months, whole_years(months))
        return months
    return 1 if months is None else months


def _offered_addons(session: Session, sku: Sku) -> list[SkuAddon]:
    return [a for a in catalog_repository.addons_for_sku(session, sku.id) if a.status == "active"]


def _addons(offered: list[SkuAddon], sku: Sku, codes: list[str]) -> list[SkuAddon]:
    if len(set(codes)) != len(codes):
        raise refusal("addons", "addons_repeated", {})
    by_code = {a.code: a for a in offered}
    unknown = [code for code in codes if code not in by_code]
    if unknown:
        params = {"unknown": unknown, "sku": sku.slug, "allowed": list(by_code)}
        raise refusal("addons", "addons_unknown" if by_code else "addons_none_offered", params)
    return [by_code[code] for code in codes]


@dataclass(frozen=True, slots=True)
class _Priced:
    currency: str
    price_id: int
    price_effective_from: datetime
    discount_bp: int
    unit_list_minor: int
    unit_effective_minor: int
    lines: list[QuoteLine]
    notes: list[QuoteNote]


# A quote's note as a code and its parameters (app/text/note_words.py QUOTE_NOTES words it); the snapshot keeps both the
# codes (`note_codes`, read by the printable page in the reader's language) and the English (`notes`, the API's).
QuoteNote = tuple[str, dict[str, Any]]


def _price(
    sku: Sku,
    addons: list[SkuAddon],
    *,
    quantity: int,
    nodes: int,
    cards: int,
    term: Term,
    months: int,
    at: datetime | None = None,
) -> _Priced:
    """The quote's lines at the price in force at `at` (None: now): its rental's first day (`priced_at`)."""
    pricing = sku_pricing(sku, at=at)
    if pricing is None:
        raise refusal("sku_id", "sku_unpriced", {"sku": sku.slug})
    currency = pricing.currency
    term_price = pricing.terms[term]
    unit_list = to_minor(pricing.monthly_list, currency)
    unit_effective = to_minor(term_price.monthly_effective, currency)
    rental = _line(
        1,
        "rental",
        sku.slug,
        sku.name,
        sku.rental_unit,
        quantity,
        months,
        unit_minor=unit_list,
        discount_bp=term_price.discount_bp,
        note=_term_note(term, term_price.discount_bp),
    )
    lines, notes = [rental], list[QuoteNote]()
    for position, addon in enumerate(addons, start=2):
        line, note = _addon_line(addon, position, nodes=nodes, cards=cards, months=months, currency=currency)
        lines.append(line)
        notes.extend([note] if note else [])
    return _Priced(
        currency,
        pricing.price_id,
        pricing.effective_from,
        term_price.discount_bp,
        unit_list,
        unit_effective,
        lines,
        notes,
    )


def _price_at_start(sku: Sku, priced: _Priced, start: date, zone: ZoneInfo) -> list[QuoteNote]:
    """`price_at_start` where the rental's first day has another list price in force than today (a scheduled one):
    each price in its own currency, today's in `current_currency` (review R7-2: a scheduled USD price printed today's
    CNY price as USD); the price's day in the catalog's timezone `zone`, as the start's (review R7-4)."""
    today = sku_pricing(sku)
    if today is None or today.price_id == priced.price_id:
        return []
    effective_day = priced.price_effective_from.astimezone(zone).date()
    params = {"start_date": start.isoformat(), "effective_from": effective_day.isoformat()}
    money = {"monthly_list": _money(priced.unit_list_minor, priced.currency), "currency": priced.currency}
    today_money = {"current": _money(to_minor(today.monthly_list, today.currency), today.currency)}
    return [("price_at_start", params | money | today_money | {"current_currency": today.currency})]


def _term_note(term: str, discount_bp: int) -> str:
    if not discount_bp:
        return ""
    return messages.quote_note("term_discount", {"term": term, "percent": str(bp_to_percent(discount_bp))})


def _addon_line(
    addon: SkuAddon, position: int, *, nodes: int, cards: int, months: int, currency: str
) -> tuple[QuoteLine, QuoteNote | None]:
    quantity = nodes if addon.per_unit == "node" else cards
    amount = addon.amount_minor if addon.currency == currency else None  # another currency: not in the total
    note = "" if amount is not None else messages.quote_note("line_on_consultation", {})
    line = _line(
        position, "addon", addon.code, addon.name, addon.per_unit, quantity, months, unit_minor=amount, note=note
    )
    return line, None if amount is not None else ("addon_on_consultation", {"addon": addon.name})


def _line(
    position: int,
    kind: str,
    code: str,
    description: str,
    unit: str,
    quantity: int,
    months: int,
    *,
    unit_minor: int | None,
    discount_bp: int = 0,
    note: str = "",
) -> QuoteLine:
    """One line item; `unit_minor`: its list price a unit a month in minor units, None when priced on consultation
    (then it stays out of the total); `discount_bp` comes off the line's subtotal (`line_amounts`)."""
    line = QuoteLine(
        position=position,
        kind=kind,
        code=code,
        description=description,
        unit=unit,
        quantity=quantity,
        months=months,
        discount_bp=discount_bp,
        note=note,
    )
    if unit_minor is not None:
        line.unit_price_minor = unit_minor
        _gross, line.discount_minor, line.amount_minor = line_amounts(unit_minor, quantity, months, discount_bp)
    return line


def _notes(
    sku: Sku,
    nodes: int,
    priced_notes: list[QuoteNote],
    *,
    fabric: SkuAddon | None,
    rented: list[SkuAddon],
    joined: bool,
) -> list[QuoteNote]:
    """`fabric`: the add-on that provides the SKU's inter-node fabric (None: it comes with the server, or there is
    none); `joined`: whether any fabric can join the SKU's servers (`joining_fabric`). A quote for several servers
    that no fabric it rents joins says what joins them instead (one whose plan joins them is refused before:
    app.quotes.plan_check)."""
    notes: list[QuoteNote] = [("indicative", {})] if sku.indicative_price else []
    notes.extend(priced_notes)
    servers = {"nodes": nodes, "sku": sku.slug, "network": sku.network}
    if nodes > 1 and not joined:
        notes.append(("servers_not_joined", servers))
    elif nodes > 1 and fabric is not None and fabric not in rented:
        notes.append(("servers_without_fabric", servers | {"addon": fabric.code, "fabric": sku.inter_node_fabric}))
    return notes


def _total_minor(priced: _Priced) -> int:
    return sum(line.amount_minor for line in priced.lines if line.amount_minor is not None)


def _term_notes(
    term: Term, months: int, priced: _Priced, hours: Any, price_for: Callable[[Term, int], _Priced]
) -> list[QuoteNote]:
    """What the option warned of its term, frozen on the quote (review R4-6): `term_longer_than_job` where the months
    bill more than TERM_WARN_RATIO times the job's `hours` (the plan's, recomputed), `other_term_cheaper` where the
    other term bills the same job (its fewest months, as /recommend bills it) less; the figures app/text/messages.py
    words (en, zh) as the option's warnings. None without a time to train."""
    if hours is None or float(hours) <= 0:
        return []
    used, billed = float(hours), months * DAYS_PER_BILLED_MONTH * 24
    notes: list[QuoteNote] = []
    if billed > TERM_WARN_RATIO * used:
        longer: dict[str, Any] = {"term": term, "months": months, "billed_hours": billed, "used_hours": f"{used:.1f}"}
        notes.append(("term_longer_than_job", longer | {"share": f"{used / billed:.4f}"}))  # no float in a quote
    other: Term = "monthly" if term == "annual" else "annual"
    other_months = billed_months(used, other)
    if other_months > MAX_QUOTE_MONTHS:
        return notes
    total, other_total = _total_minor(priced), _total_minor(price_for(other, other_months))
    if other_total < total:
        currency = priced.currency
        params: dict[str, Any] = {"term": term, "months": months, "job_total": _money(total, currency)}
        params["other_term"] = other
        params |= {"other_months": other_months, "other_total": _money(other_total, currency), "currency": currency}
        notes.append(("other_term_cheaper", params))
    return notes


# ---------------------------------------------------------------- snapshot


def _region(sku: Sku, region: str | None) -> list[str]:
    """The regions the quote rents in: the one chosen, which the SKU must be offered in, else every one."""
    if region is None:
        return list(sku.regions)
    if region not in sku.regions:
        raise refusal("region", "region_not_offered", {"sku": sku.slug, "regions": list(sku.regions), "asked": region})
    return [region]


def _sku_snapshot(sku: Sku, regions: list[str]) -> dict[str, Any]:
    return {
        "id": sku.slug,
        "name": sku.name,
        "gpu": {"id": sku.gpu_type.slug, "name": sku.gpu_type.name},
        "rental_unit": sku.rental_unit,
        "gpus_per_node": sku.gpus_per_node,
        "card_counts": list(sku.card_counts),
        "interconnect": sku.interconnect,
        "host_cpu": sku.host_cpu,
        "host_ram_gib": sku.host_ram_gib,
        "host_nvme": sku.host_nvme_tb,
        "network": sku.network,
        "inter_node_fabric": sku.inter_node_fabric,
        "regions": regions,
        "indicative_price": sku.indicative_price,
        "notes": sku.notes,
        "version": sku.version,
    }


@dataclass(frozen=True, slots=True)
class _Terms:
    """What a new quote freezes: the SKU as priced, its add-ons, the request, the servers and GPUs it occupies,
    its notes and the plan's recomputed figures (`check_plan`)."""

    sku: Sku
    priced: _Priced
    addons: list[SkuAddon]
    data: QuoteCreate
    nodes: int
    cards: int
    notes: list[QuoteNote]
    figures: dict[str, Any]


def _snapshot(terms: _Terms) -> dict[str, Any]:
    sku, priced, data, notes = terms.sku, terms.priced, terms.data, terms.notes
    currency = priced.currency
    return {
        "seller": {lang: dict(words) for lang, words in printing.SELLER.items()},  # every language, frozen
        "sku": _sku_snapshot(sku, _region(sku, data.region)),
        "pricing": {
            "price_id": priced.price_id,
            "effective_from": priced.price_effective_from.isoformat(),
            "currency": currency,
            "monthly_list": _money(priced.unit_list_minor, currency),
            "discount_bp": priced.discount_bp,
            "monthly_effective": _money(priced.unit_effective_minor, currency),
        },
        "addons": [
            {
                "id": a.id,
                "code": a.code,
                "name": a.name,
                "per_unit": a.per_unit,
                "version": a.version,
                "monthly_amount": _money(a.amount_minor, a.currency),
                "currency": a.currency,
            }
            for a in terms.addons
        ],
        "nodes": terms.nodes,
        "cards": terms.cards,
        "workload": data.stored_workload(),
        "plan": data.stored_plan(terms.figures),
        "notes": [messages.quote_note(code, params) for code, params in notes],
        "note_codes": [{"code": code, "params": params} for code, params in notes],
    }


# ---------------------------------------------------------------- create


def create_quote(
    session: Session,
    *,
    data: QuoteCreate,
    idempotency_key: str | None = None,
    validity_days: int = 14,
    base_path: str = "/quotes",
    check_plan: Callable[[Session, QuoteCreate], dict[str, Any]] | None = None,
    organisation: str | None = None,
) -> Created:
    """Issue a quote. With an idempotency key, a replay of the same body returns the first quote.
    `check_plan` (the quantity/feasibility check, app.quotes.plan_check) runs on a new
    quote before it is priced; it raises to refuse it, and returns the plan's estimate recomputed on the
    SKU and quantity quoted, which the quote freezes with its plan in place of any figure the client sent
    (`QuotePlan.DERIVED`): a quote never prints a time it did not compute; the caveats on a serving plan's latency it
    returns (app.quotes.caveats) are frozen as notes. `organisation`: the organisation
    of the API key it is issued with, kept on the quote (GET /quotes searches by it); a keyed quote counts
    against the key's own rate limit (app.http.ratelimit), not the address's QUOTES_PER_MINUTE."""
    digest = admission.request_hash(data)
    scope = organisation or ""  # keys are the caller's own: each organisation's, and one scope for the anonymous
    if idempotency_key is not None and (
        earlier := repository.get_by_idempotency_key(session, idempotency_key, scope=scope)
    ):
        return _replay(earlier, digest, idempotency_key, base_path)
    sku = _resolve_sku(session, data.sku_id)
    _region(sku, data.region)  # refused before anything is numbered or written
    offered = _offered_addons(session, sku)
    addons = _addons(offered, sku, data.addons)  # known add-ons first: the plan check reads which are rented
    figures = check_plan(session, data) if check_plan is not None else {}
    caveats: list[QuoteNote] = [(c["code"], c["params"]) for c in figures.pop(CAVEATS, [])]  # notes, not figures
    nodes, cards = _units(sku, data.quantity)
    months = _months(data.term, data.months)
    start = reservations.start_of(session, data.start_date)
    at = priced_at(session, start)  # the price in force when the rental starts, as /recommend prices its option
    priced = _price(sku, addons, quantity=data.quantity, nodes=nodes, cards=cards, term=data.term, months=months, at=at)
    joined = joining_fabric(sku, offered) is not None
    notes = _notes(sku, nodes, priced.notes, fabric=fabric_addon_of(sku, offered), rented=addons, joined=joined)
    notes += _price_at_start(sku, priced, start, catalog_zone(session))
    notes += _term_notes(
        data.term,
        months,
        priced,
        figures.get("time_to_train_hours"),
        lambda term, m: _price(
            sku, addons, quantity=data.quantity, nodes=nodes, cards=cards, term=term, months=m, at=at
        ),
    )
    notes += caveats
    now = _now()
    regions = _region(sku, data.region)
    try:
        rental = reservations.plan_rental(
            session, sku=sku, regions=regions, quantity=data.quantity, start=start, months=months, now=now
        )
    except CapacityTaken:
        if (replay := _replay_twin(session, idempotency_key, scope, digest, base_path)) is not None:
            return replay
        raise
    if organisation is None:  # no API key: checked against what is free, held by nothing (review R4-5)
        notes = [*notes, *reservations.unheld_notes(rental, sku)]
        rental = reservations.unheld(rental)
    terms = _Terms(sku, priced, addons, data, nodes=nodes, cards=cards, notes=notes, figures=figures)
    quote = _new_quote(terms, months=months, now=now, validity_days=validity_days)
    quote.idempotency_key, quote.request_hash = idempotency_key, digest if idempotency_key else None
    quote.idempotency_scope = scope
    quote.organisation = organisation
    # Numbering last, then commit at once: the counter lock (numbers follow commit order, no gaps) is held for
    # a few statements, not for the pricing above nor the response below, so concurrent quotes queue briefly.
    quote.sequence = repository.next_number(session, now.year)
    quote.number = f"Q-{now.year}-{quote.sequence:06d}"
    if idempotency_key is not None and (
        earlier := repository.get_by_idempotency_key(session, idempotency_key, scope=scope)
    ):
        replay = _replay(earlier, digest, idempotency_key, base_path)  # a concurrent twin came first
        session.rollback()  # give the number back
        return replay
    if organisation is None:  # a key's quotes count against the key's own limit
        admission.count_new_quote(session)  # only a quote written counts: a replay or a refusal spends nothing
    repository.add(session, quote)
    try:
        reservations.hold_rental(session, quote=quote, sku=sku, rental=rental, now=now)  # under the number's lock
    except CapacityTaken:
        session.rollback()  # the quote and its number go back, whoever catches the refusal (the wizard's form)
        if (replay := _replay_twin(session, idempotency_key, scope, digest, base_path)) is not None:
            return replay
        raise
    events.emit(session, quote, "quote.issued")  # the outbox: committed with the quote
    session.commit()
    return Created(quote_out(quote, base_path=base_path, now=now), created=True)


def _replay_twin(session: Session, key: str | None, scope: str, digest: str, base_path: str) -> Created | None:
    """The replay of a request refused for capacity whose key a concurrent twin has used meanwhile (review R6-2): the
    units it found taken are the twin's own hold, committed with the twin's quote after this request first looked
    the key up. Read again in a new transaction (SQLite's reads keep the snapshot their transaction began with), so
    a retry sent at the same moment as the first answers as one sent after it: the quote, 200. None: no twin."""
    if key is None:
        return None
    session.rollback()  # nothing is written before a capacity refusal: the quote and its number go back
    earlier = repository.get_by_idempotency_key(session, key, scope=scope)
    return None if earlier is None else _replay(earlier, digest, key, base_path)


def _replay(earlier: Quote, digest: str, key: str, base_path: str) -> Created:
    """The quote first issued under `key` in the caller's scope (found by it: another organisation's keys are
    never looked at), for the same body; another body is a 409."""
    if earlier.request_hash != digest:
        raise refused(Conflict, "idempotency_key_reused", field="idempotency_key", key=key)
    return Created(quote_out(earlier, base_path=base_path), created=False)


def _new_quote(terms: _Terms, *, months: int, now: datetime, validity_days: int) -> Quote:
    """The quote, priced and frozen; its number is set by the caller under the counter lock."""
    sku, priced, data = terms.sku, terms.priced, terms.data
    priced_lines = [line for line in priced.lines if line.amount_minor is not None]
    gross = sum((line.unit_price_minor or 0) * line.quantity * line.months for line in priced_lines)
    discount_total = sum(line.discount_minor or 0 for line in priced_lines)
    return Quote(
        public_id=secrets.token_urlsafe(PUBLIC_ID_BYTES),
        year=now.year,
        status="issued",
        valid_until=now + timedelta(days=validity_days),
        currency=priced.currency,
        sku_pk=sku.id,
        sku_slug=sku.slug,
        sku_version=sku.version,
        sku_price_id=priced.price_id,
        term=data.term,
        months=months,
        quantity=data.quantity,
        discount_bp=priced.discount_bp,
        unit_list_minor=priced.unit_list_minor,
        unit_effective_minor=priced.unit_effective_minor,
        subtotal_minor=gross,
        discount_total_minor=discount_total,
        total_minor=gross - discount_total,
        estimator_version=estimator_version(),
        snapshot=_snapshot(terms),
        customer_name=data.customer.name,
        customer_company=data.customer.company,
        customer_email=str(data.customer.email),
        cancel_reason="",
        lines=priced.lines,
        created_at=now,
        updated_at=now,
    )


# ---------------------------------------------------------------- read


def effective_status(quote: Quote, now: datetime | None = None) -> str:
    if quote.status == "issued" and _aware(quote.valid_until) < (now or _now()):
        return "expired"
    return quote.status


def quote_out(quote: Quote, *, base_path: str = "/quotes", now: datetime | None = None) -> QuoteOut:
    currency, snap = quote.currency, quote.snapshot
    path = f"{base_path}/{quote.public_id}"
    return QuoteOut(
        id=quote.public_id,
        number=quote.number,
        status=effective_status(quote, now),
        created_at=_aware(quote.created_at),
        valid_until=_aware(quote.valid_until),
        accepted_at=quote.accepted_at and _aware(quote.accepted_at),
        cancelled_at=quote.cancelled_at and _aware(quote.cancelled_at),
        currency=currency,
        sku=snap["sku"],
        term=quote.term,
        months=quote.months,
        quantity=quote.quantity,
        unit=snap["sku"]["rental_unit"],
        discount_percent=str(bp_to_percent(quote.discount_bp)),
        unit_list_price=_money(quote.unit_list_minor, currency),
        unit_effective_price=_money(quote.unit_effective_minor, currency),
        lines=[_line_out(line, currency) for line in quote.lines],
        subtotal=_money(quote.subtotal_minor, currency),
        discount_total=_money(quote.discount_total_minor, currency),
        total=_money(quote.total_minor, currency),
        indicative=bool(snap["sku"]["indicative_price"]) or _fabric_on_consultation(quote),
        fabric_on_consultation=_fabric_on_consultation(quote),
        notes=list(snap["notes"]),
        note_codes=[QuoteNoteOut(**n) for n in snap.get("note_codes", [])],
        customer=CustomerOut(name=quote.customer_name, company=quote.customer_company, email=quote.customer_email),
        workload=snap.get("workload"),
        plan=snap.get("plan"),
        start_date=reservations.start_date_of(quote),
        reservation=reservations.reservation_out(quote, holding=effective_status(quote, now) in ("issued", "accepted")),
        catalog={
            "sku_version": quote.sku_version,
            "price_id": quote.sku_price_id,
            "price_effective_from": snap["pricing"]["effective_from"],
            "addons": [{"code": a["code"], "id": a["id"], "version": a["version"]} for a in snap["addons"]],
        },
        estimator_version=quote.estimator_version,
        links=QuoteLinks(self=path, print=f"{path}/print", pdf=f"{path}.pdf", accept=f"{path}/accept"),
    )


def _fabric_on_consultation(quote: Quote) -> bool:
    """A fabric add-on (InfiniBand, RoCE) is on the quote priced on consultation: its total leaves it out."""
    return any(
        line.kind == "addon" and line.amount_minor is None and line.code.startswith(FABRIC_ADDON_PREFIXES)
        for line in quote.lines
    )


def _line_out(line: QuoteLine, currency: str) -> QuoteLineOut:
    return mirror(
        QuoteLineOut,
        line,
        unit_price=_money(line.unit_price_minor, currency),
        discount_percent=str(bp_to_percent(line.discount_bp)),
        discount=_money(line.discount_minor, currency),
        amount=_money(line.amount_minor, currency),
    )


def get_quote_row(session: Session, *, public_id: str, for_update: bool = False) -> Quote:
    """The quote behind a public id; malformed and unknown ids alike are 404 (nothing to guess from)."""
    quote = None
    if PUBLIC_ID_RE.fullmatch(public_id):
        quote = repository.get_by_public_id(session, public_id, for_update=for_update)
    if quote is None:
        raise refused(NotFound, "quote_unknown", field="quote")
    return quote


def get_quote(session: Session, *, public_id: str, base_path: str = "/quotes") -> QuoteOut:
    return quote_out(get_quote_row(session, public_id=public_id), base_path=base_path)


def list_quotes(
    session: Session,
    *,
    status: str | None = None,
    customer: str | None = None,
    created_from: datetime | None = None,
    created_to: datetime | None = None,
    limit: int = 50,
    offset: int = 0,
) -> QuoteList:
    """Quotes, newest first. `customer` matches name, company or email (substring, any case);
    `created_from` is inclusive, `created_to` exclusive; status `expired` includes issued quotes past validity."""
    if status is not None and status not in STATUSES:
        raise refusal("status", "status_unknown", {"status": status, "statuses": list(STATUSES)})
    if not 1 <= limit <= 500 or offset < 0:
        raise refusal("limit", "page_bounds", {})
    now = _now()
    filters = repository.QuoteFilter(status=status, customer=customer, created_from=created_from, created_to=created_to)
    rows, total = repository.list_quotes(session, filters, now=now, limit=limit, offset=offset)
    return QuoteList(items=[quote_out(q, now=now) for q in rows], total=total, limit=limit, offset=offset)


# ---------------------------------------------------------------- lifecycle


def accept_quote(session: Session, *, public_id: str, base_path: str = "/quotes", by_sales: bool = False) -> QuoteOut:
    """The customer accepts through the public link. Accepting twice is harmless. A quote issued without an API key
    holds nothing; where accepting it would take tracked units, only sales accept it (`by_sales`: an API key with
    quotes:write, or an admin's token; reservations.confirm: 403 otherwise)."""
    quote = get_quote_row(session, public_id=public_id, for_update=True)
    now = _now()
    status = effective_status(quote, now)
    if status == "expired" or status == "cancelled":
        raise _not_acceptable(quote, status)
    if status == "issued":
        quote.status, quote.accepted_at, quote.updated_at = "accepted", now, now
        session.flush()  # on SQLite this opens the write transaction: a count of free units below sees every commit
        try:
            sales = by_sales or quote.organisation is not None  # a sales tool issued it: its link takes units
            reservations.confirm(session, quote, now=now, by_sales=sales)
        except (CapacityTaken, reservations.SalesConfirmationNeeded):
            session.rollback()  # the quote stays issued, whoever catches the refusal (the quote's page)
            raise
        events.emit(session, quote, "quote.accepted")
        session.flush()
    return quote_out(quote, base_path=base_path, now=now)


def _not_acceptable(quote: Quote, status: str) -> Conflict:
    """The 409 of accepting an expired or cancelled quote: its code (`accept_expired`, `accept_cancelled`) and figures
    on `quote`, worded in the request's language by app.common.errors (review R7-8: it answered English only)."""
    params = {"quote": quote.number}
    if status == "expired":
        params["expired_on"] = _aware(quote.valid_until).date().isoformat()
    return _quote_conflict(f"accept_{status}", params)


def _quote_conflict(code: str, params: dict[str, str]) -> Conflict:
    """A 409 on the quote as a whole, with its code (`errors[0].type`, `code`) and figures (`params`), for
    app.common.errors to word in the request's language and the admin pages in theirs."""
    message = messages.quote_check(code, params)
    error = {"field": "quote", "message": message, "type": code, "params": params}
    return Conflict(message, errors=[error], extra={"code": code})


def cancel_quote(
    session: Session, *, public_id: str, actor: str, reason: str = "", base_path: str = "/quotes"
) -> QuoteOut:
    """An admin cancels an issued quote (`actor` is recorded). Cancelling twice is harmless."""
    quote = get_quote_row(session, public_id=public_id, for_update=True)
    now = _now()
    status = effective_status(quote, now)
    if status == "accepted" or status == "expired":
        # review R7-8: answered English only; now `cancel_accepted` / `cancel_expired`, worded in the request's language
        raise _quote_conflict(f"cancel_{status}", {"quote": quote.number})
    if status == "issued":
        quote.status, quote.cancelled_at, quote.cancelled_by = "cancelled", now, actor[:200]
        quote.cancel_reason, quote.updated_at = reason, now
        reservations.release(session, quote)
        events.emit(session, quote, "quote.cancelled")
        session.flush()
    return quote_out(quote, base_path=base_path, now=now)


def printable(session: Session, *, public_id: str, base_path: str = "/quotes") -> tuple[QuoteOut, dict[str, Any]]:
    """What the printed page and the PDF show: the quote and the seller block frozen with it (printing.seller_block
    words it in the page's language)."""
    quote = get_quote_row(session, public_id=public_id)
    return quote_out(quote, base_path=base_path), dict(quote.snapshot["seller"])


def pdf_source(
    session: Session, *, public_id: str, lang: str, base_url: str = ""
) -> tuple[QuoteOut, str, bytes | None]:
    """The quote, the HTML its PDF is made from, and that PDF when it was rendered from that HTML before."""
    row = get_quote_row(session, public_id=public_id)
    quote, seller = quote_out(row, base_path="/quotes"), dict(row.snapshot["seller"])
    html = printing.render_html(quote, seller, lang=lang, inline_css=True, base_url=base_url)
    digest = documents.html_digest(html)
    return quote, html, repository.cached_document(session, quote_id=row.id, lang=lang, html_sha256=digest)


def keep_pdf(session: Session, *, public_id: str, lang: str, html: str, pdf: bytes, max_total_bytes: int) -> None:
    row = get_quote_row(session, public_id=public_id)
    repository.keep_document(
        session,
        quote_id=row.id,
        lang=lang,
        html_sha256=documents.html_digest(html),
        pdf=pdf,
        max_total_bytes=max_total_bytes,
    )
