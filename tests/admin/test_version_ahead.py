"""A version the SKU never had (ahead of its current one) is refused with words that say so (review R12): not
"was changed …: unknown fields", which reads as if someone else edited the SKU or the body had bad fields."""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.admin.conftest import Admin

CARD = "a100-40g-pcie-card"
URL = f"/admin/api/skus/{CARD}"


def test_a_version_ahead_of_the_current_one_is_a_409_saying_it_does_not_exist(client: TestClient, alice: Admin) -> None:
    response = client.patch(URL, headers=alice.headers, json={"version": 999, "name": "x"})
    assert response.status_code == 409
    detail = response.json()["detail"]
    assert detail == (
        f"SKU {CARD} has no version 999: it is at version 1. Nothing was saved; reload and apply your edit again."
    )
    assert "was changed" not in detail and "unknown fields" not in detail
    assert response.json()["errors"] == [
        {
            "field": "version",
            "message": "the SKU is at version 1, not 999",
            "type": "stale",
            "code": "stale_sku",
            "params": {"current": 1, "sent": 999},
            "current": 1,
        }
    ]
    assert client.get(URL, headers=alice.headers).json()["name"] != "x"
