"""Admin actions that cannot be undone ask first, without JavaScript: cancelling a quote and revoking an
API token each have a confirmation page whose form must carry the ticked box; a post without it does
nothing and shows the page again (422)."""

from __future__ import annotations

from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.admin.models import ApiToken, AuditEntry
from tests.admin.conftest import Admin, sign_in
from tests.admin.test_audit_and_quotes import _quote


def _status(client: TestClient, quote_id: str) -> str:
    return str(client.get(f"/quotes/{quote_id}").json()["status"])


def test_the_quotes_page_lists_quotes_and_links_to_a_confirmation(client: TestClient, alice: Admin) -> None:
    quote = _quote(client)
    sign_in(client, "alice@example.com")
    page = client.get("/admin/quotes")
    assert page.status_code == 200
    assert quote["number"] in page.text and "Ada" in page.text
    assert f'href="/admin/quotes/{quote["id"]}/cancel">Cancel…</a>' in page.text
    assert '<a href="/admin/quotes">Quotes</a>' in page.text  # in the admin's navigation


def test_cancelling_a_quote_asks_for_confirmation(client: TestClient, db: Session, alice: Admin) -> None:
    quote = _quote(client)
    csrf = sign_in(client, "alice@example.com")
    confirm = client.get(f"/admin/quotes/{quote['id']}/cancel")
    assert confirm.status_code == 200
    assert f"Cancel quote {quote['number']}?" in confirm.text
    assert f'<input type="checkbox" name="confirm" value="yes" required> Yes, cancel {quote["number"]}' in confirm.text
    refused = client.post(f"/admin/quotes/{quote['id']}/cancel", data={"csrf_token": csrf}, follow_redirects=False)
    assert refused.status_code == 422 and "tick the box to confirm" in refused.text
    assert _status(client, quote["id"]) == "issued"
    done = client.post(
        f"/admin/quotes/{quote['id']}/cancel", data={"csrf_token": csrf, "confirm": "yes"}, follow_redirects=False
    )
    assert done.status_code == 303 and done.headers["location"] == "/admin/quotes?msg=cancelled"
    assert _status(client, quote["id"]) == "cancelled"
    entry = db.scalars(select(AuditEntry).where(AuditEntry.action == "quote.cancel")).one()
    assert (entry.entity_id, entry.actor) == (quote["number"], "alice@example.com")
    again = client.get(f"/admin/quotes/{quote['id']}/cancel")
    assert "This quote is cancelled" in again.text and 'name="confirm"' not in again.text


def test_revoking_a_token_asks_for_confirmation(client: TestClient, db: Session, alice: Admin) -> None:
    csrf = sign_in(client, "alice@example.com")
    row = db.scalars(select(ApiToken).where(ApiToken.user_id == alice.user.id)).one()
    listed = client.get("/admin/tokens").text
    assert f'href="/admin/tokens/{row.id}/revoke">Revoke…</a>' in listed
    assert f'action="/admin/tokens/{row.id}/revoke"' not in listed  # no one-click revoke on the list
    confirm = client.get(f"/admin/tokens/{row.id}/revoke")
    assert confirm.status_code == 200 and "Revoke the API token “tests”?" in confirm.text
    refused = client.post(f"/admin/tokens/{row.id}/revoke", data={"csrf_token": csrf}, follow_redirects=False)
    assert refused.status_code == 422 and "tick the box to confirm" in refused.text
    assert client.get("/admin/api/skus", headers=alice.headers).status_code == 200  # still valid
    done = client.post(
        f"/admin/tokens/{row.id}/revoke", data={"csrf_token": csrf, "confirm": "yes"}, follow_redirects=False
    )
    assert done.status_code == 303
    assert client.get("/admin/api/skus", headers=alice.headers).status_code == 401


def test_an_unknown_quote_or_token_is_a_404(client: TestClient, alice: Admin) -> None:
    sign_in(client, "alice@example.com")
    assert client.get("/admin/quotes/no-such-quote/cancel").status_code == 404
    assert client.get("/admin/tokens/999999/revoke").status_code == 404
