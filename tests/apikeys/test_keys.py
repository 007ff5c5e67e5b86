"""API keys: issued by admins (audited, shown once, stored as a keyed hash), accepted by POST /recommend and
POST /quotes, refused alike whether wrong, revoked or expired (401), out of scope 403; never logged."""

from __future__ import annotations

import hashlib
import hmac
import logging
from datetime import UTC, datetime, timedelta

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.admin.models import AuditEntry
from app.apikeys import service
from app.apikeys.models import ApiKey
from app.common.errors import Forbidden, Unauthorized
from app.common.settings import DEV_API_KEY_SECRET
from app.quotes.models import Quote
from app.text import messages
from tests.admin.conftest import Admin
from tests.apikeys.conftest import RECOMMEND, bearer, issue
from tests.quotes.helpers import a100_body


def test_a_key_is_shown_once_and_stored_as_its_hmac(client: TestClient, db: Session, alice: Admin) -> None:
    issued = issue(client, alice, name="HubSpot", organisation="Acme Sales", scopes=["recommend"])
    key = issued["key"]
    assert key.startswith("gsk_") and len(key) == 4 + 43
    assert issued["prefix"] == key[:12]
    assert (issued["organisation"], issued["scopes"], issued["rate_limit_per_minute"]) == (
        "Acme Sales",
        ["recommend"],
        600,
    )
    row = db.get(ApiKey, issued["id"])
    assert row is not None
    expected = hmac.new(DEV_API_KEY_SECRET.encode(), key.encode(), hashlib.sha256).hexdigest()
    assert row.key_hash == expected != hashlib.sha256(key.encode()).hexdigest()
    listed = client.get("/admin/api/keys", headers=alice.headers)
    assert listed.status_code == 200
    assert key not in listed.text and row.key_hash not in listed.text
    assert [k["id"] for k in listed.json()] == [issued["id"]]
    (entry,) = db.scalars(select(AuditEntry).where(AuditEntry.entity_type == "api_key")).all()
    assert (entry.action, entry.actor, entry.entity_id) == ("api_key.create", "alice@example.com", str(row.id))
    assert key not in str(entry.after) and row.key_hash not in str(entry.after)
    assert entry.after is not None and entry.after["organisation"] == "Acme Sales"


def test_issuing_refuses_bad_fields_by_name(client: TestClient, alice: Admin) -> None:
    cases = [
        ({"scopes": []}, "scopes"),
        ({"scopes": ["admin"]}, "scopes.0"),
        ({"rate_limit_per_minute": 0}, "rate_limit_per_minute"),
        ({"organisation": ""}, "organisation"),
        ({"expires_at": "2020-01-01T00:00:00Z"}, "expires_at"),
    ]
    for fields, field in cases:
        body = {"name": "x", "organisation": "Acme", "scopes": ["recommend"], **fields}
        response = client.post("/admin/api/keys", json=body, headers=alice.headers)
        assert response.status_code == 422, (fields, response.text)
        assert field in [e["field"] for e in response.json()["errors"]], response.json()
    assert (
        client.post("/admin/api/keys", json={"name": "x", "organisation": "A", "scopes": ["recommend"]}).status_code
        == 401
    )


def test_authenticate_refuses_alike_and_checks_scope(client: TestClient, db: Session, alice: Admin) -> None:
    live = issue(client, alice, scopes=["recommend"])
    revoked = issue(client, alice, scopes=["recommend"])
    expiring = issue(
        client, alice, scopes=["recommend"], expires_at=(datetime.now(UTC) + timedelta(minutes=5)).isoformat()
    )
    assert client.post(f"/admin/api/keys/{revoked['id']}/revoke", headers=alice.headers).json()["revoked_at"]
    principal = service.authenticate(db, f"Bearer {live['key']}", "recommend")
    assert (principal.key_id, principal.organisation, principal.scopes) == (
        live["id"],
        "Acme",
        frozenset({"recommend"}),
    )
    with pytest.raises(Forbidden):
        service.authenticate(db, f"Bearer {live['key']}", "quotes:read")
    later = datetime.now(UTC) + timedelta(minutes=6)
    refused = [
        None,
        "",
        "Basic dXNlcjpwYXNz",
        f"Bearer {live['key']}x",
        "Bearer gsk_" + "A" * 43,
        "Bearer gsk_" + "A" * 5000,
        f"Bearer {revoked['key']}",
    ]
    details = set()
    for header in refused:
        with pytest.raises(Unauthorized) as caught:
            service.authenticate(db, header, "recommend")
        details.add(caught.value.detail)
    with pytest.raises(Unauthorized) as caught:
        service.authenticate(db, f"Bearer {expiring['key']}", "recommend", now=later)
    details.add(caught.value.detail)
    assert details == {messages.refusal(service.NOT_VALID, {})}


