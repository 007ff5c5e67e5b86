"""The admin's API key pages: issue through the form (the key shown on that answer only), refusals naming
the field, revoke through the confirmation page; each audited."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.admin.models import AuditEntry
from tests.admin.conftest import Admin, sign_in
from tests.apikeys.conftest import RECOMMEND, bearer

KEY = re.compile(r'<code class="token">(gsk_[^<]+)</code>')


def test_issue_list_and_revoke_through_the_pages(client: TestClient, db: Session, alice: Admin) -> None:
    csrf = sign_in(client, alice.user.email)
    form = {
        "csrf_token": csrf,
        "name": "HubSpot",
        "organisation": "Acme Sales",
        "scopes": ["recommend", "quotes:read"],
        "rate_limit_per_minute": "90",
        "expires_on": "2099-01-31",
    }
    created = client.post("/admin/keys", data=form)
    assert created.status_code == 201 and created.headers["cache-control"] == "no-store"
    match = KEY.search(created.text)
    assert match, created.text
    key = match.group(1)
    listing = client.get("/admin/keys")
    assert listing.status_code == 200 and key not in listing.text
    assert "Acme Sales" in listing.text and key[:12] in listing.text and "recommend, quotes:read" in listing.text
    (issued,) = client.get("/admin/api/keys", headers=alice.headers).json()
    assert (issued["rate_limit_per_minute"], issued["expires_at"]) == (90, "2099-01-31T00:00:00Z")
    assert client.post("/recommend", json=RECOMMEND, headers=bearer(key)).status_code == 200
    page = client.get(f"/admin/keys/{issued['id']}/revoke")
    assert page.status_code == 200 and "Revoke this key" in page.text
    unticked = client.post(f"/admin/keys/{issued['id']}/revoke", data={"csrf_token": csrf})
    assert unticked.status_code == 422
    assert client.post("/recommend", json=RECOMMEND, headers=bearer(key)).status_code == 200
    done = client.post(
        f"/admin/keys/{issued['id']}/revoke", data={"csrf_token": csrf, "confirm": "yes"}, follow_redirects=False
    )
    assert (done.status_code, done.headers["location"]) == (303, "/admin/keys?msg=key-revoked")
    assert client.post("/recommend", json=RECOMMEND, headers=bearer(key)).status_code == 401
    actions = db.scalars(select(AuditEntry.action).where(AuditEntry.entity_type == "api_key")).all()
    assert sorted(actions) == ["api_key.create", "api_key.revoke"]


def test_the_form_names_what_is_wrong(client: TestClient, alice: Admin) -> None:
    csrf = sign_in(client, alice.user.email)
    base = {"csrf_token": csrf, "name": "CRM", "organisation": "Acme", "scopes": ["recommend"]}
    for fields, words in [
        ({"scopes": []}, "scopes"),
        ({"organisation": " "}, "organisation"),
        ({"rate_limit_per_minute": "0"}, "rate_limit_per_minute"),
        ({"expires_on": "2001-01-01"}, "must be in the future"),
        ({"expires_on": "tomorrow"}, "Please correct"),
    ]:
        response = client.post("/admin/keys", data={**base, **fields})
        assert response.status_code == 422, (fields, response.status_code)
        assert words in response.text and "gsk_" not in response.text, fields
    assert client.get("/admin/api/keys", headers={"Authorization": f"Bearer {alice.token}"}).json() == []
