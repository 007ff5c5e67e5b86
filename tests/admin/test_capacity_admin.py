"""Maintenance holds and the capacity page (app/admin/capacity_*): versioned and audited edits through the API
and the SKU page, and the month-by-month chart of what accepted and issued quotes hold, in English and Chinese."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from tests.admin.conftest import Admin, sign_in
from tests.factories import sales_key

H100 = "h100-80g-sxm-8x"
URL = f"/admin/api/skus/{H100}/holds"


def _today() -> date:
    return datetime.now(ZoneInfo("Asia/Shanghai")).date()


def _hold(days: int = 10, units: int = 1, **changes: object) -> dict[str, object]:
    return {"ends_on": (_today() + timedelta(days=days)).isoformat(), "units": units, "note": "PSU swap", **changes}


def _at(region: str = "singapore") -> str:
    return f"{URL}/{region}/{_today().isoformat()}"


@pytest.fixture
def sales(client: TestClient, db: Session) -> dict[str, str]:
    """A sales tool's API key (quotes:write): its quotes hold their units, a quote without a key holds none (R4-5)."""
    return sales_key(client, db)


def _quote(client: TestClient, quantity: int, sales: dict[str, str]) -> dict[str, object]:
    body = {"sku_id": H100, "quantity": quantity, "term": "monthly", "months": 1, "region": "singapore"}
    response = client.post(
        "/quotes", json={**body, "customer": {"name": "Ada", "email": "ada@example.org"}}, headers=sales
    )
    assert response.status_code == 201, response.text
    return dict(response.json())


def test_holds_are_created_edited_with_their_version_and_ended_audited(client: TestClient, alice: Admin) -> None:
    client.put(f"/admin/api/skus/{H100}/availability/singapore", headers=alice.headers, json={"units_available": 2})
    created = client.put(_at(), headers=alice.headers, json=_hold())
    assert created.status_code == 200, created.text
    hold = created.json()
    assert (hold["units"], hold["version"], hold["created_by"]) == (1, 1, "alice@example.com")
    assert hold["starts_on"] == _today().isoformat()
    body = {"sku_id": H100, "quantity": 2, "term": "monthly", "region": "singapore"}
    refused = client.post("/quotes", json={**body, "customer": {"name": "Ada", "email": "ada@example.org"}})
    assert (refused.status_code, refused.json()["free_units"]) == (409, 1)
    assert client.put(_at(), headers=alice.headers, json=_hold()).status_code == 409  # exists: version needed
    edited = client.put(_at(), headers=alice.headers, json=_hold(units=2, version=1))
    assert (edited.status_code, edited.json()["version"]) == (200, 2)
    stale = client.put(_at(), headers=alice.headers, json=_hold(units=1, version=1))
    assert stale.status_code == 409 and stale.json()["errors"][0]["current"] == 2
    assert client.delete(_at(), headers=alice.headers, params={"version": 1}).status_code == 409
    assert client.delete(_at(), headers=alice.headers, params={"version": 2}).status_code == 204
    assert client.get(URL, headers=alice.headers).json() == []
    audit = client.get("/admin/api/audit", headers=alice.headers, params={"entity_type": "maintenance_hold"}).json()
    assert sorted(e["action"] for e in audit["items"]) == ["maintenance.delete", "maintenance.set", "maintenance.set"]
    # each entry holds the hold before and after its change: none before it was made, none after it was ended
    changes = [(e["action"], (e["before"] or {}).get("units"), (e["after"] or {}).get("units")) for e in audit["items"]]
    assert sorted(changes, key=str) == [
        ("maintenance.delete", 2, None),
        ("maintenance.set", 1, 2),
        ("maintenance.set", None, 1),
    ]


def test_a_hold_is_refused_naming_the_field(client: TestClient, alice: Admin) -> None:
    backwards = client.put(_at(), headers=alice.headers, json=_hold(days=0))
    assert (backwards.status_code, backwards.json()["errors"][0]["field"]) == (422, "ends_on")
    elsewhere = client.put(_at("shenzhen"), headers=alice.headers, json=_hold())
    assert (elsewhere.status_code, elsewhere.json()["errors"][0]["field"]) == (422, "region")
    assert client.put(_at(), json=_hold()).status_code == 401


