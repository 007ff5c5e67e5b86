"""Every admin page is complete in Chinese (`?lang=zh`, as the wizard chooses its language): sign in, the SKUs list,
a new SKU and a SKU's editing page, quotes, the audit log, API tokens and keys (with the one-time secret and the
revoke confirmation), webhooks and their delivery log, capacity, and the message after a change. No run of two
English words is left once the catalog's names, the admins' and the customer's own words and identifiers are set aside
(the detector and its names: tests/web/test_serve_chinese.py)."""

from __future__ import annotations

import html
import re
from datetime import date, timedelta
from typing import get_args

from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.admin.models import ApiToken
from app.apikeys.models import ApiKey
from app.catalog.models import GpuType, Sku, SkuPrice
from app.estimator.interconnects import inter_node_fabrics, intra_node_kinds
from app.estimator.vocabulary import API_SCOPES, QUOTE_STATUSES, RENTAL_UNITS, SKU_STATUSES
from app.webhooks.models import DeliveryStatus
from tests.admin.conftest import Admin, csrf_of, sign_in
from tests.quotes.helpers import a100_body
from tests.web.test_serve_chinese import IDENTIFIERS, allowed_names, english_runs
from tests.web.test_training_chinese import TRAINING_NAMES

HTML = {"accept": "text/html,application/xhtml+xml"}
# The admins' own words and protocol names that stay as they are.
ADMIN_NAMES = ("alice@example.com", "Authorization: Bearer", "Standard Webhooks", "Acme Sales")


def test_every_admin_page_is_chinese(client: TestClient, db: Session, alice: Admin) -> None:
    catalog = [*db.scalars(select(GpuType.name)), *db.scalars(select(Sku.notes)), *db.scalars(select(SkuPrice.note))]
    catalog = [*filter(None, catalog), *API_SCOPES]  # the catalog's own words: GPU types, SKU and price notes
    names = sorted({*allowed_names(client), *TRAINING_NAMES, *ADMIN_NAMES, *catalog}, key=len, reverse=True)
    pages = {"sign in": client.get("/admin/login?lang=zh", headers=HTML)}
    csrf = sign_in(client, alice.user.email)
    created = client.post("/admin/tokens?lang=zh", data={"csrf_token": csrf, "name": "sync"}, headers=HTML)
    assert created.status_code == 201, created.text[:2000]
    pages["token created"] = created
    key = {"csrf_token": csrf, "name": "crm", "organisation": "Acme Sales", "scopes": ["quotes:write"]}
    pages["key issued"] = client.post("/admin/keys?lang=zh", data=key, headers=HTML)
    token_id = re.search(r'href="/admin/tokens/(\d+)/revoke"', created.text)
    assert token_id, created.text[:2000]
    for path in (
        "/admin/skus",
        "/admin/skus/new",
        "/admin/skus/h100-80g-sxm-8x",
        "/admin/quotes",
        "/admin/audit",
        "/admin/tokens",
        f"/admin/tokens/{token_id.group(1)}/revoke",
        "/admin/keys",
        "/admin/webhooks",
        "/admin/webhooks/deliveries",
        "/admin/capacity",
        "/admin/skus?msg=saved",
    ):
        pages[path] = client.get(f"{path}{'&' if '?' in path else '?'}lang=zh", headers=HTML)
        assert pages[path].status_code == 200, (path, pages[path].text[:2000])
    assert "已保存。" in pages["/admin/skus?msg=saved"].text
    # the one-time token and key, and their prefixes where the tables and the audit log name them (random letters)
    shown = re.findall(r'<code class="token">([^<]*)</code>', created.text + pages["key issued"].text) + [alice.token]
    # longest first among all names: a catalog word met first inside a random key split it and left a run of its
    # letters looking like English (1 run in 3 or so)
    secrets = {secret[:n] for secret in shown for n in range(4, len(secret) + 1)}
    names = sorted({*names, *secrets}, key=len, reverse=True)
    left = {name: runs for name, page in pages.items() if (runs := english_runs(page.text, names))}
    assert not left, left
    lone = {name: found for name, page in pages.items() if (found := vocabulary_words(page.text, names))}
    assert not lone, lone


