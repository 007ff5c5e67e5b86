"""Test fixtures: every database test runs on SQLite and on PostgreSQL.

The schema is built by the Alembic migrations once per backend and run, the seed catalog is
committed, and each test runs inside a transaction that is rolled back (the app's own commits
become savepoint releases). Under CI=true an unreachable PostgreSQL fails the run.

Markers (registered in pyproject.toml) are set here, so that `make test-fast` can leave them out:
- `postgres`: a test parametrised on the PostgreSQL backend (any parameter whose value is "postgresql"),
  or one whose code names a PostgreSQL database of its own (`scratch_database("postgresql", …)`, or
  `live_server_factory(…, backend="postgresql")`);
- `browser`: a test that drives Chromium (it uses the `chromium` fixture, through `page` or `page_no_js`);
- `slow`: a test that starts a process (a server, the CLI, git): its code, a helper of its module that it
  calls, or a fixture it uses calls one of PROCESS_STARTERS, or its code builds a PdfRenderer (a pool of
  processes). A test that starts a process without either marker fails (an audit hook sees every
  `subprocess.Popen`), so the fast loop stays free of them. The tests of a module that fuzzes the API
  (FUZZERS: Schemathesis, hundreds of requests a test) are slow too.
"""

from __future__ import annotations

import copy
import functools
import gc
import inspect
import os
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import pytest
from _pytest.mark.expression import Expression
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session
from starlette.datastructures import State

from app.common.settings import Settings
from app.db.engine import build_engine, build_sessionmaker
from app.db.migrate import upgrade
from app.delivery.deps import get_session
from app.entry.main import configure_process, create_app
from app.entry.seed import seed_database
from app.quotes.documents import PdfRenderer
from tests import tracing
from tests.hub_server import StandInHub, stand_in_hub

if TYPE_CHECKING:
    from tests.servers import LiveServerFactory

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
    """The test app's settings: a deep copy of ones read once a run (reading `.env` and the environment again
    cost 1.6 ms of CPU a test, a copy 0.05 ms)."""
    return _app_settings(database_url, hub_server.url).model_copy(deep=True)


@functools.cache
def _app_settings(database_url: str, hub_url: str) -> Settings:
    # Rate limiting counts in the database outside the test's rolled-back transaction; the tests
    # that exercise it (tests/http/test_limits.py) build their own settings.
    return Settings(
        database_url=database_url,
        env="test",
        rate_limit_per_minute=0,
        planner_searches_per_client=0,  # tests/http/test_planner_share.py turns it on
        hf_new_ids_per_minute=0,  # counted in the database too (tests/hub/test_hub_cache.py turns it on)
        metrics_enabled=True,
        hf_endpoint=hub_url,
        webhooks_worker=False,  # tests/webhooks drive the worker themselves, or serve it over HTTP
    )


class _SessionPdfRenderer(PdfRenderer):
    """A PdfRenderer whose pool of processes outlives the app: each test builds an app, and each app's
    lifespan ends by closing its renderer, so every PDF test would otherwise spawn a process that imports
    WeasyPrint (about a second). The pool is closed when the run ends (pytest_sessionfinish)."""

    def close(self) -> None:
        pass

    def close_pool(self) -> None:
        super().close()


_pdf_renderers: dict[tuple[int, float, int], _SessionPdfRenderer] = {}


def _session_pdf_renderer(settings: Settings) -> PdfRenderer:
    key = (settings.pdf_workers, settings.pdf_timeout_s, settings.pdf_max_waiting)
    if key not in _pdf_renderers:
        _pdf_renderers[key] = _SessionPdfRenderer(workers=key[0], timeout_s=key[1], max_waiting=key[2])
    return _pdf_renderers[key]


def pytest_sessionfinish() -> None:
    for renderer in _pdf_renderers.values():
        renderer.close_pool()


_openapi_documents: dict[tuple[object, ...], dict[str, Any]] = {}


