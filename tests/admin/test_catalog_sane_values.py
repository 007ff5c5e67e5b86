"""The admin refuses catalog values no real SKU has (review R5-10), with a 422 naming the field, and writes nothing:
a price or add-on in an ISO 4217 code that is no money in use (XXX "no currency", XAU gold, XTS testing, DEM
withdrawn; CLDR's legal tender, app/common/money.py `check_tender`), and host RAM that leaves nothing after the reserve
the planner keeps for the OS and each GPU's processes (1 GiB on an 8 x A100 server: its options planned within 0 GiB of
host RAM, without a word). SQLite and PostgreSQL."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.catalog.models import SkuPrice
from app.estimator.memory import host_ram_reserve_gib
from tests.admin.conftest import Admin

A100 = "a100-80g-sxm-8x"
URL = f"/admin/api/skus/{A100}"


def _version(client: TestClient, admin: Admin) -> int:
    return int(client.get(URL, headers=admin.headers).json()["version"])


@pytest.mark.parametrize("code", ["XXX", "XAU", "XTS", "DEM"])
def test_a_price_in_no_currency_in_use_is_a_422_on_currency(
    client: TestClient, db: Session, alice: Admin, code: str
) -> None:
    before = db.scalar(select(func.count()).select_from(SkuPrice))
    body = {"amount": "2800.00", "currency": code, "version": _version(client, alice)}
    response = client.post(f"{URL}/prices", headers=alice.headers, json=body)
    assert response.status_code == 422, response.text
    [error] = response.json()["errors"]
    assert error["field"] == "currency" and "no currency in use today" in error["message"], error
    assert db.scalar(select(func.count()).select_from(SkuPrice)) == before


def test_an_add_on_in_no_currency_in_use_is_a_422_on_currency(client: TestClient, alice: Admin) -> None:
    body = {"name": "Test add-on", "amount": "10.00", "currency": "XXX", "per_unit": "node", "status": "active"}
    response = client.put(f"{URL}/addons/test-addon", headers=alice.headers, json=body)
    assert response.status_code == 422, response.text
    [error] = response.json()["errors"]
    assert error["field"] == "currency" and "no currency in use today" in error["message"], error


def test_host_ram_that_leaves_nothing_after_the_reserve_is_a_422_on_host_ram_gib(
    client: TestClient, alice: Admin
) -> None:
    version = _version(client, alice)
    response = client.patch(URL, headers=alice.headers, json={"version": version, "host_ram_gib": 1})
    assert response.status_code == 422, response.text
    [error] = response.json()["errors"]
    reserve = host_ram_reserve_gib(1, 8)  # 8 GPUs x 6 GiB + the OS's 25 % of the first 4 GiB: 48.25 GiB
    assert (error["field"], error["code"]) == ("host_ram_gib", "host_ram_reserve")
    assert error["params"] == {"host_ram_gib": 1, "gpus": 8, "reserve_gib": f"{reserve:.1f}"}
    assert client.get(URL, headers=alice.headers).json()["host_ram_gib"] == 1024  # unchanged
    # the SKU's real RAM, and unknown, are accepted
    accepted = client.patch(URL, headers=alice.headers, json={"version": version, "host_ram_gib": 512})
    assert accepted.status_code == 200, accepted.text
    unknown = client.patch(URL, headers=alice.headers, json={"version": version + 1, "host_ram_gib": None})
    assert unknown.status_code == 200, unknown.text
