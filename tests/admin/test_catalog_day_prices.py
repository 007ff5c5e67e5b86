"""A price dated by a bare day (or a naive timestamp) takes effect on that day in the catalog's timezone
(CATALOG_TIMEZONE), as a rental's `start_date` is that day from midnight there (app.capacity.service.priced_at):
a price for a day applies to a rental starting that day. Before, `"effective_from": "2027-02-01"` was stored as
2027-02-01T00:00:00Z, 08:00 in Asia/Shanghai, so a quote starting 2027-02-01 was still priced at the old 30,000.00
(review R7-4). Through the admin API, the admin form and the catalog import; SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.capacity.service import catalog_today
from app.common.settings import Settings
from app.db.engine import SETTINGS
from tests.admin.conftest import Admin, sign_in
from tests.conftest import client_for
from tests.factories import recommend

SKU = "a100-80g-sxm-8x"
URL = f"/admin/api/skus/{SKU}"
SHANGHAI = ZoneInfo("Asia/Shanghai")


def _version(client: TestClient, admin: Admin) -> int:
    return int(client.get(URL, headers=admin.headers).json()["version"])


def _post_price(client: TestClient, admin: Admin, effective_from: str) -> None:
    price = {"amount": "31000.00", "currency": "CNY", "effective_from": effective_from}
    response = client.post(f"{URL}/prices", headers=admin.headers, json={**price, "version": _version(client, admin)})
    assert response.status_code == 201, response.text


def _next_price_from(client: TestClient, db: Session) -> datetime:
    db.expire_all()
    skus = {s["id"]: s for s in client.get("/catalog/skus").json()}
    assert skus[SKU]["next_price"]["monthly_list"] == "31000.00"
    return datetime.fromisoformat(skus[SKU]["next_price"]["effective_from"])


def _quoted_from(client: TestClient, day: date, *, noted: str | None = None) -> str:
    """The monthly list price a quote for a rental starting `day` is issued at (from /recommend's option); `noted`:
    the day its `price_at_start` note dates that price from."""
    answer = recommend(
        client,
        model={"preset": "llama-3.1-8b"},
        task="lora",
        tokens=2e8,
        constraints={"gpu_types": ["a100-80g-sxm"], "max_nodes": 1, "start_date": day.isoformat()},
    )
    option = next(o for o in answer["options"] if o["sku"]["id"] == SKU)
    quote = client.post("/quotes", json={**option["quote"], "customer": {"name": "Ada", "email": "ada@example.org"}})
    assert quote.status_code == 201, quote.text
    assert quote.json()["unit_list_price"] == option["cost"]["monthly_list"]
    if noted is not None:  # the catalog's day, not the UTC date of its midnight (the day before, east of UTC)
        (note,) = [n for n in quote.json()["note_codes"] if n["code"] == "price_at_start"]
        assert note["params"]["effective_from"] == noted
        assert f"({noted})" in client.get(quote.json()["links"]["print"]).text  # "SKU v…, price #… (day)"
    return str(quote.json()["unit_list_price"])


def test_a_price_dated_by_a_day_applies_to_a_rental_starting_that_day(
    client: TestClient, db: Session, alice: Admin
) -> None:
    day = catalog_today(db) + timedelta(days=20)
    _post_price(client, alice, day.isoformat())
    assert _next_price_from(client, db) == datetime.combine(day, time(0), tzinfo=SHANGHAI)  # was 00:00 UTC
    assert _quoted_from(client, day, noted=day.isoformat()) == "31000.00"  # was 30000.00
    assert _quoted_from(client, day - timedelta(days=1)) == "30000.00"


def test_a_naive_timestamp_is_the_catalogs_wall_clock(client: TestClient, db: Session, alice: Admin) -> None:
    day = catalog_today(db) + timedelta(days=20)
    _post_price(client, alice, f"{day.isoformat()}T12:00:00")
    assert _next_price_from(client, db) == datetime.combine(day, time(12), tzinfo=SHANGHAI)  # 04:00 UTC
    aware = datetime.combine(day + timedelta(days=1), time(0), tzinfo=UTC)  # an offset given: that instant
    _post_price(client, alice, aware.isoformat())
    db.expire_all()
    admin_view = client.get(URL, headers=alice.headers).json()["prices"]
    moments = [datetime.fromisoformat(p["effective_from"].replace("Z", "+00:00")) for p in admin_view]
    assert moments[-2:] == [datetime.combine(day, time(12), tzinfo=SHANGHAI), aware]


def test_the_admin_forms_time_is_the_catalogs(client: TestClient, db: Session, alice: Admin) -> None:
    day = catalog_today(db) + timedelta(days=20)
    csrf = sign_in(client, "alice@example.com")
    form = {"amount": "31000.00", "currency": "CNY", "effective_from": f"{day.isoformat()}T00:00"}
    form |= {"version": str(_version(client, alice)), "csrf_token": csrf}
    response = client.post(f"/admin/skus/{SKU}/prices", data=form, follow_redirects=False)
    assert response.status_code == 303, response.text
    assert _next_price_from(client, db) == datetime.combine(day, time(0), tzinfo=SHANGHAI)
    page = client.get(f"/admin/skus/{SKU}").text
    assert "Asia/Shanghai" in page  # the form says whose clock its time is


def _import(client: TestClient, admin: Admin, doc: dict[str, Any]) -> dict[str, Any]:
    response = client.post("/admin/api/catalog/import", headers=admin.headers, json=doc)
    assert response.status_code == 200, response.text
    return dict(response.json())


def test_an_imported_price_dated_by_a_day_is_the_catalogs_day(client: TestClient, db: Session, alice: Admin) -> None:
    day = catalog_today(db) + timedelta(days=20)
    doc = client.get("/admin/api/catalog/export", headers=alice.headers).json()
    sku = next(s for s in doc["skus"] if s["id"] == SKU)
    sku["prices"].append({"amount": "31000.00", "currency": "CNY", "effective_from": day.isoformat()})
    assert _import(client, alice, doc)["prices_added"] == 1
    assert _next_price_from(client, db) == datetime.combine(day, time(0), tzinfo=SHANGHAI)
    assert _quoted_from(client, day) == "31000.00"
    doc.pop("exported_at")
    assert _import(client, alice, doc)["prices_added"] == 0  # the same day again: the price already there


@pytest.fixture()
def los_angeles(app_settings: Settings, db: Session) -> Iterator[TestClient]:
    """A client of the app with CATALOG_TIMEZONE America/Los_Angeles, on the test's session (given the settings as
    app.delivery.deps.get_session gives a request's)."""
    settings = app_settings.model_copy(update={"catalog_timezone": "America/Los_Angeles"})
    db.info[SETTINGS] = settings
    try:
        with client_for(settings, db) as client:
            yield client
    finally:
        db.info.pop(SETTINGS, None)


def test_the_day_is_the_configured_timezones(los_angeles: TestClient, db: Session, alice: Admin) -> None:
    day = catalog_today(db) + timedelta(days=20)
    _post_price(los_angeles, alice, day.isoformat())
    assert _next_price_from(los_angeles, db) == datetime.combine(day, time(0), tzinfo=ZoneInfo("America/Los_Angeles"))
    assert _quoted_from(los_angeles, day, noted=day.isoformat()) == "31000.00"
