"""Admin rules: accounts, sign-in with a database-backed throttle, browser sessions, API tokens and
the audit log. Services take the session first and keyword-only arguments; they flush, never commit.

The throttle (rows in `login_attempts`, so it holds across workers):
- per client address: CLIENT_FAILURES failures within THROTTLE_WINDOW → 429 until the oldest of
  them leaves the window;
- per account: ACCOUNT_FAILURES failures within the window → 429 the same way, except for a client
  that signed in to this account successfully within TRUSTED_CLIENT_DAYS: an attacker elsewhere
  cannot lock the real admin out of their usual machine, and nobody is locked out for longer than
  the window after the last counted failure. Attempts refused with 429 are not counted.
"""

from __future__ import annotations

import hashlib
import math
import re
import secrets
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from argon2 import PasswordHasher, profiles
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy.orm import Session
from zxcvbn import zxcvbn

from app.admin import repository
from app.admin.models import ROLES, AdminSession, AdminUser, ApiToken, AuditEntry, LoginAttempt
from app.admin.repository import AuditFilter as AuditFilter  # re-exported: the pages and the API build it
from app.apikeys import service as apikeys_service
from app.apikeys.models import ApiKey
from app.apikeys.schemas import ApiKeyCreate, ApiKeyIssued, ApiKeyOut
from app.common.errors import Conflict, InvalidInput, NotFound, TooManyRequests
from app.db.base import utcnow
from app.quotes import service as quotes_service
from app.quotes.schemas import QuoteOut

PASSWORD_MIN_LENGTH = 12
PASSWORD_MIN_SCORE = 3  # zxcvbn's 0-4 scale; 3: "safely unguessable", over 10^8 guesses
SESSION_LIFETIME = timedelta(hours=8)
SESSION_IDLE_TIMEOUT = timedelta(minutes=60)
SESSION_TOUCH_EVERY = timedelta(minutes=1)
THROTTLE_WINDOW = timedelta(minutes=15)
ACCOUNT_FAILURES = 5
CLIENT_FAILURES = 20
TRUSTED_CLIENT_DAYS = 30
TOKEN_PREFIX = "gsz_"
_EMAIL = re.compile(r"^[^@\s]{1,64}@[^@\s]+\.[^@\s]+$")
# RFC 9106's second recommendation (argon2id, 64 MiB, 3 passes, 4 lanes): argon2-cffi's default.
PASSWORD_PARAMETERS = profiles.RFC_9106_LOW_MEMORY
_hasher = PasswordHasher.from_parameters(PASSWORD_PARAMETERS)


@dataclass(frozen=True, slots=True)
class Actor:
    """Who is acting, for the audit log: the user, through which door, from which address."""

    user_id: int | None
    email: str
    via: str  # 'ui', 'api' or 'cli'
    client_addr: str = ""


def aware(moment: datetime) -> datetime:
    """SQLite gives naive datetimes back: they are UTC."""
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def normalise_email(email: str) -> str:
    email = email.strip().lower()
    if not _EMAIL.match(email) or len(email) > 254:
        raise InvalidInput(
            f"{email!r} is not an email address",
            errors=[{"field": "email", "message": "must be an email address", "type": "email"}],
        )
    return email


# --- accounts ----------------------------------------------------------------------------------


def check_password(password: str, *, email: str = "") -> None:
    """At least PASSWORD_MIN_LENGTH characters, not blank, and not easily guessed.

    Guessability is zxcvbn's (Dropbox's estimator; its dictionaries hold the most common leaked passwords,
    English words, names and keyboard patterns): a score under PASSWORD_MIN_SCORE, i.e. an estimate under
    10^8 guesses, is refused, as is a password built from the account's own email address.
    """
    if len(password) < PASSWORD_MIN_LENGTH or not password.strip():
        message = "too short" if len(password) < PASSWORD_MIN_LENGTH else "blank (only spaces)"
        raise InvalidInput(
            f"the password must have at least {PASSWORD_MIN_LENGTH} characters other than spaces",
            errors=[{"field": "password", "message": message, "type": "password"}],
        )
    # zxcvbn refuses inputs over 72 characters; the first 72 decide whether a password is guessable
    strength = zxcvbn(password[:72], user_inputs=[email, *email.split("@")] if email else None)
    if strength["score"] < PASSWORD_MIN_SCORE:
        hint = (strength["feedback"]["warning"] or "it is too easy to guess").rstrip(".")
        raise InvalidInput(
            f"the password is too common or too easy to guess: {hint}. Use a longer phrase of unrelated words.",
            errors=[{"field": "password", "message": "too easy to guess", "type": "password"}],
        )