# The statuses and units the admin pages show, one English word each, which the two-word detector lets through (review
# R7-8: quote statuses in the quotes table and its filter, an add-on's status and unit, a delivery's status).
VOCABULARY_WORDS = re.compile(
    r"\b(?:" + "|".join((*QUOTE_STATUSES, *SKU_STATUSES, *RENTAL_UNITS, *get_args(DeliveryStatus))) + r")\b",
    re.IGNORECASE,
)


def vocabulary_words(page_html: str, names: list[str]) -> list[str]:
    """The statuses and units left in English in a page's text (tags, scripts and the names set aside)."""
    text = re.sub(r"<(script|style|pre|title)\b.*?</\1>", " ", page_html, flags=re.S)
    found = []
    for chunk in (html.unescape(c) for c in re.split(r"<[^>]+>", text)):
        for name in names:
            chunk = chunk.replace(name, " ")
        found += VOCABULARY_WORDS.findall(IDENTIFIERS.sub(" ", chunk))
    return found


def test_the_detector_finds_a_status_left_in_english() -> None:
    page = '<td>issued</td><option value="active">在售</option><td>8x A100 80G SXM NVLink server</td><td>按卡</td>'
    assert vocabulary_words(page, ["8x A100 80G SXM NVLink server"]) == ["issued"]


def _quotes_and_deliveries(client: TestClient, alice: Admin) -> dict[str, str]:
    """Quotes in each status but expired and a webhook delivery of each: what the quotes table and the delivery log
    list (the filters list every status, rows or none)."""
    hook = {"url": "https://93.184.215.14/hooks/crm", "events": ["quote.issued", "quote.accepted", "quote.cancelled"]}
    assert client.post("/admin/api/webhooks", json=hook, headers=alice.headers).status_code == 201
    made = [client.post("/quotes", json=a100_body()).json() for _ in range(3)]
    assert client.post(f"/quotes/{made[1]['id']}/accept").status_code == 200
    cancel = client.post(f"/admin/api/quotes/{made[2]['id']}/cancel", headers=alice.headers, json={"reason": "x"})
    assert cancel.status_code == 200, cancel.text
    delivery = client.get("/admin/api/webhooks/deliveries", headers=alice.headers).json()["items"][0]
    return {"delivery": f"/admin/webhooks/deliveries/{delivery['id']}"}


def test_statuses_and_units_read_in_chinese(client: TestClient, db: Session, alice: Admin) -> None:
    """Review R7-8: `?lang=zh` showed issued/accepted/cancelled in the quotes table and filter, an add-on's
    active/retired and node/card, and a delivery's pending in English; each is worded from its code now."""
    shown = _quotes_and_deliveries(client, alice)
    sign_in(client, alice.user.email)
    catalog = [*filter(None, [*db.scalars(select(GpuType.name)), *db.scalars(select(Sku.notes))])]
    names = sorted({*allowed_names(client), *TRAINING_NAMES, *ADMIN_NAMES, *catalog}, key=len, reverse=True)
    paths = ["/admin/quotes", "/admin/quotes?status=accepted", "/admin/skus/h100-80g-sxm-8x"]
    paths += ["/admin/webhooks/deliveries", shown["delivery"]]
    pages = {path: client.get(f"{path}{'&' if '?' in path else '?'}lang=zh", headers=HTML) for path in paths}
    assert {path: page.status_code for path, page in pages.items()} == dict.fromkeys(paths, 200)
    lone = {path: found for path, page in pages.items() if (found := vocabulary_words(page.text, names))}
    assert not lone, lone
    quotes = pages["/admin/quotes"].text
    assert (
        "<td>已接受</td>" in quotes
        and "<td>已取消</td>" in quotes
        and '<option value="expired">已过期</option>' in quotes
    )
    assert '<option value="accepted" selected>已接受</option>' in pages["/admin/quotes?status=accepted"].text
    english = client.get("/admin/quotes?lang=en", headers=HTML).text
    assert "<td>accepted</td>" in english and '<option value="expired">expired</option>' in english


def test_the_admin_pages_stay_english_by_default_and_switch_language(client: TestClient, alice: Admin) -> None:
    csrf_of(client.get("/admin/login").text)
    sign_in(client, alice.user.email)
    english = client.get("/admin/skus", headers=HTML).text
    assert '<a href="/admin/quotes">Quotes</a>' in english and 'href="/admin/skus?lang=zh"' in english
    chinese = client.get("/admin/skus?lang=zh", headers=HTML).text
    assert '<a href="/admin/quotes?lang=zh">报价</a>' in chinese and '<html lang="zh-CN">' in chinese
    by_header = client.get("/admin/skus", headers={**HTML, "accept-language": "zh-CN,zh;q=0.9"}).text
    assert "新建 SKU" in by_header


