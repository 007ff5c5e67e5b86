"""A catalog import that changes a SKU's prices or discounts writes the SKU's next version, as a price or discount
saved through the admin API does (tests/admin/test_price_version.py): an edit based on the version before the
import is refused with 409 naming what the import wrote, instead of going in over a price list its author never
saw. An import that changes nothing of a SKU leaves its version alone."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select, update
from sqlalchemy.orm import Session

from app.admin import catalog_transfer
from app.admin.models import AuditEntry
from app.catalog.models import Sku
from tests.admin.conftest import Admin

CARD = "a100-40g-pcie-card"
URL = f"/admin/api/skus/{CARD}"
IMPORT = "/admin/api/catalog/import"
SCHEDULED = {"amount": "2600.00", "currency": "CNY", "effective_from": "2031-01-01T00:00:00Z"}


def _doc_with(client: TestClient, admin: Admin, **changes: object) -> dict:
    doc = client.get("/admin/api/catalog/export", headers=admin.headers).json()
    card = next(s for s in doc["skus"] if s["id"] == CARD)
    for key, value in changes.items():
        card[key] = card[key] + value if key == "prices" else value
    return doc


def _version(client: TestClient, admin: Admin) -> int:
    return client.get(URL, headers=admin.headers).json()["version"]


def test_an_imported_price_writes_the_next_version_and_an_edit_based_on_the_last_is_409(
    client: TestClient, db: Session, alice: Admin, bob: Admin
) -> None:
    version = _version(client, bob)
    imported = client.post(IMPORT, headers=alice.headers, json=_doc_with(client, alice, prices=[SCHEDULED]))
    assert imported.status_code == 200, imported.text
    assert (imported.json()["skus_updated"], imported.json()["prices_added"]) == ([CARD], 1)
    assert _version(client, bob) == version + 1
    entry = db.scalars(select(AuditEntry).where(AuditEntry.action == "sku.import")).one()
    assert (entry.before["version"], entry.after["version"]) == (version, version + 1)
    stale = client.patch(URL, headers=bob.headers, json={"version": version, "notes": "based on the old prices"})
    assert stale.status_code == 409, stale.text
    assert stale.json()["detail"].startswith(f"SKU {CARD} was changed by alice@example.com at ")
    assert f"(version {version} → {version + 1}): price. Nothing was saved" in stale.json()["detail"]
    assert [e["field"] for e in stale.json()["errors"]] == ["version", "price"]
    price = stale.json()["errors"][1]["current"]
    assert (price["amount"], price["currency"], price["effective_from"]) == (
        "2600.00",
        "CNY",
        "2031-01-01T00:00:00+00:00",
    )
    assert client.get(URL, headers=bob.headers).json()["notes"] != "based on the old prices"


def test_imported_prices_and_discounts_together_write_one_version(client: TestClient, alice: Admin) -> None:
    version = _version(client, alice)
    doc = _doc_with(client, alice, prices=[SCHEDULED], discounts={"annual": "22.5", "monthly": "0"})
    assert client.post(IMPORT, headers=alice.headers, json=doc).status_code == 200
    assert _version(client, alice) == version + 1
    stale = client.patch(URL, headers=alice.headers, json={"version": version, "notes": "x"})
    assert stale.status_code == 409
    assert [e["field"] for e in stale.json()["errors"]] == ["version", "discounts", "price"]


def test_an_import_that_changes_nothing_keeps_the_version(client: TestClient, alice: Admin) -> None:
    version = _version(client, alice)
    assert client.post(IMPORT, headers=alice.headers, json=_doc_with(client, alice)).status_code == 200
    assert _version(client, alice) == version
    saved = client.patch(URL, headers=alice.headers, json={"version": version, "notes": "still current"})
    assert saved.status_code == 200, saved.text


def test_an_edit_racing_past_the_imports_read_is_a_409_not_a_500(
    client: TestClient, db: Session, alice: Admin, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = _doc_with(client, alice, prices=[SCHEDULED])
    append = catalog_transfer._append_prices

    def raced(session: Session, sku: Sku, *args: Any) -> int:
        # another save commits the SKU's next version after the import read it (tests/admin/test_race.py)
        if sku.slug == CARD:  # behind the ORM's back: the import's copy still reads the version before
            bump = update(Sku).where(Sku.id == sku.id).values(version=Sku.version + 1)
            session.execute(bump.execution_options(synchronize_session=False))
        return append(session, sku, *args)

    monkeypatch.setattr(catalog_transfer, "_append_prices", raced)
    response = client.post(IMPORT, headers=alice.headers, json=doc)
    assert response.status_code == 409, response.text
    assert response.json()["detail"].startswith(f"SKU {CARD} was changed by someone else while saving version ")
    assert [e["code"] for e in response.json()["errors"]] == ["stale_race"]


def test_a_sku_the_import_creates_starts_at_version_one_with_its_prices_and_discounts(
    client: TestClient, alice: Admin
) -> None:
    # as one created through POST /admin/api/skus: its first prices and discounts are part of its first version
    doc = _doc_with(client, alice)
    new = {**next(s for s in doc["skus"] if s["id"] == CARD), "id": "a100-40g-pcie-card-b", "availability": []}
    new |= {"addons": [], "prices": [*new["prices"], SCHEDULED], "discounts": {"annual": "22.5", "monthly": "5"}}
    doc["skus"].append(new)
    imported = client.post(IMPORT, headers=alice.headers, json=doc)
    assert imported.status_code == 200, imported.text
    assert imported.json()["skus_created"] == ["a100-40g-pcie-card-b"]
    created = client.get("/admin/api/skus/a100-40g-pcie-card-b", headers=alice.headers).json()
    assert created["version"] == 1
    assert created["discounts"] == {"annual": "22.5", "monthly": "5"}
    assert len(created["prices"]) == len(new["prices"])
