"""/recommend counts what is free (app.planner.availability): options carry `availability`, a plan needing more
units than are free from `constraints.start_date` is a near miss `capacity`, and a cancelled quote's units are
offered again at once."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.capacity.ledger import add_months
from app.quotes import service
from tests.factories import recommend, sales_key, units_available

CARD = "a100-40g-pcie-card"
BODY = {"model": {"preset": "llama-2-7b"}, "task": "lora", "tokens": 1e8, "constraints": {"objective": "cheapest"}}


@pytest.fixture(autouse=True)
def _sales_tool(client: TestClient, db: Session) -> None:
    """The quotes here are a sales tool's (an API key with quotes:write), which hold their units: a quote issued
    without a key holds nothing (review R4-5, tests/capacity/test_anonymous_holds.py)."""
    client.headers.update(sales_key(client, db))


def _today() -> date:
    return datetime.now(ZoneInfo("Asia/Shanghai")).date()


def _card_option(result: dict[str, Any]) -> dict[str, Any] | None:
    return next((o for o in result["options"] if o["sku"]["id"] == CARD), None)


def test_an_option_carries_what_is_free_in_its_region_from_the_start(client: TestClient, db: Session) -> None:
    units_available(db, CARD, "shenzhen", 8)
    option = _card_option(recommend(client, BODY))
    assert option is not None
    assert option["availability"] == {
        "region": "shenzhen",
        "free_units": 8,
        "from": _today().isoformat(),
        "status": "available",
    }
    assert option["quote"]["start_date"] == _today().isoformat()


def test_units_held_by_a_quote_make_a_capacity_near_miss_until_it_is_cancelled(client: TestClient, db: Session) -> None:
    units_available(db, CARD, "shenzhen", 2)
    option = _card_option(recommend(client, BODY))
    assert option is not None and option["cost"]["units"] <= 2
    body = {**option["quote"], "quantity": 2, "customer": {"name": "Ada", "email": "ada@example.org"}}
    body.pop("plan"), body.pop("workload")
    quote = client.post("/quotes", json=body)
    assert quote.status_code == 201, quote.text
    result = recommend(client, BODY)
    assert _card_option(result) is None
    miss = next(m for m in result["near_misses"] if m["sku"]["id"] == CARD)
    free_from = add_months(_today(), quote.json()["months"]).isoformat()
    assert miss["availability"] == {"region": "shenzhen", "free_units": 0, "from": free_from, "status": "later"}
    assert miss["misses"][-1]["code"] == "capacity"
    assert miss["misses"][-1]["params"]["free_from"] == free_from
    service.cancel_quote(db, public_id=quote.json()["id"], actor="admin@example.com")
    again = _card_option(recommend(client, BODY))
    assert again is not None and again["availability"]["free_units"] == 2


def test_a_later_start_date_counts_from_that_day(client: TestClient, db: Session) -> None:
    units_available(db, CARD, "shenzhen", 2)
    body = {"sku_id": CARD, "quantity": 2, "term": "monthly", "months": 1, "region": "shenzhen"}
    client.post("/quotes", json={**body, "customer": {"name": "Ada", "email": "ada@example.org"}})
    later = add_months(_today(), 1).isoformat()
    option = _card_option(recommend(client, {**BODY, "constraints": {"objective": "cheapest", "start_date": later}}))
    assert option is not None and option["availability"]["from"] == later


def test_a_start_date_in_the_past_is_422(client: TestClient) -> None:
    past = (_today() - timedelta(days=1)).isoformat()
    response = client.post("/recommend", json={**BODY, "constraints": {"start_date": past}})
    assert response.status_code == 422
    assert [e["field"] for e in response.json()["errors"]] == ["constraints.start_date"]


SERVING = {
    "model": {"preset": "llama-3.1-8b"},
    "task": "serving",
    "serving": {"input_tokens": 1024, "output_tokens": 256, "requests_per_s": 10, "slo": {"tpot_ms": 60}},
}


def test_a_serving_deployment_larger_than_what_is_free_is_a_capacity_near_miss(client: TestClient, db: Session) -> None:
    first = recommend(client, SERVING)["options"][0]
    units_available(db, first["sku"]["id"], first["sku"]["region"], first["cost"]["units"] - 1)
    result = recommend(client, SERVING)
    assert first["sku"]["id"] not in {o["sku"]["id"] for o in result["options"]}
    assert [o["rank"] for o in result["options"]] == list(range(1, len(result["options"]) + 1))
    miss = next(m for m in result["near_misses"] if m["sku"]["id"] == first["sku"]["id"])
    assert miss["misses"][-1]["code"] == "capacity"
    assert miss["availability"]["free_units"] == first["cost"]["units"] - 1


def test_a_job_longer_than_the_calendar_is_a_quote_months_near_miss_not_a_500(client: TestClient, db: Session) -> None:
    """Review R5-1: with a region's inventory tracked, a job whose small plans bill about 10^5 months (405B
    pretraining on 3e15 tokens, within `tokens`' bound of 1e16) had its availability looked up over those months
    and the calendar ran out (`ValueError: past the end of the calendar`, a 500). Availability is judged over the
    longest rental a quote prices (MAX_QUOTE_MONTHS); the longer plan stays a `quote_months` near miss."""
    units_available(db, "h100-80g-sxm-8x", "singapore", 5)
    response = client.post(
        "/recommend", json={"model": {"preset": "llama-3.1-405b"}, "task": "pretrain", "tokens": 3e15}
    )
    assert response.status_code == 200, response.text
    near = [code for miss in response.json()["near_misses"] for code in (m["code"] for m in miss["misses"])]
    assert "quote_months" in near
