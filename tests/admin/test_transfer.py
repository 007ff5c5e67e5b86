"""Catalog export/import: a round trip changes nothing, an import applies a catalog, and a failed
import writes nothing at all (on SQLite and PostgreSQL)."""

from __future__ import annotations

import copy

from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.admin.models import AuditEntry
from app.catalog.models import GpuType, Sku, SkuAddon, SkuAvailability, SkuPrice, TermDiscount
from app.catalog.seed_data import H100_IB_SOURCE
from tests.admin.conftest import Admin

TABLES = (GpuType, Sku, SkuPrice, TermDiscount, SkuAvailability, SkuAddon, AuditEntry)


def _counts(db: Session) -> dict[str, int]:
    return {model.__tablename__: db.scalar(select(func.count()).select_from(model)) for model in TABLES}


def _export(client: TestClient, admin: Admin) -> dict:
    response = client.get("/admin/api/catalog/export", headers=admin.headers)
    assert response.status_code == 200
    return response.json()


def test_export_is_the_whole_catalog_with_money_as_strings(client: TestClient, alice: Admin) -> None:
    doc = _export(client, alice)
    assert (doc["format"], doc["schema_version"]) == ("gpu-sizer-catalog", 1)
    assert [s["id"] for s in doc["skus"]] == ["a100-40g-pcie-card", "a100-80g-sxm-8x", "h100-80g-sxm-8x"]
    card = doc["skus"][0]
    assert [(p["amount"], p["currency"]) for p in card["prices"]] == [("2800.00", "CNY")]
    assert card["discounts"] == {"annual": "20", "monthly": "0"}
    assert doc["skus"][2]["addons"] == [
        {
            "code": "infiniband-400g",
            "name": "InfiniBand NDR 400G, per node",
            "amount": None,
            "currency": "CNY",
            "per_unit": "node",
            "status": "active",
            "ports_per_server": 8,
            "port_gbps": 400,
            "bandwidth_source": H100_IB_SOURCE,
        }
    ]
    assert {g["id"] for g in doc["gpu_types"]} >= {"a100-40g-pcie", "h100-80g-sxm"}


def test_round_trip_changes_nothing(client: TestClient, db: Session, alice: Admin) -> None:
    doc = _export(client, alice)
    before = _counts(db)
    response = client.post("/admin/api/catalog/import", headers=alice.headers, json=doc)
    assert response.status_code == 200
    assert response.json() == {
        "gpu_types_created": [],
        "skus_created": [],
        "skus_updated": [],
        "skus_unchanged": [s["id"] for s in doc["skus"]],
        "prices_added": 0,
    }
    assert _counts(db) == before  # not even an audit row: an import that changes nothing is no change (R4-12)


def test_import_applies_new_and_changed_skus_and_audits_them(client: TestClient, db: Session, alice: Admin) -> None:
    doc = _export(client, alice)
    card = doc["skus"][0]
    card["prices"].append({"amount": "2600.00", "currency": "CNY", "effective_from": "2031-01-01T00:00:00Z"})
    card["discounts"] = {"annual": "22.5", "monthly": "0"}
    card["availability"] = [{"region": "shenzhen", "units_available": 40}]
    new = copy.deepcopy(doc["skus"][2])
    new.update(
        id="h200-141g-sxm-8x",
        name="8x H200",
        gpu="b200-180g-sxm",
        addons=[],
        prices=[{"amount": "150000", "currency": "CNY", "effective_from": "2026-11-01T00:00:00Z"}],
    )
    doc["gpu_types"].append({"id": "b200-180g-sxm", "name": "NVIDIA B200 180GB SXM"})
    doc["skus"].append(new)
    response = client.post("/admin/api/catalog/import", headers=alice.headers, json=doc)
    assert response.status_code == 200, response.text
    assert response.json() == {
        "gpu_types_created": ["b200-180g-sxm"],
        "skus_created": ["h200-141g-sxm-8x"],
        "skus_updated": ["a100-40g-pcie-card"],
        "skus_unchanged": ["a100-80g-sxm-8x", "h100-80g-sxm-8x"],
        "prices_added": 2,
    }
    public = {s["id"]: s for s in client.get("/catalog/skus").json()}
    # the imported 2031 price is scheduled: the seed price stays in force until then
    assert public["a100-40g-pcie-card"]["price"]["terms"]["annual"]["discount_percent"] == "22.5"
    assert public["h200-141g-sxm-8x"]["price"]["monthly_list"] == "150000.00"
    entries = db.scalars(
        select(AuditEntry).where(AuditEntry.action.in_(["sku.import", "catalog.import"])).order_by(AuditEntry.id)
    ).all()
    assert [(e.action, e.entity_id) for e in entries] == [
        ("sku.import", "a100-40g-pcie-card"),
        ("sku.import", "h200-141g-sxm-8x"),
        ("catalog.import", "catalog"),
    ]
    updated = entries[0]
    assert (updated.before["discounts"]["annual"], updated.after["discounts"]["annual"]) == ("20", "22.5")
    assert len(updated.after["prices"]) == len(updated.before["prices"]) + 1
    assert updated.after["availability"] == [{"region": "shenzhen", "units_available": 40}]
    assert entries[1].before is None


