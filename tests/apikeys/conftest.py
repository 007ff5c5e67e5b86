"""API key fixtures: the admin fixtures (an admin with an API token) and issuing keys through the admin API."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from tests.admin.conftest import Admin, alice, cheap_password_hashing  # noqa: F401 (fixtures)

RECOMMEND = {"model": {"preset": "llama-3.1-8b"}, "task": "lora", "tokens": 1e8}


def issue(client: TestClient, admin: Admin, **fields: Any) -> dict[str, Any]:
    """Issue a key through the admin API (every scope, unless `scopes` says otherwise); the answer, with `key`."""
    body = {"name": "CRM", "organisation": "Acme", "scopes": ["recommend", "quotes:write", "quotes:read"], **fields}
    response = client.post("/admin/api/keys", json=body, headers=admin.headers)
    assert response.status_code == 201, response.text
    return response.json()


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}
