"""A held table lock costs a request at most DB_LOCK_TIMEOUT_MS from its arrival (PostgreSQL, real server):
quote requests queued behind others that wait on the lock get their 503 within that budget, not after the
others' waits plus their own, and a request that needs no locked table is not held up for long either."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from sqlalchemy import create_engine, text

from tests.quotes.helpers import a100_body
from tests.servers import LiveServerFactory

LOCK_TIMEOUT_S = 1.0
THREADS = 2
REQUESTS = 8  # four times the threads: before the budget, the last waited four lock timeouts
SLACK_S = 0.9  # a shared, loaded test machine: scheduling and the response itself


@pytest.fixture(scope="module")
def server(live_server_factory: LiveServerFactory) -> Iterator[tuple[str, str]]:
    env = {"DB_LOCK_TIMEOUT_MS": str(int(LOCK_TIMEOUT_S * 1000)), "WORKER_THREADS": str(THREADS)}
    with live_server_factory("lock_budget", backend="postgresql", prepare="seeded", env=env) as live:
        yield live.base, live.database_url


def _timed(base: str, method: str, path: str, **kwargs: object) -> tuple[int, float]:
    with httpx.Client(base_url=base, timeout=30) as client:
        started = time.perf_counter()
        response = client.request(method, path, **kwargs)
        return response.status_code, time.perf_counter() - started


def test_a_held_lock_costs_each_request_at_most_its_budget(server: tuple[str, str]) -> None:
    base, url = server
    assert _timed(base, "POST", "/quotes", json=a100_body())[0] == 201
    engine = create_engine(url)
    locked, release = threading.Event(), threading.Event()

    def hold_lock() -> None:
        with engine.begin() as connection:
            connection.execute(text("LOCK TABLE quotes IN ACCESS EXCLUSIVE MODE"))
            locked.set()
            release.wait(20)

    holder = threading.Thread(target=hold_lock)
    holder.start()
    try:
        assert locked.wait(10)
        with ThreadPoolExecutor(max_workers=REQUESTS + 1) as pool:
            quotes = [pool.submit(_timed, base, "POST", "/quotes", json=a100_body()) for _ in range(REQUESTS)]
            time.sleep(0.3)
            unrelated = pool.submit(_timed, base, "GET", "/catalog/skus")
            answers = [future.result() for future in quotes]
            catalog = unrelated.result()
    finally:
        release.set()
        holder.join()
        engine.dispose()
    assert [status for status, _ in answers] == [503] * REQUESTS
    assert max(seconds for _, seconds in answers) < LOCK_TIMEOUT_S + SLACK_S, answers
    assert catalog[0] == 200 and catalog[1] < LOCK_TIMEOUT_S + SLACK_S, catalog
