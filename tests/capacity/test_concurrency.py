"""Nothing is oversold under real concurrency: a `python -m app serve --workers 2` on a migrated, seeded database
of its own; 50 simultaneous POST /quotes for the last 3 servers issue exactly 3 and answer the rest 409
`capacity_taken` (PostgreSQL: the inventory row's lock; SQLite: its one writer at a time)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator

import httpx
import pytest
from sqlalchemy import create_engine, text

from app.catalog.models import SkuAvailability
from app.catalog.repository import get_sku_by_slug
from app.db.engine import build_engine, build_sessionmaker
from app.db.migrate import upgrade
from app.seed import seed_database
from tests.conftest import BACKENDS
from tests.servers import app_server, released_together, scratch_database

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
        engine = build_engine(url)
        with build_sessionmaker(engine).begin() as session:
            seed_database(session)
            sku = get_sku_by_slug(session, H100)
            assert sku is not None
            session.add(SkuAvailability(sku_pk=sku.id, region="singapore", units_available=SERVERS))
        engine.dispose()
        yield url


def _post_all(base: str, count: int) -> list[httpx.Response]:
    def post(_: int, release: Callable[[], object]) -> httpx.Response:
        with httpx.Client(base_url=base, timeout=60) as client:
            release()  # all requests leave together
            return client.post("/quotes", json=BODY)

    return released_together(count, post)


def test_fifty_concurrent_quotes_for_the_last_three_servers_issue_exactly_three(server_db: str) -> None:
    with app_server(server_db, workers=2) as base:
        responses = _post_all(base, CONCURRENT)
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
