"""One serving journey in headless Chromium: after "Find deployments" the answer (how many servers, the
peak rate it is sized for, which target binds) is what the viewport shows first, on a desktop and a
phone; the form to change the request follows it, folded."""

from __future__ import annotations

import pytest

from tests.web.browser import new_page

VIEWPORTS = {"desktop": (1280, 900), "phone": (375, 667)}


@pytest.mark.parametrize("viewport", sorted(VIEWPORTS))
def test_serving_answer_is_in_the_first_screen(live_server: str, chromium: object, viewport: str) -> None:
    width, height = VIEWPORTS[viewport]
    page = new_page(chromium, width=width, height=height)
    try:
        page.goto(f"{live_server}/serve?lang=en")
        page.select_option("#f-preset", "llama-3.1-8b")
        page.fill("#f-requests_per_s", "20")
        page.fill("#f-ttft_ms", "1000")
        with page.expect_navigation():
            page.click("form.serve-form button[type=submit]")
        assert page.evaluate("window.scrollY") == 0
        answer = page.locator("p.serve-answer")
        box = answer.bounding_box()
        assert box is not None and box["y"] + box["height"] <= height, (viewport, box)
        first = page.locator("ol.serve-options.options article.serve-option").first.bounding_box()
        assert first is not None and first["y"] < height, (viewport, first)
        text = answer.inner_text()
        assert "server" in text and "30 requests/s at peak" in text and "20 requests/s × 1.5" in text
        binds = page.locator("p.serve-binds").inner_text()
        assert any(word in binds for word in ("TTFT", "TPOT", "Throughput", "Memory")), binds
        # The form follows the results, folded, and still submits the same request.
        assert page.locator("details.change-request form.serve-form").count() == 1
        form_box = page.locator("details.change-request").bounding_box()
        assert form_box is not None and form_box["y"] > first["y"]
    finally:
        page.context.close()
