"""The customer's quote in headless Chromium: from the results to a printable page with a PDF link,
a print button, a way back and an accept button whose confirmation page accepts it; the document
speaks the customer's language (model name, tokens in millions, time to finish, one month)."""

from __future__ import annotations

import re
from urllib.parse import urlparse

import httpx
import pytest

from tests.web.browser import screenshot

QUOTE_PRINT = re.compile(r"/quotes/([A-Za-z0-9_-]{32})/print\?lang=(en|zh)$")


def _issue(page, live_server: str, lang: str) -> str:
    page.goto(f"{live_server}/results?preset=llama-3-8b&task=lora&tokens_b=0.1&lang={lang}")
    with page.expect_navigation():
        page.click("ol.options article.option >> nth=0 >> a.button.primary")
    page.fill("#f-name", "Li Wei")
    page.fill("#f-company", "Shenzhen Compute")
    page.fill("#f-email", "li.wei@example.com")
    with page.expect_navigation():
        page.click("form.quote-form button[type=submit]")
    match = QUOTE_PRINT.search(page.url)
    assert match, page.url
    return match.group(1)


def test_the_printable_quote_has_pdf_print_back_and_accept(live_server: str, page) -> None:
    quote_id = _issue(page, live_server, "en")
    text = page.inner_text("main")
    assert "Llama 3 8B" in text and "100 million tokens" in text and "LoRA fine-tune" in text
    assert re.search(r"Time to finish\s+about \d+ (h|min)", text), text
    assert "preset" not in text and "100000000" not in text and "1 months" not in text and "1 GPUs" not in text
    screenshot(page, "quote-en.png")
    pdf_href = page.get_attribute("a[href$='.pdf?lang=en']", "href")
    pdf = httpx.get(f"{live_server}{pdf_href}", timeout=60)
    assert (pdf.status_code, pdf.headers["content-type"]) == (200, "application/pdf")
    assert page.is_visible("button[data-print]")
    assert page.get_attribute("nav.toolbar a >> nth=0", "href") == "/?lang=en"
    with page.expect_navigation():
        page.click("text=Accept this quote")
    assert urlparse(page.url).path == f"/quote/{quote_id}/accept"
    number = httpx.get(f"{live_server}/quotes/{quote_id}", timeout=10).json()["number"]
    assert number in page.inner_text("h1") and "CNY" in page.inner_text("main")
    screenshot(page, "quote-accept.png")
    with page.expect_navigation():
        page.click("button[type=submit]")
    assert QUOTE_PRINT.search(page.url)
    assert "Accepted on" in page.inner_text("main")
    assert httpx.get(f"{live_server}/quotes/{quote_id}", timeout=10).json()["status"] == "accepted"
    # Accepting again from a stale confirmation page says why instead of failing.
    page.goto(f"{live_server}/quote/{quote_id}/accept?lang=en")
    assert "can no longer be accepted" in page.inner_text("main")


def test_the_json_accept_api_is_unchanged(live_server: str, page) -> None:
    quote_id = _issue(page, live_server, "en")
    response = httpx.post(f"{live_server}/quotes/{quote_id}/accept", timeout=10)
    assert response.status_code == 200 and response.json()["status"] == "accepted"


def test_the_chinese_quote_reads_in_chinese(live_server: str, page) -> None:
    _issue(page, live_server, "zh")
    text = page.inner_text("main")
    assert "月付，1 个月" in text and "1 月数" not in text
    assert "1亿 token" in text and "LoRA 微调" in text and "完成时间" in text
    screenshot(page, "quote-zh.png")
    assert page.inner_text("text=接受报价")


def test_without_javascript_the_quote_can_still_be_accepted(live_server: str, page_no_js) -> None:
    quote_id = _issue(page_no_js, live_server, "en")
    assert not page_no_js.is_visible("button[data-print]")
    with page_no_js.expect_navigation():
        page_no_js.click("text=Accept this quote")
    with page_no_js.expect_navigation():
        page_no_js.click("button[type=submit]")
    assert httpx.get(f"{live_server}/quotes/{quote_id}", timeout=10).json()["status"] == "accepted"


@pytest.mark.parametrize(
    ("lang", "expected"), [("en", "Your name: This field is required."), ("zh", "姓名：此字段为必填项。")]
)
def test_an_empty_name_gets_a_human_message_naming_the_field(live_server: str, page, lang: str, expected: str) -> None:
    page.goto(f"{live_server}/quote?preset=llama-3-8b&task=lora&tokens_b=0.1&option=1&lang={lang}")
    page.fill("#f-email", "li.wei@example.com")
    with page.expect_navigation():
        page.click("form.quote-form button[type=submit]")
    assert page.inner_text(".error-summary li") == expected
    assert "String should have" not in page.inner_text("main")
