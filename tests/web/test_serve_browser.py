"""The "serve a model" path in headless Chromium against a real server: the page shows exactly what
POST /recommend with task "serving" answers, in English and Chinese."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import httpx

from tests.web.browser import screenshot


def test_serve_a_model_from_the_form(live_server: str, page) -> None:
    page.goto(f"{live_server}/?lang=en")
    with page.expect_navigation():
        page.click("a[href='/serve?lang=en']")
    page.select_option("#f-preset", "llama-3.1-8b")
    page.fill("#f-requests_per_s", "10")
    page.fill("#f-tpot_ms", "60")
    screenshot(page, "serve-form.png")
    with page.expect_navigation():
        page.click("form.serve-form button[type=submit]")
    query = parse_qs(urlparse(page.url).query)
    assert urlparse(page.url).path == "/serve/results" and query["requests_per_s"] == ["10"]
    body = {
        "model": {"preset": "llama-3.1-8b"},
        "task": "serving",
        "precision": "bf16",
        "weights": "bf16",
        "kv_cache_precision": "bf16",
        "serving": {"input_tokens": 1024, "output_tokens": 256, "requests_per_s": 10, "peak_factor": 1.5,
                    "slo": {"ttft_ms": 2000, "tpot_ms": 60}},
    }  # fmt: skip
    api = httpx.post(f"{live_server}/recommend", json=body, timeout=60).json()
    shown = page.eval_on_selector_all(
        "ol.serve-options.options article.serve-option",
        """els => els.map(e => ({sku: e.dataset.sku, gpus: e.dataset.gpus,
            command: e.querySelector('pre.launch code').textContent,
            kv: e.querySelectorAll('svg.memory-bar rect.mem-kv_cache').length}))""",
    )
    assert [(s["sku"], int(s["gpus"])) for s in shown] == [(o["sku"]["id"], o["total_gpus"]) for o in api["options"]]
    assert all(s["kv"] == 1 for s in shown)
    assert [s["command"] for s in shown] == [o["launch"]["command"] for o in api["options"]]
    screenshot(page, "serve-results.png")
    results_url = page.url
    with page.expect_navigation():
        page.click("a.lang-switch")
    assert "每百万输出 token" in page.inner_text("ol.serve-options.options")
    # Quote the cheapest deployment from its card: the printable quote names the SKU and the customer.
    page.goto(results_url)
    with page.expect_navigation():
        page.click("ol.serve-options.options article.serve-option >> nth=0 >> a:has-text('Request a quote')")
    assert urlparse(page.url).path == "/serve/quote"
    page.fill("#f-name", "Li Wei")
    page.fill("#f-email", "li.wei@example.com")
    with page.expect_navigation():
        page.click("form.quote-form button[type=submit]")
    assert "/print" in page.url
    text = page.inner_text("body")
    assert "Li Wei" in text and api["options"][0]["sku"]["id"] in text
