"""Queries on the Hub config cache (app.hub.models): read, keep, forget, touch, and evict to a size cap."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import delete, func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.db.eviction import evict_least_used
from app.hub.models import HubConfig

# A read marks its row used at most this often, so popular rows are not rewritten on every request;
# eviction order is therefore exact to within this much.
TOUCH_EVERY = timedelta(minutes=10)
EVICT_BATCH = 500


def get_row(session: Session, hf_key: str, revision: str) -> HubConfig | None:
    return session.scalar(select(HubConfig).where(HubConfig.hf_key == hf_key, HubConfig.revision == revision))


def touch(session: Session, row: HubConfig, now: datetime) -> None:
    if _aware(row.used_at) < now - TOUCH_EVERY:
        session.execute(update(HubConfig).where(HubConfig.id == row.id).values(used_at=now))


def forget(session: Session, row_id: int) -> None:
    session.execute(delete(HubConfig).where(HubConfig.id == row_id))


def keep(
    session: Session,
    *,
    hf_key: str,
    revision: str,
    now: datetime,
    config_json: str | None = None,
    miss: str | None = None,
    expires_at: datetime | None = None,
    max_total_bytes: int,
) -> None:
    """Store a config or a miss in place of any row of that id, then evict the rows used least recently
    while the table holds more than `max_total_bytes`. A concurrent request that stored the id first wins."""
    size = len((config_json or miss or "").encode("utf-8")) + len(hf_key.encode("utf-8"))
    try:
        with session.begin_nested():
            session.execute(delete(HubConfig).where(HubConfig.hf_key == hf_key, HubConfig.revision == revision))
            session.add(
                HubConfig(
                    hf_key=hf_key,
                    revision=revision,
                    config_json=config_json,
                    miss=miss,
                    size_bytes=size,
                    fetched_at=now,
                    used_at=now,
                    expires_at=expires_at,
                )
            )
    except IntegrityError:
        return  # the unique (hf_key, revision) row exists: another request stored it meanwhile
    evict(session, max_total_bytes)


def total_bytes(session: Session) -> int:
    return int(session.scalar(select(func.coalesce(func.sum(HubConfig.size_bytes), 0))) or 0)


def evict(session: Session, max_total_bytes: int) -> int:
    """Delete the rows used least recently until the table holds at most `max_total_bytes`; the count deleted."""
    least_used = select(HubConfig.id, HubConfig.size_bytes).order_by(HubConfig.used_at, HubConfig.id).limit(EVICT_BATCH)

    def remove(keys: list[tuple[Any, ...]]) -> None:
        session.execute(delete(HubConfig).where(HubConfig.id.in_([row_id for (row_id,) in keys])))

    return evict_least_used(session, total_bytes(session) - max_total_bytes, least_used, remove)


def _aware(moment: datetime) -> datetime:
    """SQLite gives back naive datetimes; the app stores UTC."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
