"""Engine construction. SQLite gets foreign keys and WAL; PostgreSQL gets short connect timeouts, the
server's lock, statement and idle-transaction limits, and a pool sized to the threads that use it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.engine.interfaces import DBAPIConnection
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import ConnectionPoolEntry


class DatabaseUnavailable(RuntimeError):
    """The configured database cannot be reached; the message is one line for people."""


def _sqlite_pragmas(dbapi_connection: DBAPIConnection, _record: ConnectionPoolEntry) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA busy_timeout=5000")
    cursor.close()


@dataclass(frozen=True, slots=True)
class ServerLimits:
    """How the web server uses the database: PostgreSQL time limits (ms, 0 = none) and its thread count.

    Connections are taken only on worker threads (synchronous routes and dependencies, the rate limiter),
    and each unit of work gives its connection back before the response is serialised, so a worker
    process needs at most `threads` connections at once; the pool keeps that many plus POOL_SPARE and may
    open as many again before a request waits POOL_TIMEOUT_S for one (then 503 with Retry-After).
    """

    threads: int
    lock_timeout_ms: int = 0
    statement_timeout_ms: int = 0
    idle_in_transaction_timeout_ms: int = 0

    def options(self) -> str:
        settings = {
            "lock_timeout": self.lock_timeout_ms,
            "statement_timeout": self.statement_timeout_ms,
            "idle_in_transaction_session_timeout": self.idle_in_transaction_timeout_ms,
        }
        return " ".join(f"-c {name}={value}" for name, value in settings.items())


POOL_SPARE = 2  # commits of async routes and yield-dependency exits run on threads of their own
POOL_TIMEOUT_S = 3


def build_engine(url: str, limits: ServerLimits | None = None) -> Engine:
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 5})
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    if limits is None:  # command-line tools and tests: no time limits, SQLAlchemy's default pool
        return create_engine(url, pool_pre_ping=True, connect_args={"connect_timeout": 2})
    return create_engine(
        url,
        pool_pre_ping=True,
        pool_size=limits.threads + POOL_SPARE,
        max_overflow=limits.threads,
        pool_timeout=POOL_TIMEOUT_S,
        connect_args={"connect_timeout": 2, "options": limits.options()},
    )


def build_sessionmaker(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(bind=engine, expire_on_commit=False, autoflush=False)


def check_connection(engine: Engine) -> None:
    """Raise DatabaseUnavailable with a one-line reason when the database cannot answer."""
    try:
        with engine.connect() as connection:
            connection.execute(text("SELECT 1"))
    except SQLAlchemyError as exc:
        reason = str(getattr(exc, "orig", exc)).strip().splitlines()[0] if str(exc) else type(exc).__name__
        safe_url = engine.url.render_as_string(hide_password=True)
        raise DatabaseUnavailable(f"cannot reach the database at {safe_url}: {reason}") from exc