def test_the_capacity_api_and_page_show_accepted_issued_and_free_by_month(
    client: TestClient, alice: Admin, sales: dict[str, str]
) -> None:
    client.put(f"/admin/api/skus/{H100}/availability/singapore", headers=alice.headers, json={"units_available": 5})
    accepted = _quote(client, 2, sales)
    client.post(str(dict(accepted["links"])["accept"]))  # type: ignore[call-overload]
    _quote(client, 1, sales)
    rows = client.get("/admin/api/capacity", headers=alice.headers, params={"months": 3}).json()
    [row] = [r for r in rows if (r["sku_id"], r["region"]) == (H100, "singapore")]
    first = row["months"][0]
    assert (row["total"], len(row["months"]), first["month"]) == (5, 3, _today().replace(day=1).isoformat())
    assert (first["accepted"], first["issued"], first["maintenance"], first["free"]) == (2, 1, 0, 2)
    sign_in(client, "alice@example.com")
    page = client.get("/admin/capacity")
    assert page.status_code == 200
    assert "accepted quotes" in page.text and 'class="cap-accepted"' in page.text
    assert "2 accepted, 1 issued, 0 in maintenance, 2 free" in page.text
    zh = client.get("/admin/capacity", params={"lang": "zh"}).text
    assert "已接受 2，已出具 1，维护 0，空闲 2" in zh
    assert "新加坡 · 共 5 台服务器" in zh and "Singapore · 5 servers exist" in page.text


def test_the_sku_page_adds_and_ends_a_hold(client: TestClient, alice: Admin) -> None:
    csrf = sign_in(client, "alice@example.com")
    place = {"csrf_token": csrf, "region": "singapore", "starts_on": _today().isoformat()}
    form = {**place, "version": "", **{k: str(v) for k, v in _hold().items()}}
    saved = client.post(f"/admin/skus/{H100}/holds", data=form, follow_redirects=False)
    assert (saved.status_code, saved.headers["location"]) == (303, f"/admin/skus/{H100}?msg=hold")
    [hold] = client.get(URL, headers=alice.headers).json()
    page = client.get(f"/admin/skus/{H100}").text
    assert "Maintenance holds" in page and f"singapore from {hold['starts_on']}" in page
    bad = client.post(f"/admin/skus/{H100}/holds", data={**form, "ends_on": "soon"})
    assert bad.status_code == 422 and "YYYY-MM-DD" in bad.text
    ended = client.post(f"/admin/skus/{H100}/holds/delete", data={**place, "version": "1"}, follow_redirects=False)
    assert ended.status_code == 303 and client.get(URL, headers=alice.headers).json() == []


def _availability(client: TestClient, alice: Admin, units: int, **more: object) -> dict[str, object]:
    sku = client.get(f"/admin/api/skus/{H100}", headers=alice.headers).json()
    [current] = [a for a in sku["availability"] if a["region"] == "singapore"] or [{"version": None}]
    body = {"units_available": units, "version": current["version"], **more}
    response = client.put(f"/admin/api/skus/{H100}/availability/singapore", headers=alice.headers, json=body)
    return {"status": response.status_code, **response.json()}