def create_user(session: Session, *, email: str, password: str, role: str = "admin") -> AdminUser:
    email = normalise_email(email)
    if role not in ROLES:
        raise InvalidInput(f"role must be one of {', '.join(ROLES)}")
    check_password(password, email=email)
    if repository.get_user_by_email(session, email) is not None:
        raise Conflict(f"an admin user {email} already exists")
    user = AdminUser(email=email, password_hash=_hasher.hash(password), role=role, is_active=True)
    repository.add(session, user)
    return user


def _verify(user: AdminUser | None, password: str) -> bool:
    if user is None:
        _hasher.hash(password)  # same work as a real check: response time does not reveal accounts
        return False
    try:
        return _hasher.verify(user.password_hash, password)
    except (VerificationError, InvalidHashError):
        return False


# --- sign-in and its throttle ------------------------------------------------------------------


def _seconds_until_free(failures: list[datetime], limit: int, now: datetime) -> int:
    """Failures are newest first; the limit-th newest must leave the window before one more try."""
    frees_at = aware(failures[limit - 1]) + THROTTLE_WINDOW
    return max(1, math.ceil((frees_at - now).total_seconds()))


def throttle_wait(
    session: Session, *, email: str, client_addr: str, now: datetime, exclude_id: int | None = None
) -> int | None:
    """Seconds the client must wait before trying this account again, or None (attempt `exclude_id`,
    the one being decided, is not counted)."""
    since = now - THROTTLE_WINDOW
    waits = []
    by_client = repository.recent_failures(session, client_addr=client_addr, since=since, exclude_id=exclude_id)
    if len(by_client) >= CLIENT_FAILURES:
        waits.append(_seconds_until_free(by_client, CLIENT_FAILURES, now))
    by_account = repository.recent_failures(session, email=email, since=since, exclude_id=exclude_id)
    if len(by_account) >= ACCOUNT_FAILURES and not repository.has_recent_success(
        session, email=email, client_addr=client_addr, since=now - timedelta(days=TRUSTED_CLIENT_DAYS)
    ):
        waits.append(_seconds_until_free(by_account, ACCOUNT_FAILURES, now))
    return max(waits) if waits else None


def claim_sign_in(session: Session, *, email: str, client_addr: str, now: datetime | None = None) -> LoginAttempt:
    """Decide whether this sign-in may be tried and, in the same transaction, record it as a failure (the
    password check turns it into a success), so parallel attempts each count the ones before them.

    The attempt is written first, under the throttle's locks for this account and client (PostgreSQL:
    advisory locks, and a sign-in that finds them taken is refused at once rather than queued; SQLite:
    the write lock its insert takes), then the earlier failures are counted. The sign-in page commits
    it before the slow password check, so the locks are held for a few statements. Raises
    TooManyRequests (with Retry-After) while throttled; a refused attempt is not recorded.
    """
    now = now or utcnow()
    email = email.strip().lower()[:254]
    if not repository.lock_sign_ins(session, email=email, client_addr=client_addr):
        raise TooManyRequests(
            "another sign-in to this account is being checked; try again in 1 second", headers={"Retry-After": "1"}
        )
    attempt = LoginAttempt(email=email, client_addr=client_addr, attempted_at=now, succeeded=False)
    repository.add(session, attempt)
    wait = throttle_wait(session, email=email, client_addr=client_addr, now=now, exclude_id=attempt.id)
    if wait is not None:
        session.delete(attempt)
        session.flush()
        raise TooManyRequests(
            f"too many failed sign-ins; try again in {wait} seconds", headers={"Retry-After": str(wait)}
        )
    return attempt


