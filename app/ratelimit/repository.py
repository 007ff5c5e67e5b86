"""One atomic statement per hit (INSERT … ON CONFLICT DO UPDATE … RETURNING), same SQL on PostgreSQL and SQLite."""

from __future__ import annotations

from sqlalchemy import Connection, text

_HIT = text(
    """
    INSERT INTO rate_limit_counters (key, window_start, hits) VALUES (:key, :window_start, 1)
    ON CONFLICT (key) DO UPDATE SET
        hits = CASE WHEN rate_limit_counters.window_start = excluded.window_start
                    THEN rate_limit_counters.hits + 1 ELSE 1 END,
        window_start = excluded.window_start
    RETURNING hits
    """
)
_PURGE = text("DELETE FROM rate_limit_counters WHERE window_start < :before")


def record_hit(connection: Connection, *, key: str, window_start: int) -> int:
    """Count one hit and return the hits of `key` in the window that starts at `window_start`."""
    return int(connection.execute(_HIT, {"key": key, "window_start": window_start}).scalar_one())


def purge_before(connection: Connection, *, window_start: int) -> int:
    return connection.execute(_PURGE, {"before": window_start}).rowcount
