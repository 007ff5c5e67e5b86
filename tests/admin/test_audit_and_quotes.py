"""The audit log cannot be edited (the database refuses), the audit page filters, and admins list
and cancel quotes; a retired SKU's quotes stay valid."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import delete, select, text, update
from sqlalchemy.exc import DatabaseError
from sqlalchemy.orm import Session

from app.admin.models import AuditEntry
from tests.admin.conftest import Admin, sign_in

CARD = "a100-40g-pcie-card"


def test_audit_rows_cannot_be_updated_or_deleted(db: Session, alice: Admin) -> None:
    entry = db.scalar(select(AuditEntry))
    for statement in (update(AuditEntry).values(actor="mallory@example.com"), delete(AuditEntry)):
        with pytest.raises(DatabaseError, match="append-only"), db.begin_nested():
            db.execute(statement)
    db.expire_all()
    assert db.scalar(select(AuditEntry.actor).where(AuditEntry.id == entry.id)) == "alice@example.com"


def test_the_audit_log_cannot_be_truncated(db: Session, backend: str, alice: Admin) -> None:
    # PostgreSQL: a statement-level BEFORE TRUNCATE trigger (migration 0009). SQLite has no TRUNCATE; its
    # unqualified DELETE (which it would otherwise "truncate") meets the row trigger, as tested above.
    statement = text("TRUNCATE audit_log") if backend == "postgresql" else text("DELETE FROM audit_log")
    with pytest.raises(DatabaseError, match="append-only"), db.begin_nested():
        db.execute(statement)
    db.expire_all()
    assert db.scalar(select(AuditEntry.actor)) == "alice@example.com"


def test_the_api_has_no_way_to_change_the_audit_log(client: TestClient, alice: Admin) -> None:
    for method in ("PUT", "PATCH", "DELETE"):
        assert client.request(method, "/admin/api/audit", headers=alice.headers).status_code == 405


def test_audit_api_filters(client: TestClient, alice: Admin, bob: Admin) -> None:
    client.patch(f"/admin/api/skus/{CARD}", headers=alice.headers, json={"version": 1, "notes": "a"})
    client.patch(f"/admin/api/skus/{CARD}", headers=bob.headers, json={"version": 2, "notes": "b"})
    page = client.get(
        "/admin/api/audit", headers=alice.headers, params={"actor": "bob@example.com", "entity_type": "sku"}
    ).json()
    assert page["total"] == 1
    item = page["items"][0]
    assert (item["actor"], item["action"], item["before"]["notes"], item["after"]["notes"]) == (
        "bob@example.com",
        "sku.update",
        "a",
        "b",
    )
    assert (
        client.get("/admin/api/audit", headers=alice.headers, params={"since": "2999-01-01T00:00:00Z"}).json()["total"]
        == 0
    )
    bad = client.get("/admin/api/audit", headers=alice.headers, params={"limit": 0})
    assert bad.status_code == 422 and bad.json()["errors"][0]["field"] == "query.limit"


def test_audit_page_filters_in_the_browser(client: TestClient, alice: Admin) -> None:
    client.patch(f"/admin/api/skus/{CARD}", headers=alice.headers, json={"version": 1, "notes": "changed"})
    sign_in(client, "alice@example.com")
    page = client.get("/admin/audit", params={"entity_id": CARD, "action": "sku.update"})
    assert page.status_code == 200
    assert "1 entry." in page.text and '"notes": "changed"' in page.text
    assert client.get("/admin/audit", params={"since": "yesterday"}).status_code == 422


def _quote(client: TestClient) -> dict:
    body = {
        "sku_id": CARD,
        "quantity": 2,
        "term": "monthly",
        "months": 3,
        "customer": {"name": "Ada", "company": "", "email": "ada@example.org"},
    }
    response = client.post("/quotes", json=body)
    assert response.status_code == 201, response.text
    return response.json()


def test_admins_list_and_cancel_quotes_and_the_cancel_is_audited(client: TestClient, db: Session, alice: Admin) -> None:
    quote = _quote(client)
    listed = client.get("/admin/api/quotes", headers=alice.headers, params={"customer": "ada"}).json()
    assert [q["id"] for q in listed["items"]] == [quote["id"]]
    cancelled = client.post(f"/admin/api/quotes/{quote['id']}/cancel", headers=alice.headers)
    assert cancelled.status_code == 200
    assert cancelled.json()["status"] == "cancelled"
    entry = db.scalar(select(AuditEntry).where(AuditEntry.action == "quote.cancel"))
    assert (entry.actor, entry.entity_id, entry.before, entry.after["status"]) == (
        "alice@example.com",
        quote["number"],
        {"status": "issued"},
        "cancelled",
    )
    assert client.get("/admin/api/quotes", headers=alice.headers, params={"status": "issued"}).json()["total"] == 0


def test_retiring_a_sku_keeps_its_quotes_valid(client: TestClient, alice: Admin) -> None:
    quote = _quote(client)
    client.post(f"/admin/api/skus/{CARD}/retire", headers=alice.headers, json={"version": 1})
    again = client.get(f"/quotes/{quote['id']}").json()
    assert (again["status"], again["total"]) == ("issued", quote["total"])
