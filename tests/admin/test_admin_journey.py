"""An admin changes a price and retires a SKU without a stumble: each audit entry says what changed
field by field (API and page), text about prices is made from the data so it never goes stale,
the price box suggests the SKU's own price, and retiring asks for confirmation."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import create_engine, text

from app.catalog.seed import seed_catalog
from app.db.engine import build_engine, build_sessionmaker
from app.db.migrate import upgrade
from tests.admin.conftest import Admin, sign_in

CARD = "a100-40g-pcie-card"
URL = f"/admin/api/skus/{CARD}"


def test_audit_entries_list_their_changes_field_by_field(client: TestClient, alice: Admin) -> None:
    h = alice.headers
    assert client.patch(URL, headers=h, json={"version": 1, "host_ram_gib": 256}).status_code == 200
    price = {"amount": "2900.00", "currency": "CNY", "version": 2}
    assert client.post(f"{URL}/prices", headers=h, json=price).status_code == 201
    items = client.get("/admin/api/audit", headers=h, params={"entity_id": CARD}).json()["items"]
    price, update = items[0], items[1]
    assert {"field": "amount", "before": "2800.00", "after": "2900.00"} in price["changes"]
    assert update["changes"] == [
        {"field": "host_ram_gib", "before": None, "after": 256},
        {"field": "version", "before": 1, "after": 2},
    ]


def test_the_audit_page_shows_a_readable_diff(client: TestClient, alice: Admin) -> None:
    h = alice.headers
    assert client.patch(URL, headers=h, json={"version": 1, "host_ram_gib": 256}).status_code == 200
    sign_in(client, "alice@example.com")
    page = client.get("/admin/audit", params={"entity_id": CARD}).text
    assert '<th scope="row" title="host_ram_gib">Host RAM (GiB)</th>' in page  # the field under its form label
    assert "<del>—</del>" in page and "<ins>256</ins>" in page
    assert "<del>1</del>" in page and "<ins>2</ins>" in page


def test_the_price_box_suggests_this_skus_own_price(client: TestClient, alice: Admin) -> None:
    sign_in(client, "alice@example.com")
    assert 'placeholder="100000.00"' in client.get("/admin/skus/h100-80g-sxm-8x").text
    assert 'placeholder="2800.00"' in client.get(f"/admin/skus/{CARD}").text


def test_retiring_asks_for_confirmation(client: TestClient, alice: Admin) -> None:
    csrf = sign_in(client, "alice@example.com")
    refused = client.post(f"/admin/skus/{CARD}/retire", data={"csrf_token": csrf, "version": "1"})
    assert refused.status_code == 422 and "tick the box to confirm" in refused.text
    assert client.get(f"/admin/api/skus/{CARD}", headers=alice.headers).json()["status"] == "active"
    done = client.post(
        f"/admin/skus/{CARD}/retire",
        data={"csrf_token": csrf, "version": "1", "confirm": "yes"},
        follow_redirects=False,
    )
    assert done.status_code == 303
    assert client.get(f"/admin/api/skus/{CARD}", headers=alice.headers).json()["status"] == "retired"


def _public(client: TestClient) -> dict:
    return {s["id"]: s for s in client.get("/catalog/skus").json()}


def test_price_text_follows_the_price_and_the_notes_restate_none(client: TestClient, alice: Admin) -> None:
    card = _public(client)[CARD]
    assert "2,240" not in card["notes"] and "20%" not in card["notes"]
    assert card["price"]["summary"] == (
        "CNY 2,800.00 per card per month; annual term 20% off: CNY 2,240.00 per card per month."
    )
    new = {"amount": "3000.00", "currency": "CNY", "version": 1}
    assert client.post(f"{URL}/prices", headers=alice.headers, json=new).status_code == 201
    assert "annual term 20% off: CNY 2,400.00 per card per month" in _public(client)[CARD]["price"]["summary"]
    for sku in _public(client).values():
        assert not re.search(r"\d+% off|per year", sku["notes"]), sku["notes"]


def test_the_migration_replaces_stale_seeded_notes_and_keeps_an_admins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite:///{tmp_path / 'old.db'}"
    upgrade(url, "0006")
    # the SKUs only: today's add-on model has columns (0013's bandwidth) a 0006 schema lacks
    monkeypatch.setattr("app.catalog.seed.ADDONS", [])
    engine = build_engine(url)
    with build_sessionmaker(engine).begin() as session:
        seed_catalog(session)
    old = "Annual term 20% off (CNY 2,240 per card per month)."
    with engine.begin() as connection:
        connection.execute(text("UPDATE skus SET notes = :n WHERE slug = :s"), {"n": old, "s": CARD})
        connection.execute(text("UPDATE skus SET notes = 'ask for rack 7' WHERE slug = 'h100-80g-sxm-8x'"))
    engine.dispose()
    upgrade(url)
    with create_engine(url).connect() as connection:
        notes = dict(connection.execute(text("SELECT slug, notes FROM skus")).all())
    assert notes[CARD] == "" and notes["h100-80g-sxm-8x"] == "ask for rack 7"