def test_an_edit_that_oversells_is_refused_naming_the_quotes_unless_forced(
    client: TestClient, alice: Admin, sales: dict[str, str]
) -> None:
    assert _availability(client, alice, 5)["status"] == 200
    accepted = _quote(client, 1, sales)
    client.post(str(dict(accepted["links"])["accept"]))  # type: ignore[call-overload]
    issued = _quote(client, 3, sales)
    too_many = client.put(_at(), headers=alice.headers, json=_hold(units=6))
    assert (too_many.status_code, too_many.json()["errors"][0]["field"]) == (422, "units")
    cut = _availability(client, alice, 1)
    assert (cut["status"], cut["code"], cut["shortfall"]) == (409, "overbooked", 3)
    assert cut["quotes"] == sorted([accepted["number"], issued["number"]])
    assert cut["errors"][0]["field"] == "units_available"  # type: ignore[index]
    held = client.put(_at(), headers=alice.headers, json=_hold(units=3))
    assert (held.status_code, held.json()["code"], held.json()["shortfall"]) == (409, "overbooked", 2)
    assert client.get(URL, headers=alice.headers).json() == []  # nothing was saved
    assert client.put(_at(), headers=alice.headers, json=_hold(units=1)).status_code == 200  # fits: 4 + 1 of 5
    forced = _availability(client, alice, 1, force=True)
    assert forced["status"] == 200 and forced["units_available"] == 1
    rows = client.get("/admin/api/capacity", headers=alice.headers, params={"months": 1}).json()
    [row] = [r for r in rows if (r["sku_id"], r["region"]) == (H100, "singapore")]
    month = row["months"][0]
    assert (month["accepted"], month["issued"], month["maintenance"], month["free"]) == (1, 3, 1, 0)
    assert (row["total"], month["overbooked"]) == (1, 4)
    sign_in(client, "alice@example.com")
    assert "1 accepted, 3 issued, 1 in maintenance, 0 free, 4 overbooked" in client.get("/admin/capacity").text
    assert "超售 4" in client.get("/admin/capacity", params={"lang": "zh"}).text


def test_a_hold_starts_at_most_a_month_ago_and_ends_within_the_horizon(client: TestClient, alice: Admin) -> None:
    ancient = client.put(f"{URL}/singapore/1900-01-01", headers=alice.headers, json=_hold())
    assert (ancient.status_code, ancient.json()["errors"][0]["field"]) == (422, "starts_on")
    endless = client.put(_at(), headers=alice.headers, json={**_hold(), "ends_on": "9999-12-31"})
    assert (endless.status_code, endless.json()["errors"][0]["field"]) == (422, "ends_on")
    recent = (_today() - timedelta(days=31)).isoformat()
    assert client.put(f"{URL}/singapore/{recent}", headers=alice.headers, json=_hold()).status_code == 200
    five_years = client.put(_at(), headers=alice.headers, json=_hold(days=5 * 365))
    assert five_years.status_code == 200, five_years.text


@pytest.mark.parametrize(
    ("changes", "field", "code", "chinese"),
    [
        ({"ends_on": "soon"}, "ends_on", "date", "日期格式为 YYYY-MM-DD"),
        ({"region": "mars"}, "region", "hold_region", "的销售地区为"),
        ({"ends_on": _today().isoformat()}, "ends_on", "hold_ends_before", "须晚于占用的第一天"),
        ({"ends_on": (_today() + timedelta(days=4000)).isoformat()}, "ends_on", "hold_ends_late", "当天或之前"),
    ],
)
def test_a_refused_hold_is_worded_from_its_code_in_the_pages_language(
    client: TestClient, alice: Admin, changes: dict[str, str], field: str, code: str, chinese: str
) -> None:
    """The API's 422 carries the code and its values; the SKU page words them in English or Chinese (before: the
    English text on the Chinese page, under the English summary of the refusal)."""
    csrf = sign_in(client, "alice@example.com")
    form = {"csrf_token": csrf, "region": "singapore", "starts_on": _today().isoformat(), "version": ""}
    form |= {k: str(v) for k, v in _hold().items()} | changes
    english = client.post(f"/admin/skus/{H100}/holds", data=form)
    assert english.status_code == 422 and "Not saved: correct the fields below." in english.text
    zh = client.post(f"/admin/skus/{H100}/holds?lang=zh", data=form)
    assert zh.status_code == 422 and "未保存：请修改下列字段。" in zh.text and chinese in zh.text
    assert "Not saved" not in zh.text
    if code != "date":  # the API reads the date itself: its own 422
        body = {k: v for k, v in _hold().items()} | {k: v for k, v in changes.items() if k != "region"}
        response = client.put(_at(changes.get("region", "singapore")), headers=alice.headers, json=body)
        assert response.status_code == 422, response.text
        [error] = response.json()["errors"]
        assert (error["field"], error["type"]) == (field, code)
