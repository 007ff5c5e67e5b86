"""A SKU's price and its priced add-ons share one currency (review R1): a quote adds nothing in another currency to
its total, so an InfiniBand add-on priced CNY 8,000 on a SKU repriced in JPY was billed "priced on consultation" and
left out of the total. The add-on endpoint refused the add-on in another currency; the price endpoint, its form and
the catalog import now refuse the price in another currency while a priced add-on is active (422 on `currency`,
naming the currency allowed and the add-ons), and nothing is written."""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta

from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.catalog.models import SkuPrice
from app.text.i18n_admin import ADMIN_ZH
from tests.admin.conftest import Admin, sign_in

H100 = "h100-80g-sxm-8x"
URL = f"/admin/api/skus/{H100}"
IB = {
    "name": "InfiniBand NDR 400G, per node",
    "amount": "8000.00",
    "currency": "CNY",
    "per_unit": "node",
    "status": "active",
    "version": 1,
}


def _price_ib(client: TestClient, admin: Admin) -> None:
    response = client.put(f"{URL}/addons/infiniband-400g", headers=admin.headers, json=IB)
    assert response.status_code == 200, response.text


def _version(client: TestClient, alice: Admin) -> int:
    """The SKU's current version, which a new price names (review R4-9)."""
    return int(client.get(URL, headers=alice.headers).json()["version"])


def _prices(db: Session) -> int:
    return db.scalar(select(func.count()).select_from(SkuPrice))


def test_a_price_in_another_currency_than_a_priced_add_on_is_a_422_on_currency(
    client: TestClient, db: Session, alice: Admin
) -> None:
    _price_ib(client, alice)
    before = _prices(db)
    response = client.post(
        f"{URL}/prices",
        headers=alice.headers,
        json={"amount": "1500000", "currency": "JPY", "version": _version(client, alice)},
    )
    assert response.status_code == 422, response.text
    [error] = response.json()["errors"]
    assert (error["field"], error["code"], error["params"]) == (
        "currency",
        "price_currency_addons",
        {"currency": "CNY", "addons": "infiniband-400g"},
    )
    assert error["message"].startswith("must be CNY, the currency of its priced add-ons (infiniband-400g)")
    assert _prices(db) == before
    sku = client.get(URL, headers=alice.headers).json()
    assert sku["current_price"]["currency"] == "CNY"
    body = {"sku_id": H100, "quantity": 2, "term": "monthly", "months": 1, "addons": ["infiniband-400g"]}
    quote = client.post("/quotes", json={**body, "customer": {"name": "x", "email": "x@example.com"}}).json()
    assert (quote["currency"], quote["fabric_on_consultation"]) == ("CNY", False)
    assert [line["amount"] for line in quote["lines"]][-1] == "16000.00"


def test_the_same_currency_and_an_unpriced_add_on_in_another_currency_are_accepted(
    client: TestClient, alice: Admin
) -> None:
    """The seeded add-on is priced on consultation (no amount): its currency adds nothing to a total, and the
    add-on endpoint refuses an amount in any currency but the price's."""
    moved = client.post(
        f"{URL}/prices",
        headers=alice.headers,
        json={"amount": "4000.00", "currency": "USD", "version": _version(client, alice)},
    )
    assert moved.status_code == 201, moved.text
    refused = client.put(f"{URL}/addons/infiniband-400g", headers=alice.headers, json=IB)
    assert refused.status_code == 422
    priced = client.put(f"{URL}/addons/infiniband-400g", headers=alice.headers, json=IB | {"currency": "USD"})
    assert priced.status_code == 200, priced.text
    same = client.post(
        f"{URL}/prices",
        headers=alice.headers,
        json={"amount": "4100.00", "currency": "USD", "version": _version(client, alice)},
    )
    assert same.status_code == 201