def verify_sign_in(session: Session, *, attempt: LoginAttempt, password: str) -> AdminUser | None:
    """The user when the password of the claimed attempt's account is right and the account active, else
    None (the attempt stays a failure)."""
    user = repository.get_user_by_email(session, attempt.email)
    if not (_verify(user, password) and user is not None and user.is_active):
        return None
    now = aware(attempt.attempted_at)
    attempt.succeeded = True
    if _hasher.check_needs_rehash(user.password_hash):
        user.password_hash = _hasher.hash(password)
    user.last_login_at = now
    repository.prune_attempts(session, before=now - timedelta(days=TRUSTED_CLIENT_DAYS))
    return user


def authenticate(
    session: Session, *, email: str, password: str, client_addr: str, now: datetime | None = None
) -> AdminUser | None:
    """claim_sign_in then verify_sign_in, in one transaction (the sign-in page commits in between)."""
    attempt = claim_sign_in(session, email=email, client_addr=client_addr, now=now)
    return verify_sign_in(session, attempt=attempt, password=password)


# --- browser sessions --------------------------------------------------------------------------


def start_session(
    session: Session, *, user: AdminUser, client_addr: str, user_agent: str, now: datetime | None = None
) -> tuple[str, AdminSession]:
    """A new session; returns the cookie value (shown nowhere else) and the row."""
    now = now or utcnow()
    token = secrets.token_urlsafe(32)
    row = AdminSession(
        token_hash=token_hash(token),
        user_id=user.id,
        csrf_token=secrets.token_urlsafe(32),
        created_at=now,
        last_seen_at=now,
        expires_at=now + SESSION_LIFETIME,
        client_addr=client_addr[:64],
        user_agent=user_agent[:300],
    )
    repository.add(session, row)
    return token, row


def resolve_session(session: Session, *, token: str, now: datetime | None = None) -> AdminSession | None:
    """The live session for a cookie value: not revoked, not past its lifetime nor its idle timeout."""
    now = now or utcnow()
    row = repository.get_session_by_hash(session, token_hash(token))
    if row is None or row.revoked_at is not None:
        return None
    if aware(row.expires_at) <= now or aware(row.last_seen_at) + SESSION_IDLE_TIMEOUT <= now:
        return None
    if now - aware(row.last_seen_at) >= SESSION_TOUCH_EVERY:
        row.last_seen_at = now
    return row


def end_session(session: Session, *, row: AdminSession) -> None:
    row.revoked_at = utcnow()
    session.flush()


# --- API tokens --------------------------------------------------------------------------------


def create_token(session: Session, *, user: AdminUser, name: str, actor: Actor) -> tuple[str, ApiToken]:
    """A new bearer token for `user`; the plain value is returned once and never stored."""
    name = name.strip()
    if not 1 <= len(name) <= 100:
        raise InvalidInput(
            "a token needs a name of 1 to 100 characters",
            errors=[
                {
                    "field": "name",
                    "message": "1 to 100 characters",
                    "type": "string",
                    "code": "token_name",
                    "params": {},
                }
            ],
        )
    plain = TOKEN_PREFIX + secrets.token_urlsafe(32)
    row = ApiToken(user=user, name=name, prefix=plain[:12], token_hash=token_hash(plain))
    repository.add(session, row)
    _record_token(session, actor=actor, action="token.create", row=row, before=None)
    return plain, row


def resolve_token(session: Session, *, token: str) -> ApiToken | None:
    row = repository.get_token_by_hash(session, token_hash(token))
    if row is None or row.revoked_at is not None:
        return None
    now = utcnow()
    # Touched at most once a minute, like a browser session: concurrent calls with one token do not
    # all queue on a write to its row.
    if row.last_used_at is None or now - aware(row.last_used_at) >= SESSION_TOUCH_EVERY:
        row.last_used_at = now
    return row


def get_token(session: Session, *, token_id: int) -> ApiToken:
    row = repository.get_token(session, token_id)
    if row is None:
        raise NotFound(f"no API token {token_id}")
    return row


