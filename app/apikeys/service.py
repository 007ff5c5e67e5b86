"""API key rules: issuing, listing, revoking, and authenticating a request by its key. Services take the
session first and keyword-only arguments; they flush, never commit (the admin layer audits and commits).

A key is `gsk_` and 256 random bits (secrets.token_urlsafe(32)). The database keeps HMAC-SHA256(key) under
API_KEY_SECRET, never the key: a copy of the table (a backup, a replica) neither is a key nor lets anyone
test guesses offline without the secret too. Enough entropy that a slow hash would add nothing; the admin
API tokens (app.admin) keep a plain SHA-256 for the same reason. Changing API_KEY_SECRET retires every key.

`authenticate` answers the same 401 for a missing, malformed, unknown, revoked and expired key, so nothing
a caller sends learns whether a key exists; a live key without the scope a route needs is a 403.
Revocation and expiry are read from the database on every request: nothing is cached.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import Connection
from sqlalchemy.orm import Session

from app.apikeys import repository
from app.apikeys.models import ApiKey
from app.apikeys.schemas import ApiKeyCreate, ApiKeyIssued, ApiKeyOut
from app.common.errors import Forbidden, InvalidInput, NotFound, Unauthorized, refused
from app.common.settings import Settings, get_settings
from app.db.base import utcnow
from app.db.engine import SETTINGS
from app.estimator.vocabulary import API_SCOPES, ApiScope

KEY_PREFIX = "gsk_"  # tells an API key from an admin API token (gsz_) at a glance, and to the rate limiter
MAX_KEY_CHARS = 100  # an issued key has 47; a longer header value is no key, and is not hashed
SHOWN_PREFIX_CHARS = 12  # "gsk_" and 8 random characters: enough to tell keys apart, 48 bits of the 256
TOUCH_EVERY = timedelta(minutes=1)  # last_used_at is written at most this often (as for admin sessions)
BEARER = {"WWW-Authenticate": "Bearer"}
# The one refusal of no, malformed, unknown, revoked or expired keys (its code in app/text/refusal_words.py).
NOT_VALID = "key_not_valid"


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling with a key: which key, for which organisation, allowed what, limited to what."""

    key_id: int
    name: str
    organisation: str
    scopes: frozenset[ApiScope]
    rate_limit_per_minute: int


def aware(moment: datetime) -> datetime:
    """SQLite gives naive datetimes back: they are UTC."""
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def key_hash(key: str, *, secret: str) -> str:
    return hmac.new(secret.encode(), key.encode(), hashlib.sha256).hexdigest()


def bearer_key(authorization_header: str | None) -> str | None:
    """The API key an `Authorization: Bearer gsk_…` header carries, or None (no header, another scheme,
    another kind of token)."""
    if not authorization_header:
        return None
    scheme, _, value = authorization_header.strip().partition(" ")
    value = value.strip()
    if scheme.lower() != "bearer" or not value.startswith(KEY_PREFIX):
        return None
    return value


def _lookup_hash(key: str | None, secret: str) -> str | None:
    """The stored hash to look a key up by; None for none, or for one longer than any key issued."""
    return key_hash(key, secret=secret) if key is not None and len(key) <= MAX_KEY_CHARS else None


def _secret(session: Session, secret: str | None) -> str:
    if secret is not None:
        return secret
    settings = session.info.get(SETTINGS)  # the request's settings (app.delivery.deps.get_session)
    return (settings if isinstance(settings, Settings) else get_settings()).api_key_secret.get_secret_value()


# --- authenticating a request -------------------------------------------------------------------