def test_last_used_is_written_at_most_once_a_minute(client: TestClient, db: Session, alice: Admin) -> None:
    issued = issue(client, alice, scopes=["recommend"])
    start = datetime.now(UTC)
    service.authenticate(db, f"Bearer {issued['key']}", "recommend", now=start)
    row = db.get(ApiKey, issued["id"])
    assert row is not None
    db.refresh(row)
    assert service.aware(row.last_used_at) == start  # type: ignore[arg-type]
    service.authenticate(db, f"Bearer {issued['key']}", "recommend", now=start + timedelta(seconds=30))
    db.refresh(row)
    assert service.aware(row.last_used_at) == start  # type: ignore[arg-type]
    service.authenticate(db, f"Bearer {issued['key']}", "recommend", now=start + timedelta(seconds=61))
    db.refresh(row)
    assert service.aware(row.last_used_at) == start + timedelta(seconds=61)  # type: ignore[arg-type]


def test_routes_take_a_key_or_none(client: TestClient, db: Session, alice: Admin) -> None:
    issued = issue(client, alice, scopes=["recommend", "quotes:write"], organisation="Acme Sales")
    quotes_only = issue(client, alice, scopes=["quotes:read"])
    assert client.post("/recommend", json=RECOMMEND).status_code == 200
    assert client.post("/recommend", json=RECOMMEND, headers=bearer(issued["key"])).status_code == 200
    # Another kind of credential is no API key: ignored, as before keys existed (anonymous, limited per address).
    assert client.post("/recommend", json=RECOMMEND, headers=alice.headers).status_code == 200
    assert client.post("/recommend", json=RECOMMEND, headers={"Authorization": "Basic dXNlcjpwYXNz"}).status_code == 200
    too_long = client.post("/recommend", json=RECOMMEND, headers=bearer(issued["key"] + "x" * 500))
    assert too_long.status_code == 401  # a key, if a wrong one: refused, never taken as anonymous
    wrong = client.post("/recommend", json=RECOMMEND, headers=bearer(issued["key"] + "x"))
    assert wrong.status_code == 401 and wrong.headers["content-type"] == "application/problem+json"
    assert wrong.headers["www-authenticate"] == "Bearer"
    scope = client.post("/recommend", json=RECOMMEND, headers=bearer(quotes_only["key"]))
    assert scope.status_code == 403 and "recommend" in scope.json()["detail"]
    keyed = client.post("/quotes", json=a100_body(), headers=bearer(issued["key"]))
    plain = client.post("/quotes", json=a100_body())
    assert (keyed.status_code, plain.status_code) == (201, 201)
    organisations = {
        q.public_id: q.organisation
        for q in db.scalars(select(Quote).where(Quote.public_id.in_([keyed.json()["id"], plain.json()["id"]])))
    }
    assert organisations == {keyed.json()["id"]: "Acme Sales", plain.json()["id"]: None}
    assert client.post("/quotes", json=a100_body(), headers=bearer(quotes_only["key"])).status_code == 403


def test_keys_never_reach_the_logs(client: TestClient, alice: Admin, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    issued = issue(client, alice)
    client.post("/recommend", json=RECOMMEND, headers=bearer(issued["key"]))
    client.post("/recommend", json=RECOMMEND, headers=bearer(issued["key"] + "x"))
    client.post(f"/admin/api/keys/{issued['id']}/revoke", headers=alice.headers)
    client.post("/recommend", json=RECOMMEND, headers=bearer(issued["key"]))
    assert caplog.records, "nothing was logged: the check would be empty"
    logged = "\n".join(record.getMessage() + str(record.__dict__) for record in caplog.records)
    assert issued["key"] not in logged and issued["key"][12:] not in logged


def test_an_idempotency_key_is_scoped_to_its_organisation(client: TestClient, alice: Admin) -> None:
    """Each organisation (and the anonymous callers, one scope of their own) has its own keys: another's use of
    "crm-deal-1" neither refuses a request nor shows a quote. Before: Beta's first request was a 409."""
    acme = issue(client, alice, organisation="Acme")["key"]
    beta = issue(client, alice, organisation="Beta")["key"]
    headers = {"Idempotency-Key": "crm-deal-1"}
    first = client.post("/quotes", json=a100_body(), headers={**headers, **bearer(acme)})
    again = client.post("/quotes", json=a100_body(), headers={**headers, **bearer(acme)})
    assert (first.status_code, again.status_code, again.json()["id"]) == (201, 200, first.json()["id"])
    seen = {first.json()["id"]}
    for other in (bearer(beta), {}):  # the same key elsewhere: a quote of its own, replayed within its scope
        own = client.post("/quotes", json=a100_body(quantity=4), headers={**headers, **other})
        assert own.status_code == 201, own.text
        assert own.json()["id"] not in seen and "already used" not in own.text
        replayed = client.post("/quotes", json=a100_body(quantity=4), headers={**headers, **other})
        assert (replayed.status_code, replayed.json()["id"]) == (200, own.json()["id"])
        seen.add(own.json()["id"])
    other_body = client.post("/quotes", json=a100_body(quantity=4), headers={**headers, **bearer(acme)})
    assert other_body.status_code == 409  # within one scope, another body is still refused