def revoke_token(session: Session, *, token_id: int, actor: Actor) -> ApiToken:
    row = get_token(session, token_id=token_id)
    if row.revoked_at is None:
        before = token_snapshot(row, row.user)
        row.revoked_at = utcnow()
        session.flush()
        _record_token(session, actor=actor, action="token.revoke", row=row, before=before)
    return row


def token_snapshot(row: ApiToken, user: AdminUser) -> dict[str, Any]:
    revoked = aware(row.revoked_at).isoformat() if row.revoked_at else None
    return {"name": row.name, "prefix": row.prefix, "user": user.email, "revoked_at": revoked}


def _record_token(session: Session, *, actor: Actor, action: str, row: ApiToken, before: dict[str, Any] | None) -> None:
    """Audit a change of an API token: `after` is the token as it stands now."""
    record(
        session,
        actor=actor,
        action=action,
        entity_type="api_token",
        entity_id=str(row.id),
        before=before,
        after=token_snapshot(row, row.user),
    )


def list_tokens(session: Session) -> list[ApiToken]:
    return repository.list_tokens(session)


# --- API keys for sales tools (app.apikeys) ----------------------------------------------------


def issue_api_key(session: Session, *, data: ApiKeyCreate, actor: Actor) -> ApiKeyIssued:
    """Issue a key (its value is in the answer, shown once), recorded in the audit log without the value."""
    issued = apikeys_service.issue_key(session, data=data, created_by=actor.email)
    row = apikeys_service.get_key(session, key_id=issued.id)
    _record_api_key(session, actor=actor, action="api_key.create", row=row, before=None)
    return issued


def revoke_api_key(session: Session, *, key_id: int, actor: Actor) -> ApiKeyOut:
    """Revoke a key: its next request is refused (401). Revoking twice changes and records nothing."""
    before = apikeys_service.snapshot(apikeys_service.get_key(session, key_id=key_id))
    row, revoked = apikeys_service.revoke_key(session, key_id=key_id)
    if revoked:
        _record_api_key(session, actor=actor, action="api_key.revoke", row=row, before=before)
    return apikeys_service.key_out(row)


def _record_api_key(session: Session, *, actor: Actor, action: str, row: ApiKey, before: dict[str, Any] | None) -> None:
    after = apikeys_service.snapshot(row)
    record(
        session, actor=actor, action=action, entity_type="api_key", entity_id=str(row.id), before=before, after=after
    )


# --- quotes ------------------------------------------------------------------------------------


def cancel_quote(session: Session, *, public_id: str, actor: Actor) -> QuoteOut:
    """Cancel an issued quote, recorded in the audit log (the JSON API and the pages both call this);
    an accepted or expired quote is a 409, an already cancelled one is returned as it is."""
    before = quotes_service.get_quote(session, public_id=public_id)
    after = quotes_service.cancel_quote(session, public_id=public_id, actor=actor.email)
    if before.status != after.status:
        record(
            session,
            actor=actor,
            action="quote.cancel",
            entity_type="quote",
            entity_id=after.number,
            before={"status": before.status},
            after={"status": after.status, "id": after.id},
        )
    return after


# --- audit log ---------------------------------------------------------------------------------


def record(
    session: Session,
    *,
    actor: Actor,
    action: str,
    entity_type: str,
    entity_id: str,
    before: dict[str, Any] | None,
    after: dict[str, Any] | None,
) -> AuditEntry:
    """Append one audit row (the only write path of the audit log)."""
    entry = AuditEntry(
        actor_id=actor.user_id,
        actor=actor.email,
        via=actor.via,
        action=action,
        entity_type=entity_type,
        entity_id=entity_id,
        before=before,
        after=after,
        client_addr=actor.client_addr[:64],
    )
    repository.add(session, entry)
    return entry


def audit_page(
    session: Session, filters: AuditFilter, *, limit: int = 50, offset: int = 0
) -> tuple[list[AuditEntry], int]:
    # A bare date-time is UTC.
    since, until = (aware(m) if m else None for m in (filters.since, filters.until))
    return repository.audit_entries(session, replace(filters, since=since, until=until), limit=limit, offset=offset)
