"""Catalog import keeps the edit API's rules: no GPU type the estimator cannot size, no back-dated price
on an existing SKU, and no silent overwrite of changes made after the export (409 unless `force`)."""

from __future__ import annotations

import logging

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.catalog.models import GpuType, Sku
from tests.admin.conftest import Admin

IMPORT = "/admin/api/catalog/import"


def _export(client: TestClient, admin: Admin) -> dict:
    response = client.get("/admin/api/catalog/export", headers=admin.headers)
    assert response.status_code == 200
    return response.json()


def test_a_gpu_type_the_estimator_does_not_know_is_refused_by_name(client: TestClient, alice: Admin) -> None:
    doc = _export(client, alice)
    doc["gpu_types"].append({"id": "mi300x-192g", "name": "AMD MI300X"})
    doc["skus"][2] = {**doc["skus"][2], "id": "mi300x-8x", "gpu": "mi300x-192g", "addons": []}
    response = client.post(IMPORT, headers=alice.headers, json=doc)
    assert response.status_code == 422
    errors = {e["field"]: e["message"] for e in response.json()["errors"]}
    assert "'mi300x-192g'" in errors[f"gpu_types.{len(doc['gpu_types']) - 1}.id"]
    assert "h100-80g-sxm" in errors[f"gpu_types.{len(doc['gpu_types']) - 1}.id"]  # the known ones are listed
    assert "no specification" in errors["skus.2.gpu"]


def test_a_back_dated_price_on_an_existing_sku_is_refused(client: TestClient, alice: Admin) -> None:
    doc = _export(client, alice)
    doc["skus"][0]["prices"].append({"amount": "1.00", "currency": "CNY", "effective_from": "2020-01-01T00:00:00Z"})
    response = client.post(IMPORT, headers=alice.headers, json=doc)
    assert response.status_code == 422
    assert [e["field"] for e in response.json()["errors"]] == [
        f"skus.0.prices.{len(doc['skus'][0]['prices']) - 1}.effective_from"
    ]


def test_importing_over_newer_changes_is_a_409_unless_forced(client: TestClient, db: Session, alice: Admin) -> None:
    doc = _export(client, alice)
    version = client.get("/admin/api/skus/a100-40g-pcie-card", headers=alice.headers).json()["version"]
    renamed = client.patch(
        "/admin/api/skus/a100-40g-pcie-card", headers=alice.headers, json={"version": version, "name": "Renamed after"}
    )
    assert renamed.status_code == 200, renamed.text
    stale = client.post(IMPORT, headers=alice.headers, json=doc)
    assert stale.status_code == 409
    assert "sku a100-40g-pcie-card" in stale.json()["detail"] and "force=true" in stale.json()["detail"]
    assert db.scalar(select(Sku.name).where(Sku.slug == "a100-40g-pcie-card")) == "Renamed after"
    forced = client.post(IMPORT + "?force=true", headers=alice.headers, json=doc)
    assert forced.status_code == 200
    assert forced.json()["skus_updated"] == ["a100-40g-pcie-card"]
    fresh = _export(client, alice)
    assert client.post(IMPORT, headers=alice.headers, json=fresh).status_code == 200


def test_the_planner_skips_an_offer_on_an_unknown_gpu_type_and_logs_it(
    client: TestClient, db: Session, caplog: pytest.LogCaptureFixture
) -> None:
    # a GPU type written before import refused them (or by hand): one such SKU must not stop every /recommend
    db.add(GpuType(slug="mystery-gpu", name="Mystery"))
    db.flush()
    sku = db.scalar(select(Sku).where(Sku.slug == "a100-40g-pcie-card"))
    sku.gpu_type_id = db.scalar(select(GpuType.id).where(GpuType.slug == "mystery-gpu"))
    db.flush()
    db.expire_all()
    with caplog.at_level(logging.WARNING, logger="app.planner"):
        response = client.post("/recommend", json={"model": {"preset": "llama-2-7b"}, "task": "lora"})
    assert response.status_code == 200, response.text
    assert all(o["sku"]["id"] != "a100-40g-pcie-card" for o in response.json()["options"])
    assert any("mystery-gpu" in record.getMessage() for record in caplog.records)
