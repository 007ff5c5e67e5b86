"""A quote issued while its region had no inventory figure holds nothing; once the region is tracked, accepting it
takes its units there or is refused (review R4: it was accepted holding nothing, and the region then had 8 servers
promised out of 5 while the capacity page offered the last one for sale). SQLite and PostgreSQL; the concurrent
accepts are in tests/capacity/test_concurrency.py."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.capacity.models import Reservation
from tests.factories import sales_key, units_available

H100 = "h100-80g-sxm-8x"


@pytest.fixture(autouse=True)
def _sales_tool(client: TestClient, db: Session) -> None:
    """The quotes here are a sales tool's (an API key with quotes:write), which hold their units: a quote issued
    without a key holds nothing (review R4-5, tests/capacity/test_anonymous_holds.py)."""
    client.headers.update(sales_key(client, db))


def _body(quantity: int, **changes: Any) -> dict[str, Any]:
    body = {"sku_id": H100, "quantity": quantity, "term": "monthly", "months": 1, "region": "singapore"}
    return {**body, "customer": {"name": "Ada", "email": "ada@example.org"}, **changes}


def _quote(client: TestClient, quantity: int, **changes: Any) -> dict[str, Any]:
    response = client.post("/quotes", json=_body(quantity, **changes))
    assert response.status_code == 201, response.text
    return dict(response.json())


def _reservations(db: Session) -> list[tuple[int, str]]:
    return [(r.units, r.state) for r in db.scalars(select(Reservation).order_by(Reservation.id))]


def test_accepting_a_quote_issued_before_its_region_was_tracked_takes_its_units(
    client: TestClient, db: Session
) -> None:
    early = _quote(client, 4)
    assert early["reservation"] is None
    units_available(db, H100, "singapore", 5)
    accepted = client.post(f"/quotes/{early['id']}/accept", json={})
    assert accepted.status_code == 200, accepted.text
    quote = accepted.json()
    assert quote["status"] == "accepted"
    assert (quote["reservation"]["region"], quote["reservation"]["units"]) == ("singapore", 4)
    assert quote["reservation"]["starts_on"] == early["start_date"]
    assert _reservations(db) == [(4, "confirmed")]
    refused = client.post("/quotes", json=_body(2, customer={"name": "Bo", "email": "bo@example.org"}))
    assert (refused.status_code, refused.json()["free_units"]) == (409, 1)


def test_accepting_it_when_the_units_are_no_longer_free_is_a_409_capacity_taken_and_changes_nothing(
    client: TestClient, db: Session
) -> None:
    early = _quote(client, 4)
    units_available(db, H100, "singapore", 5)
    later = _quote(client, 4)
    assert later["reservation"]["units"] == 4
    response = client.post(f"/quotes/{early['id']}/accept", json={})
    assert response.status_code == 409, response.text
    problem = response.json()
    assert (problem["code"], problem["free_units"]) == ("capacity_taken", 1)
    assert problem["errors"][0]["params"]["region"] == "singapore"
    assert client.get(f"/quotes/{early['id']}").json()["status"] == "issued"
    assert _reservations(db) == [(4, "held")]
    page = client.post(f"/quote/{early['id']}/accept", data={"lang": "zh"}, follow_redirects=False)
    assert page.status_code == 409
    assert "新加坡自" in page.text and "可用" in page.text  # the capacity refusal, in the page's language


def test_a_region_still_not_tracked_is_accepted_holding_nothing(client: TestClient, db: Session) -> None:
    early = _quote(client, 4)
    accepted = client.post(f"/quotes/{early['id']}/accept", json={})
    assert (accepted.status_code, accepted.json()["reservation"]) == (200, None)
    assert _reservations(db) == []
