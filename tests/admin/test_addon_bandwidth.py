"""A fabric add-on's bandwidth (ports per server × Gb/s per port, and its source) is the admin's to edit, through the
API and the SKU page, versioned and audited like its price; one figure without the other is a 422 naming the missing
one, and an edit that leaves the bandwidth out keeps it."""

from __future__ import annotations

from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.admin.models import AuditEntry
from tests.admin.conftest import Admin, sign_in

URL = "/admin/api/skus/h100-80g-sxm-8x/addons/infiniband-400g"
BODY = {"name": "InfiniBand NDR 400G, per node", "amount": None, "currency": "CNY", "per_unit": "node"}


def _fields(response) -> list[str]:
    assert response.status_code == 422, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    return [e["field"] for e in response.json()["errors"]]


def _addon(client: TestClient, alice: Admin) -> dict:
    sku = client.get("/admin/api/skus/h100-80g-sxm-8x", headers=alice.headers).json()
    return next(a for a in sku["addons"] if a["code"] == "infiniband-400g")


def test_the_seeded_fabric_shows_its_bandwidth_and_the_admin_changes_it(
    client: TestClient, db: Session, alice: Admin
) -> None:
    seeded = _addon(client, alice)
    assert (seeded["ports_per_server"], seeded["port_gbps"], seeded["version"]) == (8, 400, 1)
    assert "DGX H100" in seeded["bandwidth_source"]
    changed = client.put(
        URL,
        headers=alice.headers,
        json={**BODY, "ports_per_server": 4, "port_gbps": 400, "bandwidth_source": "DC inventory", "version": 1},
    )
    assert changed.status_code == 200, changed.text
    assert (changed.json()["ports_per_server"], changed.json()["version"]) == (4, 2)
    assert client.put(URL, headers=alice.headers, json={**BODY, "ports_per_server": 2, "version": 1}).status_code == 409
    entry = db.scalars(select(AuditEntry).where(AuditEntry.action == "addon.set")).one()
    assert (entry.before["ports_per_server"], entry.after["ports_per_server"]) == (8, 4)
    assert entry.after["bandwidth_source"] == "DC inventory"
    # a reprice that leaves the bandwidth out keeps it
    repriced = client.put(URL, headers=alice.headers, json={**BODY, "amount": "8000.00", "version": 2}).json()
    assert (repriced["amount"], repriced["ports_per_server"], repriced["port_gbps"]) == ("8000.00", 4, 400)
    # an add-on that is not a fabric states none
    nvme = client.put(
        "/admin/api/skus/h100-80g-sxm-8x/addons/extra-nvme",
        headers=alice.headers,
        json={"name": "Extra NVMe", "amount": "1200", "currency": "CNY", "per_unit": "node"},
    ).json()
    assert (nvme["ports_per_server"], nvme["port_gbps"], nvme["bandwidth_source"]) == (None, None, "")


def test_bad_bandwidth_is_a_422_naming_the_field(client: TestClient, alice: Admin) -> None:
    put = lambda extra: client.put(URL, headers=alice.headers, json={**BODY, "version": 1, **extra})  # noqa: E731
    assert _fields(put({"ports_per_server": 8, "port_gbps": None})) == ["port_gbps"]
    assert _fields(put({"ports_per_server": None})) == ["ports_per_server"]
    assert _fields(put({"ports_per_server": 0})) == ["ports_per_server"]
    assert _fields(put({"port_gbps": 4000})) == ["port_gbps"]
    assert _fields(put({"port_gbps": "400"})) == ["port_gbps"]
    assert _addon(client, alice)["version"] == 1  # nothing was saved


def test_the_sku_page_edits_the_bandwidth(client: TestClient, alice: Admin) -> None:
    csrf = sign_in(client, "alice@example.com")
    page = client.get("/admin/skus/h100-80g-sxm-8x").text
    assert 'name="ports_per_server" type="number" min="1" max="64" value="8"' in page
    assert 'name="port_gbps" type="number" min="1" max="3200" value="400"' in page
    form = {
        "csrf_token": csrf,
        "code": "infiniband-400g",
        "version": "1",
        "name": "IB 400G",
        "amount": "",
        "currency": "CNY",
        "per_unit": "node",
        "status": "active",
        "ports_per_server": "2",
        "port_gbps": "400",
        "bandwidth_source": "measured",
    }
    saved = client.post("/admin/skus/h100-80g-sxm-8x/addons", data=form, follow_redirects=False)
    assert saved.status_code == 303, saved.text
    addon = _addon(client, alice)
    assert (addon["ports_per_server"], addon["port_gbps"], addon["bandwidth_source"]) == (2, 400, "measured")
    half = client.post("/admin/skus/h100-80g-sxm-8x/addons", data={**form, "version": "2", "port_gbps": ""})
    assert half.status_code == 422 and "port_gbps" in half.text
    cleared = client.post(
        "/admin/skus/h100-80g-sxm-8x/addons",
        data={**form, "version": "2", "ports_per_server": "", "port_gbps": ""},
        follow_redirects=False,
    )
    assert cleared.status_code == 303
    assert (_addon(client, alice)["ports_per_server"], _addon(client, alice)["port_gbps"]) == (None, None)
