"""Nothing is oversold under real concurrency: a `python -m app serve --workers 2` on a migrated, seeded database
of its own; 50 simultaneous POST /quotes for the last 3 servers issue exactly 3 and answer the rest 409
`capacity_taken` (PostgreSQL: the inventory row's lock; SQLite: its one writer at a time)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from datetime import date, timedelta

import httpx
import pytest
from sqlalchemy import create_engine, text

from app.apikeys.schemas import ApiKeyCreate
from app.apikeys.service import issue_key
from app.catalog.models import SkuAvailability
from app.catalog.repository import get_sku_by_slug
from app.common.settings import DEV_API_KEY_SECRET
from app.db.engine import build_engine, build_sessionmaker
from app.db.migrate import upgrade
from app.entry.seed import seed_database
from tests.conftest import BACKENDS
from tests.servers import LiveServerFactory, released_together, scratch_database

CONCURRENT = 50
SERVERS = 3
H100 = "h100-80g-sxm-8x"
BODY = {
    "sku_id": H100,
    "quantity": 1,
    "term": "monthly",
    "months": 1,
    "region": "singapore",
    "customer": {"name": "Ada", "email": "ada@example.org"},
}


@pytest.fixture(scope="module", params=BACKENDS)
def server_db(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with scratch_database(request.param, tmp_path_factory, "capacity_server") as url:
        upgrade(url)
        _seed(url)
        _track(url, SERVERS)
        yield url


def _seed(url: str) -> None:
    engine = build_engine(url)
    with build_sessionmaker(engine).begin() as session:
        seed_database(session)
    engine.dispose()


def _sales_key(url: str) -> dict[str, str]:
    """A sales tool's key (quotes:write) in the server's database: its quotes hold units; a quote without a key holds
    none (review R4-5). Per-key limit at its highest, so that the bursts below meet no 429."""
    engine = build_engine(url)
    data = ApiKeyCreate(name="sales tool", organisation="Sales", scopes=["quotes:write"], rate_limit_per_minute=10_000)
    with build_sessionmaker(engine).begin() as session:
        issued = issue_key(session, data=data, created_by="tests", secret=DEV_API_KEY_SECRET)
    engine.dispose()
    return {"Authorization": f"Bearer {issued.key}"}


def _post_all(base: str, count: int, headers: dict[str, str]) -> list[httpx.Response]:
    def post(_: int, release: Callable[[], object]) -> httpx.Response:
        with httpx.Client(base_url=base, timeout=60, headers=headers) as client:
            release()  # all requests leave together
            return client.post("/quotes", json=BODY)

    return released_together(count, post)


def test_fifty_concurrent_quotes_for_the_last_three_servers_issue_exactly_three(
    server_db: str, live_server_factory: LiveServerFactory
) -> None:
    with live_server_factory(database_url=server_db, prepare="none", workers=2) as live:
        responses = _post_all(live.base, CONCURRENT, _sales_key(server_db))
    statuses = Counter(r.status_code for r in responses)
    assert statuses == {201: SERVERS, 409: CONCURRENT - SERVERS}, [r.text for r in responses if r.status_code >= 500]
    refused = [r.json() for r in responses if r.status_code == 409]
    assert {(p["code"], p["free_units"]) for p in refused} == {("capacity_taken", 0)}
    engine = create_engine(server_db)
    with engine.connect() as connection:
        held = connection.execute(text("SELECT sum(units) FROM reservations WHERE state = 'held'")).scalar_one()
        quotes = connection.execute(text("SELECT count(*) FROM quotes")).scalar_one()
    engine.dispose()
    assert (held, quotes) == (SERVERS, SERVERS)


ACCEPTS = 10


@pytest.fixture(scope="module", params=BACKENDS)
def untracked_db(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A seeded database where singapore has no inventory figure yet."""
    with scratch_database(request.param, tmp_path_factory, "capacity_accepts") as url:
        upgrade(url)
        _seed(url)
        yield url


def _track(url: str, units: int, slug: str = H100, region: str = "singapore") -> None:
    engine = build_engine(url)
    with build_sessionmaker(engine).begin() as session:
        sku = get_sku_by_slug(session, slug)
        assert sku is not None
        session.add(SkuAvailability(sku_pk=sku.id, region=region, units_available=units))
    engine.dispose()


