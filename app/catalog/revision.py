"""The catalog revision: one row whose random token every write to a catalog table replaces.

Per-process caches of what the catalog says (app.catalog.cache) compare their token with this row, so
a price change reaches the very next request on every worker and app server. The token is random, not a
counter: a rolled-back change takes its token with it, and no later change can bring the same one back.

Registered on every ORM Session (an `after_flush` listener): all catalog writes go through the ORM
(admin API and pages, catalog import, seed, `set-exchange-rate`). A data migration that edits catalog
tables with plain SQL must call `bump` too.
"""

from __future__ import annotations

import uuid
from itertools import chain

from sqlalchemy import Connection, Integer, String, event, select, update
from sqlalchemy.orm import Mapped, Session, mapped_column

from app.db.base import Base

ROW_ID = 1
# Everything the catalog cache builds from: SKUs, GPU types, prices, discounts, availability, add-ons (the
# fabric add-on prices a multi-server option), cloud reference prices and exchange rates (quotes are priced
# from the database directly).
CATALOG_TABLES = frozenset(
    {
        "gpu_types",
        "skus",
        "sku_prices",
        "term_discounts",
        "sku_availability",
        "sku_addons",
        "reference_prices",
        "exchange_rates",
    }
)


class CatalogRevision(Base):
    __tablename__ = "catalog_revision"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    token: Mapped[str] = mapped_column(String(32))


def new_token() -> str:
    return uuid.uuid4().hex


def bump(connection: Connection) -> None:
    connection.execute(update(CatalogRevision).where(CatalogRevision.id == ROW_ID).values(token=new_token()))


def current_token(session: Session) -> str | None:
    """The token in force for this session's transaction; None on a database without the row."""
    return session.scalar(select(CatalogRevision.token).where(CatalogRevision.id == ROW_ID))


@event.listens_for(Session, "after_flush")
def _bump_on_catalog_writes(session: Session, _flush_context: object) -> None:
    # new/dirty/deleted still describe what this flush wrote (SQLAlchemy "after_flush" docs)
    for row in chain(session.new, session.dirty, session.deleted):
        if getattr(row, "__tablename__", None) in CATALOG_TABLES:
            bump(session.connection())
            return