def test_every_after_change_message_is_worded_in_both_languages() -> None:
    """A ?msg= code the admin redirects to has its text in each language (app/text/i18n_admin.py `admin_msg_<code>`)."""
    from app.admin.pages import MESSAGES
    from app.text.i18n import EN, ZH

    for code in MESSAGES:
        assert f"admin_msg_{code}" in EN and f"admin_msg_{code}" in ZH, code
        assert EN[f"admin_msg_{code}"] != ZH[f"admin_msg_{code}"], code


def _sku_form(client: TestClient, lang: str, csrf: str) -> tuple[str, dict[str, str]]:
    """The 8-GPU H100 SKU's edit page address in `lang` and its form as the page holds it (its current version)."""
    url = f"/admin/skus/h100-80g-sxm-8x?lang={lang}"
    page = client.get(url, headers=HTML).text
    version = re.search(r'name="version" value="(\d+)"', page)
    assert version, page[:2000]
    fields = {
        "csrf_token": csrf, "version": version.group(1), "name": "8x H100 80G SXM NVSwitch server",
        "gpu": "h100-80g-sxm", "rental_unit": "node", "gpus_per_node": "8", "card_counts": "8",
        "intra_node_link": "nvlink4", "regions": "shenzhen",
    }  # fmt: skip
    return url, fields


def _refused_sku_forms(client: TestClient, lang: str, csrf: str) -> dict[str, str]:
    """The SKU edit page refusing a server of 0 GPUs, and a price with a fraction of a fen."""
    url, fields = _sku_form(client, lang, csrf)
    fields |= {"gpus_per_node": "0"}
    edit = client.post(url, data=fields, headers=HTML)
    price = client.post(
        f"/admin/skus/h100-80g-sxm-8x/prices?lang={lang}",
        data={"csrf_token": csrf, "amount": "30000.005", "currency": "CNY", "version": "1"},
        headers=HTML,
    )
    # refused by the catalog's own rules: a link the estimator has no figures for, a monthly discount above the annual
    links = {
        **fields,
        "gpus_per_node": "8",
        "intra_node_link": "warp",
        "discount_monthly": "50",
        "discount_annual": "10",
    }
    catalog = client.post(url, data=links, headers=HTML)
    assert (edit.status_code, price.status_code, catalog.status_code) == (422, 422, 422), (
        edit.text[:2000], price.text[:2000], catalog.text[:2000],
    )  # fmt: skip
    return {"edit": edit.text, "price": price.text, "catalog": catalog.text}


def test_refused_sku_forms_are_chinese(client: TestClient, db: Session, alice: Admin) -> None:
    """A refused edit: the summary, pydantic's field error, the SKU's status and the unsaved fields' labels, and a
    price's decimal places, all from the catalog (R8); in English the same codes read as English."""
    csrf = sign_in(client, alice.user.email)
    catalog = [*filter(None, [*db.scalars(select(GpuType.name)), *db.scalars(select(Sku.notes))]), "shenzhen"]
    ids = [*intra_node_kinds(), *inter_node_fabrics(), "'warp'"]  # the known links and fabrics, and the one typed
    names = sorted({*allowed_names(client), *TRAINING_NAMES, *catalog, *ids}, key=len, reverse=True)
    zh = _refused_sku_forms(client, "zh", csrf)
    left = {name: runs for name, page in zh.items() if (runs := english_runs(page, names))}
    assert not left, left
    assert "未保存：请修改下列字段。" in zh["edit"] and "Please correct" not in zh["edit"]
    assert "不能小于 1" in zh["edit"] or "必须大于或等于 1" in zh["edit"], zh["edit"]
    assert "· 在售</small>" in zh["edit"] and "<dt>每台服务器 GPU 数</dt>" in zh["edit"]
    assert "30000.005 的小数位超过 CNY 允许的 2 位" in zh["price"]
    assert "未知的 GPU 互连 &#39;warp&#39;" in zh["catalog"] and "月付折扣（50 %）高于年付折扣（10 %）" in zh["catalog"]
    en = _refused_sku_forms(client, "en", csrf)
    assert "Not saved: correct the fields below." in en["edit"] and "<dt>GPUs per server</dt>" in en["edit"]
    assert "30000.005 has more than 2 decimal places for CNY" in en["price"]
    assert "unknown link &#39;warp&#39;" in en["catalog"] and "above the annual term&#39;s (10 %)" in en["catalog"]


