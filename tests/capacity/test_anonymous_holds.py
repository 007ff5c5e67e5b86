"""Quotes issued without an API key hold no inventory (review R4-5), on SQLite and PostgreSQL: they are checked
against what is free and say that their units are not reserved; a quote issued with a key that holds quotes:write
holds its units; accepting a quote that would take tracked units needs such a key or an admin's token, so no
anonymous client can leave a region with nothing free, for two weeks or for good."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.capacity.models import Reservation
from app.text import messages
from tests.admin.conftest import Admin, alice, cheap_password_hashing  # noqa: F401 (fixtures)
from tests.factories import sales_key, units_available

H100 = "h100-80g-sxm-8x"
LORA = {"model": {"preset": "llama-3.1-8b"}, "task": "lora", "tokens": 1e8, "constraints": {"regions": ["singapore"]}}


def _body(quantity: int = 1, **changes: Any) -> dict[str, Any]:
    return {
        "sku_id": H100,
        "quantity": quantity,
        "term": "annual",
        "months": 60,
        "region": "singapore",
        "customer": {"name": "x", "company": "x", "email": "x@example.com"},
        **changes,
    }


def _free_h100_servers(client: TestClient) -> int:
    """Whether /recommend still offers the H100 servers in Singapore: an option on them, or a capacity near miss."""
    answer = client.post(
        "/recommend", json={**LORA, "constraints": {**LORA["constraints"], "gpu_types": ["h100-80g-sxm"]}}
    )
    assert answer.status_code == 200, answer.text
    return len(answer.json()["options"])


def test_anonymous_quotes_cannot_leave_a_region_with_no_free_server(client: TestClient, db: Session) -> None:
    units_available(db, H100, "singapore", 3)
    numbers = []
    for _ in range(4):  # more servers than the region has, each quote for all three
        quote = client.post("/quotes", json=_body(quantity=3))
        assert quote.status_code == 201, quote.text
        numbers.append(quote.json())
    assert all(q["reservation"] is None for q in numbers)
    assert db.scalars(select(Reservation)).all() == []
    assert _free_h100_servers(client) > 0
    accepted = client.post(f"/quotes/{numbers[0]['id']}/accept")  # the public link takes nothing for good
    assert accepted.status_code == 403, accepted.text
    assert accepted.json()["code"] == "accept_needs_sales"
    assert accepted.json()["errors"][0]["type"] == "accept_needs_sales"
    assert client.get(f"/quotes/{numbers[0]['id']}").json()["status"] == "issued"
    assert db.scalars(select(Reservation)).all() == []
    assert _free_h100_servers(client) > 0


def test_an_anonymous_quote_is_checked_against_what_is_free_and_says_it_is_not_reserved(
    client: TestClient, db: Session
) -> None:
    units_available(db, H100, "singapore", 3)
    quote = client.post("/quotes", json=_body(quantity=2)).json()
    params = {"region": "singapore", "units": 2, "unit": "node", "sku": H100}
    assert {"code": "units_not_reserved", "params": params} in quote["note_codes"]
    assert messages.quote_note("units_not_reserved", params) in quote["notes"]
    assert "2 servers of h100-80g-sxm-8x in Singapore" in messages.quote_note("units_not_reserved", params)
    assert "新加坡" in messages.quote_note("units_not_reserved", params, "zh")
    printed = client.get(f"/quotes/{quote['id']}/print?lang=zh").text
    assert messages.quote_note("units_not_reserved", params, "zh") in printed
    too_many = client.post("/quotes", json=_body(quantity=4))  # more than the region has: still a 409
    assert too_many.status_code == 409 and too_many.json()["code"] == "capacity_taken"


def test_a_sales_key_quote_holds_and_a_sales_key_or_admin_confirms_an_anonymous_one(
    client: TestClient,
    db: Session,
    alice: Admin,  # noqa: F811 (the fixture)
) -> None:
    units_available(db, H100, "singapore", 3)
    sales = sales_key(client, db)
    held = client.post("/quotes", json=_body(quantity=1), headers=sales).json()
    assert held["reservation"]["units"] == 1 and held["reservation"]["holding"] is True
    assert "units_not_reserved" not in [n["code"] for n in held["note_codes"]]
    assert client.post(f"/quotes/{held['id']}/accept").json()["status"] == "accepted"  # held by sales: the link
    wizard = client.post("/quotes", json=_body(quantity=1)).json()
    confirmed = client.post(f"/quotes/{wizard['id']}/accept", headers=sales)
    assert confirmed.status_code == 200, confirmed.text
    assert confirmed.json()["status"] == "accepted" and confirmed.json()["reservation"]["units"] == 1
    by_admin = client.post("/quotes", json=_body(quantity=1)).json()
    assert client.post(f"/quotes/{by_admin['id']}/accept", headers=alice.headers).json()["status"] == "accepted"
    assert len(db.scalars(select(Reservation).where(Reservation.state == "confirmed")).all()) == 3


def test_the_accept_page_says_sales_confirm_in_the_readers_language(client: TestClient, db: Session) -> None:
    units_available(db, H100, "singapore", 3)
    quote = client.post("/quotes", json=_body(quantity=1)).json()
    page = client.post(f"/quote/{quote['id']}/accept", data={"lang": "zh"}, follow_redirects=False)
    assert page.status_code == 403
    params = {"quote": quote["number"], "sku": H100, "region": "singapore", "units": 1, "unit": "node"}
    assert messages.quote_check("accept_needs_sales", params, "zh") in page.text
    assert "须由我们的销售团队确认" in page.text
