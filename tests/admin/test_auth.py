"""Who may use the admin: a walk over the route table, sign-in, cookies, CSRF, logout, expiry,
the sign-in throttle, and API tokens."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import timedelta

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from app.admin import service
from app.admin.deps import require_admin, require_signed_in
from app.admin.models import AdminSession, ApiToken, AuditEntry, LoginAttempt
from app.catalog.models import Sku
from app.db.base import utcnow
from tests.admin.conftest import PASSWORD, Admin, csrf_of, sign_in

PUBLIC = {("GET", "/admin/login"), ("POST", "/admin/login")}


def _flatten(routes: list) -> Iterator:
    """Every endpoint of the app, through included routers (FastAPI ≥0.13x keeps them nested)."""
    for route in routes:
        if hasattr(route, "effective_candidates"):
            yield from _flatten(route.effective_candidates())
        elif hasattr(route, "routes") and not hasattr(route, "dependant"):
            yield from _flatten(route.routes)  # a mounted sub-application or plain Router
        else:
            yield route


def admin_routes(client: TestClient) -> list[tuple[str, str, object]]:
    out = []
    for route in _flatten(client.app.routes):
        path = getattr(route, "path", "")
        if not path.startswith("/admin"):
            continue
        assert hasattr(route, "dependant"), f"{path} is not a FastAPI route: require_admin cannot guard it"
        for method in sorted(set(route.methods) - {"HEAD"}):
            if (method, path) not in PUBLIC:
                out.append((method, path, route))
    return out


def concrete(path: str) -> str:
    return re.sub(r"\{(token_id|key_id)\}", "1", re.sub(r"\{(?!token_id|key_id)[^}]+\}", "x", path))


def _depends_on_require_admin(dependant, gate=require_admin) -> bool:
    return any(d.call is gate or _depends_on_require_admin(d, gate) for d in dependant.dependencies)


def _call(client: TestClient, method: str, path: str, **kwargs):
    body = {"json": {}} if path.startswith("/admin/api") and method != "GET" else {}
    if not path.startswith("/admin/api") and method != "GET":
        body = {"data": {}}
    return client.request(method, concrete(path), follow_redirects=False, **body, **kwargs)


ADMIN_ROUTES = {
    ("POST", "/admin/logout"),
    ("GET", "/admin"),
    ("GET", "/admin/skus"),
    ("GET", "/admin/skus/new"),
    ("POST", "/admin/skus/new"),
    ("GET", "/admin/skus/{slug}"),
    ("POST", "/admin/skus/{slug}"),
    ("POST", "/admin/skus/{slug}/prices"),
    ("POST", "/admin/skus/{slug}/{action}"),
    ("POST", "/admin/skus/{slug}/addons"),
    ("POST", "/admin/skus/{slug}/availability/{region}"),
    ("POST", "/admin/skus/{slug}/holds"),
    ("POST", "/admin/skus/{slug}/holds/delete"),
    ("GET", "/admin/capacity"),
    ("GET", "/admin/audit"),
    ("GET", "/admin/tokens"),
    ("POST", "/admin/tokens"),
    ("GET", "/admin/tokens/{token_id}/revoke"),
    ("POST", "/admin/tokens/{token_id}/revoke"),
    ("GET", "/admin/keys"),
    ("POST", "/admin/keys"),
    ("GET", "/admin/keys/{key_id}/revoke"),
    ("POST", "/admin/keys/{key_id}/revoke"),
    ("GET", "/admin/quotes"),
    ("GET", "/admin/quotes/{public_id}/cancel"),
    ("POST", "/admin/quotes/{public_id}/cancel"),
    ("GET", "/admin/api/skus"),
    ("POST", "/admin/api/skus"),
    ("GET", "/admin/api/skus/{sku_id}"),
    ("PATCH", "/admin/api/skus/{sku_id}"),
    ("POST", "/admin/api/skus/{sku_id}/prices"),
    ("POST", "/admin/api/skus/{sku_id}/retire"),
    ("POST", "/admin/api/skus/{sku_id}/reactivate"),
    ("PUT", "/admin/api/skus/{sku_id}/availability/{region}"),
    ("GET", "/admin/api/skus/{sku_id}/holds"),
    ("PUT", "/admin/api/skus/{sku_id}/holds/{region}/{starts_on}"),
    ("DELETE", "/admin/api/skus/{sku_id}/holds/{region}/{starts_on}"),
    ("GET", "/admin/api/capacity"),
    ("PUT", "/admin/api/skus/{sku_id}/addons/{code}"),
    ("GET", "/admin/api/audit"),
    ("GET", "/admin/api/quotes"),
    ("POST", "/admin/api/quotes/{public_id}/cancel"),
    ("GET", "/admin/api/keys"),
    ("POST", "/admin/api/keys"),
    ("POST", "/admin/api/keys/{key_id}/revoke"),
    ("GET", "/admin/api/catalog/export"),
    ("POST", "/admin/api/catalog/import"),
    ("GET", "/admin/webhooks"),
    ("POST", "/admin/webhooks"),
    ("POST", "/admin/webhooks/{endpoint_id}/active"),
    ("GET", "/admin/webhooks/deliveries"),
    ("GET", "/admin/webhooks/deliveries/{delivery_id}"),
    ("POST", "/admin/webhooks/deliveries/{delivery_id}/replay"),
    ("GET", "/admin/api/webhooks"),
    ("POST", "/admin/api/webhooks"),
    ("GET", "/admin/api/webhooks/deliveries"),
    ("GET", "/admin/api/webhooks/deliveries/{delivery_id}"),
    ("POST", "/admin/api/webhooks/deliveries/{delivery_id}/replay"),
    ("GET", "/admin/api/webhooks/{endpoint_id}"),
    ("POST", "/admin/api/webhooks/{endpoint_id}/pause"),
    ("POST", "/admin/api/webhooks/{endpoint_id}/resume"),
}


def test_the_walk_finds_every_admin_route(client: TestClient) -> None:
    # A new /admin route changes this set: add it here once the tests below cover it.
    assert {(m, p) for m, p, _ in admin_routes(client)} == ADMIN_ROUTES


def test_every_admin_route_depends_on_require_admin(client: TestClient) -> None:
    for method, path, route in admin_routes(client):
        if (method, path) == ("POST", "/admin/logout"):  # any signed-in user may sign out, a viewer too
            assert _depends_on_require_admin(route.dependant, require_signed_in)
            continue
        assert _depends_on_require_admin(route.dependant), f"{method} {path} is not behind require_admin"


def test_anonymous_calls_are_refused_on_every_admin_route(client: TestClient, db: Session) -> None:
    audit_rows = db.scalar(select(func.count()).select_from(AuditEntry))
    for method, path, _route in admin_routes(client):
        response = _call(client, method, path)
        if path.startswith("/admin/api"):
            assert response.status_code == 401, (method, path, response.text)
            assert response.headers["www-authenticate"] == "Bearer"
            assert response.headers["content-type"].startswith("application/problem+json")
        else:
            assert response.status_code == 303, (method, path)
            assert response.headers["location"].startswith("/admin/login?next=")
    assert db.scalar(select(func.count()).select_from(AuditEntry)) == audit_rows


def test_non_admin_and_revoked_tokens_are_refused_on_every_api_route(
    client: TestClient, db: Session, viewer: Admin, alice: Admin
) -> None:
    revoked = db.scalar(select(ApiToken).where(ApiToken.user_id == alice.user.id))
    revoked.revoked_at = utcnow()
    db.flush()
    for method, path, _route in admin_routes(client):
        if not path.startswith("/admin/api"):
            continue
        assert _call(client, method, path, headers=viewer.headers).status_code == 403, (method, path)
        assert _call(client, method, path, headers=alice.headers).status_code == 401, (method, path)
        bogus = {"Authorization": "Bearer gsz_not-a-token"}
        assert _call(client, method, path, headers=bogus).status_code == 401, (method, path)


def test_a_signed_in_non_admin_is_refused_on_every_page(client: TestClient, viewer: Admin) -> None:
    page = client.get("/admin/login")  # a viewer may sign in, then is refused everywhere
    client.post(
        "/admin/login",
        data={"email": "viewer@example.com", "password": PASSWORD, "csrf_token": csrf_of(page.text)},
        follow_redirects=False,
    )
    for method, path, _route in admin_routes(client):
        if path.startswith("/admin/api"):
            continue
        assert _call(client, method, path).status_code == 403, (method, path)


def test_a_browser_session_does_not_open_the_json_api(client: TestClient, alice: Admin) -> None:
    sign_in(client, "alice@example.com")
    assert client.get("/admin/api/skus").status_code == 401


def test_api_token_does_not_open_the_html_pages(client: TestClient, alice: Admin) -> None:
    response = client.get("/admin/skus", headers=alice.headers, follow_redirects=False)
    assert response.status_code == 303


def test_sign_in_sets_a_safe_session_cookie_and_records_the_login(
    client: TestClient, db: Session, alice: Admin
) -> None:
    page = client.get("/admin/login")
    response = client.post(
        "/admin/login",
        data={
            "email": "Alice@Example.com",
            "password": PASSWORD,
            "csrf_token": csrf_of(page.text),
            "next": "/admin/audit",
        },
        follow_redirects=False,
    )
    assert response.status_code == 303
    assert response.headers["location"] == "/admin/audit"
    cookie = next(c for c in response.headers.get_list("set-cookie") if c.startswith("gpu_sizer_admin="))
    assert "HttpOnly" in cookie and "SameSite=lax" in cookie and "Path=/admin" in cookie
    assert "Secure" not in cookie  # plain HTTP here; see the HTTPS test
    value = cookie.split(";")[0].split("=", 1)[1]
    row = db.scalar(select(AdminSession).where(AdminSession.user_id == alice.user.id))
    assert row.token_hash == service.token_hash(value) != value  # only the hash is stored
    assert client.get("/admin/skus").status_code == 200


def test_session_cookie_is_secure_over_https(client: TestClient, alice: Admin) -> None:
    page = client.get("https://testserver/admin/login")
    response = client.post(
        "https://testserver/admin/login",
        data={"email": "alice@example.com", "password": PASSWORD, "csrf_token": csrf_of(page.text)},
        follow_redirects=False,
    )
    cookie = next(c for c in response.headers.get_list("set-cookie") if c.startswith("gpu_sizer_admin="))
    assert "Secure" in cookie and "HttpOnly" in cookie


def test_login_redirects_only_inside_the_admin(client: TestClient, alice: Admin) -> None:
    page = client.get("/admin/login")
    response = client.post(
        "/admin/login",
        data={
            "email": "alice@example.com",
            "password": PASSWORD,
            "csrf_token": csrf_of(page.text),
            "next": "//evil.example/x",
        },
        follow_redirects=False,
    )
    assert response.headers["location"] == "/admin/skus"


def test_login_form_without_its_csrf_token_is_refused(client: TestClient, db: Session, alice: Admin) -> None:
    client.get("/admin/login")
    response = client.post(
        "/admin/login", data={"email": "alice@example.com", "password": PASSWORD}, follow_redirects=False
    )
    assert response.status_code == 403
    assert db.scalar(select(func.count()).select_from(AdminSession)) == 0


def test_wrong_password_is_401_and_counted(client: TestClient, db: Session, alice: Admin) -> None:
    page = client.get("/admin/login")
    response = client.post(
        "/admin/login",
        data={"email": "alice@example.com", "password": "nope nope nope", "csrf_token": csrf_of(page.text)},
    )
    assert response.status_code == 401
    assert "Wrong email or password." in response.text
    attempt = db.scalar(select(LoginAttempt))
    assert (attempt.email, attempt.client_addr, attempt.succeeded) == ("alice@example.com", "testclient", False)


def test_state_changing_form_without_csrf_token_is_refused_and_writes_nothing(
    client: TestClient, db: Session, alice: Admin
) -> None:
    csrf = sign_in(client, "alice@example.com")
    sku = db.scalar(select(Sku).where(Sku.slug == "a100-40g-pcie-card"))
    form = {"amount": "1.00", "currency": "CNY", "version": str(sku.version)}
    prices_before = len(sku.prices)
    for data in (form, {**form, "csrf_token": "forged"}):
        response = client.post("/admin/skus/a100-40g-pcie-card/prices", data=data, follow_redirects=False)
        assert response.status_code == 403
        assert "CSRF" in response.text
    db.expire_all()
    assert len(db.scalar(select(Sku).where(Sku.slug == "a100-40g-pcie-card")).prices) == prices_before
    ok = client.post("/admin/skus/a100-40g-pcie-card/prices", data={**form, "csrf_token": csrf}, follow_redirects=False)
    assert ok.status_code == 303


def test_csrf_header_works_for_scripts_using_the_session(client: TestClient, alice: Admin) -> None:
    csrf = sign_in(client, "alice@example.com")
    response = client.post("/admin/tokens", data={"name": "from header"}, headers={"X-CSRF-Token": csrf})
    assert response.status_code == 201


def test_logout_ends_the_session(client: TestClient, db: Session, alice: Admin) -> None:
    csrf = sign_in(client, "alice@example.com")
    cookie = client.cookies.get("gpu_sizer_admin")
    response = client.post("/admin/logout", data={"csrf_token": csrf}, follow_redirects=False)
    assert response.status_code == 303
    assert response.headers["location"] == "/admin/login?msg=signed-out"
    assert db.scalar(select(AdminSession)).revoked_at is not None
    client.cookies.set("gpu_sizer_admin", cookie, path="/admin")  # a copied cookie is dead too
    assert client.get("/admin/skus", follow_redirects=False).status_code == 303


@pytest.mark.parametrize("column", ["expires_at", "last_seen_at"])
def test_sessions_expire(client: TestClient, db: Session, alice: Admin, column: str) -> None:
    sign_in(client, "alice@example.com")
    assert client.get("/admin/skus", follow_redirects=False).status_code == 200
    past = utcnow() - (timedelta(seconds=1) if column == "expires_at" else service.SESSION_IDLE_TIMEOUT)
    db.execute(update(AdminSession).values({column: past}))
    db.expire_all()
    response = client.get("/admin/skus", follow_redirects=False)
    assert response.status_code == 303
    assert response.headers["location"] == "/admin/login?next=/admin/skus"


# --- the sign-in throttle --------------------------------------------------------------------------


def _fail(client: TestClient, email: str) -> object:
    page = client.get("/admin/login")
    return client.post(
        "/admin/login", data={"email": email, "password": "wrong password!", "csrf_token": csrf_of(page.text)}
    )


def test_failed_logins_per_account_get_429_with_retry_after(client: TestClient, db: Session, alice: Admin) -> None:
    for _ in range(service.ACCOUNT_FAILURES):
        assert _fail(client, "alice@example.com").status_code == 401
    throttled = _fail(client, "alice@example.com")
    assert throttled.status_code == 429
    assert 890 <= int(throttled.headers["retry-after"]) <= 900
    # even the right password waits: the throttle answers before any check
    page = client.get("/admin/login")
    right = client.post(
        "/admin/login",
        data={"email": "alice@example.com", "password": PASSWORD, "csrf_token": csrf_of(page.text)},
        follow_redirects=False,
    )
    assert right.status_code == 429
    assert db.scalar(select(func.count()).select_from(LoginAttempt)) == service.ACCOUNT_FAILURES  # 429s not counted
    # never a permanent lock-out: once the failures leave the window, the admin signs in
    db.execute(update(LoginAttempt).values(attempted_at=utcnow() - service.THROTTLE_WINDOW - timedelta(seconds=1)))
    sign_in(client, "alice@example.com")


def test_failed_logins_per_client_address_get_429(client: TestClient, db: Session) -> None:
    for i in range(service.CLIENT_FAILURES):
        assert _fail(client, f"nobody{i}@example.com").status_code == 401
    throttled = _fail(client, "someone-else@example.com")
    assert throttled.status_code == 429
    assert int(throttled.headers["retry-after"]) > 0


def test_an_attacker_elsewhere_cannot_lock_out_the_admins_usual_client(db: Session, alice: Admin) -> None:
    now = utcnow()
    assert (
        service.authenticate(
            db, email="alice@example.com", password=PASSWORD, client_addr="198.51.100.7", now=now - timedelta(days=2)
        )
        is not None
    )
    for i in range(service.ACCOUNT_FAILURES):
        assert (
            service.authenticate(db, email="alice@example.com", password="guess", client_addr=f"203.0.113.{i}", now=now)
            is None
        )
    with pytest.raises(service.TooManyRequests):
        service.authenticate(db, email="alice@example.com", password=PASSWORD, client_addr="203.0.113.99", now=now)
    user = service.authenticate(db, email="alice@example.com", password=PASSWORD, client_addr="198.51.100.7", now=now)
    assert user is not None and user.email == "alice@example.com"


def test_unknown_accounts_and_disabled_users_cannot_sign_in(db: Session, alice: Admin) -> None:
    assert service.authenticate(db, email="ghost@example.com", password=PASSWORD, client_addr="x") is None
    alice.user.is_active = False
    assert service.authenticate(db, email="alice@example.com", password=PASSWORD, client_addr="x") is None


def test_passwords_are_argon2_hashes(alice: Admin) -> None:
    assert alice.user.password_hash.startswith("$argon2id$")
    assert PASSWORD not in alice.user.password_hash


def test_passwords_use_the_rfc_9106_parameters() -> None:
    from argon2 import PasswordHasher

    production = PasswordHasher.from_parameters(service.PASSWORD_PARAMETERS)  # the app's, outside these tests
    assert production.hash(PASSWORD).startswith("$argon2id$v=19$m=65536,t=3,p=4$")


def test_a_cheap_test_hash_is_upgraded_at_the_next_sign_in(
    db: Session, alice: Admin, monkeypatch: pytest.MonkeyPatch
) -> None:
    from argon2 import PasswordHasher

    monkeypatch.setattr(service, "_hasher", PasswordHasher.from_parameters(service.PASSWORD_PARAMETERS))
    user = service.authenticate(db, email="alice@example.com", password=PASSWORD, client_addr="x")
    assert user.password_hash.startswith("$argon2id$v=19$m=65536,t=3,p=4$")


def test_short_password_and_duplicate_email_are_refused(db: Session, alice: Admin) -> None:
    with pytest.raises(service.InvalidInput, match="at least 12 characters"):
        service.create_user(db, email="carol@example.com", password="short")
    with pytest.raises(service.Conflict, match="already exists"):
        service.create_user(db, email="ALICE@example.com", password=PASSWORD)


# --- API tokens ------------------------------------------------------------------------------------


def test_token_page_shows_a_new_token_once_and_revoking_it_closes_the_api(
    client: TestClient, db: Session, alice: Admin
) -> None:
    csrf = sign_in(client, "alice@example.com")
    created = client.post("/admin/tokens", data={"name": "price sync", "csrf_token": csrf})
    assert created.status_code == 201
    assert created.headers["cache-control"] == "no-store"
    token = re.search(r'<code class="token">(gsz_[^<]+)</code>', created.text).group(1)
    row = db.scalar(select(ApiToken).where(ApiToken.name == "price sync"))
    assert row.token_hash == service.token_hash(token)
    assert token not in client.get("/admin/tokens").text  # shown once
    headers = {"Authorization": f"Bearer {token}"}
    assert client.get("/admin/api/skus", headers=headers).status_code == 200
    revoked = client.post(
        f"/admin/tokens/{row.id}/revoke", data={"csrf_token": csrf, "confirm": "yes"}, follow_redirects=False
    )
    assert revoked.status_code == 303
    assert client.get("/admin/api/skus", headers=headers).status_code == 401
    entries = select(AuditEntry).where(AuditEntry.entity_id == str(row.id)).order_by(AuditEntry.id)
    actions = [e.action for e in db.scalars(entries)]  # in the order written: without ORDER BY PostgreSQL may not
    assert actions == ["token.create", "token.revoke"]


@pytest.mark.parametrize("token_id", ["2147483648", "99999999999999999999", "0"])
def test_revoking_a_token_id_no_column_holds_is_a_422(client: TestClient, alice: Admin, token_id: str) -> None:
    csrf = sign_in(client, "alice@example.com")
    assert client.get(f"/admin/tokens/{token_id}/revoke").status_code == 422
    posted = client.post(f"/admin/tokens/{token_id}/revoke", data={"csrf_token": csrf, "confirm": "yes"})
    assert posted.status_code == 422
    assert client.get("/admin/tokens/2147483647/revoke").status_code == 404  # the largest id: none such


def test_the_admin_api_is_documented_with_its_bearer_scheme(client: TestClient) -> None:
    schema = client.get("/openapi.json").json()
    assert {p for p in schema["paths"] if p.startswith("/admin/api")} == {
        p for m, p, _ in admin_routes(client) if p.startswith("/admin/api")
    }
    assert not any(p.startswith("/admin") and not p.startswith("/admin/api") for p in schema["paths"])
    assert schema["components"]["securitySchemes"]["HTTPBearer"]["scheme"] == "bearer"
    patch = schema["paths"]["/admin/api/skus/{sku_id}"]["patch"]
    assert patch["security"] == [{"HTTPBearer": []}]
    assert {"401", "403", "409", "422"} <= set(patch["responses"])