def test_refused_card_counts_gpu_type_and_retirement_are_chinese(client: TestClient, db: Session, alice: Admin) -> None:
    """The SKU form's card-count and GPU-type refusals and the unticked retirement read in the page's language, from
    their codes (app/text/i18n_admin.py `admin_err_<code>`), the same codes worded in English on an English page."""
    csrf = sign_in(client, alice.user.email)
    catalog = [*filter(None, [*db.scalars(select(GpuType.name)), *db.scalars(select(Sku.notes))]), "shenzhen"]
    names = sorted({*allowed_names(client), *TRAINING_NAMES, *catalog, "'tpu-v9'"}, key=len, reverse=True)
    pages = {}
    for lang in ("zh", "en"):
        url, fields = _sku_form(client, lang, csrf)
        fields |= {"gpus_per_node": "16", "card_counts": "6, 3, 32"}
        shape = client.post(url, data=fields, headers=HTML)
        gpu = client.post(url, data={**fields, "gpu": "tpu-v9", "gpus_per_node": "8", "card_counts": "8"}, headers=HTML)
        retire = client.post(
            f"/admin/skus/h100-80g-sxm-8x/retire?lang={lang}", data={"csrf_token": csrf, "version": "1"}, headers=HTML
        )
        assert (shape.status_code, gpu.status_code, retire.status_code) == (422, 422, 422), (lang, shape.text[:2000])
        pages[lang] = {"shape": shape.text, "gpu": gpu.text, "retire": retire.text}
    left = {name: runs for name, page in pages["zh"].items() if (runs := english_runs(page, names))}
    assert not left, left
    assert "须互不相同且按递增顺序排列" in pages["zh"]["shape"] and "最多容纳 8 块 GPU" in pages["zh"]["shape"]
    assert "未知的 GPU 型号 &#39;tpu-v9&#39;" in pages["zh"]["gpu"] and "请勾选" in pages["zh"]["retire"]
    assert "must be distinct and in increasing order" in pages["en"]["shape"]
    assert "SXM boards are partitioned in 1, 2, 4 or 8 GPUs" in pages["en"]["shape"]
    assert (
        "unknown GPU type &#39;tpu-v9&#39;" in pages["en"]["gpu"] and "tick the box to confirm" in pages["en"]["retire"]
    )


# --- refusals the admin meets when someone else got there first (409) or a form is malformed: each entry worded from
# its code (app/text/i18n_admin.py `admin_err_<code>`), the page's summary too; before, "already taken", "changed since
# your version", "the SKU is at version 2, not 1", "Wrong email or password." read in English on the Chinese pages


