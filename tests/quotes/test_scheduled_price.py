"""A rental is priced at the list price in force on its start date, by /recommend and POST /quotes alike
(app.capacity.service.priced_at), and /catalog/skus shows a scheduled price as `next_price`. Before, a price rise
published for a later date was ignored for a rental starting after it: the review's case, 120,000.00 from
2026-12-20 on h100-80g-sxm-8x, quoted from 2027-01-05 at 100,000.00, with nothing in the catalog saying a rise was
coming. SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta
from decimal import Decimal
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.capacity.service import catalog_today
from app.catalog import cache
from app.quotes.printing import quote_money
from app.text import messages
from tests.factories import new_price, recommend
from tests.quotes.helpers import h100_body

SKU = "h100-80g-sxm-8x"


def _schedule_rise(db: Session) -> tuple[str, str]:
    """120,000.00 from 13 days ahead (the review's 2026-12-20 from 2026-12-07); a rental 29 days ahead (2027-01-05)."""
    today = catalog_today(db)
    effective = datetime.combine(today + timedelta(days=13), time(0), tzinfo=UTC)
    new_price(db, SKU, 12_000_000, effective_from=effective)
    db.expire_all()
    return effective.isoformat(), (today + timedelta(days=29)).isoformat()


def _issue(client: TestClient, body: dict[str, Any]) -> dict[str, Any]:
    response = client.post("/quotes", json=body)
    assert response.status_code == 201, response.text
    return response.json()


def test_a_quote_starting_after_a_published_rise_is_priced_at_it(client: TestClient, db: Session) -> None:
    effective, start = _schedule_rise(db)
    later = _issue(client, h100_body(start_date=start))
    assert later["unit_list_price"] == "120000.00"  # was 100000.00
    assert later["lines"][0]["unit_price"] == "120000.00"
    (note,) = [n for n in later["note_codes"] if n["code"] == "price_at_start"]
    assert note["params"] == {
        "start_date": start,
        "effective_from": effective[:10],
        "monthly_list": "120000.00",
        "current": "100000.00",
        "currency": "CNY",
        "current_currency": "CNY",  # today's own (review R7-2: tests/quotes/test_price_at_start_currency.py)
    }
    assert messages.quote_note("price_at_start", note["params"]) in later["notes"]
    page = client.get(later["links"]["print"], params={"lang": "zh"}).text
    assert messages.quote_note("price_at_start", note["params"], "zh", quote_money) in page  # grouped as the lines
    today = _issue(client, h100_body())
    assert today["unit_list_price"] == "100000.00"  # a rental starting today: the price in force now
    assert "price_at_start" not in {n["code"] for n in today["note_codes"]}


def test_the_option_for_that_start_is_priced_as_its_quote(client: TestClient, db: Session) -> None:
    _effective, start = _schedule_rise(db)
    answer = recommend(
        client,
        model={"preset": "llama-3.1-8b"},
        task="lora",
        tokens=2e8,
        constraints={"gpu_types": ["h100-80g-sxm"], "max_nodes": 1, "start_date": start},
    )
    option = next(o for o in answer["options"] if o["sku"]["id"] == SKU)
    assert option["cost"]["monthly_list"] == "120000.00"
    quote = _issue(client, {**option["quote"], "customer": h100_body()["customer"]})
    assert quote["unit_list_price"] == "120000.00"
    assert Decimal(quote["total"]) == Decimal(option["cost"]["job_total"])


def test_the_catalog_shows_the_scheduled_price(client: TestClient, db: Session) -> None:
    effective, _start = _schedule_rise(db)
    skus = {s["id"]: s for s in client.get("/catalog/skus").json()}
    assert skus[SKU]["price"]["monthly_list"] == "100000.00"
    assert skus[SKU]["next_price"] == {"currency": "CNY", "monthly_list": "120000.00", "effective_from": effective}
    assert skus["a100-80g-sxm-8x"]["next_price"] is None


def test_the_offers_are_cached_per_price_change_not_per_start_date(client: TestClient, db: Session) -> None:
    """Each start date is priced at the prices in force on it, but the offers built for it are kept once per span
    between scheduled price changes (app.planner.market `_offers_at`): a client naming every day of the booking
    window made one cached copy of the whole catalog's offers per day."""
    effective, _start = _schedule_rise(db)
    today = catalog_today(db)
    for days in (1, 5, 20, 25, 29):  # two before the rise, three after it
        answer = recommend(
            client,
            model={"preset": "llama-3.1-8b"},
            task="lora",
            tokens=2e8,
            constraints={
                "gpu_types": ["h100-80g-sxm"],
                "max_nodes": 1,
                "start_date": str(today + timedelta(days=days)),
            },
        )
        option = next(o for o in answer["options"] if o["sku"]["id"] == SKU)
        assert option["cost"]["monthly_list"] == ("120000.00" if days >= 13 else "100000.00")
    assert cache._generation is not None
    offers = sorted(name for name in cache._generation.values if name.startswith("offers"))
    assert offers == ["offers", f"offers:{effective}"]
