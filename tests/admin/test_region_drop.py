"""Review R7-3: a SKU's region that still tracks inventory or holds units (a quote's reservation, a maintenance
hold) cannot be dropped from its regions. Before, `PATCH {"regions": ["los-angeles"]}` on the H100 server while
singapore tracked 3 units, all held by a quote, was a 200; the singapore row could not be edited afterwards
(422 "sold in los-angeles") and importing the catalog's own fresh export failed. The PATCH, the SKU form and the
catalog import refuse the change naming `regions` and the region, and nothing changes."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.admin.models import AuditEntry
from tests.admin.conftest import Admin, sign_in
from tests.factories import sales_key

H100 = "h100-80g-sxm-8x"
URL = f"/admin/api/skus/{H100}"


def _today() -> date:
    return datetime.now(ZoneInfo("Asia/Shanghai")).date()


def _audit_rows(db: Session) -> int:
    return int(db.scalar(select(func.count()).select_from(AuditEntry)) or 0)


def _track_and_hold(client: TestClient, db: Session, alice: Admin, *, held: int = 3) -> None:
    """Singapore tracks 3 servers; a sales tool's quote holds `held` of them."""
    put = client.put(f"{URL}/availability/singapore", headers=alice.headers, json={"units_available": 3})
    assert put.status_code == 200, put.text
    if held:
        body = {"sku_id": H100, "quantity": held, "term": "monthly", "months": 1, "region": "singapore"}
        body |= {"customer": {"name": "Ada", "email": "ada@example.org"}}
        quote = client.post("/quotes", json=body, headers=sales_key(client, db))
        assert quote.status_code == 201, quote.text


def _refusal(response: Any, field: str = "regions") -> dict[str, Any]:
    assert response.status_code == 422, response.text
    [error] = [e for e in response.json()["errors"] if e["field"] == field]
    return dict(error)


@pytest.mark.parametrize("held", [3, 0])
def test_dropping_a_region_with_tracked_units_is_refused_and_nothing_changes(
    client: TestClient, db: Session, alice: Admin, held: int
) -> None:
    _track_and_hold(client, db, alice, held=held)
    before, audit = client.get(URL, headers=alice.headers).json(), _audit_rows(db)
    error = _refusal(client.patch(URL, headers=alice.headers, json={"regions": ["los-angeles"], "version": 1}))
    assert (error["code"], error["params"]["regions"]) == ("regions_in_use", "singapore")
    assert "singapore" in error["message"]
    assert client.get(URL, headers=alice.headers).json() == before
    assert _audit_rows(db) == audit
    edited = client.put(
        f"{URL}/availability/singapore", headers=alice.headers, json={"units_available": 4, "version": 1}
    )
    assert edited.status_code == 200, edited.text
    doc = client.get("/admin/api/catalog/export", headers=alice.headers).json()
    again = client.post("/admin/api/catalog/import", headers=alice.headers, json=doc)
    assert again.status_code == 200, again.text


def test_dropping_a_region_with_a_maintenance_hold_is_refused(client: TestClient, alice: Admin) -> None:
    """Los-angeles is not tracked, but a maintenance hold there is kept on the SKU's page: it stays a region."""
    hold = {"ends_on": (_today() + timedelta(days=10)).isoformat(), "units": 1, "note": "PSU swap"}
    put = client.put(f"{URL}/holds/los-angeles/{_today().isoformat()}", headers=alice.headers, json=hold)
    assert put.status_code == 200, put.text
    error = _refusal(client.patch(URL, headers=alice.headers, json={"regions": ["singapore"], "version": 1}))
    assert error["params"]["regions"] == "los-angeles"
    assert client.get(URL, headers=alice.headers).json()["regions"] == ["singapore", "los-angeles"]


def test_a_region_with_nothing_tracked_or_held_may_still_be_dropped(
    client: TestClient, db: Session, alice: Admin
) -> None:
    _track_and_hold(client, db, alice)
    response = client.patch(URL, headers=alice.headers, json={"regions": ["singapore"], "version": 1})
    assert response.status_code == 200, response.text
    assert response.json()["regions"] == ["singapore"]


def test_an_import_that_drops_a_region_with_tracked_units_is_refused(
    client: TestClient, db: Session, alice: Admin
) -> None:
    _track_and_hold(client, db, alice)
    doc = client.get("/admin/api/catalog/export", headers=alice.headers).json()
    i = next(i for i, s in enumerate(doc["skus"]) if s["id"] == H100)
    doc["skus"][i] |= {"regions": ["los-angeles"], "availability": []}
    before, audit = client.get(URL, headers=alice.headers).json(), _audit_rows(db)
    error = _refusal(client.post("/admin/api/catalog/import", headers=alice.headers, json=doc), f"skus.{i}.regions")
    assert (error["code"], error["params"]["regions"]) == ("regions_in_use", "singapore")
    assert client.get(URL, headers=alice.headers).json() == before
    assert _audit_rows(db) == audit


def _form(sku: dict[str, Any], csrf: str) -> dict[str, str]:
    """The SKU form as the browser posts it, from the SKU as the API shows it."""
    texts = ("name", "gpu", "rental_unit", "intra_node_link", "interconnect", "host_cpu", "host_nvme", "network")
    form = {name: sku[name] or "" for name in texts} | {"csrf_token": csrf, "version": str(sku["version"])}
    form |= {"gpus_per_node": str(sku["gpus_per_node"]), "card_counts": ", ".join(map(str, sku["card_counts"]))}
    form |= {"host_ram_gib": str(sku["host_ram_gib"] or ""), "inter_node_fabric": sku["inter_node_fabric"] or ""}
    form |= {"notes": sku["notes"] or "", "regions": ", ".join(sku["regions"])}
    form |= {f"discount_{term}": value for term, value in sku["discounts"].items()}
    form |= {"infiniband_addon": "on"} if sku["infiniband_addon"] else {}
    return form | ({"indicative_price": "on"} if sku["indicative_price"] else {})


def test_the_sku_form_refuses_it_in_the_pages_language(client: TestClient, db: Session, alice: Admin) -> None:
    _track_and_hold(client, db, alice)
    before = client.get(URL, headers=alice.headers).json()
    form = _form(before, sign_in(client, "alice@example.com")) | {"regions": "los-angeles"}
    english = client.post(f"/admin/skus/{H100}", data=form, follow_redirects=False)
    assert english.status_code == 422 and "Not saved: correct the fields below." in english.text, english.text[-3000:]
    assert "still tracks inventory or holds units in singapore" in english.text
    zh = client.post(f"/admin/skus/{H100}?lang=zh", data=form, follow_redirects=False)
    assert zh.status_code == 422 and "未保存：请修改下列字段。" in zh.text
    assert "在 singapore 仍有库存或占用" in zh.text and "still tracks" not in zh.text
    assert client.get(URL, headers=alice.headers).json() == before
