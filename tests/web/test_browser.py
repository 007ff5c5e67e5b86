"""The wizard in headless Chromium against a real server (issue 8's acceptance tests (a)-(e)).

The figures asserted come from the catalog seed (app/catalog/seed_data.py) and, where the planner decides, from
the same request sent to the JSON API `POST /recommend` of the same server: the page must show
exactly what the API answers.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlparse

import httpx
import pytest

from tests.web.browser import new_page, screenshot

QUOTE_PRINT = re.compile(r"/quotes/([A-Za-z0-9_-]{32})/print\?lang=(en|zh)$")


def _recommend(base_url: str, body: dict) -> dict:
    response = httpx.post(f"{base_url}/recommend", json=body, timeout=60)
    assert response.status_code == 200, response.text
    return response.json()


def _fill_wizard(page, *, preset: str, task: str, tokens_b: str | None = None) -> None:
    page.select_option("#f-preset", preset)
    page.select_option("#f-task", task)
    if tokens_b is not None:
        page.fill("#f-tokens_b", tokens_b)


def _submit(page) -> None:
    with page.expect_navigation():
        page.click("form.wizard button[type=submit]")


def _options(page) -> list[dict[str, str]]:
    return page.eval_on_selector_all(
        "ol.options article.option",
        """els => els.map(e => ({sku: e.dataset.sku, gpus: e.dataset.gpus, nodes: e.dataset.nodes,
            monthly: e.querySelector('.money.monthly').textContent.trim(),
            plan: e.querySelector('.plan-summary').textContent.trim(),
            bars: e.querySelectorAll('svg.memory-bar').length,
            segments: e.querySelectorAll('svg.memory-bar rect[class^="mem-"]:not(.mem-track)').length}))""",
    )


def test_a_7b_lora_top_option_is_one_a100_40g_card(live_server: str, page) -> None:
    page.goto(f"{live_server}/?lang=en")
    page.fill("#preset-filter", "llama-2")  # JS filter: only the matching presets stay visible
    visible = page.eval_on_selector_all("#f-preset option", "os => os.filter(o => !o.hidden).map(o => o.value)")
    assert visible == ["llama-2-7b", "llama-2-13b", "llama-2-70b"]
    _fill_wizard(page, preset="llama-2-7b", task="lora")
    screenshot(page, "wizard.png")
    _submit(page)

    query = parse_qs(urlparse(page.url).query)
    assert urlparse(page.url).path == "/results"
    assert query["preset"] == ["llama-2-7b"] and query["task"] == ["lora"] and query["objective"] == ["balanced"]
    top = _options(page)[0]
    assert (top["sku"], top["gpus"], top["nodes"]) == ("a100-40g-pcie-card", "1", "1")
    assert top["monthly"] == "¥2,800.00"
    assert page.inner_text("ol.options article.option >> nth=0 >> .units") == "1 card"
    api = _recommend(live_server, {"model": {"preset": "llama-2-7b"}, "task": "lora"})
    assert top["plan"] == api["options"][0]["plan"]["summary"]
    screenshot(page, "results-7b-lora.png")


def test_b_70b_full_finetune_shows_multi_gpu_plans_and_memory_bars(live_server: str, page) -> None:
    page.goto(f"{live_server}/")
    _fill_wizard(page, preset="llama-2-70b", task="full_finetune", tokens_b="1")
    _submit(page)

    api = _recommend(live_server, {"model": {"preset": "llama-2-70b"}, "task": "full_finetune", "tokens": 1e9})
    shown = _options(page)
    assert len(shown) == len(api["options"]) > 0
    for card, option in zip(shown, api["options"], strict=True):
        assert int(card["gpus"]) == option["total_gpus"] > 1
        assert card["sku"] == option["sku"]["id"]
        assert card["plan"] == option["plan"]["summary"]
        assert card["bars"] == 1
        parts = [
            k
            for k in ("weights", "gradients", "optimizer", "activations", "kv_cache", "other")
            if option["memory"]["per_gpu_gib"][k] > 0
        ]
        assert card["segments"] == len(parts)
    # Every option is a point; a front point that is also an option is drawn once, and the front
    # stops where more money saves no meaningful time (tests/web/test_wizard_journey.py).
    points = page.locator("svg.scatter circle").count()
    assert len(api["options"]) <= points <= len(api["options"]) + len(api["pareto"])
    rejected = page.inner_text("ul.rejected")
    assert "a100-40g-pcie-card" in rejected
    # The time comes with its range (tuned to typical stack) and the GPU-hours with the goodput.
    first = page.locator("article.option").first
    assert first.locator("dd.time-range").is_visible()
    assert "(tuned stack)" in first.locator("dd.time-range").inner_text()
    fast, slow = api["options"][0]["performance"]["gpu_hours_range"]
    shown_hours = first.locator("dd.gpu-hours-range").inner_text()
    assert f"{fast:,.0f}–{slow:,.0f} GPU-hours" in shown_hours and "goodput" in shown_hours
    screenshot(page, "results-70b-full-finetune.png")


def _quote_from_results(page, *, name: str, company: str, email: str) -> str:
    with page.expect_navigation():
        page.click("ol.options article.option >> nth=0 >> a:has-text('Request a quote')")
    assert urlparse(page.url).path == "/quote"
    page.fill("#f-name", name)
    page.fill("#f-company", company)
    page.fill("#f-email", email)
    with page.expect_navigation():
        page.click("form.quote-form button[type=submit]")
    match = QUOTE_PRINT.search(page.url)
    assert match, page.url
    return match.group(1)


def test_c_request_a_quote_lands_on_its_printable_page(live_server: str, page) -> None:
    page.goto(f"{live_server}/results?preset=llama-2-7b&task=lora&lang=en")
    quote_id = _quote_from_results(page, name="Li Wei", company="Shenzhen Compute", email="li.wei@example.com")
    assert page.inner_text("h1").startswith("Quote")
    quote = httpx.get(f"{live_server}/quotes/{quote_id}", timeout=10).json()
    assert (quote["sku"]["id"], quote["quantity"], quote["term"], quote["months"]) == (
        "a100-40g-pcie-card",
        1,
        "monthly",
        1,
    )
    assert quote["total"] == "2800.00"
    assert quote["customer"] == {"name": "Li Wei", "company": "Shenzhen Compute", "email": "li.wei@example.com"}
    assert quote["number"] in page.inner_text("h1")


def test_d_switch_to_chinese_translates_the_results(live_server: str, page) -> None:
    page.goto(f"{live_server}/results?preset=llama-2-7b&task=lora")
    assert page.inner_text("h1") == "Recommended configurations"
    with page.expect_navigation():
        page.click("a.lang-switch")
    assert parse_qs(urlparse(page.url).query)["lang"] == ["zh"]
    assert page.get_attribute("html", "lang") == "zh-CN"
    assert page.inner_text("h1") == "推荐配置"
    first = "ol.options article.option >> nth=0"
    assert page.inner_text(f"{first} >> .costs dt >> nth=0") == "每月"
    assert page.inner_text(f"{first} >> .money.monthly") == "¥2,800.00"
    api = _recommend(live_server, {"model": {"preset": "llama-2-7b"}, "task": "lora"})
    plan = api["options"][0]["plan"]
    recompute = {"none": "", "selective": "选择性激活重计算，", "full": "完整激活重计算，"}[plan["recompute"]]
    assert page.inner_text(f"{first} >> .plan-summary") == f"单卡，无需并行，{recompute}微批 {plan['micro_batch']}"
    assert page.inner_text(f"{first} >> .units") == "1 张卡"
    assert page.inner_text("a.lang-switch") == "English"
    screenshot(page, "results-zh.png")
    # The wizard keeps the language, and so does the next results page.
    page.goto(f"{live_server}/?lang=zh")
    assert page.inner_text("button[type=submit]") == "查看配置"


def test_e_the_whole_flow_works_without_javascript(live_server: str, page_no_js) -> None:
    page = page_no_js
    page.goto(f"{live_server}/")
    assert not page.is_visible("#preset-filter")  # the filter needs JS; the plain list is there
    assert page.is_visible("#f-params_b") and page.is_visible("#f-hf_config")
    _fill_wizard(page, preset="llama-2-7b", task="lora")
    _submit(page)
    top = _options(page)[0]
    assert (top["sku"], top["gpus"], top["monthly"]) == ("a100-40g-pcie-card", "1", "¥2,800.00")
    assert not page.is_visible("button.copy")
    assert "curl -sS -X POST" in page.inner_text("#curl-cmd")
    quote_id = _quote_from_results(page, name="Ana", company="", email="ana@example.com")
    quote = httpx.get(f"{live_server}/quotes/{quote_id}", timeout=10).json()
    assert (quote["sku"]["id"], quote["total"]) == ("a100-40g-pcie-card", "2800.00")


def test_inline_errors_next_to_the_fields(live_server: str, page) -> None:
    page.goto(f"{live_server}/")
    page.check("#f-source-params")
    page.fill("#f-params_b", "lots")
    page.click("details.advanced > summary")  # keyboard users: Enter on the summary
    page.fill("#f-seq_len", "0")
    _submit(page)
    assert page.inner_text("#err-params_b") == "Enter a number, e.g. 2 or 0.1 (billions), or 100M."
    assert page.is_visible("#err-seq_len")  # "advanced" opens itself when it holds an error
    assert page.inner_text("#err-seq_len") == "Must be at least 1."
    assert page.get_attribute("#f-params_b", "aria-invalid") == "true"
    assert page.evaluate("document.activeElement.id") == "error-summary"


@pytest.mark.parametrize("javascript", [True, False])
def test_narrow_screen_labels_and_keyboard(live_server: str, chromium, javascript: bool) -> None:
    page = new_page(chromium, javascript=javascript, width=375, height=800)
    try:
        for path in ("/", "/results?preset=llama-2-70b&task=full_finetune&tokens_b=1"):
            page.goto(f"{live_server}{path}")
            assert page.evaluate("document.documentElement.scrollWidth") <= 375, path
            unlabeled = page.eval_on_selector_all(
                "input:not([type=hidden]), select, textarea",
                "els => els.filter(e => e.labels.length === 0 && !e.getAttribute('aria-label')).map(e => e.id)",
            )
            assert unlabeled == []
        page.goto(f"{live_server}/")
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.className") == "skip-link"
    finally:
        page.context.close()
