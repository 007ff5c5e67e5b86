"""Test fixtures: every database test runs on SQLite and on PostgreSQL.

The schema is built by the Alembic migrations once per backend and run, the seed catalog is
committed, and each test runs inside a transaction that is rolled back (the app's own commits
become savepoint releases). Under CI=true an unreachable PostgreSQL fails the run.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session

from app.db.engine import build_engine, build_sessionmaker
from app.db.migrate import upgrade
from app.deps import get_session
from app.main import create_app
from app.seed import seed_database
from app.settings import Settings
from tests.hub_server import StandInHub, stand_in_hub

DEFAULT_PG_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
BACKENDS = ("sqlite", "postgresql")
_backend_counts: Counter[str] = Counter()


def pg_url() -> str:
    return Settings(database_url=os.environ.get("TEST_DATABASE_URL", DEFAULT_PG_URL)).database_url


def _pg_reachable(url: str) -> str | None:
    try:
        engine = create_engine(url, connect_args={"connect_timeout": 3})
        with engine.connect() as connection:
            connection.execute(text("SELECT 1"))
        engine.dispose()
    except Exception as exc:
        return str(exc).splitlines()[0]
    return None


def reset_postgres(url: str) -> None:
    """Empty the test database's public schema so the migrations start from nothing."""
    engine = create_engine(url, isolation_level="AUTOCOMMIT")
    with engine.connect() as connection:
        connection.execute(text("DROP SCHEMA public CASCADE"))
        connection.execute(text("CREATE SCHEMA public"))
    engine.dispose()


def require_backend_url(backend: str, tmp_factory: pytest.TempPathFactory, name: str = "test") -> str:
    if backend == "sqlite":
        return f"sqlite:///{tmp_factory.mktemp('sqlite') / f'{name}.db'}"
    url = pg_url()
    reason = _pg_reachable(url)
    if reason:
        message = f"PostgreSQL at {make_url(url).render_as_string(hide_password=True)} is unreachable: {reason}"
        if os.environ.get("CI") == "true":
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    return url


@pytest.fixture(scope="session", params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture(scope="session")
def database_url(backend: str, tmp_path_factory: pytest.TempPathFactory) -> str:
    url = require_backend_url(backend, tmp_path_factory)
    if backend == "postgresql":
        reset_postgres(url)
    upgrade(url)
    return url


@pytest.fixture(scope="session")
def engine(database_url: str) -> Iterator[Engine]:
    engine = build_engine(database_url)
    if engine.dialect.name == "sqlite":
        _real_sqlite_savepoints(engine)
    with build_sessionmaker(engine).begin() as session:
        seed_database(session)
    yield engine
    engine.dispose()


def _real_sqlite_savepoints(engine: Engine) -> None:
    """The `db` fixture runs each test in a transaction that the app's commits turn into released SAVEPOINTs.

    pysqlite only opens a transaction before DML, so a SAVEPOINT issued first starts one of its own and its
    RELEASE commits it: a test's writes would outlive the test. SQLAlchemy's pysqlite recipe ("Serializable
    isolation / Savepoints / Transactional DDL"): turn pysqlite's own handling off and emit BEGIN ourselves.
    """

    @event.listens_for(engine, "connect")
    def _no_implicit_transactions(dbapi_connection, _record) -> None:
        dbapi_connection.isolation_level = None

    @event.listens_for(engine, "begin")
    def _begin(connection) -> None:
        connection.exec_driver_sql("BEGIN")


@pytest.fixture()
def db(engine: Engine, backend: str) -> Iterator[Session]:
    _backend_counts[backend] += 1
    connection = engine.connect()
    transaction = connection.begin()
    session = Session(bind=connection, join_transaction_mode="create_savepoint", expire_on_commit=False)
    yield session
    session.close()
    transaction.rollback()
    connection.close()


@pytest.fixture(scope="session")
def hub_server() -> Iterator[StandInHub]:
    """The local stand-in for the Hugging Face Hub that every test app reads `model.hf_id` from."""
    with stand_in_hub() as hub:
        yield hub


@pytest.fixture()
def hub(hub_server: StandInHub) -> StandInHub:
    """The stand-in Hub with only the shipped configs and no hits recorded yet."""
    hub_server.reset()
    return hub_server


@pytest.fixture()
def app_settings(database_url: str, hub_server: StandInHub) -> Settings:
    # Rate limiting counts in the database outside the test's rolled-back transaction; the tests
    # that exercise it (tests/http/test_limits.py) build their own settings.
    return Settings(
        database_url=database_url,
        env="test",
        rate_limit_per_minute=0,
        hf_new_ids_per_minute=0,  # counted in the database too (tests/hub/test_hub_cache.py turns it on)
        metrics_enabled=True,
        hf_endpoint=hub_server.url,
    )


@contextmanager
def client_for(settings: Settings, db: Session) -> Iterator[TestClient]:
    """A client of the app built with `settings`, its requests in the test's transaction (`db`)."""
    app = create_app(settings)

    def _session() -> Iterator[Session]:
        yield db
        db.flush()

    app.dependency_overrides[get_session] = _session
    with TestClient(app, raise_server_exceptions=False) as test_client:
        yield test_client


@pytest.fixture()
def client(app_settings: Settings, db: Session) -> Iterator[TestClient]:
    with client_for(app_settings, db) as test_client:
        yield test_client


def pytest_terminal_summary(terminalreporter) -> None:
    if _backend_counts:
        counts = ", ".join(f"{name}: {_backend_counts[name]} tests" for name in BACKENDS)
        terminalreporter.write_line(f"database backends exercised — {counts}")
