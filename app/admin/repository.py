"""Admin queries: users, sessions, tokens, login attempts and the audit log. The only SQL of app/admin."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from app.admin.models import AdminSession, AdminUser, ApiToken, AuditEntry, LoginAttempt
from app.catalog.models import SkuAvailability


def add(session: Session, row: object) -> None:
    session.add(row)
    session.flush()


def get_user_by_email(session: Session, email: str) -> AdminUser | None:
    return session.scalar(select(AdminUser).where(AdminUser.email == email.lower()))


def get_session_by_hash(session: Session, token_hash: str) -> AdminSession | None:
    return session.scalar(select(AdminSession).where(AdminSession.token_hash == token_hash))


def get_token_by_hash(session: Session, token_hash: str) -> ApiToken | None:
    return session.scalar(select(ApiToken).where(ApiToken.token_hash == token_hash))


def get_token(session: Session, token_id: int) -> ApiToken | None:
    return session.get(ApiToken, token_id)


def list_tokens(session: Session) -> list[ApiToken]:
    return list(session.scalars(select(ApiToken).order_by(ApiToken.id.desc())))


def _lock_key(kind: str, value: str) -> int:
    """A 64-bit PostgreSQL advisory-lock key for one account or one client address."""
    digest = hashlib.blake2b(f"sign-in|{kind}|{value}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def lock_sign_ins(session: Session, *, email: str, client_addr: str) -> bool:
    """Take, until the transaction ends, the right to decide a sign-in for this account and this client
    address; False when another one is being decided at this moment. PostgreSQL: transaction-level
    advisory locks, tried without waiting. SQLite: always True, because the attempt's insert takes the
    database's single write lock, which serialises the deciding just the same."""
    if session.get_bind().dialect.name != "postgresql":
        return True
    keys = sorted({_lock_key("client", client_addr), _lock_key("account", email)})
    return all(session.scalar(select(func.pg_try_advisory_xact_lock(key))) for key in keys)


def recent_failures(
    session: Session,
    *,
    since: datetime,
    email: str | None = None,
    client_addr: str | None = None,
    exclude_id: int | None = None,
) -> list[datetime]:
    """Times of failed sign-ins since `since` for an account or a client address, newest first."""
    query = select(LoginAttempt.attempted_at).where(
        LoginAttempt.succeeded.is_(False), LoginAttempt.attempted_at >= since
    )
    if exclude_id is not None:
        query = query.where(LoginAttempt.id != exclude_id)
    if email is not None:
        query = query.where(LoginAttempt.email == email)
    if client_addr is not None:
        query = query.where(LoginAttempt.client_addr == client_addr)
    return list(session.scalars(query.order_by(LoginAttempt.attempted_at.desc())))


def has_recent_success(session: Session, *, email: str, client_addr: str, since: datetime) -> bool:
    query = (
        select(func.count())
        .select_from(LoginAttempt)
        .where(
            LoginAttempt.email == email,
            LoginAttempt.client_addr == client_addr,
            LoginAttempt.succeeded.is_(True),
            LoginAttempt.attempted_at >= since,
        )
    )
    return bool(session.scalar(query))


def prune_attempts(session: Session, *, before: datetime) -> None:
    session.execute(delete(LoginAttempt).where(LoginAttempt.attempted_at < before))


@dataclass(frozen=True, slots=True)
class AuditFilter:
    """Which rows of the audit log to show: each given field must match (`since` inclusive, `until` not)."""

    actor: str | None = None
    action: str | None = None
    entity_type: str | None = None
    entity_id: str | None = None
    since: datetime | None = None
    until: datetime | None = None


def audit_entries(
    session: Session, filters: AuditFilter, *, limit: int = 50, offset: int = 0
) -> tuple[list[AuditEntry], int]:
    """One page of the audit log, newest first, and the number of rows the filters match."""
    conditions = []
    if filters.actor:
        conditions.append(AuditEntry.actor == filters.actor.lower())
    if filters.action:
        conditions.append(AuditEntry.action == filters.action)
    if filters.entity_type:
        conditions.append(AuditEntry.entity_type == filters.entity_type)
    if filters.entity_id:
        conditions.append(AuditEntry.entity_id == filters.entity_id)
    if filters.since:
        conditions.append(AuditEntry.at >= filters.since)
    if filters.until:
        conditions.append(AuditEntry.at < filters.until)
    total = session.scalar(select(func.count()).select_from(AuditEntry).where(*conditions)) or 0
    rows = session.scalars(
        select(AuditEntry).where(*conditions).order_by(AuditEntry.id.desc()).limit(limit).offset(offset)
    )
    return list(rows), total


def entity_history(session: Session, *, entity_types: tuple[str, ...], entity_id: str) -> list[AuditEntry]:
    query = select(AuditEntry).where(AuditEntry.entity_type.in_(entity_types), AuditEntry.entity_id == entity_id)
    return list(session.scalars(query.order_by(AuditEntry.id)))


def availability_for(session: Session, sku_pk: int) -> list[SkuAvailability]:
    query = select(SkuAvailability).where(SkuAvailability.sku_pk == sku_pk).order_by(SkuAvailability.region)
    return list(session.scalars(query))


def get_availability(session: Session, *, sku_pk: int, region: str, lock: bool = False) -> SkuAvailability | None:
    """`lock`: `SELECT … FOR UPDATE`, the lock a quote's hold counts under (app.capacity.repository.inventory_row),
    so that an admin's edit and a new hold count what is held one after the other."""
    query = select(SkuAvailability).where(SkuAvailability.sku_pk == sku_pk, SkuAvailability.region == region)
    if lock:
        query = query.with_for_update()
    return session.scalar(query)


def catalog_changes_after(session: Session, moment: datetime, *, entity_types: tuple[str, ...]) -> list[AuditEntry]:
    query = (
        select(AuditEntry)
        .where(AuditEntry.at > moment, AuditEntry.entity_type.in_(entity_types))
        .order_by(AuditEntry.at, AuditEntry.id)
        .limit(50)
    )
    return list(session.scalars(query))