def authenticate(
    session: Session,
    authorization_header: str | None,
    scope: ApiScope,
    *,
    secret: str | None = None,
    now: datetime | None = None,
) -> Principal:
    """The principal of a request's `Authorization` header, allowed `scope`. Raises Unauthorized (401, the
    same for no, malformed, unknown, revoked or expired keys) or Forbidden (403, a live key without
    `scope`). Marks the key used (at most once a minute, flushed): the caller commits soon, so that the
    row is not held locked through a long request (app.apikeys.deps commits at once)."""
    now = now or utcnow()
    digest = _lookup_hash(bearer_key(authorization_header), _secret(session, secret))
    row = repository.get_by_hash(session, digest) if digest else None
    if row is None or not _live(row, now):
        raise refused(Unauthorized, NOT_VALID, field="authorization", headers=BEARER)
    if scope not in row.scopes:
        raise refused(Forbidden, "key_scope_missing", field="authorization", scope=scope)
    if row.last_used_at is None or now - aware(row.last_used_at) >= TOUCH_EVERY:
        repository.touch(session, key_id=row.id, now=now, before=now - TOUCH_EVERY)
    return principal_of(row)


def _live(row: ApiKey, now: datetime) -> bool:
    return row.revoked_at is None and (row.expires_at is None or aware(row.expires_at) > now)


def principal_of(row: ApiKey) -> Principal:
    scopes = frozenset(scope for scope in API_SCOPES if scope in row.scopes)
    return Principal(row.id, row.name, row.organisation, scopes, row.rate_limit_per_minute)


def rate_limit_of(
    connection: Connection, authorization_header: str | None, *, secret: str, now: datetime | None = None
) -> tuple[int, int] | None:
    """(key id, requests a minute) of the live key a header carries, for the rate limiter (which has a
    connection, not a session); None for no key or a key that is not live (those count per address)."""
    digest = _lookup_hash(bearer_key(authorization_header), secret)
    return repository.live_limit(connection, key_hash=digest, now=now or utcnow()) if digest else None


# --- issuing and revoking (the admin layer audits and commits) ---------------------------------


def issue_key(
    session: Session, *, data: ApiKeyCreate, created_by: str, secret: str | None = None, now: datetime | None = None
) -> ApiKeyIssued:
    """A new key; its plain value is in the answer, and nowhere else, ever again."""
    now = now or utcnow()
    if data.expires_at is not None and aware(data.expires_at) <= now:
        raise refused(InvalidInput, "expires_in_past", field="expires_at")
    plain = KEY_PREFIX + secrets.token_urlsafe(32)
    row = ApiKey(
        name=data.name,
        organisation=data.organisation,
        prefix=plain[:SHOWN_PREFIX_CHARS],
        key_hash=key_hash(plain, secret=_secret(session, secret)),
        scopes=[scope for scope in API_SCOPES if scope in data.scopes],
        rate_limit_per_minute=data.rate_limit_per_minute,
        created_at=now,
        created_by=created_by,
        expires_at=aware(data.expires_at) if data.expires_at else None,
    )
    repository.add(session, row)
    return ApiKeyIssued(**key_out(row).model_dump(), key=plain)


def key_out(row: ApiKey) -> ApiKeyOut:
    moments = {name: getattr(row, name) for name in ("created_at", "expires_at", "last_used_at", "revoked_at")}
    return ApiKeyOut(
        id=row.id,
        name=row.name,
        organisation=row.organisation,
        prefix=row.prefix,
        scopes=[scope for scope in API_SCOPES if scope in row.scopes],
        rate_limit_per_minute=row.rate_limit_per_minute,
        created_by=row.created_by,
        **{name: aware(value) if value else None for name, value in moments.items()},
    )


def snapshot(row: ApiKey) -> dict[str, object]:
    """The key for the audit log: what identifies and limits it, never the key nor its hash."""
    return key_out(row).model_dump(mode="json", exclude={"last_used_at", "created_at"})


def list_keys(session: Session) -> list[ApiKeyOut]:
    return [key_out(row) for row in repository.list_keys(session)]


def get_key(session: Session, *, key_id: int) -> ApiKey:
    row = repository.get(session, key_id)
    if row is None:
        raise refused(NotFound, "api_key_unknown", field="key_id", key_id=key_id)
    return row


def revoke_key(session: Session, *, key_id: int, now: datetime | None = None) -> tuple[ApiKey, bool]:
    """Revoke a key (from its next request on); returns it and whether this call revoked it."""
    row = get_key(session, key_id=key_id)
    if row.revoked_at is not None:
        return row, False
    row.revoked_at = now or utcnow()
    session.flush()
    return row, True
