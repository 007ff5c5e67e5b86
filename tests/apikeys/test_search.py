"""GET /quotes: an API key (quotes:read) searches its organisation's quotes, an admin everyone's; filters,
and keyset pagination whose opaque cursor neither repeats nor skips a quote issued between pages."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import update
from sqlalchemy.orm import Session

from app.quotes.models import Quote
from app.quotes.search import encode_cursor
from tests.admin.conftest import Admin
from tests.apikeys.conftest import bearer, issue
from tests.quotes.helpers import a100_body

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def quote(client: TestClient, key: str | None, email: str, company: str = "") -> str:
    customer = {"name": "Buyer", "company": company, "email": email}
    headers = bearer(key) if key else {}
    response = client.post("/quotes", json=a100_body(customer=customer), headers=headers)
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def numbers(page: dict[str, Any]) -> list[str]:
    return [item["id"] for item in page["items"]]


@pytest.fixture()
def two_organisations(client: TestClient, db: Session, alice: Admin) -> dict[str, Any]:
    """Acme's key issued 4 quotes an hour apart (the newest last), Globex's 1, and one anonymous quote."""
    acme = issue(client, alice, organisation="Acme")["key"]
    globex = issue(client, alice, organisation="Globex")["key"]
    ids = [
        quote(client, acme, "ada@acme.example", "Acme Robotics"),
        quote(client, acme, "bo@acme.example", "Acme Robotics"),
        quote(client, acme, "Ada@Acme.example", "Initech"),
        quote(client, acme, "cy@initech.example", "Initech Labs"),
    ]
    for hour, public_id in enumerate(ids):
        db.execute(update(Quote).where(Quote.public_id == public_id).values(created_at=T0 + timedelta(hours=hour)))
    other = quote(client, globex, "ada@acme.example", "Acme Robotics")
    anonymous = quote(client, None, "ada@acme.example", "Acme Robotics")
    return {"acme": acme, "globex": globex, "ids": ids, "other": other, "anonymous": anonymous}


def search(client: TestClient, key: str, **params: Any) -> dict[str, Any]:
    response = client.get("/quotes", params=params, headers=bearer(key))
    assert response.status_code == 200, response.text
    return response.json()


def test_a_key_sees_only_its_organisation(client: TestClient, two_organisations: dict[str, Any]) -> None:
    acme, ids = two_organisations["acme"], two_organisations["ids"]
    assert numbers(search(client, acme)) == ids[::-1]
    assert numbers(search(client, two_organisations["globex"])) == [two_organisations["other"]]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ([("organisation", "Globex")], "query.organisation"),  # admins only; before: 200 with no quotes
        ([("organisation", "Acme")], "query.organisation"),
        ([("status", "issued"), ("status", "accepted")], "query.status"),  # before: 200 on the last value
        ([("limit", "1"), ("limit", "200")], "query.limit"),
        ([("company", "Acme"), ("company", "Initech")], "query.company"),
    ],
)
def test_a_repeated_or_admin_only_parameter_is_a_422_naming_it(
    client: TestClient, two_organisations: dict[str, Any], params: list[tuple[str, str]], field: str
) -> None:
    response = client.get("/quotes", params=params, headers=bearer(two_organisations["acme"]))
    assert response.status_code == 422, response.text
    assert response.headers["content-type"] == "application/problem+json"
    assert [e["field"] for e in response.json()["errors"]] == [field]
    assert response.json()["detail"].startswith(f"{field}: ")  # one path in both (review R4-13: "organisation: …")


def test_filters(client: TestClient, db: Session, two_organisations: dict[str, Any]) -> None:
    acme, ids = two_organisations["acme"], two_organisations["ids"]
    assert numbers(search(client, acme, customer_email="ADA@acme.example")) == [ids[2], ids[0]]
    assert numbers(search(client, acme, company="initech")) == [ids[3], ids[2]]
    window = {
        "created_from": (T0 + timedelta(hours=1)).isoformat(),
        "created_to": (T0 + timedelta(hours=3)).isoformat(),
    }
    assert numbers(search(client, acme, **window)) == [ids[2], ids[1]]
    assert numbers(search(client, acme, created_from="2026-03-01T10:00:00", created_to="2026-03-01T11:00:00")) == [
        ids[1]
    ]  # a bare date-time is UTC
    db.execute(update(Quote).where(Quote.public_id == ids[1]).values(status="accepted"))
    assert numbers(search(client, acme, status="accepted")) == [ids[1]]
    # Every quote here was issued days ago with 14 days' validity from now: none has expired.
    assert numbers(search(client, acme, status="issued")) == [ids[3], ids[2], ids[0]]
    refused = client.get("/quotes", params={"status": "lost"}, headers=bearer(acme))
    assert refused.status_code == 422 and refused.json()["errors"][0]["field"] == "query.status"


def test_pages_follow_the_cursor_without_repeats_or_gaps(client: TestClient, two_organisations: dict[str, Any]) -> None:
    acme, ids = two_organisations["acme"], two_organisations["ids"]
    first = search(client, acme, limit=3)
    assert numbers(first) == ids[:0:-1] and first["next_cursor"]
    quote(client, acme, "new@acme.example")  # issued between two pages: newer than every page, not on the next
    second = search(client, acme, limit=3, cursor=first["next_cursor"])
    assert numbers(second) == [ids[0]] and second["next_cursor"] is None
    exact = search(client, acme, limit=1, customer_email="cy@initech.example")
    assert exact["next_cursor"] is None  # a last page says so, even when full


def test_a_bad_cursor_is_a_422_naming_it(client: TestClient, two_organisations: dict[str, Any]) -> None:
    for cursor in ("nonsense", "eyJ0IjoxfQ", encode_cursor(T0, 1)[:-3] + "!!!", "A" * 200):
        response = client.get("/quotes", params={"cursor": cursor}, headers=bearer(two_organisations["acme"]))
        assert response.status_code == 422, (cursor, response.text)
        assert response.json()["errors"][0]["field"] == "query.cursor"
        assert response.json()["detail"].startswith("query.cursor: ")  # review R4-13: before, "cursor: …"


def test_admins_see_every_quote_and_others_are_refused(
    client: TestClient, alice: Admin, two_organisations: dict[str, Any]
) -> None:
    everyone = client.get("/quotes", headers=alice.headers, params={"limit": 200})
    assert everyone.status_code == 200
    expected = {*two_organisations["ids"], two_organisations["other"], two_organisations["anonymous"]}
    assert set(numbers(everyone.json())) == expected
    globex = client.get("/quotes", headers=alice.headers, params={"organisation": "Globex"})
    assert numbers(globex.json()) == [two_organisations["other"]]
    twice = client.get("/quotes", headers=alice.headers, params=[("organisation", "Globex"), ("organisation", "Acme")])
    assert twice.status_code == 422 and twice.json()["errors"][0]["field"] == "query.organisation"
    writer = issue(client, alice, scopes=["quotes:write"])["key"]
    assert client.get("/quotes", headers=bearer(writer)).status_code == 403
    for headers in ({}, {"Authorization": "Bearer gsz_not-a-token"}, bearer("gsk_" + "B" * 43)):
        response = client.get("/quotes", headers=headers)
        assert response.status_code == 401 and response.headers["content-type"] == "application/problem+json"
