"""Declarative base with a constraint naming convention, so Alembic can name (and drop) constraints."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import CheckConstraint, DateTime, Dialect, Integer, MetaData
from sqlalchemy.orm import DeclarativeBase, Mapped, declared_attr, mapped_column
from sqlalchemy.types import TypeDecorator

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


def one_of(column: str, values: Iterable[str], *, name: str | None = None) -> CheckConstraint:
    """`column IN ('a', 'b')`, from a vocabulary tuple (app/estimator/vocabulary.py), so the database
    refuses what the code does not know. The values are the code's own words, never user input."""
    listed = ", ".join(f"'{value}'" for value in values)
    return CheckConstraint(f"{column} IN ({listed})", name=name or column)


def utcnow() -> datetime:
    return datetime.now(UTC)


class UtcDateTime(TypeDecorator[datetime]):
    """A moment, stored as UTC and read back aware. An aware value is converted to UTC before it is stored: SQLite
    keeps a datetime as its wall-clock text without the offset, so 2027-03-01T00:00+08:00 was stored (and
    compared) as 00:00 UTC, eight hours late (review R5-2); PostgreSQL's timestamptz converts on its own. A naive
    value is UTC (the code's own `utcnow` and SQLite's read-back); a price's `effective_from` sent without an offset
    (a bare date) is made aware in the catalog's timezone before it gets here (app.catalog.zone.catalog_moment)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None or value.tzinfo is None:
            return value
        return value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class TimestampMixin:
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow, onupdate=utcnow)


class VersionedMixin:
    """Optimistic locking: every UPDATE says `WHERE version = n` and writes n + 1, so an edit based on
    a stale read changes nothing and raises StaleDataError instead of overwriting another's change."""

    version: Mapped[int] = mapped_column(Integer, default=1)

    @declared_attr.directive
    def __mapper_args__(cls) -> dict[str, Any]:
        return {"version_id_col": cls.__table__.c.version}  # type: ignore[attr-defined]