def _share_openapi(app: FastAPI, settings: Settings) -> None:
    """The OpenAPI document of an app is built from its settings and its routes alone, and costs a second or two
    of CPU; an app of the same settings and routes as an earlier test's serves that one's (a copy)."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            routes = [
                (type(route).__name__, getattr(route, "path", getattr(route, "prefix", ""))) for route in app.routes
            ]
            key = (settings.model_dump_json(), repr(routes))
            if key not in _openapi_documents:
                _openapi_documents[key] = copy.deepcopy(build())
            app.openapi_schema = copy.deepcopy(_openapi_documents[key])
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


@dataclass
class _ServedApp:
    """An app built for one set of settings and served again to the later tests of the same settings.

    FastAPI analyses a route (its parameters, dependencies, body and response models) for each app, on the first
    request that passes it: a fresh app per test paid that again in every test (150 to 350 ms of CPU for the whole
    app), about a quarter of the fast run's CPU. Each test still gets what a fresh app gave it: its own client and
    lifespan (engine, limiters, the MCP session manager), fresh middleware (per-client budgets and limits start
    empty), the app's state and dependency overrides as it was built, the OpenAPI document built anew (from
    _share_openapi's copy), and the process-wide settings applied again (configure_process: the planner's cache
    emptied, its time budget). An app whose routes, exception handlers or settings a test changed is not served
    again, nor one still serving another client."""

    settings: Settings
    app: FastAPI
    state: dict[str, Any]
    routes: list[int]
    handlers: dict[Any, Any]
    in_use: bool = False

    @classmethod
    def build(cls, settings: Settings, make: Callable[[Settings], FastAPI]) -> _ServedApp:
        settings = settings.model_copy(deep=True)  # the app's own: no test holds it
        app = make(settings)
        app.state.pdf_renderer = _session_pdf_renderer(settings)
        _share_openapi(app, settings)
        return cls(settings, app, dict(app.state._state), _route_ids(app), dict(app.exception_handlers))

    def servable(self, settings: Settings) -> bool:
        app = self.app
        unchanged = _route_ids(app) == self.routes and app.exception_handlers == self.handlers
        return not self.in_use and unchanged and self.settings == settings and app.state.settings == settings

    def reset(self) -> FastAPI:
        app = self.app
        app.middleware_stack = None  # Starlette builds it again, with new middleware instances, on the first request
        app.state = State(dict(self.state))
        app.dependency_overrides.clear()
        app.openapi_schema = None
        configure_process(self.settings)
        return app


def _route_ids(app: FastAPI) -> list[int]:
    return [id(route) for route in app.router.routes]


_served_apps: dict[tuple[Callable[[Settings], FastAPI], str], _ServedApp] = {}


@contextmanager
def served_app(settings: Settings, make: Callable[[Settings], FastAPI] = create_app) -> Iterator[FastAPI]:
    """The app `make(settings)`, built once and served again to later tests (_ServedApp); its PDFs are rendered by a
    pool kept for the whole run (_SessionPdfRenderer). Enter a TestClient on it inside the block."""
    key = (make, settings.model_dump_json())
    served = _served_apps.get(key)
    if served is None or not served.servable(settings):
        served = _ServedApp.build(settings, make)
        if key not in _served_apps or not _served_apps[key].in_use:
            _served_apps[key] = served
    app = served.reset()
    served.in_use = True
    try:
        yield app
    finally:
        served.in_use = False


@contextmanager
def client_for(settings: Settings, db: Session) -> Iterator[TestClient]:
    """A client of the app built with `settings` (served_app), its requests in the test's transaction (`db`)."""

    def _session() -> Iterator[Session]:
        yield db
        db.flush()

    with served_app(settings) as app:
        app.dependency_overrides[get_session] = _session
        with TestClient(app, raise_server_exceptions=False) as test_client:
            yield test_client


@pytest.fixture()
def client(app_settings: Settings, db: Session) -> Iterator[TestClient]:
    with client_for(app_settings, db) as test_client:
        yield test_client


@pytest.fixture(scope="session")
def live_server_factory(tmp_path_factory: pytest.TempPathFactory) -> LiveServerFactory:
    """The one live-server fixture: `live_server_factory(name, backend=…, prepare=…, setup=…, workers=…, limits=…,
    env=…)` is a context manager that starts a real `python -m app serve` on a free port, on a database of its own
    (or the one named), and yields a tests/servers.py `LiveServer` (its base URL, its database, its setup's output).
    A module fixture enters it for as long as its tests need the server."""
    from tests.servers import LiveServerFactory  # tests/servers.py imports this module

    return LiveServerFactory(tmp_path_factory)


@pytest.fixture(scope="module")
def live_server(live_server_factory: LiveServerFactory) -> Iterator[str]:
    """A real `python -m app serve` on a free port, on a SQLite file of its own migrated and seeded by the
    CLI (as `make run` does), for one test module; the base URL. Tests that need another setup enter
    `live_server_factory` with theirs in a fixture of their own."""
    with live_server_factory("live") as server:
        yield server.base


def pytest_terminal_summary(terminalreporter) -> None:
    if _backend_counts:
        counts = ", ".join(f"{name}: {_backend_counts[name]} tests" for name in BACKENDS)
        terminalreporter.write_line(f"database backends exercised — {counts}")


# Calls that start a process: tests/servers.py's starters, the standard library's, and Playwright's.
PROCESS_STARTERS = (
    "live_server_factory",
    "app_cli",
    "migrate_and_seed",
    "running_server",
    "live_server",
    "subprocess",
    "Popen",
    "sync_playwright",
)
# A test that builds its own PDF renderer starts its pool's processes (spawned, which no audit event reports).
_OWN_PROCESS_POOL = re.compile(r"\bPdfRenderer\(")
# Tools whose tests generate hundreds of requests each (a module that imports one is slow as a whole).
FUZZERS = ("schemathesis",)
_OWN_POSTGRES = re.compile(r"""scratch_database\(\s*["']postgresql["']|\bbackend\s*=\s*["']postgresql["']""")


