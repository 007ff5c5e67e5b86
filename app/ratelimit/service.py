"""Fixed-window rate limiter over the database, with a per-process fallback while the database is down.

The counters live in the database so that every worker process and every app server shares them.
When the database cannot be reached the limiter does not refuse traffic (the compute endpoints do
not need the database), it counts in this process instead and retries the database after a pause.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from dataclasses import dataclass

from sqlalchemy import Connection, Engine
from sqlalchemy.exc import SQLAlchemyError

from app.ratelimit.repository import purge_before, record_hit

log = logging.getLogger("app.ratelimit")
WINDOW_S = 60
RETRY_DATABASE_AFTER_S = 5.0
PURGE_PROBABILITY = 0.01


@dataclass(frozen=True)
class Decision:
    allowed: bool
    remaining: int
    retry_after_s: int  # seconds until the window resets


class RateLimiter:
    def __init__(self, *, limit: int, window_s: int = WINDOW_S) -> None:
        self.limit = limit
        self.window_s = window_s
        self._lock = threading.Lock()
        self._local: dict[str, tuple[int, int]] = {}
        self._database_down_until = 0.0

    def hit(self, engine: Engine, key: str, *, now: float | None = None, limit: int | None = None) -> Decision:
        """Count one hit of `key`; allowed while its hits this window are at most `limit` (default: the
        limiter's own; an API key brings its own, app.http.ratelimit)."""
        now = time.time() if now is None else now
        window_start = int(now) - int(now) % self.window_s
        return self._decision(self._count(engine, key, window_start), now, window_start, limit)

    def hit_in(self, connection: Connection, key: str, *, now: float | None = None) -> Decision:
        """Count one hit of `key` in `connection`'s own transaction: the hit stands only if that transaction commits
        (a new quote's count, written with the quote: app.quotes.admission). No in-process fallback: a transaction
        that cannot reach the database writes nothing to count."""
        now = time.time() if now is None else now
        window_start = int(now) - int(now) % self.window_s
        return self._decision(record_hit(connection, key=key, window_start=window_start), now, window_start, None)

    def _decision(self, hits: int, now: float, window_start: int, limit: int | None) -> Decision:
        limit = self.limit if limit is None else limit
        retry_after = max(1, window_start + self.window_s - int(now))
        return Decision(hits <= limit, max(0, limit - hits), retry_after)

    def _count(self, engine: Engine, key: str, window_start: int) -> int:
        if time.monotonic() >= self._database_down_until:
            try:
                # Autocommit: the upsert commits inside the database as it runs, so the counter row's lock is
                # never held across a round trip (every client of one address shares that row).
                with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
                    hits = record_hit(connection, key=key, window_start=window_start)
                    if random.random() < PURGE_PROBABILITY:
                        purge_before(connection, window_start=window_start - self.window_s)
                return hits
            except SQLAlchemyError as exc:
                log.warning("rate limiter: database unavailable, counting in-process: %s", type(exc).__name__)
                self._database_down_until = time.monotonic() + RETRY_DATABASE_AFTER_S
        return self._count_locally(key, window_start)

    def _count_locally(self, key: str, window_start: int) -> int:
        with self._lock:
            start, hits = self._local.get(key, (window_start, 0))
            hits = hits + 1 if start == window_start else 1
            self._local[key] = (window_start, hits)
            return hits
