"""The admin registers endpoints (audited, the secret shown once) and every quote change writes its event and
deliveries in the change's own transaction, on both databases."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.admin.models import AuditEntry
from app.quotes import expiry
from app.quotes.repository import get_by_public_id
from app.webhooks import service
from app.webhooks.models import WebhookDelivery, WebhookEndpoint, WebhookEvent
from tests.admin.conftest import Admin, csrf_of, sign_in
from tests.quotes.helpers import a100_body

PUBLIC_URL = "https://93.184.215.14/hooks/crm?token=receiver-secret-path"  # an IP literal: no DNS needed


def _register(client: TestClient, admin: Admin, **changes: object) -> dict:
    body = {"url": PUBLIC_URL, "events": ["quote.issued", "quote.accepted", "quote.cancelled", "quote.expired"]}
    response = client.post("/admin/api/webhooks", json={**body, **changes}, headers=admin.headers)
    assert response.status_code == 201, response.text
    return response.json()


def _events(db: Session) -> list[tuple[str, str]]:
    return [
        (e.type, json.loads(e.body)["data"]["status"])
        for e in db.scalars(select(WebhookEvent).order_by(WebhookEvent.id))
    ]


def test_the_secret_and_full_url_are_shown_once(client: TestClient, db: Session, alice: Admin) -> None:
    created = client.post(
        "/admin/api/webhooks", json={"url": PUBLIC_URL, "events": ["quote.issued"]}, headers=alice.headers
    )
    assert created.status_code == 201 and created.headers["cache-control"] == "no-store"
    secret = created.json()["secret"]
    assert secret.startswith("whsec_") and created.json()["url"] == PUBLIC_URL
    listed = client.get("/admin/api/webhooks", headers=alice.headers)
    one = client.get(f"/admin/api/webhooks/{created.json()['id']}", headers=alice.headers)
    audit = client.get("/admin/api/audit?entity_type=webhook", headers=alice.headers)
    for later in (listed, one, audit):
        assert later.status_code == 200
        assert secret not in later.text and "receiver-secret-path" not in later.text
    assert listed.json()[0]["url_origin"] == "https://93.184.215.14"
    entry = db.scalar(select(AuditEntry).where(AuditEntry.action == "webhook.create"))
    assert entry is not None and entry.actor == "alice@example.com" and entry.after["events"] == ["quote.issued"]


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8000/x",
        "http://10.0.0.5/x",
        "http://169.254.169.254/latest",
        "http://[::1]/x",
        "http://[127.0.0.1]:9/",  # urlsplit raises ValueError on it: was a 500
        "https://93.184.215.14/a b",
    ],
)
def test_private_urls_are_refused_naming_the_field(client: TestClient, alice: Admin, url: str) -> None:
    response = client.post("/admin/api/webhooks", json={"url": url, "events": ["quote.issued"]}, headers=alice.headers)
    assert response.status_code == 422
    assert response.headers["content-type"] == "application/problem+json"
    assert [e["field"] for e in response.json()["errors"]] == ["url"]


def test_unknown_events_are_refused(client: TestClient, alice: Admin) -> None:
    response = client.post(
        "/admin/api/webhooks", json={"url": PUBLIC_URL, "events": ["quote.deleted"]}, headers=alice.headers
    )
    assert response.status_code == 422
    assert "events" in json.dumps(response.json()["errors"])


def test_each_change_writes_its_event_with_the_change(client: TestClient, db: Session, alice: Admin) -> None:
    everything = _register(client, alice)
    only_accepted = _register(client, alice, events=["quote.accepted"])
    paused = _register(client, alice, active=False)  # a paused endpoint's deliveries are held, not sent
    first = client.post("/quotes", json=a100_body()).json()
    second = client.post("/quotes", json=a100_body()).json()
    third = client.post("/quotes", json=a100_body()).json()
    assert client.post(first["links"]["accept"]).status_code == 200
    assert client.post(first["links"]["accept"]).status_code == 200  # again: no second event
    assert client.post(f"/admin/api/quotes/{second['id']}/cancel", headers=alice.headers).status_code == 200
    get_by_public_id(db, third["id"]).valid_until = datetime.now(UTC) - timedelta(minutes=1)
    db.flush()
    assert expiry.expire_due(db) == 1 and expiry.expire_due(db) == 0
    assert get_by_public_id(db, third["id"]).status == "expired"
    assert _events(db) == [
        ("quote.issued", "issued"),
        ("quote.issued", "issued"),
        ("quote.issued", "issued"),
        ("quote.accepted", "accepted"),
        ("quote.cancelled", "cancelled"),
        ("quote.expired", "expired"),
    ]
    per_endpoint = {
        endpoint: sorted(
            d.event.type for d in db.scalars(select(WebhookDelivery).where(WebhookDelivery.endpoint_id == endpoint))
        )
        for endpoint in (everything["id"], only_accepted["id"])
    }
    assert per_endpoint == {
        everything["id"]: sorted(["quote.issued"] * 3 + ["quote.accepted", "quote.cancelled", "quote.expired"]),
        only_accepted["id"]: ["quote.accepted"],
    }
    held = db.scalars(select(WebhookDelivery.status).where(WebhookDelivery.endpoint_id == paused["id"])).all()
    assert sorted(held) == ["held"] * 6
    body = json.loads(db.scalars(select(WebhookEvent)).first().body)
    assert body["type"] == "quote.issued" and body["timestamp"].endswith("Z")
    data = body["data"]
    assert (data["number"], data["id"], data["total"], data["currency"]) == (
        first["number"],
        first["id"],
        first["total"],
        first["currency"],
    )
    assert isinstance(data["subtotal"], str) and data["customer"]["email"] == "ada@example.org"


def test_a_quote_refused_writes_no_event(client: TestClient, db: Session, alice: Admin) -> None:
    _register(client, alice)
    refused = client.post("/quotes", json=a100_body(sku_id="no-such-sku"))
    assert refused.status_code == 422
    assert db.scalars(select(WebhookEvent)).all() == []


def test_no_endpoint_no_event(client: TestClient, db: Session) -> None:
    assert client.post("/quotes", json=a100_body()).status_code == 201
    assert db.scalars(select(WebhookEvent)).all() == []


def test_deliveries_are_listed_read_and_replayed(client: TestClient, db: Session, alice: Admin) -> None:
    endpoint = _register(client, alice)
    client.post("/quotes", json=a100_body())
    page = client.get(f"/admin/api/webhooks/deliveries?endpoint_id={endpoint['id']}", headers=alice.headers).json()
    assert page["total"] == 1 and page["items"][0]["status"] == "pending"
    first = page["items"][0]
    detail = client.get(f"/admin/api/webhooks/deliveries/{first['id']}", headers=alice.headers).json()
    assert detail["log"] == [] and json.loads(detail["body"])["type"] == "quote.issued"
    replayed = client.post(f"/admin/api/webhooks/deliveries/{first['id']}/replay", headers=alice.headers)
    assert replayed.status_code == 201
    assert (replayed.json()["replay_of"], replayed.json()["message_id"]) == (first["id"], first["message_id"])
    assert db.scalar(select(AuditEntry).where(AuditEntry.action == "webhook.replay")) is not None
    assert client.get("/admin/api/webhooks/deliveries/999999", headers=alice.headers).status_code == 404


def _statuses(client: TestClient, admin: Admin, endpoint_id: int) -> list[tuple[str, str]]:
    page = client.get(f"/admin/api/webhooks/deliveries?endpoint_id={endpoint_id}", headers=admin.headers).json()
    return [(d["event_type"], d["status"]) for d in reversed(page["items"])]


def test_a_paused_endpoint_holds_its_events_until_resumed(client: TestClient, db: Session, alice: Admin) -> None:
    """Before: events raised while paused were never written, so the resume could not send them nor the log
    replay them."""
    endpoint = _register(client, alice)
    before = client.post("/quotes", json=a100_body()).json()  # pending when the pause comes: held too
    paused = client.post(f"/admin/api/webhooks/{endpoint['id']}/pause", headers=alice.headers)
    assert paused.status_code == 200 and paused.json()["active"] is False
    quote = client.post("/quotes", json=a100_body()).json()
    assert client.post(quote["links"]["accept"]).status_code == 200
    assert _statuses(client, alice, endpoint["id"]) == [
        ("quote.issued", "held"),
        ("quote.issued", "held"),
        ("quote.accepted", "held"),
    ]
    assert service.claim(db, lease_s=30, limit=10) == []  # nothing is sent while paused
    resumed = client.post(f"/admin/api/webhooks/{endpoint['id']}/resume", headers=alice.headers)
    assert resumed.status_code == 200 and resumed.json()["active"] is True
    assert _statuses(client, alice, endpoint["id"]) == [
        ("quote.issued", "pending"),
        ("quote.issued", "pending"),
        ("quote.accepted", "pending"),
    ]
    jobs = service.claim(db, lease_s=30, limit=10)  # all due now, in the order they were raised
    subjects = [(json.loads(j.body)["type"], json.loads(j.body)["data"]["number"]) for j in jobs]
    assert subjects == [
        ("quote.issued", before["number"]),
        ("quote.issued", quote["number"]),
        ("quote.accepted", quote["number"]),
    ]
    actions = db.scalars(select(AuditEntry.action).where(AuditEntry.entity_type == "webhook").order_by(AuditEntry.id))
    assert list(actions) == ["webhook.create", "webhook.update", "webhook.update"]
    assert client.post("/admin/api/webhooks/999999/pause", headers=alice.headers).status_code == 404


def test_anonymous_and_viewers_cannot_see_webhooks(client: TestClient) -> None:
    assert client.get("/admin/api/webhooks").status_code == 401
    assert client.post("/admin/api/webhooks", json={"url": PUBLIC_URL, "events": ["quote.issued"]}).status_code == 401


def test_the_admin_pages_register_show_once_pause_and_replay(client: TestClient, db: Session, alice: Admin) -> None:
    csrf = sign_in(client, "alice@example.com")
    created = client.post(
        "/admin/webhooks",
        data={
            "url": PUBLIC_URL,
            "events": ["quote.issued", "quote.accepted"],
            "description": "CRM",
            "csrf_token": csrf,
        },
    )
    assert created.status_code == 201
    secret = db.scalars(select(WebhookEndpoint)).one().secret
    assert secret in created.text and created.headers["cache-control"] == "no-store"
    listing = client.get("/admin/webhooks")
    assert listing.status_code == 200 and secret not in listing.text and "receiver-secret-path" not in listing.text
    refused = client.post(
        "/admin/webhooks", data={"url": "http://127.0.0.1/", "events": ["quote.issued"], "csrf_token": csrf}
    )
    assert refused.status_code == 422 and "url" in refused.text
    endpoint_id = db.scalars(select(WebhookEndpoint)).one().id
    client.post("/quotes", json=a100_body())
    deliveries = client.get("/admin/webhooks/deliveries")
    assert deliveries.status_code == 200 and "quote.issued" in deliveries.text
    delivery = db.scalars(select(WebhookDelivery)).one()
    page = client.get(f"/admin/webhooks/deliveries/{delivery.id}")
    assert page.status_code == 200 and delivery.event.message_id in page.text and secret not in page.text
    replay = client.post(
        f"/admin/webhooks/deliveries/{delivery.id}/replay",
        data={"csrf_token": csrf_of(page.text)},
        follow_redirects=False,
    )
    assert replay.status_code == 303
    assert len(db.scalars(select(WebhookDelivery)).all()) == 2
    paused = client.post(
        f"/admin/webhooks/{endpoint_id}/active", data={"active": "false", "csrf_token": csrf}, follow_redirects=False
    )
    assert paused.status_code == 303 and db.get(WebhookEndpoint, endpoint_id).active is False
    no_csrf = client.post(f"/admin/webhooks/{endpoint_id}/active", data={"active": "true"})
    assert no_csrf.status_code == 403
