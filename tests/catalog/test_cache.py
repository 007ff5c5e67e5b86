"""The catalog cache: each process caches what it built from the catalog for one revision token, and
every catalog write replaces the token, so a change reaches the very next request on every worker;
a rolled-back change never does, and a scheduled price takes effect on time without any write."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import httpx
import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.catalog.cache import catalog_cache
from app.catalog.repository import get_sku_by_slug
from app.catalog.revision import current_token
from app.catalog.service import public_skus
from app.db.engine import build_engine, build_sessionmaker
from app.ratelimit.models import RateLimitCounter
from tests.conftest import BACKENDS
from tests.factories import new_price
from tests.servers import LiveServerFactory

CARD = "a100-40g-pcie-card"  # seeded at 2800.00 CNY a month


def _new_price(db: Session, amount_minor: int, *, at: datetime | None = None) -> None:
    new_price(db, CARD, amount_minor, effective_from=at or datetime.now(UTC), created_by="test")


def _card_price(skus: list) -> str:
    return next(s.price.monthly_list for s in skus if s.id == CARD)


def test_a_catalog_write_replaces_the_token_and_other_writes_do_not(db: Session) -> None:
    before = current_token(db)
    assert before is not None and len(before) == 32
    db.add(RateLimitCounter(key="not-the-catalog", window_start=0, hits=1))
    db.flush()
    assert current_token(db) == before
    get_sku_by_slug(db, CARD).notes = "renamed in a test"
    db.flush()
    assert current_token(db) not in (None, before)


def test_a_change_applies_to_the_next_read_and_a_rolled_back_one_never(db: Session) -> None:
    assert _card_price(public_skus(db)) == "2800.00"
    savepoint = db.begin_nested()
    _new_price(db, 310_000)
    assert _card_price(public_skus(db)) == "3100.00"  # same process, cache warm: the new token misses it
    savepoint.rollback()
    assert _card_price(public_skus(db)) == "2800.00"  # the token went back with the change


def test_a_scheduled_price_takes_effect_on_time_without_a_write(client: TestClient, db: Session) -> None:
    def card_price() -> str:
        return next(s for s in client.get("/catalog/skus").json() if s["id"] == CARD)["price"]["monthly_list"]

    def recommended_monthly() -> str:
        body = {"model": {"preset": "llama-2-7b"}, "task": "lora", "constraints": {"gpu_types": ["a100-40g-pcie"]}}
        option = client.post("/recommend", json=body).json()["options"][0]
        return str(Decimal(option["cost"]["monthly_list"]) / option["cost"]["units"])  # per card, whatever the rank

    starts = datetime.now(UTC) + timedelta(seconds=1.5)
    _new_price(db, 320_000, at=starts)
    token = current_token(db)
    assert (card_price(), recommended_monthly()) == ("2800.00", "2800.00")  # both cached from here on
    time.sleep(max(0.0, (starts - datetime.now(UTC)).total_seconds()) + 0.05)
    assert current_token(db) == token  # nothing was written…
    assert (card_price(), recommended_monthly()) == ("3200.00", "3200.00")  # …and the price changed on time


def test_values_are_built_once_per_token(db: Session) -> None:
    builds = []

    def build(session: Session) -> tuple[int, None]:
        builds.append(1)
        return len(builds), None

    first = catalog_cache(db).get("test-value", build)
    assert catalog_cache(db).get("test-value", build) == first == 1
    _new_price(db, 330_000)
    assert catalog_cache(db).get("test-value", build) == 2


# ---- several worker processes -------------------------------------------------------------------


@pytest.fixture(scope="module", params=BACKENDS)
def server(request: pytest.FixtureRequest, live_server_factory: LiveServerFactory) -> Iterator[tuple[str, str]]:
    with live_server_factory("cache_server", backend=request.param, prepare="seeded", workers=2) as server:
        yield server.base, server.database_url


def _prices_seen(base: str, connections: int) -> set[str]:
    seen = set()
    for _ in range(connections):
        with httpx.Client(base_url=base) as client:  # a new connection each time: either worker may answer
            skus = client.get("/catalog/skus").json()
            seen.add(next(s for s in skus if s["id"] == CARD)["price"]["monthly_list"])
    return seen


def test_a_price_change_reaches_every_worker_on_the_next_request(server: tuple[str, str]) -> None:
    base, url = server
    assert _prices_seen(base, 12) == {"2800.00"}  # both workers have cached the seeded catalog
    engine = build_engine(url)
    with build_sessionmaker(engine).begin() as session:  # another process: an admin tool, another app server
        _new_price(session, 340_000)
    engine.dispose()
    assert _prices_seen(base, 12) == {"3400.00"}
