"""A Chinese page refuses in Chinese (review R5-5): the serving form's bounds (pydantic's "Input should be greater than
or equal to 1"), a customer's name past 200 characters on either wizard's quote form ("String should have at most
200 characters") and a serving quote posted with a refused hidden field (an English 404 "Page not found" before) are
worded as the training wizard words them (app/text/field_words.py `pydantic_message`), the last as the form again at
422. SQLite and PostgreSQL."""

from __future__ import annotations

import html
import re

from fastapi.testclient import TestClient

from tests.web.test_serve_chinese import allowed_names, english_runs

HTML = {"accept": "text/html,application/xhtml+xml"}
# The review's query: a peak factor, prefix-cache share, drafted tokens and acceptance each past its bound.
OUT_OF_BOUNDS = (
    "/serve/results?preset=llama-3.1-70b&requests_per_s=5&input_tokens=2000&output_tokens=200&peak_factor=0.1"
    "&prefix_cache=2&spec_method=mtp&spec_tokens=99&spec_acceptance=1&lang=zh"
)
SERVE = "preset=llama-3.1-8b&requests_per_s=10&input_tokens=1000&output_tokens=300"
TRAIN = "preset=llama-3-8b&task=lora&tokens_b=1"
CUSTOMER = {"company": "", "email": "li.wei@example.com", "months": "1"}


def _errors(page_html: str) -> list[str]:
    return [html.unescape(m).strip() for m in re.findall(r'class="[^"]*error[^"]*"[^>]*>([^<]+)<', page_html)]


def _hidden(client: TestClient, results: str, pattern: str) -> dict[str, str]:
    page = client.get(results, headers=HTML)
    link = re.search(pattern, page.text)
    assert link, page.text[:2000]
    form = client.get(html.unescape(link.group(1)), headers=HTML)
    return dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', form.text))


def test_the_serving_forms_bounds_are_worded_in_chinese(client: TestClient) -> None:
    page = client.get(OUT_OF_BOUNDS, headers=HTML)
    assert page.status_code == 422
    errors = _errors(page.text)
    assert {"不能小于 1。", "不能大于 1。", "不能大于 16。", "必须小于 1。"} <= set(errors), errors
    assert not [e for e in errors if "Input should" in e], errors
    assert english_runs(page.text, allowed_names(client)) == []


def test_a_long_customer_name_is_refused_in_chinese_on_both_quote_forms(client: TestClient) -> None:
    forms = {
        "/serve/quote": _hidden(client, f"/serve/results?{SERVE}&lang=zh", r'href="(/serve/quote\?[^"]+option=1)"'),
        "/quote": _hidden(client, f"/results?{TRAIN}&lang=zh", r'href="(/quote\?[^"]+option=1)"'),
    }
    for action, hidden in forms.items():
        posted = client.post(action, data={**hidden, **CUSTOMER, "name": "李" * 300, "lang": "zh"}, headers=HTML)
        assert posted.status_code == 422, (action, posted.status_code)
        errors = _errors(posted.text)
        assert "不能超过 200 个字符。" in errors, (action, errors)
        assert not [e for e in errors if "String should" in e], (action, errors)


def test_a_serving_quote_with_a_refused_hidden_field_is_the_form_again_in_chinese(client: TestClient) -> None:
    hidden = _hidden(client, f"/serve/results?{SERVE}&lang=zh", r'href="(/serve/quote\?[^"]+option=1)"')
    data = {**hidden, **CUSTOMER, "name": "Li Wei", "requests_per_s": "0", "lang": "zh"}
    posted = client.post("/serve/quote", data=data, headers=HTML)
    assert posted.status_code == 422, posted.status_code
    assert '<html lang="zh-CN"' in posted.text and "Page not found" not in posted.text
    assert "必须大于 0。" in _errors(posted.text)
    assert english_runs(posted.text, allowed_names(client)) == []


def test_a_hidden_character_in_a_name_is_refused_in_chinese_on_both_quote_forms(client: TestClient) -> None:
    """Review R5-12's refusal (app.common.schemas `PrintedText`) on the wizards' quote forms: worded in the page's
    language."""
    forms = {
        "/serve/quote": _hidden(client, f"/serve/results?{SERVE}&lang=zh", r'href="(/serve/quote\?[^"]+option=1)"'),
        "/quote": _hidden(client, f"/results?{TRAIN}&lang=zh", r'href="(/quote\?[^"]+option=1)"'),
    }
    for action, hidden in forms.items():
        posted = client.post(action, data={**hidden, **CUSTOMER, "name": "\u202eLi Wei", "lang": "zh"}, headers=HTML)
        assert posted.status_code == 422, (action, posted.status_code)
        assert "不能包含控制字符或双向文本格式字符。" in _errors(posted.text), (action, _errors(posted.text))
