"""Body size limit and the database-backed rate limiter (on SQLite and PostgreSQL)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine, text

from app.common.errors import PROBLEM_BASE
from app.common.settings import Settings
from app.db.engine import build_engine
from app.ratelimit.service import RateLimiter
from tests.http.conftest import probe_app
from tests.ratewindow import away_from_window_edge, pin_to_window_start

if TYPE_CHECKING:
    from tests.servers import LiveServerFactory

JSON = {"content-type": "application/json"}


def _limited_settings(database_url: str, **overrides: object) -> Settings:
    values = {"rate_limit_per_minute": 3, "rate_limit_paths": ["/probe/echo"], **overrides}
    return Settings(database_url=database_url, env="test", **values)


@pytest.fixture()
def client_host() -> str:
    """A client address of this test's own, so counters never collide with another test's."""
    return f"10.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250}-{uuid.uuid4().hex[:8]}"


@pytest.fixture()
def limiter_engine(database_url: str, client_host: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Engine]:
    engine = build_engine(database_url)
    pin_to_window_start(monkeypatch)  # the apps these tests build in this process count in one window
    yield engine
    with engine.begin() as connection:
        connection.execute(text("DELETE FROM rate_limit_counters WHERE key LIKE :k"), {"k": f"%|{client_host}"})
    engine.dispose()


def test_body_over_a_configured_limit_is_413(sqlite_settings: Settings) -> None:
    settings = sqlite_settings.model_copy(update={"max_body_bytes": 2048})
    with TestClient(probe_app(settings), raise_server_exceptions=False) as client:
        small = client.post("/probe/echo", content=b'{"x": 1, "items": [' + b"1," * 5 + b"1]}", headers=JSON)
        big = client.post("/probe/echo", content=b'{"x": "' + b"a" * 2100 + b'"}', headers=JSON)
    assert small.status_code == 200
    assert big.status_code == 413
    assert big.json()["detail"] == "The request body is larger than the limit of 2048 bytes."


def test_chunked_body_over_the_limit_is_413(sqlite_settings: Settings) -> None:
    settings = sqlite_settings.model_copy(update={"max_body_bytes": 4096})

    def chunks() -> Iterator[bytes]:  # no Content-Length: the limit is found while the body streams
        for _ in range(100):
            yield b"a" * 1024

    with TestClient(probe_app(settings), raise_server_exceptions=False) as client:
        response = client.post("/probe/echo", content=chunks(), headers=JSON)
    assert response.status_code == 413
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["type"] == PROBLEM_BASE + "payload-too-large"


def test_rate_limit_answers_429_with_retry_after(database_url: str, limiter_engine: Engine, client_host: str) -> None:
    app = probe_app(_limited_settings(database_url))
    with TestClient(app, raise_server_exceptions=False, client=(client_host, 5000)) as client:
        statuses = [client.post("/probe/echo", json={"x": 1}).status_code for _ in range(4)]
        refused = client.post("/probe/echo", json={"x": 1})
        other_path = client.get("/healthz")
    assert statuses == [200, 200, 200, 429]
    assert refused.status_code == 429
    assert refused.headers["content-type"] == "application/problem+json"
    assert refused.json()["type"] == PROBLEM_BASE + "too-many-requests"
    assert 1 <= int(refused.headers["retry-after"]) <= 60
    assert refused.headers["ratelimit-limit"] == "3"
    assert other_path.status_code == 200


def test_rate_limit_is_shared_by_separate_app_instances(
    database_url: str, limiter_engine: Engine, client_host: str
) -> None:
    """Two apps with their own limiter and engine stand for two worker processes (or two servers)."""
    first, second = probe_app(_limited_settings(database_url)), probe_app(_limited_settings(database_url))
    with (
        TestClient(first, raise_server_exceptions=False, client=(client_host, 5000)) as a,
        TestClient(second, raise_server_exceptions=False, client=(client_host, 5001)) as b,
    ):
        statuses = [c.post("/probe/echo", json={"x": 1}).status_code for c in (a, b, a, b)]
    assert statuses == [200, 200, 200, 429]


def test_rate_limit_counts_per_client(database_url: str, limiter_engine: Engine, client_host: str) -> None:
    app = probe_app(_limited_settings(database_url, rate_limit_per_minute=1))
    with (
        TestClient(app, raise_server_exceptions=False, client=(client_host, 1)) as one,
        TestClient(app, raise_server_exceptions=False, client=(client_host + "-b", 1)) as other,
    ):
        assert [one.post("/probe/echo", json={"x": 1}).status_code for _ in range(2)] == [200, 429]
        assert other.post("/probe/echo", json={"x": 1}).status_code == 200
    with limiter_engine.begin() as connection:
        connection.execute(text("DELETE FROM rate_limit_counters WHERE key LIKE :k"), {"k": f"%|{client_host}-b"})


def test_window_resets(limiter_engine: Engine, client_host: str) -> None:
    limiter = RateLimiter(limit=2, window_s=60)
    key = f"/probe/echo|{client_host}"
    t0 = 1_800_000_000 - 1_800_000_000 % 60 + 10  # 10 s into a window
    decisions = [limiter.hit(limiter_engine, key, now=t0 + i) for i in range(3)]
    assert [(d.allowed, d.remaining, d.retry_after_s) for d in decisions] == [
        (True, 1, 50),
        (True, 0, 49),
        (False, 0, 48),
    ]
    next_window = limiter.hit(limiter_engine, key, now=t0 + 55)
    assert (next_window.allowed, next_window.remaining, next_window.retry_after_s) == (True, 1, 55)


def test_limiter_counts_in_process_while_the_database_is_down() -> None:
    unreachable = build_engine("postgresql+psycopg://nobody@127.0.0.1:1/none")
    limiter = RateLimiter(limit=2)
    assert [limiter.hit(unreachable, "/estimate|1.2.3.4").allowed for _ in range(3)] == [True, True, False]
    unreachable.dispose()


def test_real_compute_endpoints_and_login_are_rate_limited(
    database_url: str, limiter_engine: Engine, client_host: str
) -> None:
    from app.entry.main import create_app
    from tests.http.examples import ESTIMATE_BODY

    settings = Settings(database_url=database_url, env="test", rate_limit_per_minute=2)
    assert {"/estimate", "/recommend", "/admin/login"} <= set(settings.rate_limit_paths)
    with TestClient(create_app(settings), raise_server_exceptions=False, client=(client_host, 1)) as client:
        estimates = [client.post("/estimate", json=ESTIMATE_BODY).status_code for _ in range(3)]
        logins = [client.post("/admin/login", data={"username": "x", "password": "y"}).status_code for _ in range(3)]
        recommend = [client.post("/recommend", json={}).status_code for _ in range(3)]
    assert estimates == [200, 200, 429]
    assert logins[2] == 429 and 429 not in logins[:2]
    assert recommend == [422, 422, 429]


def test_wizard_pages_that_run_the_planner_are_rate_limited_on_get(
    database_url: str, limiter_engine: Engine, client_host: str
) -> None:
    from app.entry.main import create_app

    settings = Settings(database_url=database_url, env="test", rate_limit_per_minute=2)
    results = "/results?preset=llama-2-7b&task=lora&lang=en"
    with TestClient(create_app(settings), raise_server_exceptions=False, client=(client_host, 1)) as client:
        pages = [client.get(results, headers={"accept": "text/html"}) for _ in range(3)]
        csv = [client.get("/results.csv?preset=llama-2-7b&task=lora").status_code for _ in range(3)]
        home = [client.get("/", headers={"accept": "text/html"}).status_code for _ in range(3)]  # runs no search
    assert [p.status_code for p in pages] == [200, 200, 429]
    refused = pages[2]
    assert refused.headers["content-type"].startswith("text/html") and 0 < int(refused.headers["retry-after"]) <= 60
    assert "Too many requests to /results" in refused.text
    assert csv == [200, 200, 429]
    assert home == [200, 200, 200]


def test_limit_holds_across_uvicorn_workers(
    database_url: str, limiter_engine: Engine, live_server_factory: LiveServerFactory
) -> None:
    """`python -m app serve --workers 2`: ten POSTs on fresh connections, exactly the limit pass."""
    import httpx

    from tests.http.examples import ESTIMATE_BODY

    limits = {"RATE_LIMIT_PER_MINUTE": "4"}
    try:
        with live_server_factory(database_url=database_url, prepare="none", workers=2, limits=limits) as live:
            base = live.base
            with limiter_engine.begin() as connection:  # this client is 127.0.0.1: start from zero
                connection.execute(text("DELETE FROM rate_limit_counters WHERE key = '/estimate|127.0.0.1'"))
            away_from_window_edge(20)
            statuses = [httpx.post(base + "/estimate", json=ESTIMATE_BODY, timeout=30).status_code for _ in range(10)]
    finally:
        with limiter_engine.begin() as connection:
            connection.execute(text("DELETE FROM rate_limit_counters WHERE key = '/estimate|127.0.0.1'"))
    assert sorted(statuses) == [200] * 4 + [429] * 6
