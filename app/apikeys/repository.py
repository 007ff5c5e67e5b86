"""API key queries: the only SQL of app.apikeys."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Connection, or_, select, update
from sqlalchemy.orm import Session

from app.apikeys.models import ApiKey


def add(session: Session, row: ApiKey) -> None:
    session.add(row)
    session.flush()


def get(session: Session, key_id: int) -> ApiKey | None:
    return session.get(ApiKey, key_id)


def get_by_hash(session: Session, key_hash: str) -> ApiKey | None:
    return session.scalar(select(ApiKey).where(ApiKey.key_hash == key_hash))


def list_keys(session: Session) -> list[ApiKey]:
    return list(session.scalars(select(ApiKey).order_by(ApiKey.revoked_at.is_not(None), ApiKey.id.desc())))


def live_limit(connection: Connection, *, key_hash: str, now: datetime) -> tuple[int, int] | None:
    """(id, rate limit per minute) of the live key with this hash: not revoked, not expired."""
    row = connection.execute(
        select(ApiKey.id, ApiKey.rate_limit_per_minute).where(
            ApiKey.key_hash == key_hash,
            ApiKey.revoked_at.is_(None),
            or_(ApiKey.expires_at.is_(None), ApiKey.expires_at > now),
        )
    ).first()
    return (int(row[0]), int(row[1])) if row is not None else None


def touch(session: Session, *, key_id: int, now: datetime, before: datetime) -> None:
    """Set last_used_at unless it is already at or after `before`: one conditional UPDATE, so concurrent
    requests with one key do not all write its row."""
    session.execute(
        update(ApiKey)
        .where(ApiKey.id == key_id, or_(ApiKey.last_used_at.is_(None), ApiKey.last_used_at < before))
        .values(last_used_at=now)
        .execution_options(synchronize_session=False)
    )
