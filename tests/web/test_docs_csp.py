"""Swagger UI at /docs really runs under the strict Content-Security-Policy (issue 9), in Chromium."""

from __future__ import annotations


def test_swagger_ui_renders_without_csp_violations(live_server: str, page) -> None:
    messages: list[str] = []
    page.on("console", lambda message: messages.append(message.text))
    page.on("pageerror", lambda error: messages.append(str(error)))
    response = page.goto(f"{live_server}/docs")
    assert "script-src 'self'" in response.headers["content-security-policy"]
    page.wait_for_selector(".opblock-summary-path", timeout=20_000)
    paths = page.eval_on_selector_all(".opblock-summary-path", "els => els.map(e => e.dataset.path)")
    assert {"/estimate", "/recommend", "/catalog/skus"} <= set(paths)
    assert [m for m in messages if "Content Security Policy" in m or "Refused" in m] == []