def _conflicts(client: TestClient, alice: Admin, bob: Admin, lang: str) -> dict[str, str]:
    """The admin pages' refusals in `lang`: a taken id, edits based on a version someone else changed (a SKU, its
    availability, an add-on, a maintenance hold), a version the SKU never had, a hold or SKU that is not there,
    malformed numbers and codes, a stale CSRF token, a token without a name, a key without scopes, a wrong
    password."""
    pages = {"wrong password": client.post(
        f"/admin/login?lang={lang}",
        data={"email": alice.user.email, "password": "wrong", "csrf_token": csrf_of(client.get("/admin/login").text)},
        headers=HTML,
    )}  # fmt: skip
    csrf = sign_in(client, alice.user.email)
    url, fields = _sku_form(client, lang, csrf)
    sku = "/admin/skus/h100-80g-sxm-8x"
    version = int(fields["version"])
    assert client.patch("/admin/api/skus/h100-80g-sxm-8x", headers=bob.headers, json={"version": version,
        "notes": "bob"}).status_code == 200  # fmt: skip
    pages["stale sku"] = client.post(url, data=fields, headers=HTML)
    pages["no such version"] = client.post(url, data={**fields, "version": str(version + 5)}, headers=HTML)
    new = {**fields, "id": "h100-80g-sxm-8x", "amount": "1000", "currency": "CNY"}
    pages["id taken"] = client.post(f"/admin/skus/new?lang={lang}", data=new, headers=HTML)
    at = f"{sku}/availability/singapore?lang={lang}"
    pages["no availability yet"] = client.post(at, data={"csrf_token": csrf, "version": "3", "units_available": "5"})
    assert client.post(at, data={"csrf_token": csrf, "version": "", "units_available": "5"}).status_code == 200
    pages["stale availability"] = client.post(at, data={"csrf_token": csrf, "version": "", "units_available": "6"})
    pages["not whole"] = client.post(at, data={"csrf_token": csrf, "version": "x", "units_available": "y"})
    addon = {"csrf_token": csrf, "version": "", "code": "infiniband-400g", "name": "IB", "amount": "100",
             "currency": "CNY", "per_unit": "node", "status": "active"}  # fmt: skip
    pages["add-on exists"] = client.post(f"{sku}/addons?lang={lang}", data=addon, headers=HTML)
    pages["add-on code"] = client.post(f"{sku}/addons?lang={lang}", data={**addon, "code": "Bad Code"}, headers=HTML)
    start = date.today() + timedelta(days=5)
    hold = {"csrf_token": csrf, "version": "", "region": "singapore", "starts_on": str(start),
            "ends_on": str(start + timedelta(days=2)), "units": "1", "note": ""}  # fmt: skip
    assert client.post(f"{sku}/holds?lang={lang}", data=hold, headers=HTML).status_code == 200
    pages["hold exists"] = client.post(f"{sku}/holds?lang={lang}", data=hold, headers=HTML)
    pages["stale hold"] = client.post(f"{sku}/holds/delete?lang={lang}", data={**hold, "version": "7"}, headers=HTML)
    gone = {**hold, "version": "1", "starts_on": str(start + timedelta(days=1))}
    pages["no such hold"] = client.post(f"{sku}/holds/delete?lang={lang}", data=gone, headers=HTML)
    pages["csrf"] = client.post(
        f"/admin/tokens?lang={lang}", data={"csrf_token": "stale", "name": "sync"}, headers=HTML
    )
    pages["no such sku"] = client.get(f"/admin/skus/no-such-sku?lang={lang}", headers=HTML)
    pages["token name"] = client.post(f"/admin/tokens?lang={lang}", data={"csrf_token": csrf, "name": ""})
    key = {"csrf_token": csrf, "name": "crm", "organisation": "Acme Sales"}
    pages["key scopes"] = client.post(f"/admin/keys?lang={lang}", data=key, headers=HTML)
    statuses = {name: page.status_code for name, page in pages.items()}
    assert statuses == {
        "wrong password": 401, "stale sku": 409, "no such version": 409, "id taken": 409, "no availability yet": 409,
        "stale availability": 409, "not whole": 422, "add-on exists": 409, "add-on code": 422, "hold exists": 409,
        "stale hold": 409, "no such hold": 404, "csrf": 403, "no such sku": 404, "token name": 422, "key scopes": 422,
    }  # fmt: skip
    return {name: page.text for name, page in pages.items()}


def test_conflicts_and_malformed_forms_read_in_chinese(
    client: TestClient, db: Session, alice: Admin, bob: Admin
) -> None:
    zh = _conflicts(client, alice, bob, "zh")
    catalog = [*filter(None, [*db.scalars(select(GpuType.name)), *db.scalars(select(Sku.notes))])]
    own = ("bob@example.com", "Bad Code")  # the other admin, the code typed
    # the tokens' and keys' prefixes are random characters of their secrets ("Wi-pJR" read as two English words)
    prefixes = [*db.scalars(select(ApiToken.prefix)), *db.scalars(select(ApiKey.prefix))]
    names = sorted({*allowed_names(client), *TRAINING_NAMES, *ADMIN_NAMES, *catalog, *API_SCOPES, *own, *prefixes},
                   key=len, reverse=True)  # fmt: skip
    left = {name: runs for name, page in zh.items() if (runs := english_runs(page, names))}
    assert not left, left
    assert "未保存：自你打开此页以来内容已被修改" in zh["stale sku"] and "由 bob@example.com 于" in zh["stale sku"]
    assert "自你的版本以来已被修改" in zh["stale sku"] and "已被占用" in zh["id taken"]
    assert "该 SKU 当前为版本" in zh["no such version"] and "版本和数量必须是整数" in zh["not whole"]
    assert "已存在（版本 1）" in zh["add-on exists"] and "{&#39;" not in zh["add-on exists"]  # no dict dumped
    assert "邮箱或密码错误。" in zh["wrong password"] and "1 到 100 个字符" in zh["token name"]
    assert "此字段为必填项" in zh["key scopes"] and "List should have" not in zh["key scopes"]
    assert "没有从" in zh["no such hold"] and "CSRF 令牌缺失或有误" in zh["csrf"]
    assert "这里没有内容" in zh["no such sku"] and '<html lang="zh-CN">' in zh["no such sku"]  # was JSON


