"""Quote queries. The only place that writes SQL for quotes, their numbers and SKU add-ons."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ColumnElement, and_, func, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from app.quotes.models import Quote, QuoteNumberCounter, SkuAddon


def get_by_public_id(session: Session, public_id: str, *, for_update: bool = False) -> Quote | None:
    query = select(Quote).where(Quote.public_id == public_id)
    if for_update:
        query = query.with_for_update()  # PostgreSQL row lock; SQLite serialises writers anyway
    return session.scalar(query)


def get_by_idempotency_key(session: Session, key: str) -> Quote | None:
    return session.scalar(select(Quote).where(Quote.idempotency_key == key))


def addons_for_sku(session: Session, sku_id: int) -> list[SkuAddon]:
    return list(session.scalars(select(SkuAddon).where(SkuAddon.sku_id == sku_id).order_by(SkuAddon.code)))


def get_addon(session: Session, sku_id: int, code: str) -> SkuAddon | None:
    return session.scalar(select(SkuAddon).where(SkuAddon.sku_id == sku_id, SkuAddon.code == code))


def lock_counter(session: Session, year: int) -> None:
    """Make sure the year's counter row exists, then hold its lock until the transaction ends.

    PostgreSQL: `INSERT … ON CONFLICT DO NOTHING` then `SELECT … FOR UPDATE` (a row lock that
    concurrent quote creations queue on). SQLite: the INSERT opens the write transaction, which
    already excludes every other writer until commit.
    """
    insert = postgresql.insert if session.get_bind().dialect.name == "postgresql" else sqlite.insert
    session.execute(insert(QuoteNumberCounter).values(year=year, last_value=0).on_conflict_do_nothing())
    session.execute(select(QuoteNumberCounter.last_value).where(QuoteNumberCounter.year == year).with_for_update())


def bump_counter(session: Session, year: int) -> int:
    """The next number of `year`; call after lock_counter, in the transaction that inserts the quote."""
    statement = (
        update(QuoteNumberCounter)
        .where(QuoteNumberCounter.year == year)
        .values(last_value=QuoteNumberCounter.last_value + 1)
        .returning(QuoteNumberCounter.last_value)
    )
    return session.execute(statement).scalar_one()


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


def list_quotes(
    session: Session,
    *,
    now: datetime,
    status: str | None,
    customer: str | None,
    created_from: datetime | None,
    created_to: datetime | None,
    limit: int,
    offset: int,
) -> tuple[list[Quote], int]:
    conditions: list[ColumnElement[bool]] = []
    if status:
        conditions.append(_status_clause(status, now))
    if customer:
        escaped = customer.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        pattern = f"%{escaped}%"
        conditions.append(
            or_(*(func.lower(column).like(pattern, escape="\\")
                  for column in (Quote.customer_name, Quote.customer_company, Quote.customer_email)))
        )
    if created_from is not None:
        conditions.append(Quote.created_at >= created_from)
    if created_to is not None:
        conditions.append(Quote.created_at < created_to)
    total = session.scalar(select(func.count()).select_from(Quote).where(*conditions)) or 0
    rows = session.scalars(
        select(Quote).where(*conditions).order_by(Quote.created_at.desc(), Quote.id.desc()).limit(limit).offset(offset)
    )
    return list(rows), total
