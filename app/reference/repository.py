"""Reference price and exchange rate queries."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.reference.models import ExchangeRate, ReferencePrice


def list_prices(session: Session) -> list[ReferencePrice]:
    return list(session.scalars(select(ReferencePrice).order_by(ReferencePrice.provider, ReferencePrice.id)))


def find_price(session: Session, provider: str, region: str, instance_type: str) -> ReferencePrice | None:
    query = select(ReferencePrice).where(
        ReferencePrice.provider == provider,
        ReferencePrice.region == region,
        ReferencePrice.instance_type == instance_type,
    )
    return session.scalar(query)


def latest_rate(session: Session, base: str, quote: str, *, at: datetime | None = None) -> ExchangeRate | None:
    query = (
        select(ExchangeRate)
        .where(
            ExchangeRate.base == base,
            ExchangeRate.quote == quote,
            ExchangeRate.effective_from <= (at or datetime.now(UTC)),
        )
        .order_by(ExchangeRate.effective_from.desc(), ExchangeRate.id.desc())
        .limit(1)
    )
    return session.scalar(query)


def rates_in_force(session: Session, *, at: datetime) -> list[ExchangeRate]:
    """Every rate that has taken effect, newest first within each pair (the caller keeps the first of each)."""
    query = (
        select(ExchangeRate)
        .where(ExchangeRate.effective_from <= at)
        .order_by(ExchangeRate.effective_from.desc(), ExchangeRate.id.desc())
    )
    return list(session.scalars(query))


def next_any_rate_change(session: Session, *, after: datetime) -> datetime | None:
    """When the next scheduled rate of any pair takes effect."""
    moment = session.scalar(select(func.min(ExchangeRate.effective_from)).where(ExchangeRate.effective_from > after))
    return _aware(moment)


def next_rate_change(session: Session, base: str, quote: str, *, after: datetime) -> datetime | None:
    """When the next scheduled rate takes effect (SQLite returns naive UTC)."""
    query = select(func.min(ExchangeRate.effective_from)).where(
        ExchangeRate.base == base, ExchangeRate.quote == quote, ExchangeRate.effective_from > after
    )
    return _aware(session.scalar(query))


def _aware(moment: datetime | None) -> datetime | None:
    return moment.replace(tzinfo=UTC) if moment is not None and moment.tzinfo is None else moment


def add(session: Session, row: ReferencePrice | ExchangeRate) -> None:
    session.add(row)
    session.flush()
