"""A moment given with a UTC offset is stored as that instant (app.db.base.UtcDateTime). SQLite keeps a datetime as
its wall-clock text without the offset: a price scheduled "2027-03-01T00:00:00+08:00" (midnight in Shanghai, the
catalog's day) was stored as 00:00 UTC, eight hours late, so a rental starting that day was still priced at the old
price while the audit log kept +08:00; an API key set to expire at "…+08:00" lived eight hours longer (review
R5-2). SQLite and PostgreSQL (timestamptz converted on its own before)."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo

from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.capacity.service import catalog_today
from tests.admin.conftest import Admin
from tests.factories import recommend

SKU = "h100-80g-sxm-8x"
SHANGHAI = ZoneInfo("Asia/Shanghai")


def test_a_price_scheduled_with_an_offset_takes_effect_at_that_instant(
    client: TestClient, db: Session, alice: Admin
) -> None:
    day = catalog_today(db) + timedelta(days=20)
    midnight = datetime.combine(day, time(0), tzinfo=SHANGHAI)
    version = int(client.get(f"/admin/api/skus/{SKU}", headers=alice.headers).json()["version"])
    response = client.post(
        f"/admin/api/skus/{SKU}/prices",
        headers=alice.headers,
        json={"amount": "120000.00", "currency": "CNY", "version": version, "effective_from": midnight.isoformat()},
    )
    assert response.status_code == 201, response.text
    db.expire_all()
    skus = {s["id"]: s for s in client.get("/catalog/skus").json()}
    shown = datetime.fromisoformat(skus[SKU]["next_price"]["effective_from"])
    assert shown == midnight  # was 8 hours later on SQLite (the wall clock read as UTC)
    assert shown.utcoffset() == timedelta(0)
    answer = recommend(
        client,
        model={"preset": "llama-3.1-8b"},
        task="lora",
        tokens=2e8,
        constraints={"gpu_types": ["h100-80g-sxm"], "max_nodes": 1, "start_date": day.isoformat()},
    )
    option = next(o for o in answer["options"] if o["sku"]["id"] == SKU)
    assert option["cost"]["monthly_list"] == "120000.00"  # was 100000.00 on SQLite


def test_an_api_key_expiring_at_an_offset_expires_at_that_instant(client: TestClient, alice: Admin) -> None:
    moment = datetime(2027, 1, 1, tzinfo=SHANGHAI)
    response = client.post(
        "/admin/api/keys",
        headers=alice.headers,
        json={
            "name": "sales tool",
            "organisation": "Acme",
            "scopes": ["quotes:write"],
            "expires_at": moment.isoformat(),
        },
    )
    assert response.status_code == 201, response.text
    keys = client.get("/admin/api/keys", headers=alice.headers).json()
    items = keys["items"] if isinstance(keys, dict) else keys
    stored = next(k for k in items if k["name"] == "sales tool")
    assert datetime.fromisoformat(stored["expires_at"].replace("Z", "+00:00")) == moment.astimezone(UTC)
