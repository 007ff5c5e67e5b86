"""Security headers, /docs under the CSP, CORS origins and trusted hosts."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

from app.common.settings import Settings
from app.entry.main import create_app
from app.http.security import CONTENT_SECURITY_POLICY

EXPECTED_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "frame-ancestors 'none'; base-uri 'self'; form-action 'self'"
)


def test_security_headers_on_success_and_error(probe_client: TestClient) -> None:
    for response in (probe_client.get("/healthz"), probe_client.get("/nope"), probe_client.post("/probe/echo")):
        assert response.headers["content-security-policy"] == EXPECTED_CSP
        assert response.headers["x-content-type-options"] == "nosniff"
        assert response.headers["referrer-policy"] == "strict-origin-when-cross-origin"
        assert response.headers["x-frame-options"] == "DENY"
    assert CONTENT_SECURITY_POLICY == EXPECTED_CSP


def test_docs_page_has_no_inline_script_and_its_assets_are_served_locally(probe_client: TestClient) -> None:
    page = probe_client.get("/docs")
    assert page.status_code == 200
    assert page.headers["content-security-policy"] == EXPECTED_CSP
    scripts = re.findall(r"<script([^>]*)>(.*?)</script>", page.text, flags=re.S)
    assert [body.strip() for _attrs, body in scripts] == ["", ""]  # only <script src=…>, nothing inline
    sources = re.findall(r'(?:src|href)="([^"]+)"', page.text)
    assert sources == ["/docs/assets/swagger-ui.css", "/docs/assets/swagger-ui-bundle.js", "/static/js/swagger-init.js"]
    for source in sources:
        assert probe_client.get(source).status_code == 200, source
    assert 'data-openapi-url="/openapi.json"' in page.text
    assert probe_client.get("/openapi.json").status_code == 200


def test_cors_is_off_by_default(probe_client: TestClient) -> None:
    response = probe_client.get("/healthz", headers={"Origin": "https://sales.example.com"})
    assert "access-control-allow-origin" not in response.headers


def test_cors_allows_configured_origins_only(sqlite_settings: Settings) -> None:
    settings = sqlite_settings.model_copy(update={"cors_origins": ["https://sales.example.com"]})
    with TestClient(create_app(settings)) as client:
        allowed = client.options(
            "/healthz",
            headers={"Origin": "https://sales.example.com", "Access-Control-Request-Method": "POST"},
        )
        refused = client.get("/healthz", headers={"Origin": "https://evil.example.com"})
        simple = client.get("/healthz", headers={"Origin": "https://sales.example.com"})
    assert allowed.status_code == 200
    assert allowed.headers["access-control-allow-origin"] == "https://sales.example.com"
    assert "access-control-allow-origin" not in refused.headers
    assert simple.headers["access-control-allow-origin"] == "https://sales.example.com"
    assert simple.headers["access-control-expose-headers"].lower().split(",")[0] == "x-request-id"


def test_cors_origins_from_the_environment(monkeypatch) -> None:
    monkeypatch.setenv("CORS_ORIGINS", "https://a.example.com, https://b.example.com")
    monkeypatch.setenv("TRUSTED_HOSTS", "api.example.com,*.internal.example.com")
    settings = Settings(_env_file=None)
    assert settings.cors_origins == ["https://a.example.com", "https://b.example.com"]
    assert settings.trusted_hosts == ["api.example.com", "*.internal.example.com"]


def test_untrusted_host_is_400_problem(probe_client: TestClient) -> None:
    response = probe_client.get("/healthz", headers={"Host": "evil.example.com"})
    assert response.status_code == 400
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["detail"] == "The Host header names a host this service does not serve."
    for host in ("localhost:8000", "127.0.0.1", "testserver"):
        assert probe_client.get("/healthz", headers={"Host": host}).status_code == 200, host


def test_trusted_host_wildcards(sqlite_settings: Settings) -> None:
    settings = sqlite_settings.model_copy(update={"trusted_hosts": ["api.example.com", "*.internal.example.com"]})
    with TestClient(create_app(settings), base_url="http://api.example.com") as client:
        statuses = {
            host: client.get("/healthz", headers={"Host": host}).status_code
            for host in ("api.example.com", "a.internal.example.com:443", "internal.example.com", "localhost")
        }
    assert statuses == {
        "api.example.com": 200,
        "a.internal.example.com:443": 200,
        "internal.example.com": 400,
        "localhost": 400,
    }
