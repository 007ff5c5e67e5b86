"""Which requests may write a new quote: the idempotency fingerprint of a request (a retry with the same body replays
the first quote, app.quotes.service.create_quote) and the per-address QUOTES_PER_MINUTE count of the quotes issued
without an API key."""

from __future__ import annotations

import hashlib
import json
from functools import cache

from sqlalchemy.orm import Session

from app.common.errors import TooManyRequests, refused
from app.common.settings import Settings
from app.db.engine import CLIENT, SETTINGS
from app.quotes.schemas import QuoteCreate, QuotePlan
from app.ratelimit.service import RateLimiter


def request_hash(data: QuoteCreate) -> str:
    """The idempotency fingerprint of a request: its body as the server reads it, the plan's fields the server
    ignores (`QuotePlan.DERIVED`: an echoed time, its range, the summary) left out, so a retry differing only there
    replays the quote. They are blanked, not removed: a body that never sent them fingerprints as it always did."""
    if data.plan is not None:
        ignored = dict.fromkeys(QuotePlan.DERIVED)
        data = data.model_copy(update={"plan": data.plan.model_copy(update=ignored)})
    canonical = json.dumps(data.model_dump(mode="json"), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def count_new_quote(session: Session) -> None:
    """One new quote, counted against the client's QUOTES_PER_MINUTE (the settings and client address the
    request's session carries: app.delivery.deps.get_session); past it 429 with Retry-After.

    Counted in the quote's own transaction, once it is certain to be written (its number taken, no twin found under
    the number's lock): the count commits with the quote, and a request that replays a concurrent twin's quote, or
    is refused, rolls its count back with everything else (review R6-3: retries sent at once were counted before
    they found the first one's quote, and used up the allowance). Quote writes queue on the number's lock, in every
    worker, so the count is exact; the counter row's lock is held no longer than that one."""
    settings = session.info.get(SETTINGS)
    if not isinstance(settings, Settings) or settings.quotes_per_minute == 0 or settings.rate_limit_per_minute == 0:
        return
    limiter = _quotes_limiter(settings.quotes_per_minute)
    decision = limiter.hit_in(session.connection(), f"quotes-new|{session.info.get(CLIENT, 'unknown')}")
    if not decision.allowed:
        session.rollback()  # the quote's number and this count go back
        raise refused(
            TooManyRequests,
            "quotes_per_minute",
            field="quote",
            headers={"Retry-After": str(decision.retry_after_s)},
            limit=settings.quotes_per_minute,
            seconds=decision.retry_after_s,
        )


@cache
def _quotes_limiter(per_minute: int) -> RateLimiter:
    return RateLimiter(limit=per_minute)
