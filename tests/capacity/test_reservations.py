"""Quotes hold units of the inventory (app.capacity, app.quotes.reservations) on SQLite and PostgreSQL: a quote
holds its units from its start date for its months while issued, accepting keeps them, cancelling or expiry frees
them at once, and a quote for more than is free is 409 `capacity_taken` naming what is free and from when."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.capacity.ledger import add_months
from app.capacity.models import MaintenanceHold, Reservation
from app.catalog.repository import get_sku_by_slug
from app.quotes import service
from app.quotes.repository import get_by_public_id
from tests.factories import sales_key, units_available

H100 = "h100-80g-sxm-8x"


@pytest.fixture(autouse=True)
def _sales_tool(client: TestClient, db: Session) -> None:
    """The quotes here are a sales tool's (an API key with quotes:write), which hold their units: a quote issued
    without a key holds nothing (review R4-5, tests/capacity/test_anonymous_holds.py)."""
    client.headers.update(sales_key(client, db))


def _body(quantity: int = 1, months: int = 1, **changes: Any) -> dict[str, Any]:
    return {
        "sku_id": H100,
        "quantity": quantity,
        "term": "monthly",
        "months": months,
        "region": "singapore",
        "customer": {"name": "Ada", "email": "ada@example.org"},
        **changes,
    }


def _today() -> date:
    return datetime.now(ZoneInfo("Asia/Shanghai")).date()


def test_a_quote_holds_its_units_from_today_in_the_catalog_timezone(client: TestClient, db: Session) -> None:
    units_available(db, H100, "singapore", 3)
    quote = client.post("/quotes", json=_body(quantity=2, months=2)).json()
    start = _today()
    assert quote["start_date"] == start.isoformat()
    assert quote["reservation"] == {
        "region": "singapore",
        "units": 2,
        "starts_on": start.isoformat(),
        "ends_on": add_months(start, 2).isoformat(),
        "last_day": (add_months(start, 2) - timedelta(days=1)).isoformat(),
        "holding": True,
    }


def test_a_region_not_tracked_holds_nothing(client: TestClient) -> None:
    quote = client.post("/quotes", json=_body(quantity=2)).json()
    assert (quote["start_date"], quote["reservation"]) == (_today().isoformat(), None)


def test_more_than_is_free_is_409_capacity_taken_with_the_free_units_and_next_date(
    client: TestClient, db: Session
) -> None:
    units_available(db, H100, "singapore", 3)
    start = _today() + timedelta(days=3)
    first = client.post("/quotes", json=_body(quantity=2, months=2, start_date=start.isoformat()))
    assert first.status_code == 201
    refused = client.post("/quotes", json=_body(quantity=2, months=1, start_date=start.isoformat()))
    assert refused.status_code == 409
    assert refused.headers["content-type"] == "application/problem+json"
    problem = refused.json()
    free_from = add_months(start, 2).isoformat()
    assert (problem["code"], problem["free_units"], problem["next_free_date"]) == ("capacity_taken", 1, free_from)
    assert problem["errors"][0]["type"] == "capacity_taken" and problem["errors"][0]["field"] == "quantity"
    assert problem["detail"] == (
        f"2 servers of {H100} are not free in Singapore from {start.isoformat()}: 1 server free over the whole "
        f"rental; all 2 servers from {free_from}"
    )
    # one unit is still free, and the rental after the first one ends fits
    assert client.post("/quotes", json=_body(quantity=1, start_date=start.isoformat())).status_code == 201
    assert client.post("/quotes", json=_body(quantity=2, start_date=free_from)).status_code == 201


def test_cancelling_frees_the_units_at_once_and_accepting_keeps_them(client: TestClient, db: Session) -> None:
    units_available(db, H100, "singapore", 2)
    first = client.post("/quotes", json=_body(quantity=2)).json()
    assert client.post("/quotes", json=_body(quantity=1)).status_code == 409
    service.cancel_quote(db, public_id=first["id"], actor="admin@example.com")
    assert client.get(first["links"]["self"]).json()["reservation"]["holding"] is False
    second = client.post("/quotes", json=_body(quantity=2)).json()
    assert client.post(second["links"]["accept"]).json()["reservation"]["holding"] is True
    assert client.post("/quotes", json=_body(quantity=1)).status_code == 409


def test_an_expired_quote_holds_nothing(client: TestClient, db: Session) -> None:
    units_available(db, H100, "singapore", 1)
    first = client.post("/quotes", json=_body()).json()
    assert client.post("/quotes", json=_body()).status_code == 409
    past = datetime.now(UTC) - timedelta(minutes=1)
    get_by_public_id(db, first["id"]).valid_until = past
    db.scalars(select(Reservation)).one().held_until = past  # the quote's validity, copied when it was issued
    db.flush()
    assert client.get(first["links"]["self"]).json()["reservation"]["holding"] is False
    assert client.post("/quotes", json=_body()).status_code == 201


def test_maintenance_holds_take_units_out_for_their_days(client: TestClient, db: Session) -> None:
    units_available(db, H100, "singapore", 2)
    sku = get_sku_by_slug(db, H100)
    assert sku is not None
    today = _today()
    db.add(
        MaintenanceHold(sku_pk=sku.id, region="singapore", starts_on=today, ends_on=today + timedelta(days=10), units=1)
    )
    db.flush()
    refused = client.post("/quotes", json=_body(quantity=2)).json()
    assert (refused["free_units"], refused["next_free_date"]) == (1, (today + timedelta(days=10)).isoformat())
    later = (today + timedelta(days=10)).isoformat()
    assert client.post("/quotes", json=_body(quantity=2, start_date=later)).status_code == 201


def test_without_a_region_the_first_region_with_the_units_free_is_held(client: TestClient, db: Session) -> None:
    units_available(db, H100, "singapore", 1)
    units_available(db, H100, "los-angeles", 4)
    quote = client.post("/quotes", json=_body(quantity=2, region=None)).json()
    assert quote["reservation"]["region"] == "los-angeles"


def test_a_start_date_in_the_past_or_beyond_a_year_is_422_naming_it(client: TestClient) -> None:
    for day in (_today() - timedelta(days=1), _today() + timedelta(days=400)):
        response = client.post("/quotes", json=_body(start_date=day.isoformat()))
        assert response.status_code == 422
        assert [e["field"] for e in response.json()["errors"]] == ["start_date"]
    assert client.post("/quotes", json=_body(start_date="2027-02-30")).status_code == 422


def test_an_annual_quote_holds_its_units_for_the_whole_year_not_360_days(client: TestClient, db: Session) -> None:
    units_available(db, H100, "singapore", 1)
    year = client.post("/quotes", json=_body(months=12))
    assert year.status_code == 201, year.text
    start = _today()
    ends_on = start.replace(year=start.year + 1) if (start.month, start.day) != (2, 29) else date(start.year + 1, 2, 28)
    assert year.json()["reservation"]["ends_on"] == ends_on.isoformat()
    assert year.json()["reservation"]["last_day"] == (ends_on - timedelta(days=1)).isoformat()
    day_361 = (start + timedelta(days=360)).isoformat()
    refused = client.post("/quotes", json=_body(start_date=day_361))
    assert (refused.status_code, refused.json()["next_free_date"]) == (409, ends_on.isoformat())
    printed = client.get(f"/quotes/{year.json()['id']}/print").text
    assert f"{start.isoformat()} to {(ends_on - timedelta(days=1)).isoformat()}" in printed


def test_next_free_date_lies_within_the_booking_window_a_start_date_accepts(client: TestClient, db: Session) -> None:
    units_available(db, H100, "singapore", 1)
    last = add_months(_today(), 12)  # a year ahead, the last start accepted
    assert client.post("/quotes", json=_body(start_date=(last + timedelta(days=1)).isoformat())).status_code == 422
    assert client.post("/quotes", json=_body(months=13)).status_code == 201  # free again after last
    refused = client.post("/quotes", json=_body())
    problem = refused.json()
    assert (refused.status_code, problem["next_free_date"], problem["next_free_reason"]) == (
        409,
        None,
        "beyond_booking_window",
    )
    assert f"from any start up to {last.isoformat()}" in problem["detail"]
    assert client.post("/quotes", json=_body(start_date=last.isoformat(), quantity=2)).json()["next_free_reason"] == (
        "inventory_short"
    )
