"""An admin's journey in headless Chromium against a real server: the admin shares the site's look
and links back to it, a price change shows in the audit log as a readable diff, the new-price box
suggests the SKU's own price, retiring needs the confirmation box ticked, and cancelling a quote asks
on a confirmation page of its own, JavaScript off (tests/admin/test_confirmations.py: a post without
the box does nothing)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.servers import LiveServerFactory
from tests.web.browser import new_page, screenshot

EMAIL, PASSWORD = "ops@example.com", "correct horse battery staple"
SKU = "h100-80g-sxm-8x"


@pytest.fixture(scope="module")
def admin_server(live_server_factory: LiveServerFactory) -> Iterator[str]:
    admin = (["create-admin", EMAIL, "--password-stdin"], f"{PASSWORD}\n")
    with live_server_factory("admin-web", setup=[admin]) as server:
        yield server.base


def _sign_in(page, base: str) -> None:
    page.goto(f"{base}/admin/login")
    page.fill("input[name=email]", EMAIL)
    page.fill("input[name=password]", PASSWORD)
    with page.expect_navigation():
        page.click("form button[type=submit]")


def test_the_admin_looks_like_the_site_and_links_back(admin_server: str, page) -> None:
    _sign_in(page, admin_server)
    assert page.is_visible("header.site-header a.brand")
    assert page.get_attribute("header.site-header a.brand", "href") == "/"
    assert page.is_visible("a.back-to-site")
    site_bg = page.evaluate("getComputedStyle(document.querySelector('header.site-header')).backgroundColor")
    page.goto(f"{admin_server}/")
    assert page.evaluate("getComputedStyle(document.querySelector('header.site-header')).backgroundColor") == site_bg


def test_a_price_change_reads_as_a_diff_and_retiring_needs_confirmation(admin_server: str, page) -> None:
    _sign_in(page, admin_server)
    page.goto(f"{admin_server}/admin/skus/{SKU}")
    box = "form[action$='/prices'] input[name=amount]"
    assert page.get_attribute(box, "placeholder") == "100000.00"
    page.fill(box, "95000.00")
    with page.expect_navigation():
        page.click("form[action$='/prices'] button[type=submit]")
    page.goto(f"{admin_server}/admin/audit?entity_id={SKU}")
    first = "table.audit > tbody > tr >> nth=0"
    assert page.inner_text(f"{first} >> table.changes th >> nth=0") == "Price / month"  # the field "amount"
    assert page.inner_text(f"{first} >> del >> nth=0") == "100000.00"
    assert page.inner_text(f"{first} >> ins >> nth=0") == "95000.00"
    assert not page.is_visible(f"{first} >> details pre")  # the full record stays folded
    screenshot(page, "admin-audit.png", max_height=900)

    page.goto(f"{admin_server}/admin/skus/{SKU}")
    page.click("button.danger")  # the unticked box stops the browser from sending the form
    assert page.url.endswith(f"/admin/skus/{SKU}") and "active" in page.inner_text("h1")
    page.locator("button.danger").scroll_into_view_if_needed()
    screenshot(page, "admin-retire.png", viewport=True)
    page.check("input[name=confirm]")
    with page.expect_navigation():
        page.click("button.danger")
    assert "retired" in page.inner_text("h1")


def test_cancelling_a_quote_asks_on_a_page_of_its_own_without_javascript(admin_server: str, page_no_js) -> None:
    customer = {"name": "Li Wei", "company": "Shenzhen Compute", "email": "li.wei@example.com"}
    created = httpx.post(
        f"{admin_server}/quotes",
        json={"sku_id": "a100-40g-pcie-card", "quantity": 1, "term": "monthly", "customer": customer},
    )
    assert created.status_code == 201, created.text
    quote = created.json()
    page = page_no_js
    _sign_in(page, admin_server)
    page.goto(f"{admin_server}/admin/quotes")
    with page.expect_navigation():
        page.click(f"a[href='/admin/quotes/{quote['id']}/cancel']")
    assert page.inner_text("h1") == f"Cancel quote {quote['number']}?"
    page.click("button.danger")  # the unticked (required) box stops the browser, script or not
    assert page.url.endswith(f"/admin/quotes/{quote['id']}/cancel")
    screenshot(page, "admin-cancel-quote.png", viewport=True)
    page.check("input[name=confirm]")
    with page.expect_navigation():
        page.click("button.danger")
    assert page.url.endswith("/admin/quotes?msg=cancelled")
    assert httpx.get(f"{admin_server}/quotes/{quote['id']}").json()["status"] == "cancelled"


ADMIN_PAGES = (
    "/admin",
    f"/admin/skus/{SKU}",
    "/admin/skus/new",
    "/admin/audit",
    "/admin/quotes",
    "/admin/keys",
    "/admin/tokens",
    "/admin/capacity",
    "/admin/webhooks",
    "/admin/webhooks/deliveries",
)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_on_a_phone_no_admin_page_scrolls_sideways(admin_server: str, chromium, lang: str) -> None:
    """Review R8: on a 375 px viewport /admin was 485 px wide, /admin/audit 1157, /admin/keys 774, /admin/quotes 609:
    the whole page scrolled sideways. A wide table now scrolls inside a box of its own, the page stays put."""
    page = new_page(chromium, width=375, height=740)
    try:
        _sign_in(page, admin_server)
        page.goto(f"{admin_server}/admin/keys?lang={lang}")
        page.fill("input[name=name]", "Sales desk")
        page.fill("input[name=organisation]", "Shenzhen Compute")
        with page.expect_navigation():
            page.click("form[action='/admin/keys'] button[type=submit]")
        widths = {}
        for path in ADMIN_PAGES:
            page.goto(f"{admin_server}{path}?lang={lang}")
            widths[path] = page.evaluate("document.documentElement.scrollWidth")
        assert widths == dict.fromkeys(ADMIN_PAGES, 375)
        page.goto(f"{admin_server}/admin/audit?lang={lang}")
        box = page.evaluate(
            "(() => { const b = document.querySelector('table.audit').parentElement;"
            " return [b.className, getComputedStyle(b).overflowX, b.clientWidth < b.scrollWidth]; })()"
        )
        assert box == ["table-scroll", "auto", True]  # the audit table is wider than the phone: it scrolls in its box
        screenshot(page, f"admin-audit-phone-{lang}.png", max_height=900)
    finally:
        page.context.close()