def test_a_failed_import_writes_nothing(client: TestClient, db: Session, alice: Admin) -> None:
    doc = _export(client, alice)
    doc["skus"][0]["name"] = "Would be renamed"  # valid on its own: must not be written either
    unknown_gpu = len(doc["gpu_types"])
    doc["gpu_types"].append({"id": "brand-new-gpu", "name": "New"})  # no estimator specification
    bad = copy.deepcopy(doc["skus"][1])
    bad.update(
        id="bad-sku",
        gpu="no-such-gpu",
        card_counts=[3, 1],
        regions=["shenzhen"],
        availability=[{"region": "mars", "units_available": 1}],
    )
    doc["skus"].append(bad)
    doc["skus"].append(copy.deepcopy(doc["skus"][2]))  # a duplicate id
    before = _counts(db)
    response = client.post("/admin/api/catalog/import", headers=alice.headers, json=doc)
    assert response.status_code == 422
    problem = response.json()
    assert problem["detail"].startswith("the catalog has 6 error(s); nothing was imported: ")
    assert [e["field"] for e in problem["errors"]] == [
        "skus",
        f"gpu_types.{unknown_gpu}.id",
        "skus.3.gpu",
        "skus.3.card_counts",
        "skus.3.card_counts",
        "skus.3.availability.0.region",
    ]
    assert _counts(db) == before
    assert db.scalar(select(Sku.name).where(Sku.slug == "a100-40g-pcie-card")) == (
        "A100 40G custom server, rented by the card"
    )


def test_a_malformed_document_is_422_with_paths_and_writes_nothing(
    client: TestClient, db: Session, alice: Admin
) -> None:
    doc = _export(client, alice)
    doc["skus"][1]["prices"][0]["amount"] = "-5"
    doc["skus"][2]["discounts"] = {"annual": "91"}
    before = _counts(db)
    response = client.post("/admin/api/catalog/import", headers=alice.headers, json=doc)
    assert response.status_code == 422
    assert [e["field"] for e in response.json()["errors"]] == ["skus.1.prices.0.amount", "skus.2.discounts.annual"]
    assert _counts(db) == before


def test_import_and_export_need_an_admin(client: TestClient, viewer: Admin) -> None:
    assert client.get("/admin/api/catalog/export").status_code == 401
    assert client.post("/admin/api/catalog/import", headers=viewer.headers, json={"skus": []}).status_code == 403


def test_a_gpu_type_name_longer_than_its_column_is_422_not_500(client: TestClient, db: Session, alice: Admin) -> None:
    doc = _export(client, alice)
    index = len(doc["gpu_types"])
    doc["gpu_types"].append({"id": "long-name-gpu", "name": "N" * 129})
    before = _counts(db)
    response = client.post("/admin/api/catalog/import", headers=alice.headers, json=doc)
    assert response.status_code == 422
    assert [e["field"] for e in response.json()["errors"]] == [f"gpu_types.{index}.name"]
    assert _counts(db) == before
