"""Quote search for sales tools (GET /quotes): filters, and keyset pagination with an opaque cursor.

Quotes come newest first, in (created_at, id) order; a cursor names the last quote of a page (its creation
time and id, base64url-encoded JSON) and the next page starts after it, so quotes issued while a client
pages through never shift a page (an offset would repeat or skip some). `organisation` is the caller's:
an API key sees only the quotes issued with its organisation's keys, an admin (None) every quote.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy.orm import Session

from app.common.errors import InvalidInput, refused
from app.estimator.vocabulary import QuoteStatus
from app.quotes import repository
from app.quotes.schemas import QuotePage
from app.quotes.service import quote_out

MAX_CURSOR_CHARS = 200


@dataclass(frozen=True, slots=True)
class QuoteSearch:
    """What GET /quotes asks for: each given filter must match (`created_from` inclusive, `created_to` not)."""

    status: QuoteStatus | None = None
    customer_email: str | None = None
    company: str | None = None
    created_from: datetime | None = None
    created_to: datetime | None = None
    organisation: str | None = None  # an admin's filter; a key's own organisation is always applied
    limit: int = 50
    cursor: str | None = None


SINGLE_VALUED = ("status", "customer_email", "company", "created_from", "created_to", "organisation", "limit", "cursor")


def _refused(name: str, code: str) -> InvalidInput:
    """A 422 on query parameter `name` worded from its code (app/text/refusal_words.py): `detail` names it by the
    same path as `errors[].field` (`query.cursor`), as FastAPI's own query errors do."""
    return refused(InvalidInput, code, field=f"query.{name}")


def check_query(items: Iterable[tuple[str, str]], *, admin: bool) -> None:
    """GET /quotes takes each filter once, and `organisation` from admins only (a key searches its own
    organisation's quotes): a 422 naming the parameter, never a page quietly built from the last value or
    filtered to nothing."""
    seen: set[str] = set()
    for name, _ in items:
        if name in seen and name in SINGLE_VALUED:
            raise _refused(name, "query_repeated")
        seen.add(name)
    if "organisation" in seen and not admin:
        raise _refused("organisation", "query_organisation")


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)  # SQLite returns naive UTC


def encode_cursor(created_at: datetime, quote_id: int) -> str:
    raw = json.dumps({"t": _aware(created_at).isoformat(), "i": quote_id}, separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[datetime, int]:
    """The (created_at, id) a cursor names; a 422 on `cursor` for anything this module did not write."""
    try:
        if len(cursor) > MAX_CURSOR_CHARS:
            raise ValueError("too long")
        data = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        created_at, quote_id = datetime.fromisoformat(data["t"]), data["i"]
        if not isinstance(quote_id, int) or isinstance(quote_id, bool) or created_at.tzinfo is None:
            raise ValueError("not a cursor")
    except (ValueError, TypeError, KeyError, binascii.Error, UnicodeDecodeError) as exc:
        raise _refused("cursor", "cursor_invalid") from exc
    return created_at, quote_id


def search_quotes(session: Session, search: QuoteSearch, *, organisation: str | None) -> QuotePage:
    """One page of the quotes `organisation` (None: every organisation, for admins) issued, matching `search`."""
    after = decode_cursor(search.cursor) if search.cursor else None
    filters = repository.QuoteFilter(
        status=search.status,
        customer_email=search.customer_email,
        company=search.company,
        created_from=_aware(search.created_from) if search.created_from else None,
        created_to=_aware(search.created_to) if search.created_to else None,
        organisation=search.organisation,
    )
    now = datetime.now(UTC)
    rows = repository.search_quotes(
        session, filters, now=now, limit=search.limit + 1, after=after, only_organisation=organisation
    )
    page, more = rows[: search.limit], len(rows) > search.limit
    next_cursor = encode_cursor(page[-1].created_at, page[-1].id) if more else None
    return QuotePage(items=[quote_out(q, now=now) for q in page], limit=search.limit, next_cursor=next_cursor)
