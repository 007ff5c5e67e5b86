"""Transactions end before the response, lock waits are bounded, and the service keeps answering: a real
`python -m app serve --workers 2` on a PostgreSQL database of its own, driven by concurrent clients.

Each test reproduces a way the service used to stall: a transaction left open until the response was
serialised (which, for a synchronous route, waits for one of the WORKER_THREADS) while the other
threads wait on its row lock; connections held while waiting for a thread; a lock held elsewhere.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import httpx
import pytest
from sqlalchemy import create_engine, text

from tests.servers import ROOT, LiveServerFactory, app_cli, released_together, scratch_database, server_env

CLIENT_TIMEOUT_S = 60  # a request still unanswered after this long is a hang
PASSWORD = "a long enough secret"
A100 = "a100-40g-pcie-card"


@dataclass
class HealthProbe:
    """Polls /healthz from its own connection while a burst runs; a probe slower than 2 s is a miss."""

    base: str
    latencies: list[float] = field(default_factory=list)
    misses: int = 0
    _stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        while not self._stop.is_set():
            started = time.perf_counter()
            try:
                ok = httpx.get(f"{self.base}/healthz", timeout=2).status_code == 200
            except httpx.HTTPError:
                ok = False
            self.latencies.append(time.perf_counter() - started)
            self.misses += not ok
            self._stop.wait(0.1)

    def __enter__(self) -> HealthProbe:
        self._thread = threading.Thread(target=self.run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


def burst(count: int, call: Callable[[httpx.Client, int], httpx.Response], base: str) -> list[httpx.Response | str]:
    """`count` requests released together; a request that times out or fails to connect reads as a string."""

    def one(index: int, release: Callable[[], object]) -> httpx.Response | str:
        with httpx.Client(base_url=base, timeout=CLIENT_TIMEOUT_S) as client:
            release()
            try:
                return call(client, index)
            except httpx.HTTPError as exc:
                return type(exc).__name__

    return released_together(count, one)


def statuses(responses: list[httpx.Response | str]) -> list[int | str]:
    return [r if isinstance(r, str) else r.status_code for r in responses]


def assert_no_hang_no_5xx(responses: list[httpx.Response | str], allowed: set[int]) -> None:
    seen = statuses(responses)
    assert all(s in allowed for s in seen), seen
    for response in responses:
        if isinstance(response, httpx.Response) and response.status_code in (409, 503):
            assert response.status_code == 409 or int(response.headers["retry-after"]) > 0


@pytest.fixture(scope="module")
def pg_db(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with scratch_database("postgresql", tmp_path_factory, "transactions") as url:
        env = {"DATABASE_URL": url}
        app_cli(["migrate"], env)
        app_cli(["seed"], env)
        app_cli(["create-admin", "ops@example.com", "--password-stdin"], env, PASSWORD + "\n")
        yield url


@pytest.fixture(scope="module")
def token(pg_db: str) -> str:
    return app_cli(
        ["create-token", "ops@example.com", "--name", "concurrency"], {"DATABASE_URL": pg_db}
    ).stdout.split()[-1]


@pytest.fixture(scope="module")
def server(pg_db: str, live_server_factory: LiveServerFactory) -> Iterator[str]:
    with live_server_factory(database_url=pg_db, prepare="none", workers=2) as live:
        yield live.base


def open_transactions(url: str) -> list[tuple[str, str]]:
    """Sessions of the server's database left `idle in transaction` or waiting on a lock."""
    engine = create_engine(url)
    with engine.connect() as connection:
        rows = connection.execute(
            text(
                "SELECT state, coalesce(wait_event_type, '') FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid() "
                "AND (state LIKE 'idle in transaction%' OR wait_event_type = 'Lock')"
            )
        ).all()
    engine.dispose()
    return [tuple(row) for row in rows]