def test_the_price_form_says_so_in_english_and_chinese(client: TestClient, db: Session, alice: Admin) -> None:
    _price_ib(client, alice)
    before = _prices(db)
    csrf = sign_in(client, "alice@example.com")
    form = {"csrf_token": csrf, "amount": "1500000", "currency": "JPY", "note": "typo"}
    form["version"] = str(_version(client, alice))
    for lang, words in (("en", "must be CNY, the currency of its priced add-ons"), ("zh", "须为 CNY")):
        page = client.post(f"/admin/skus/{H100}/prices?lang={lang}", data=form, follow_redirects=False)
        assert page.status_code == 422, page.text[:500]
        assert words in page.text and "infiniband-400g" in page.text
    assert ADMIN_ZH["admin_err_price_currency_addons"].startswith("须为 {currency}")
    assert _prices(db) == before


def test_an_import_pricing_the_sku_in_another_currency_than_its_priced_add_on_writes_nothing(
    client: TestClient, db: Session, alice: Admin
) -> None:
    _price_ib(client, alice)
    doc = client.get("/admin/api/catalog/export", headers=alice.headers).json()
    before = _prices(db)
    index = [s["id"] for s in doc["skus"]].index(H100)
    changed = copy.deepcopy(doc)
    now = datetime.now(UTC).isoformat()
    changed["skus"][index]["prices"].append({"amount": "1500000", "currency": "JPY", "effective_from": now})
    response = client.post("/admin/api/catalog/import", headers=alice.headers, json=changed)
    assert response.status_code == 422, response.text
    [error] = response.json()["errors"]
    assert (error["field"], error["code"], error["params"]) == (
        f"skus.{index}.prices.1.currency",
        "price_currency_addons",
        {"currency": "CNY", "addons": "infiniband-400g"},
    )
    assert _prices(db) == before
    both = copy.deepcopy(changed)  # the add-on moved with it: one currency again
    both["skus"][index]["addons"][0] |= {"currency": "JPY", "amount": "170000"}
    moved = client.post("/admin/api/catalog/import", headers=alice.headers, json=both)
    assert moved.status_code == 200, moved.text


def test_an_import_pricing_an_add_on_in_another_currency_than_the_price_writes_nothing(
    client: TestClient, alice: Admin
) -> None:
    doc = client.get("/admin/api/catalog/export", headers=alice.headers).json()
    index = [s["id"] for s in doc["skus"]].index(H100)
    doc["skus"][index]["addons"][0] |= {"currency": "JPY", "amount": "170000"}
    response = client.post("/admin/api/catalog/import", headers=alice.headers, json=doc)
    assert response.status_code == 422, response.text
    [error] = response.json()["errors"]
    assert (error["field"], error["code"], error["params"]) == (
        f"skus.{index}.addons.0.currency",
        "addon_currency",
        {"currency": "CNY", "sku": H100},
    )
    addon = client.get(URL, headers=alice.headers).json()["addons"][0]
    assert (addon["currency"], addon["amount"]) == ("CNY", None)


def test_an_add_on_priced_in_another_currency_than_a_scheduled_price_is_a_422(client: TestClient, alice: Admin) -> None:
    """The add-on would be in the price's currency today and out of every total once the scheduled price is in force."""
    later = (datetime.now(UTC) + timedelta(days=2)).isoformat()
    scheduled = {"amount": "1500000", "currency": "JPY", "effective_from": later, "version": _version(client, alice)}
    assert client.post(f"{URL}/prices", headers=alice.headers, json=scheduled).status_code == 201
    response = client.put(f"{URL}/addons/infiniband-400g", headers=alice.headers, json=IB)
    assert response.status_code == 422, response.text
    [error] = response.json()["errors"]
    assert (error["field"], error["code"], error["params"]) == (
        "currency",
        "addon_currency",
        {"currency": "JPY", "sku": H100},
    )
    unpriced = client.put(f"{URL}/addons/infiniband-400g", headers=alice.headers, json=IB | {"amount": None})
    assert unpriced.status_code == 200, unpriced.text
