"""Per-process cache of values built from the catalog tables, valid for one catalog revision token.

A warm /recommend spends most of its time reading the same SKUs, prices, discounts, availability,
reference prices and exchange rate (six ORM queries); the public catalog reads the SKUs on every call.
A request reads the revision token (one row, app.catalog.revision) and reuses what this process built
for that token. Every catalog write replaces the token in its own transaction, so a price change applies
to the very next request on every worker and every app server. A builder also says when its value stops
being true by itself (a price or exchange rate whose effective date is still to come); the value is
rebuilt from then on.

Values must be plain data (frozen dataclasses, pydantic models), never ORM rows: those belong to the
session that loaded them.

A cache, not a snapshot: in this code base a snapshot is a frozen copy kept as a record (a quote's
terms as issued, an audit entry's before and after, the shipped list of public cloud prices).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TypeVar

from sqlalchemy.orm import Session

from app.catalog.revision import current_token

T = TypeVar("T")
Builder = Callable[[Session], tuple[T, datetime | None]]  # (value, moment it stops being true, or None)


@dataclass(slots=True)
class _Generation:
    token: str
    values: dict[str, tuple[object, datetime | None]] = field(default_factory=dict)


_generation: _Generation | None = None  # replaced whole, never mutated across tokens: safe between threads


@dataclass(slots=True)
class CatalogCache:
    """The catalog as one request sees it: read the token once, then look values up by name."""

    session: Session
    token: str | None

    def get(self, name: str, build: Builder[T]) -> T:
        return self.entry(name, build)[0]

    def entry(self, name: str, build: Builder[T]) -> tuple[T, datetime | None]:
        """The value and the moment it stops being true (None: while the token stands)."""
        global _generation
        if self.token is None:  # a database without the revision row: no caching
            return build(self.session)
        generation = _generation
        if generation is None or generation.token != self.token:
            generation = _generation = _Generation(self.token)
        found = generation.values.get(name)
        if found is None or (found[1] is not None and found[1] <= datetime.now(UTC)):
            found = generation.values[name] = build(self.session)
        return found  # type: ignore[return-value]


def catalog_cache(session: Session) -> CatalogCache:
    return CatalogCache(session, current_token(session))
