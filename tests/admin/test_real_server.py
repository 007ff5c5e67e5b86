"""The admin over real HTTP: `python -m app serve --workers 2` on a migrated, seeded SQLite file.
The sign-in throttle lives in the database, so it holds across worker processes; the session
cookie, CSRF token and sign-out work through a real client's cookie jar."""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest

from app.admin import service
from tests.servers import LiveServerFactory

PASSWORD = "a long enough secret"
ADMINS = ("ops@example.com", "target@example.com")


@pytest.fixture(scope="module")
def server(live_server_factory: LiveServerFactory) -> Iterator[str]:
    setup = [(["create-admin", email, "--password-stdin"], PASSWORD + "\n") for email in ADMINS]
    setup.append((["create-admin", "viewer@example.com", "--role", "viewer", "--password-stdin"], PASSWORD + "\n"))
    with live_server_factory("admin_real", setup=setup, workers=2) as server:
        yield server.base


def _csrf(html: str) -> str:
    return re.search(r'name="csrf_token" value="([^"]+)"', html).group(1)


def _login(client: httpx.Client, password: str, email: str = "ops@example.com") -> httpx.Response:
    page = client.get("/admin/login")
    return client.post("/admin/login", data={"email": email, "password": password, "csrf_token": _csrf(page.text)})


def test_session_csrf_and_sign_out_over_http(server: str) -> None:
    with httpx.Client(base_url=server) as client:
        assert client.get("/admin/skus").status_code == 303
        signed_in = _login(client, PASSWORD)
        assert (signed_in.status_code, signed_in.headers["location"]) == (303, "/admin/skus")
        listing = client.get("/admin/skus")
        assert listing.status_code == 200 and "a100-40g-pcie-card" in listing.text
        csrf = _csrf(listing.text)
        assert client.post("/admin/tokens", data={"name": "no csrf"}).status_code == 403
        created = client.post("/admin/tokens", data={"name": "real http", "csrf_token": csrf})
        token = re.search(r'<code class="token">(gsz_[^<]+)</code>', created.text).group(1)
        assert client.post("/admin/logout", data={"csrf_token": csrf}).status_code == 303
        assert client.get("/admin/skus").status_code == 303
    api = httpx.get(f"{server}/admin/api/skus/a100-40g-pcie-card", headers={"Authorization": f"Bearer {token}"})
    assert (api.status_code, api.json()["version"]) == (200, 1)


def test_the_throttle_holds_across_worker_processes(server: str) -> None:
    statuses = []
    for _ in range(service.ACCOUNT_FAILURES + 1):
        with httpx.Client(base_url=server) as client:  # a new connection each time: any worker may answer
            response = _login(client, "not the password", "target@example.com")
            statuses.append(response.status_code)
    assert statuses == [401] * service.ACCOUNT_FAILURES + [429]
    assert 0 < int(response.headers["retry-after"]) <= 900


def test_a_viewer_can_sign_out(server: str) -> None:
    """A viewer may not use the admin, but may end their own session (before: 403 on /admin/logout)."""
    with httpx.Client(base_url=server) as client:
        assert _login(client, PASSWORD, "viewer@example.com").status_code == 303
        refused = client.get("/admin/skus")
        assert refused.status_code == 403 and 'action="/admin/logout"' in refused.text
        cookie = client.cookies["gpu_sizer_admin"]
        signed_out = client.post("/admin/logout", data={"csrf_token": _csrf(refused.text)})
        assert (signed_out.status_code, signed_out.headers["location"]) == (303, "/admin/login?msg=signed-out")
        assert "gpu_sizer_admin" not in client.cookies
    with httpx.Client(base_url=server, cookies={"gpu_sizer_admin": cookie}) as stale:
        assert stale.get("/admin/skus").headers["location"].startswith("/admin/login")  # the session ended
        assert stale.post("/admin/logout", data={"csrf_token": "x"}).status_code == 303  # not signed in: to sign-in


def test_admin_responses_are_never_cached(server: str) -> None:
    with httpx.Client(base_url=server) as client:
        assert client.get("/admin/login").headers["cache-control"] == "no-store"
        assert _login(client, PASSWORD).headers["cache-control"] == "no-store"
        assert client.get("/admin/skus").headers["cache-control"] == "no-store"
        assert client.get("/admin/audit").headers["cache-control"] == "no-store"
        assert httpx.get(f"{server}/admin/api/skus").headers["cache-control"] == "no-store"  # a 401 too
