"""The serving pages' refusals in Chinese, in headless Chromium against a real server (review R5-5): the form's bounds
beside their fields, and a serving quote posted with a hidden field edited to a refused value coming back as the
form, in Chinese, with that field's message (an English 404 "Page not found" before)."""

from __future__ import annotations

from tests.web.test_serve_errors_chinese import OUT_OF_BOUNDS, SERVE

EXPECTED = {"peak_factor": "不能小于 1。", "prefix_cache": "不能大于 1。", "spec_tokens": "不能大于 16。"}


def test_the_serving_forms_bounds_read_in_chinese_beside_their_fields(live_server: str, page) -> None:
    response = page.goto(f"{live_server}{OUT_OF_BOUNDS}")
    assert response is not None and response.status == 422
    for name, words in {**EXPECTED, "spec_acceptance": "必须小于 1。"}.items():
        assert (page.text_content(f"#err-{name}") or "").strip() == words, name
    assert "Input should" not in (page.text_content("main") or "")


def test_a_serving_quote_with_an_edited_hidden_field_is_the_form_again_in_chinese(live_server: str, page) -> None:
    page.goto(f"{live_server}/serve/results?{SERVE}&lang=zh")
    with page.expect_navigation():
        page.click("a[href*='/serve/quote?'][href*='option=1']")
    page.fill("input[name=name]", "Li Wei")
    page.fill("input[name=email]", "li.wei@example.com")
    page.eval_on_selector("input[type=hidden][name=requests_per_s]", "e => { e.value = '0'; }")
    with page.expect_navigation() as navigation:
        page.click("form button[type=submit]")
    assert navigation.value is not None and navigation.value.status == 422
    assert page.get_attribute("html", "lang") == "zh-CN"
    assert (page.text_content("#err-requests_per_s") or "").strip() == "必须大于 0。"
    assert "Page not found" not in (page.text_content("body") or "")