_IMPORTS_FUZZER = re.compile(r"^\s*(?:import|from)\s+(?:" + "|".join(FUZZERS) + r")\b", re.MULTILINE)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """A module that imports one of FUZZERS is slow as a whole (pytest_collection_modifyitems): a run that
    leaves `slow` out (`make test-fast`) does not collect it at all, since Schemathesis builds its cases while
    the module is collected (about a third of the fast run's collection time)."""
    if collection_path.suffix != ".py" or not _leaves_out_slow(config.option.markexpr):
        return None
    return bool(_IMPORTS_FUZZER.search(collection_path.read_text(encoding="utf-8"))) or None


@functools.cache
def _leaves_out_slow(markexpr: str) -> bool:
    """Whether `-m markexpr` deselects every test marked slow, whatever other markers it has."""
    if not markexpr:
        return False
    expression = Expression.compile(markexpr)
    return not any(
        expression.evaluate(lambda name, others=others: name == "slow" or others) for others in (False, True)
    )


def _is_module(value: object, names: tuple[str, ...]) -> bool:
    return isinstance(value, ModuleType) and value.__name__.split(".")[0] in names


@functools.cache
def _source(function: Callable[..., object]) -> str:
    try:
        return inspect.getsource(function)
    except (OSError, TypeError):
        return ""


def _module_starters(module: ModuleType, cache: dict[str, re.Pattern[str]]) -> re.Pattern[str]:
    """A pattern naming PROCESS_STARTERS and the functions of `module` that name one of them (directly or
    through another of its functions)."""
    if module.__name__ in cache:
        return cache[module.__name__]
    names = set(PROCESS_STARTERS)
    helpers = {
        name: _source(value)
        for name, value in vars(module).items()
        if inspect.isfunction(value) and value.__module__ == module.__name__ and not name.startswith("test")
    }
    grew = True
    while grew:
        pattern = re.compile(r"\b(?:" + "|".join(sorted(names)) + r")\b")
        found = {name for name, source in helpers.items() if name not in names and pattern.search(source)}
        names |= found
        grew = bool(found)
    cache[module.__name__] = pattern
    return pattern


def _fixture_functions(item: pytest.Item) -> list[Callable[..., object]]:
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return []
    return [
        definition.func
        for name in info.names_closure
        for definition in info.name2fixturedefs.get(name, ())
        if callable(definition.func)
    ]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    cache: dict[str, re.Pattern[str]] = {}
    for item in items:
        function = getattr(item, "function", None)
        if function is None:
            continue
        module = sys.modules[function.__module__]
        fixtures = _fixture_functions(item)
        sources = [_source(function)]
        starts = bool(_module_starters(module, cache).search(sources[0]) or _OWN_PROCESS_POOL.search(sources[0]))
        for fixture in fixtures:
            source = _source(fixture)
            sources.append(source)
            fixture_module = sys.modules.get(fixture.__module__)
            if not starts and fixture_module is not None and _module_starters(fixture_module, cache).search(source):
                starts = True
        params = getattr(getattr(item, "callspec", None), "params", {})
        if "postgresql" in params.values() or any(_OWN_POSTGRES.search(source) for source in sources):
            item.add_marker(pytest.mark.postgres)
        if "chromium" in item.fixturenames:
            item.add_marker(pytest.mark.browser)
        if starts or any(_is_module(value, FUZZERS) for value in vars(module).values()):
            item.add_marker(pytest.mark.slow)


# The test being run, and the tests that started a process without a `slow` or `browser` marker.
_running: list[pytest.Item] = []
_unmarked_processes: dict[str, str] = {}


def _audit(event: str, args: tuple[object, ...]) -> None:
    if event == "subprocess.Popen" and _running:
        item = _running[-1]
        if item.get_closest_marker("slow") is None and item.get_closest_marker("browser") is None:
            _unmarked_processes.setdefault(item.nodeid, str(args[1]))


sys.addaudithook(_audit)
tracing.install()  # threads survive coverage's trace hook on Python 3.11 (tests/tracing.py)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    _running.append(item)
    try:
        return (yield)
    finally:
        _running.pop()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    result = yield
    command = _unmarked_processes.pop(item.nodeid, None)
    if command is not None:
        pytest.fail(
            f"{item.nodeid} started a process ({command}) but is not marked slow: mark it "
            "`@pytest.mark.slow`, or start it through tests/servers.py (tests/conftest.py marks those)",
            pytrace=False,
        )
    return result


def pytest_collection_finish(session: pytest.Session) -> None:
    """Move what collection built (modules, the app's tables and data files, the items) out of the cyclic
    garbage collector's sight: it would walk those objects again on every collection of the oldest
    generation while the tests run (gc.freeze, Python's documented use for long-lived objects)."""
    gc.collect()
    gc.freeze()
