"""Numbers under real concurrency: a uvicorn server (2 worker processes, `python -m app serve`) on a
migrated, seeded database of its own; 50 simultaneous POST /quotes get 50 distinct consecutive
numbers, and simultaneous retries with one Idempotency-Key create one quote."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterator

import httpx
import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from tests.conftest import BACKENDS
from tests.quotes.helpers import NUMBER_RE, a100_body
from tests.servers import LiveServer, LiveServerFactory, released_together

CONCURRENT = 50


@pytest.fixture(scope="module", params=BACKENDS)
def live(request: pytest.FixtureRequest, live_server_factory: LiveServerFactory) -> Iterator[LiveServer]:
    """A server on a migrated, seeded database of its own (its commits must not leak into the rolled-back test
    databases)."""
    # Numbering is what these tests check, not the lock budget (tests/http/test_lock_budget.py): 50 requests queue
    # for 2 workers, and on a busy machine the last ones arrive at the counter after the 2 s default budget.
    lock = {"DB_LOCK_TIMEOUT_MS": "30000"}
    with live_server_factory("quotes_server", backend=request.param, prepare="seeded", workers=2, env=lock) as server:
        yield server


@pytest.fixture(scope="module")
def server(live: LiveServer) -> str:
    return live.base


@pytest.fixture(scope="module")
def server_db(live: LiveServer) -> str:
    return live.database_url


def _post_all(base: str, count: int, headers: dict[str, str] | None = None) -> list[httpx.Response]:
    def post(_: int, release: Callable[[], object]) -> httpx.Response:
        with httpx.Client(base_url=base, timeout=30) as client:
            release()  # all requests leave together
            return client.post("/quotes", json=a100_body(), headers=headers)

    return released_together(count, post)


def _sequences(numbers: list[str]) -> list[int]:
    assert all(NUMBER_RE.fullmatch(n) for n in numbers), numbers
    return sorted(int(n.rsplit("-", 1)[1]) for n in numbers)


def test_concurrent_posts_get_distinct_consecutive_numbers(server: str, server_db: str) -> None:
    started = time.perf_counter()
    responses = _post_all(server, CONCURRENT)
    elapsed = time.perf_counter() - started
    assert [r.status_code for r in responses] == [201] * CONCURRENT, [r.text for r in responses if r.status_code != 201]
    quotes = [r.json() for r in responses]
    first = _sequences([q["number"] for q in quotes])[0]
    assert _sequences([q["number"] for q in quotes]) == list(range(first, first + CONCURRENT))
    assert len({q["id"] for q in quotes}) == CONCURRENT
    with httpx.Client(base_url=server) as client:  # committed before each 201 was sent
        assert {client.get(q["links"]["self"]).json()["number"] for q in quotes} == {q["number"] for q in quotes}
    engine = create_engine(server_db)
    with engine.connect() as connection:
        stored = connection.execute(text("SELECT sequence FROM quotes ORDER BY sequence")).scalars().all()
        last = connection.execute(text("SELECT max(last_value) FROM quote_number_counters")).scalar_one()
    engine.dispose()
    assert stored == list(range(1, len(stored) + 1)) and last == len(stored)  # no gaps, no duplicates
    print(f"\n{CONCURRENT} concurrent POST /quotes on {make_url(server_db).get_backend_name()}: {elapsed:.2f} s")


def test_concurrent_retries_with_one_key_create_one_quote(server: str) -> None:
    responses = _post_all(server, 20, headers={"Idempotency-Key": "retry-storm-1"})
    assert sorted(r.status_code for r in responses) == [200] * 19 + [201]
    assert len({r.json()["number"] for r in responses}) == 1
    assert all(r.headers.get("idempotent-replayed") == "true" for r in responses if r.status_code == 200)


PER_MINUTE = 3  # QUOTES_PER_MINUTE of the server below: fewer than the retries sent at once


@pytest.fixture(scope="module", params=BACKENDS)
def limited_server(request: pytest.FixtureRequest, live_server_factory: LiveServerFactory) -> Iterator[str]:
    """A server with QUOTES_PER_MINUTE on (the general limit high enough never to answer), on a database of its own."""
    limits = {"QUOTES_PER_MINUTE": str(PER_MINUTE), "RATE_LIMIT_PER_MINUTE": "10000"}
    with live_server_factory(
        "quotes_limited", backend=request.param, prepare="seeded", workers=2, limits=limits,
        env={"DB_LOCK_TIMEOUT_MS": "30000"},
    ) as server:  # fmt: skip
        yield server.base


def test_concurrent_anonymous_replays_spend_none_of_the_quote_allowance(limited_server: str) -> None:
    """Review R6-3: retries of one key sent at once without an API key were each counted against the address's
    QUOTES_PER_MINUTE before they found the first one's quote, so they were answered 429 and used up the allowance.
    Only a quote written counts: the twelve retries issue one quote and replay it, and the address can still issue
    PER_MINUTE - 1 new quotes this minute (the next one is 429)."""
    statuses = Counter(r.status_code for r in _post_all(limited_server, 12, headers={"Idempotency-Key": "spend-1"}))
    assert statuses == {201: 1, 200: 11}, statuses
    with httpx.Client(base_url=limited_server, timeout=30) as client:
        more = [client.post("/quotes", json=a100_body()).status_code for _ in range(PER_MINUTE)]
    assert more == [201] * (PER_MINUTE - 1) + [429]
