"""Swagger's "Try it out" on POST /recommend and POST /quotes succeeds as shipped, in Chromium:
the example it fills in is a working request (it used to compose a preset, params and an
architecture at once and get a 422). Also the favicon: no console 404 on a page."""

from __future__ import annotations

import pytest

from tests.web.browser import screenshot


@pytest.mark.parametrize(("path", "status"), [("/recommend", "200"), ("/quotes", "201")])
def test_try_it_out_succeeds_with_the_shipped_example(live_server: str, page, path: str, status: str) -> None:
    page.set_default_timeout(60_000)  # Swagger UI is a large script: slow on a loaded machine
    page.goto(f"{live_server}/docs")
    page.wait_for_selector(".opblock-summary-path")
    block = f".opblock-post:has(.opblock-summary-path[data-path='{path}'])"
    page.click(f"{block} .opblock-summary")
    page.click(f"{block} button.try-out__btn")
    page.click(f"{block} button.execute")
    page.wait_for_selector(f"{block} .live-responses-table tbody td.response-col_status", timeout=60_000)
    assert page.inner_text(f"{block} .live-responses-table tbody td.response-col_status").strip().startswith(status)
    if path == "/recommend":
        screenshot(page, "docs-try-it-out.png", max_height=1800)


def test_no_page_logs_a_404(live_server: str, page) -> None:
    failed: list[str] = []
    page.on("response", lambda r: failed.append(r.url) if r.status == 404 else None)
    for path in ("/", "/results?preset=llama-2-7b&task=lora"):
        page.goto(f"{live_server}{path}")
        page.wait_for_load_state("networkidle")
    assert failed == []
