"""A catalog import may not set a region's inventory below what issued and accepted quotes hold (review R7): the
availability endpoint refuses that with 409 `overbooked` unless forced; the import applied it and answered 200,
leaving the capacity page overbooked. Now it is the same 409, naming each row, and nothing of the document is
written, unless `?allow_overbooking=true` (a server broke: the units are gone whatever the quotes say)."""

from __future__ import annotations

import copy

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.admin.models import AuditEntry
from tests.admin.conftest import Admin
from tests.factories import sales_key

H100 = "h100-80g-sxm-8x"
URL = f"/admin/api/skus/{H100}"


@pytest.fixture
def sales(client: TestClient, db: Session) -> dict[str, str]:
    """A sales tool's API key (quotes:write): its quotes hold their units, a quote without a key holds none (R4-5)."""
    return sales_key(client, db)


def _quote(client: TestClient, quantity: int, sales: dict[str, str]) -> str:
    body = {"sku_id": H100, "quantity": quantity, "term": "monthly", "months": 1, "region": "singapore"}
    response = client.post(
        "/quotes", json={**body, "customer": {"name": "Ada", "email": "ada@example.org"}}, headers=sales
    )
    assert response.status_code == 201, response.text
    assert response.json()["reservation"]["units"] == quantity
    return str(response.json()["number"])


def _units(client: TestClient, admin: Admin) -> dict[str, int]:
    sku = client.get(URL, headers=admin.headers).json()
    return {a["region"]: a["units_available"] for a in sku["availability"]}


def test_an_import_below_what_quotes_hold_is_a_409_overbooked_and_writes_nothing(
    client: TestClient, db: Session, alice: Admin, sales: dict[str, str]
) -> None:
    set_five = client.put(f"{URL}/availability/singapore", headers=alice.headers, json={"units_available": 5})
    assert set_five.status_code == 200, set_five.text
    number = _quote(client, 4, sales)
    doc = client.get("/admin/api/catalog/export", headers=alice.headers).json()
    index = [s["id"] for s in doc["skus"]].index(H100)
    cut = copy.deepcopy(doc)
    cut["skus"][index]["availability"] = [{"region": "singapore", "units_available": 0}]
    cut["skus"][index]["name"] = "renamed by the import"  # another change of the same document: not written either
    audited = db.scalar(select(func.count()).select_from(AuditEntry))
    response = client.post("/admin/api/catalog/import", headers=alice.headers, json=cut)
    assert response.status_code == 409, response.text
    problem = response.json()
    assert problem["code"] == "overbooked"
    [error] = problem["errors"]
    assert (error["field"], error["type"]) == (f"skus.{index}.availability.0.units_available", "overbooked")
    assert (error["params"]["shortfall"], error["params"]["quotes"]) == (4, [number])
    assert number in problem["detail"] and "Nothing was imported" in problem["detail"]
    assert _units(client, alice) == {"singapore": 5}
    assert client.get(URL, headers=alice.headers).json()["name"] != "renamed by the import"
    assert db.scalar(select(func.count()).select_from(AuditEntry)) == audited

    within = copy.deepcopy(doc)  # down to what the quote holds: no shortfall
    within["skus"][index]["availability"] = [{"region": "singapore", "units_available": 4}]
    assert client.post("/admin/api/catalog/import", headers=alice.headers, json=within).status_code == 200
    again = client.get("/admin/api/catalog/export", headers=alice.headers).json()
    again["skus"][index]["availability"] = [{"region": "singapore", "units_available": 0}]
    params = {"allow_overbooking": "true"}
    forced = client.post("/admin/api/catalog/import", headers=alice.headers, json=again, params=params)
    assert forced.status_code == 200, forced.text
    assert _units(client, alice) == {"singapore": 0}