def new_quote(base: str) -> str:
    body = {
        "sku_id": A100,
        "quantity": 1,
        "term": "monthly",
        "months": 1,
        "customer": {"name": "Ada", "email": "ada@example.org"},
    }
    response = httpx.post(f"{base}/quotes", json=body, timeout=CLIENT_TIMEOUT_S)
    assert response.status_code == 201, response.text
    return response.json()["id"]


def test_concurrent_accepts_of_one_quote_all_answer(server: str, pg_db: str) -> None:
    """16 accepts of one quote (SELECT … FOR UPDATE): each answers, the quote is accepted once, and
    /healthz answers throughout. Before: one transaction sat `idle in transaction` waiting for a thread
    to serialise its response while the others held every thread waiting on its lock."""
    public_id = new_quote(server)
    with HealthProbe(server) as probe:
        responses = burst(16, lambda client, _i: client.post(f"/quotes/{public_id}/accept"), server)
    assert_no_hang_no_5xx(responses, {200, 409, 503})
    accepted = [r.json() for r in responses if isinstance(r, httpx.Response) and r.status_code == 200]
    assert accepted and {q["status"] for q in accepted} == {"accepted"}
    assert len({q["accepted_at"] for q in accepted}) == 1  # accepted once; the others read it back
    assert probe.misses == 0, probe.latencies
    assert open_transactions(pg_db) == []


def test_concurrent_new_region_availability_writes(server: str, pg_db: str, token: str) -> None:
    """8 admins create the same new availability row at once: one stores it, the rest get 409 (the row now
    exists, send its version); no 500, no 503, no hang."""
    region = "test-region-1"
    headers = {"Authorization": f"Bearer {token}"}
    sku = httpx.get(f"{server}/admin/api/skus/{A100}", headers=headers).json()
    patch = {"version": sku["version"], "regions": [*sku["regions"], region]}
    assert httpx.patch(f"{server}/admin/api/skus/{A100}", json=patch, headers=headers).status_code == 200
    with HealthProbe(server) as probe:
        responses = burst(
            8,
            lambda client, i: client.put(
                f"/admin/api/skus/{A100}/availability/{region}",
                json={"units_available": 10 + i, "version": None},
                headers=headers,
            ),
            server,
        )
    seen = statuses(responses)
    assert sorted(seen) == [200] + [409] * 7, [r.text if isinstance(r, httpx.Response) else r for r in responses]
    assert probe.misses == 0
    assert open_transactions(pg_db) == []


def test_a_hundred_concurrent_recommends_on_a_healthy_database(server: str) -> None:
    """100 simultaneous /recommend: every one answers 200. Before: sessions held their connection while
    they waited for a thread to serialise, the pool ran dry and a third got 503 'database is unavailable'."""
    body = {"model": {"preset": "llama-2-7b"}, "task": "lora", "tokens": 1e8}
    assert httpx.post(f"{server}/recommend", json=body, timeout=CLIENT_TIMEOUT_S).status_code == 200  # warm
    with HealthProbe(server) as probe:
        responses = burst(100, lambda client, _i: client.post("/recommend", json=body), server)
    seen = statuses(responses)
    assert seen == [200] * 100, sorted(set(map(str, seen)))
    assert probe.misses == 0


@pytest.fixture()
def held_quote_lock(pg_db: str, server: str) -> Iterator[str]:
    """A quote whose row another connection holds locked (FOR UPDATE) until the test ends."""
    public_id = new_quote(server)
    engine = create_engine(pg_db)
    connection = engine.connect()
    transaction = connection.begin()
    connection.execute(text("SELECT id FROM quotes WHERE public_id = :p FOR UPDATE"), {"p": public_id})
    yield public_id
    transaction.rollback()
    connection.close()
    engine.dispose()