def test_the_same_conflicts_read_in_english(client: TestClient, alice: Admin, bob: Admin) -> None:
    en = _conflicts(client, alice, bob, "en")
    assert "Not saved: this changed since you opened the page." in en["stale sku"]
    assert "changed since your version" in en["stale sku"] and "changed by bob@example.com at" in en["stale sku"]
    assert "already taken" in en["id taken"] and "Wrong email or password." in en["wrong password"]
    assert "already exists at version 1, but the request sent version null" in en["add-on exists"]
    assert "no maintenance hold of h100-80g-sxm-8x in singapore" in en["no such hold"]
    assert "CSRF token is missing or wrong" in en["csrf"]
    assert "is at version 1, not 7" in en["stale hold"] and "version and units must be whole numbers" in en["not whole"]


def test_terms_units_and_audit_entries_are_worded_in_chinese(client: TestClient, alice: Admin) -> None:
    """Review R8: the Chinese SKU list read "annual 20 %, monthly 0 %" and "2800.00 CNY / card"; the audit log showed
    `api_key.create` and field names such as `scopes` (one English word at a time, which the two-word detector above
    lets through)."""
    csrf = sign_in(client, alice.user.email)
    key = {"csrf_token": csrf, "name": "crm", "organisation": "Acme Sales", "scopes": ["quotes:write"]}
    assert client.post("/admin/keys?lang=zh", data=key, headers=HTML).status_code == 201
    price = {"amount": "2900.00", "currency": "CNY", "version": 1}
    assert (
        client.post("/admin/api/skus/a100-40g-pcie-card/prices", headers=alice.headers, json=price).status_code == 201
    )
    skus = client.get("/admin/skus?lang=zh", headers=HTML).text
    assert "年付 20 %、月付 0 %" in skus and "2900.00 CNY / 张" in skus and "/ 台" in skus
    assert not re.search(r"annual \d|monthly \d|/ card|/ node", skus)
    edit = client.get("/admin/skus/a100-40g-pcie-card?lang=zh", headers=HTML).text
    assert "2800.00 CNY / 张" in edit
    audit = client.get("/admin/audit?lang=zh", headers=HTML).text.split("<tbody>")[1]
    assert '<td title="api_key.create">签发 API 密钥</td>' in audit
    assert '<td title="price.create">新价格</td>' in audit
    assert '<th scope="row" title="scopes">权限范围</th>' in audit
    english = client.get("/admin/audit?lang=en", headers=HTML).text
    assert '<td title="api_key.create">API key issued</td>' in english
    assert "2900.00 CNY / card" in client.get("/admin/skus?lang=en", headers=HTML).text


def test_a_webhook_deliverys_page_is_chinese(client: TestClient, db: Session, alice: Admin) -> None:
    """The one admin page the page list above leaves out: a delivery with its attempts (the status words alone were
    checked on it, not the page's sentences)."""
    shown = _quotes_and_deliveries(client, alice)
    sign_in(client, alice.user.email)
    page = client.get(f"{shown['delivery']}?lang=zh", headers=HTML)
    assert page.status_code == 200, page.text[:2000]
    delivery = client.get(f"/admin/api{shown['delivery'].removeprefix('/admin')}", headers=alice.headers).json()
    # webhook-id: the Standard Webhooks header the page names as it is sent, and its value (random letters)
    names = [*allowed_names(client), *TRAINING_NAMES, *ADMIN_NAMES, "webhook-id", delivery["message_id"]]
    names = sorted(set(names), key=len, reverse=True)
    assert english_runs(page.text, names) == []
