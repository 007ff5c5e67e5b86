"""A new price is a change of the SKU: it writes the SKU's next version, and one based on a version the SKU has left
is refused with 409 naming the price written since, who wrote it and nothing saved (review R3: two posts with
`version` 2 both answered 201, the version stayed 2 and the last one silently won). The race of two such posts
over real HTTP is in tests/admin/test_concurrent_writes.py."""

from __future__ import annotations

from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.catalog.models import SkuPrice
from tests.admin.conftest import Admin, sign_in

H100 = "h100-80g-sxm-8x"
URL = f"/admin/api/skus/{H100}"


def _prices(db: Session) -> int:
    return db.scalar(select(func.count()).select_from(SkuPrice))


def test_a_price_based_on_a_stale_version_is_409_naming_the_price_written_since(
    client: TestClient, db: Session, alice: Admin, bob: Admin
) -> None:
    version = client.get(URL, headers=alice.headers).json()["version"]
    rows = _prices(db)
    first = client.post(
        f"{URL}/prices", headers=alice.headers, json={"amount": "100000.00", "currency": "CNY", "version": version}
    )
    assert first.status_code == 201, first.text
    assert first.json()["version"] == version + 1
    second = client.post(
        f"{URL}/prices", headers=bob.headers, json={"amount": "95000.00", "currency": "CNY", "version": version}
    )
    assert second.status_code == 409, second.text
    assert second.headers["content-type"].startswith("application/problem+json")
    problem = second.json()
    assert problem["detail"].startswith(f"SKU {H100} was changed by alice@example.com at ")
    assert f"(version {version} → {version + 1}): price. Nothing was saved" in problem["detail"]
    stale_version, price = problem["errors"]
    assert (stale_version["field"], stale_version["type"], stale_version["current"]) == (
        "version",
        "stale",
        version + 1,
    )
    assert stale_version["message"].startswith(
        f"the SKU is at version {version + 1}, not {version}: changed by alice@example.com at "
    )
    assert stale_version["code"] == "stale_sku_by"
    assert (price["field"], price["type"], price["message"]) == ("price", "stale", "changed since your version")
    assert (price["current"]["amount"], price["current"]["currency"]) == ("100000.00", "CNY")
    now = client.get(URL, headers=alice.headers).json()
    assert (now["current_price"]["amount"], now["version"]) == ("100000.00", version + 1)
    assert _prices(db) == rows + 1  # bob's price was not written


def test_a_price_without_a_version_is_422_naming_it_and_writes_nothing(
    client: TestClient, db: Session, alice: Admin
) -> None:
    """Review R4-9: a price posted without `version` was 200 and silently overwrote the price another admin had set a
    moment before; `version` is required, as for PATCH, retire and add-ons."""
    version, rows = client.get(URL, headers=alice.headers).json()["version"], _prices(db)
    posted = client.post(f"{URL}/prices", headers=alice.headers, json={"amount": "29000.00", "currency": "CNY"})
    assert posted.status_code == 422, posted.text
    assert [e["field"] for e in posted.json()["errors"]] == ["version"]
    assert posted.json()["detail"].startswith("version: ")
    assert (_prices(db), client.get(URL, headers=alice.headers).json()["version"]) == (rows, version)
    form = {"csrf_token": sign_in(client, "alice@example.com"), "amount": "29000.00", "currency": "CNY"}
    page = client.post(f"/admin/skus/{H100}/prices", data=form, follow_redirects=False)
    assert page.status_code == 422 and _prices(db) == rows
    sent = client.post(
        f"{URL}/prices", headers=alice.headers, json={"amount": "99000.00", "currency": "CNY", "version": version}
    )
    assert sent.status_code == 201 and sent.json()["version"] == version + 1
    patch = client.patch(URL, headers=alice.headers, json={"version": version, "notes": "x"})
    assert patch.status_code == 409
    assert [e["field"] for e in patch.json()["errors"]] == ["version", "price"]


def test_the_new_price_form_sends_the_version_and_a_stale_one_shows_the_price_written_since(
    client: TestClient, db: Session, alice: Admin, bob: Admin
) -> None:
    csrf = sign_in(client, "alice@example.com")
    page = client.get(f"/admin/skus/{H100}")
    version = client.get(URL, headers=alice.headers).json()["version"]
    assert (
        f'<input type="hidden" name="version" value="{version}">' in page.text.split('/prices"')[1].split("</form>")[0]
    )
    someone_else = {"amount": "97000.00", "currency": "CNY", "version": version}
    assert client.post(f"{URL}/prices", headers=bob.headers, json=someone_else).status_code == 201
    rows = _prices(db)
    form = {"csrf_token": csrf, "amount": "96000.00", "currency": "CNY", "version": str(version)}
    refused = client.post(f"/admin/skus/{H100}/prices", data=form, follow_redirects=False)
    assert refused.status_code == 409
    assert "changed by bob@example.com" in refused.text
    assert "<li>Price: changed since your version — now <code>" in refused.text
    assert "97000.00" in refused.text
    assert _prices(db) == rows
    saved = client.post(
        f"/admin/skus/{H100}/prices", data={**form, "version": str(version + 1)}, follow_redirects=False
    )
    assert saved.status_code == 303
    assert client.get(URL, headers=alice.headers).json()["current_price"]["amount"] == "96000.00"
