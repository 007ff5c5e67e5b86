"""Quote queries. The only place that writes SQL for quotes and their numbers."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, and_, delete, func, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from app.db.eviction import evict_least_used
from app.quotes.models import Quote, QuoteDocument, QuoteNumberCounter

# A read marks its PDF used at most this often (eviction order is exact to within it); eviction deletes
# in batches of at most this many rows.
DOCUMENT_TOUCH_EVERY = timedelta(minutes=10)
EVICT_BATCH = 200


def get_by_public_id(session: Session, public_id: str, *, for_update: bool = False) -> Quote | None:
    query = select(Quote).where(Quote.public_id == public_id)
    if for_update:
        query = query.with_for_update()  # PostgreSQL row lock; SQLite serialises writers anyway
    return session.scalar(query)


def get_by_idempotency_key(session: Session, key: str, *, scope: str) -> Quote | None:
    """The quote issued under `key` in `scope` (an organisation's, or "" for callers without an API key)."""
    return session.scalar(select(Quote).where(Quote.idempotency_scope == scope, Quote.idempotency_key == key))


def next_number(session: Session, year: int) -> int:
    """Take the year's next quote number and hold the counter row's lock until the transaction ends.

    One statement, `INSERT … ON CONFLICT (year) DO UPDATE SET last_value = last_value + 1 RETURNING`,
    creates the year's row or bumps it. On PostgreSQL the update takes the row lock that concurrent
    quote creations queue on; on SQLite the statement opens the write transaction, which excludes every
    other writer until commit. Either way a rolled-back quote gives its number back: no gaps.
    """
    insert = postgresql.insert if session.get_bind().dialect.name == "postgresql" else sqlite.insert
    statement = insert(QuoteNumberCounter).values(year=year, last_value=1)
    upsert = statement.on_conflict_do_update(
        index_elements=[QuoteNumberCounter.year], set_={"last_value": QuoteNumberCounter.last_value + 1}
    ).returning(QuoteNumberCounter.last_value)
    return int(session.execute(upsert).scalar_one())


def add(session: Session, row: Quote) -> None:
    session.add(row)
    session.flush()


def _status_clause(status: str, now: datetime) -> ColumnElement[bool]:
    """Expiry is computed on read: an issued quote past `valid_until` counts as expired."""
    if status == "expired":
        return or_(Quote.status == "expired", and_(Quote.status == "issued", Quote.valid_until < now))
    if status == "issued":
        return and_(Quote.status == "issued", Quote.valid_until >= now)
    return Quote.status == status


@dataclass(frozen=True, slots=True)
class QuoteFilter:
    """Which quotes to list: each given field must match (`created_from` inclusive, `created_to` not)."""

    status: str | None = None
    customer: str | None = None  # a substring of the name, company or email, any case
    created_from: datetime | None = None
    created_to: datetime | None = None
    customer_email: str | None = None  # the whole address, any case
    company: str | None = None  # a substring of the customer's company, any case
    organisation: str | None = None  # the API key's organisation the quote was issued for (app.apikeys)


def _contains(text: str) -> str:
    """A LIKE pattern (escape `\\`) matching `text` anywhere, lower-cased."""
    escaped = text.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _conditions(filters: QuoteFilter, now: datetime) -> list[ColumnElement[bool]]:
    conditions: list[ColumnElement[bool]] = []
    if filters.status:
        conditions.append(_status_clause(filters.status, now))
    if filters.customer:
        pattern = _contains(filters.customer)
        conditions.append(
            or_(
                *(
                    func.lower(column).like(pattern, escape="\\")
                    for column in (Quote.customer_name, Quote.customer_company, Quote.customer_email)
                )
            )
        )
    if filters.customer_email:
        conditions.append(func.lower(Quote.customer_email) == filters.customer_email.lower())
    if filters.company:
        conditions.append(func.lower(Quote.customer_company).like(_contains(filters.company), escape="\\"))
    if filters.organisation is not None:
        conditions.append(Quote.organisation == filters.organisation)
    if filters.created_from is not None:
        conditions.append(Quote.created_at >= filters.created_from)
    if filters.created_to is not None:
        conditions.append(Quote.created_at < filters.created_to)
    return conditions


def search_quotes(
    session: Session,
    filters: QuoteFilter,
    *,
    now: datetime,
    limit: int,
    after: tuple[datetime, int] | None,
    only_organisation: str | None,
) -> list[Quote]:
    """Up to `limit` quotes matching `filters` (and issued for `only_organisation` when given), newest first in
    (created_at, id) order, starting after the quote `after` names (keyset pagination: a page never repeats
    nor skips a quote created meanwhile)."""
    conditions = _conditions(filters, now)
    if only_organisation is not None:
        conditions.append(Quote.organisation == only_organisation)
    if after is not None:
        created_at, quote_id = after
        conditions.append(or_(Quote.created_at < created_at, and_(Quote.created_at == created_at, Quote.id < quote_id)))
    query = select(Quote).where(*conditions).order_by(Quote.created_at.desc(), Quote.id.desc()).limit(limit)
    return list(session.scalars(query))


def list_quotes(
    session: Session, filters: QuoteFilter, *, now: datetime, limit: int, offset: int
) -> tuple[list[Quote], int]:
    conditions = _conditions(filters, now)
    total = session.scalar(select(func.count()).select_from(Quote).where(*conditions)) or 0
    rows = session.scalars(
        select(Quote).where(*conditions).order_by(Quote.created_at.desc(), Quote.id.desc()).limit(limit).offset(offset)
    )
    return list(rows), total


def cached_document(session: Session, *, quote_id: int, lang: str, html_sha256: str) -> bytes | None:
    """The stored PDF of this quote and language when it was rendered from this very HTML (marked used)."""
    row = session.execute(
        select(QuoteDocument.pdf, QuoteDocument.used_at).where(
            QuoteDocument.quote_id == quote_id, QuoteDocument.lang == lang, QuoteDocument.html_sha256 == html_sha256
        )
    ).first()
    if row is None:
        return None
    now = datetime.now(UTC)
    used_at = row.used_at if row.used_at.tzinfo is not None else row.used_at.replace(tzinfo=UTC)
    if used_at < now - DOCUMENT_TOUCH_EVERY:
        session.execute(
            update(QuoteDocument)
            .where(QuoteDocument.quote_id == quote_id, QuoteDocument.lang == lang)
            .values(used_at=now)
        )
    return bytes(row.pdf)


def keep_document(
    session: Session, *, quote_id: int, lang: str, html_sha256: str, pdf: bytes, max_total_bytes: int
) -> None:
    """Store a rendered PDF in place of the quote's PDF in that language, then delete the least recently
    used PDFs while all of them hold more than `max_total_bytes`. A second worker that rendered the same
    document meanwhile writes the same row."""
    insert = postgresql.insert if session.get_bind().dialect.name == "postgresql" else sqlite.insert
    now = datetime.now(UTC)
    values = {"html_sha256": html_sha256, "pdf": pdf, "size_bytes": len(pdf), "created_at": now, "used_at": now}
    statement = insert(QuoteDocument).values(quote_id=quote_id, lang=lang, **values)
    session.execute(statement.on_conflict_do_update(index_elements=["quote_id", "lang"], set_=values))
    evict_documents(session, max_total_bytes)


def documents_bytes(session: Session) -> int:
    return int(session.scalar(select(func.coalesce(func.sum(QuoteDocument.size_bytes), 0))) or 0)


def evict_documents(session: Session, max_total_bytes: int) -> int:
    """Delete the PDFs used least recently until they hold at most `max_total_bytes`; the count deleted."""
    least_used = (
        select(QuoteDocument.quote_id, QuoteDocument.lang, QuoteDocument.size_bytes)
        .order_by(QuoteDocument.used_at, QuoteDocument.quote_id)
        .limit(EVICT_BATCH)
    )

    def remove(keys: list[tuple[Any, ...]]) -> None:
        for quote_id, lang in keys:
            session.execute(delete(QuoteDocument).where(QuoteDocument.quote_id == quote_id, QuoteDocument.lang == lang))

    return evict_least_used(session, documents_bytes(session) - max_total_bytes, least_used, remove)


def expirable(session: Session, *, now: datetime, limit: int) -> list[Quote]:
    """Issued quotes past their validity, oldest first; on PostgreSQL locked, skipping those another worker holds."""
    query = select(Quote).where(Quote.status == "issued", Quote.valid_until < now).order_by(Quote.id).limit(limit)
    if session.get_bind().dialect.name == "postgresql":
        query = query.with_for_update(skip_locked=True, of=Quote)
    return list(session.scalars(query))


def mark_expired(session: Session, *, quote_id: int, now: datetime) -> bool:
    """Issued → expired, only if it still is issued and past its validity (another process may have been first)."""
    statement = (
        update(Quote)
        .where(Quote.id == quote_id, Quote.status == "issued", Quote.valid_until < now)
        .values(status="expired", updated_at=now)
        .execution_options(synchronize_session=False)
    )
    return bool(session.execute(statement).rowcount)  # type: ignore[attr-defined]


def numbers_of(session: Session, quote_ids: list[int]) -> list[str]:
    """The quotes' numbers (Q-2026-000123), in order."""
    if not quote_ids:
        return []
    return list(session.scalars(select(Quote.number).where(Quote.id.in_(quote_ids)).order_by(Quote.number)))