def test_concurrent_accepts_of_quotes_issued_before_tracking_take_only_the_servers_that_exist(
    untracked_db: str, live_server_factory: LiveServerFactory
) -> None:
    """Review R4: a quote issued while its region was not tracked held nothing, and accepting it after the region
    got an inventory figure took nothing either. Ten such quotes for one server each, accepted at once against 3
    servers: exactly 3 are accepted (each holding its server), the other 7 are 409 `capacity_taken` and stay issued."""
    with live_server_factory(database_url=untracked_db, prepare="none", workers=2) as live:
        base = live.base
        with httpx.Client(base_url=base, timeout=60, headers=_sales_key(untracked_db)) as client:
            issued = [client.post("/quotes", json=BODY) for _ in range(ACCEPTS)]
        assert [(r.status_code, r.json()["reservation"]) for r in issued] == [(201, None)] * ACCEPTS
        _track(untracked_db, SERVERS)

        def accept(i: int, release: Callable[[], object]) -> httpx.Response:
            with httpx.Client(base_url=base, timeout=60) as client:
                release()
                return client.post(f"/quotes/{issued[i].json()['id']}/accept", json={})

        responses = released_together(ACCEPTS, accept)
    statuses = Counter(r.status_code for r in responses)
    assert statuses == {200: SERVERS, 409: ACCEPTS - SERVERS}, [r.text for r in responses if r.status_code >= 500]
    assert {r.json()["code"] for r in responses if r.status_code == 409} == {"capacity_taken"}
    engine = create_engine(untracked_db)
    with engine.connect() as connection:
        held = connection.execute(text("SELECT sum(units) FROM reservations WHERE state = 'confirmed'")).scalar_one()
        states = Counter(connection.execute(text("SELECT status FROM quotes")).scalars())
    engine.dispose()
    assert (held, states) == (SERVERS, {"accepted": SERVERS, "issued": ACCEPTS - SERVERS})


RETRIES = 12
ROUNDS = 5
ROUND_DAYS = 40  # a one-month rental (30 days) each round, apart from the others
A100 = "a100-80g-sxm-8x"


@pytest.fixture(scope="module", params=BACKENDS)
def last_unit_db(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A seeded database where shenzhen has one server of A100 left."""
    with scratch_database(request.param, tmp_path_factory, "capacity_last_unit") as url:
        upgrade(url)
        _seed(url)
        _track(url, 1, A100, "shenzhen")
        yield url


def test_concurrent_retries_of_one_key_for_the_last_server_all_replay_its_quote(
    last_unit_db: str, live_server_factory: LiveServerFactory
) -> None:
    """Review R6-2: twelve retries of one Idempotency-Key sent at once for the last server; a retry that looked the
    key up before the first one committed, then found the server held (by that very quote), answered 409
    `capacity_taken`. Every retry replays the quote, as a retry sent afterwards does. ROUNDS rounds, each for a
    month of its own (the server is the last one in each), since the race needs the first commit to land between
    a retry's two reads."""
    headers = _sales_key(last_unit_db)
    seen: list[Counter[int]] = []
    lock = {"DB_LOCK_TIMEOUT_MS": "30000"}
    with live_server_factory(database_url=last_unit_db, prepare="none", workers=2, env=lock) as live:
        base = live.base
        for round_ in range(ROUNDS):
            start = date.today() + timedelta(days=ROUND_DAYS * round_ + 1)
            body = {**BODY, "sku_id": A100, "region": "shenzhen", "start_date": start.isoformat()}
            keyed = {**headers, "Idempotency-Key": f"last-server-retry-{round_}"}

            def post(
                _: int, release: Callable[[], object], body: dict[str, object] = body, keyed: dict[str, str] = keyed
            ) -> httpx.Response:
                with httpx.Client(base_url=base, timeout=60, headers=keyed) as client:
                    release()
                    return client.post("/quotes", json=body)

            responses = released_together(RETRIES, post)
            seen.append(Counter(r.status_code for r in responses))
            assert len({r.json().get("number") for r in responses if r.status_code < 300}) == 1
    assert seen == [Counter({201: 1, 200: RETRIES - 1})] * ROUNDS, seen