def test_a_lock_wait_ends_in_503_with_retry_after(
    pg_db: str, held_quote_lock: str, live_server_factory: LiveServerFactory
) -> None:
    """A row locked by a transaction outside the service: the accept answers 503 with Retry-After once
    LOCK_TIMEOUT_MS passes, instead of waiting for as long as the lock is held."""
    lock = {"DB_LOCK_TIMEOUT_MS": "500"}
    with live_server_factory(database_url=pg_db, prepare="none", workers=2, env=lock) as live:
        base = live.base
        started = time.perf_counter()
        response = httpx.post(f"{base}/quotes/{held_quote_lock}/accept", timeout=CLIENT_TIMEOUT_S)
        elapsed = time.perf_counter() - started
        assert response.status_code == 503, response.text
        assert int(response.headers["retry-after"]) > 0
        assert "busy" in response.json()["detail"]
        assert elapsed < 5
        assert httpx.get(f"{base}/healthz", timeout=2).status_code == 200


def test_readyz_answers_while_every_worker_thread_waits_on_a_lock(
    pg_db: str, held_quote_lock: str, live_server_factory: LiveServerFactory
) -> None:
    """Both WORKER_THREADS sit in accepts waiting on a row lock held elsewhere: /readyz still answers 200
    within a second (the database does answer). Before, it was a synchronous route queued behind them for
    as long as their lock wait lasted, so a busy instance read as down."""
    env = {"WORKER_THREADS": "2", "DB_LOCK_TIMEOUT_MS": "5000"}
    with live_server_factory(database_url=pg_db, prepare="none", env=env) as live, ThreadPoolExecutor(2) as pool:
        base = live.base
        accept = f"{base}/quotes/{held_quote_lock}/accept"
        waits = [pool.submit(httpx.post, accept, timeout=CLIENT_TIMEOUT_S) for _ in range(2)]
        time.sleep(1.5)  # both threads are inside the accept, waiting on the lock
        assert not any(wait.done() for wait in waits)
        started = time.perf_counter()
        ready = httpx.get(f"{base}/readyz", timeout=CLIENT_TIMEOUT_S)
        elapsed = time.perf_counter() - started
        assert (ready.status_code, ready.json()["status"]) == (200, "ready")
        assert elapsed < 1, f"/readyz took {elapsed:.1f} s"
        assert [wait.result().status_code for wait in waits] == [503, 503]  # the lock timeout ended the waits


def test_sigterm_stops_the_server_while_requests_wait_on_a_lock(pg_db: str, held_quote_lock: str) -> None:
    """Requests stuck behind a lock held elsewhere do not keep SIGTERM from stopping both workers."""
    env = {**os.environ, **server_env(pg_db, DB_LOCK_TIMEOUT_MS="60000"), "HOST": "127.0.0.1", "LOG_LEVEL": "warning"}
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "app", "serve", "--workers", "2"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{env['PORT']}"
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        waiting = threading.Thread(
            target=lambda: burst(
                12, lambda client, _i: client.post(f"/quotes/{held_quote_lock}/accept", timeout=5), base
            ),
            daemon=True,
        )
        waiting.start()
        time.sleep(2)
        started = time.perf_counter()
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)
        assert time.perf_counter() - started < 15
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=5)


def _all_routes(routes: list) -> Iterator:
    for route in routes:
        included = getattr(route, "original_router", None)
        yield from _all_routes(included.routes) if included is not None else [route]


def _uses_session(dependant: object) -> bool:
    from app.delivery.deps import get_session

    return getattr(dependant, "call", None) is get_session or any(
        _uses_session(sub) for sub in getattr(dependant, "dependencies", [])
    )


def test_every_route_with_a_session_ends_its_unit_of_work_in_its_own_thread() -> None:
    """A router made without `route_class=UnitOfWorkRoute` would commit after serialising again."""
    from fastapi.routing import APIRoute

    from app.common.settings import Settings
    from app.delivery.deps import UnitOfWorkRoute
    from app.entry.main import create_app

    routes = [r for r in _all_routes(create_app(Settings(env="test")).routes) if isinstance(r, APIRoute)]
    with_session = [route for route in routes if _uses_session(route.dependant)]
    assert len(with_session) > 30
    assert [route.path for route in with_session if not isinstance(route, UnitOfWorkRoute)] == []
