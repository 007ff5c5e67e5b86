"""Every error path answers RFC 9457 problem+json with a stable type, and hostile input is a 4xx, never a 500."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient
from pydantic import ValidationError, field_validator

from app.common.errors import PROBLEM_BASE, field_errors
from app.common.jsonguard import Refusal, parse_body
from app.common.schemas import RequestModel
from app.text import messages
from app.text.field_words import plain_message
from app.text.input_words import SHOULD_BE
from tests.openapi import openapi_document

JSON = {"content-type": "application/json"}
PROBLEM = "application/problem+json"


def _problem(response, status: int, type_: str) -> dict:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == PROBLEM
    body = response.json()
    assert body["type"] == PROBLEM_BASE + type_
    assert body["status"] == status
    assert "Traceback" not in response.text
    return body


def test_404_unknown_path(probe_client: TestClient) -> None:
    body = _problem(probe_client.get("/no/such/path"), 404, "not-found")
    assert body == {"type": PROBLEM_BASE + "not-found", "title": "Not found", "status": 404, "detail": "Not Found"}


def test_404_domain_error(probe_client: TestClient) -> None:
    body = _problem(probe_client.get("/probe/missing"), 404, "not-found")
    assert body["detail"] == "No such thing."


def test_405_keeps_allow_header(probe_client: TestClient) -> None:
    response = probe_client.delete("/probe/echo")
    _problem(response, 405, "method-not-allowed")
    assert response.headers["allow"] == "POST"


def test_422_has_field_errors(probe_client: TestClient) -> None:
    body = _problem(probe_client.post("/probe/echo", json={"x": "abc", "items": [1] * 11}), 422, "invalid-input")
    assert [(e["field"], e["type"]) for e in body["errors"]] == [("x", "float_parsing"), ("items", "too_long")]


def test_422_never_echoes_the_input(probe_client: TestClient) -> None:
    secret = "s3cr3t-" + "y" * 5000
    response = probe_client.post("/probe/echo", json={"x": secret})
    _problem(response, 422, "invalid-input")
    assert "s3cr3t" not in response.text
    assert len(response.content) < 1000


def test_unknown_fields_are_refused(probe_client: TestClient) -> None:
    body = _problem(probe_client.post("/probe/echo", json={"x": 1, "typo": 2}), 422, "invalid-input")
    assert body["errors"] == [{"field": "typo", "message": "Extra inputs are not permitted", "type": "extra_forbidden"}]


def test_500_hides_the_stack_trace(probe_client: TestClient) -> None:
    response = probe_client.get("/probe/boom")
    body = _problem(response, 500, "internal")
    assert body["detail"] == "An unexpected error occurred; it has been logged."
    assert "secret-internal-detail" not in response.text
    assert "RuntimeError" not in response.text
    assert response.headers["x-request-id"]
    assert response.headers["x-content-type-options"] == "nosniff"


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e400", "-1e400"])
def test_non_finite_numbers_are_422(probe_client: TestClient, literal: str) -> None:
    response = probe_client.post("/probe/echo", content=f'{{"x": {literal}}}'.encode(), headers=JSON)
    body = _problem(response, 422, "invalid-input")
    assert body["errors"] == [{"field": "x", "message": "Input should be a finite number", "type": "finite_number"}]


def test_malformed_json_is_422_without_position_as_field(probe_client: TestClient) -> None:
    body = _problem(probe_client.post("/probe/echo", content=b'{"x":', headers=JSON), 422, "invalid-input")
    assert body["errors"] == [{"field": "body", "message": "JSON decode error", "type": "json_invalid"}]


@pytest.mark.parametrize(
    "body",
    [b"[" * 10_000 + b"]" * 10_000, b'{"x": ' * 10_000 + b"1" + b"}" * 10_000],
    ids=["nested-arrays", "nested-objects"],
)
def test_deeply_nested_json_is_422(probe_client: TestClient, body: bytes) -> None:
    response = probe_client.post("/probe/echo", content=body, headers=JSON)
    assert _problem(response, 422, "invalid-input")["errors"][0]["type"] == "json_too_deep"


def test_invalid_utf8_is_422_naming_the_body(probe_client: TestClient) -> None:
    """Before: 400 "There was an error parsing the body", no field named (tests/http/test_body_checks.py too)."""
    response = probe_client.post("/probe/echo", content=b'{"x": "\xff\xfe"}', headers=JSON)
    assert _problem(response, 422, "invalid-input")["errors"][0]["field"] == "body"


@pytest.mark.parametrize(
    "content_type",
    [
        "text/plain",
        "application/xml",
        "application/octet-stream",
        # review R4-13: a form was a 422 "body: Input should be a valid dictionary…" while text was a 415
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "text/json",  # FastAPI parses application/json and application/*+json only
        None,  # a body of no declared type
    ],
)
def test_a_body_of_any_other_type_than_json_is_415(probe_client: TestClient, content_type: str | None) -> None:
    headers = {"content-type": content_type} if content_type else {}
    for body in (b'{"x": 1}', b"x=1"):
        response = probe_client.post("/probe/echo", content=body, headers=headers)
        _problem(response, 415, "unsupported-media-type")


def test_a_json_body_of_a_json_subtype_or_none_at_all_is_not_415(probe_client: TestClient) -> None:
    merge = probe_client.post(
        "/probe/echo", content=b'{"x": 1}', headers={"content-type": "application/merge-patch+json"}
    )
    assert merge.status_code == 200, merge.text
    missing = _problem(probe_client.post("/probe/echo"), 422, "invalid-input")  # no body, no type: missing
    assert missing["errors"][0]["field"] == "body"


def test_the_pages_forms_are_not_415(client: TestClient) -> None:
    """Form routes (the wizard's, the admin's) take urlencoded bodies as before: only JSON routes answer 415."""
    for path, form in (
        ("/admin/login", {"email": "nobody@example.com", "password": "wrong"}),
        ("/quote/no-such-quote/accept", {"lang": "en"}),
        ("/admin/keys", {"name": "n" * 300}),  # a form field past its max_length: the form's own error
    ):
        response = client.post(path, data=form, follow_redirects=False)
        assert response.status_code != 415 and response.status_code < 500, (path, response.text)


def test_20_mb_body_is_413_without_echo(probe_client: TestClient) -> None:
    payload = b'{"x": "' + b"a" * (20 * 1024 * 1024) + b'"}'
    response = probe_client.post("/probe/echo", content=payload, headers=JSON)
    body = _problem(response, 413, "payload-too-large")
    assert body["detail"] == "The request body is larger than the limit of 1048576 bytes."
    assert len(response.content) < 500


# The same hostile bodies against every real POST/PUT/PATCH route the app has (estimate, quotes, …).
_HOSTILE = {
    "nan": b'{"x": NaN}',
    "infinity": b'{"x": Infinity}',
    "1e400": b'{"x": 1e400}',
    "nested": b"[" * 10_000 + b"]" * 10_000,
    "bad-utf8": b'{"x": "\xff"}',
    "not-json": b"not json at all",
    "array": b"[1, 2, 3]",
}


def _body_routes() -> list[tuple[str, str]]:
    """Every operation of the OpenAPI schema that takes a JSON body (path parameters filled with "1")."""
    schema = openapi_document()
    out = []
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            if "application/json" in operation.get("requestBody", {}).get("content", {}):
                out.append((method.upper(), re.sub(r"\{[^}]+\}", "1", path)))
    return out


BODY_ROUTES = _body_routes()


def test_the_app_has_json_body_routes_to_check() -> None:
    assert {("POST", "/estimate"), ("POST", "/recommend"), ("POST", "/quotes")} <= set(BODY_ROUTES)


@pytest.mark.parametrize(("method", "path"), BODY_ROUTES)
@pytest.mark.parametrize("kind", sorted(_HOSTILE))
def test_real_routes_answer_hostile_json_with_4xx(client: TestClient, method: str, path: str, kind: str) -> None:
    response = client.request(method, path, content=_HOSTILE[kind], headers=JSON)
    assert 400 <= response.status_code < 500, (method, path, kind, response.status_code, response.text[:300])
    if response.headers["content-type"].startswith("application/json") or "problem" in response.headers["content-type"]:
        assert response.headers["content-type"] == PROBLEM, (method, path, kind)


def _patterns(node: object) -> set[str]:
    """Every `pattern` a schema or parameter of the OpenAPI document declares."""
    if isinstance(node, dict):
        own = {node["pattern"]} if isinstance(node.get("pattern"), str) else set()
        return own.union(*(_patterns(child) for child in node.values()))
    if isinstance(node, list):
        return set().union(*(_patterns(child) for child in node))
    return set()


def test_every_pattern_of_the_api_says_what_it_allows_in_both_languages() -> None:
    """Review R13: a pattern mismatch answered pydantic's "String should match pattern '^\\d{1,12}(\\.\\d{1,4})?$'".
    A new pattern-constrained field fails here until app/text/input_words.py words it."""
    patterns = _patterns(openapi_document())
    assert r"^\d{1,12}(\.\d{1,4})?$" in patterns  # the walk finds them (the admin price's amount)
    for lang in ("en", "zh"):
        assert patterns <= set(messages.PATTERNS[lang]), (lang, patterns - set(messages.PATTERNS[lang]))
    for pattern in patterns:
        err = {"type": "string_pattern_mismatch", "msg": f"String should match pattern '{pattern}'"}
        err["ctx"] = {"pattern": pattern}
        for lang in ("en", "zh"):
            assert plain_message(err, lang) == SHOULD_BE[lang].format(allowed=messages.PATTERNS[lang][pattern])
            assert pattern not in plain_message(err, lang)


def test_a_validators_refusal_reads_without_pydantics_prefix() -> None:
    """Review R13: "Value error, a term discount is between 0 and 90 percent" reached the user."""

    class Body(RequestModel):
        x: int

        @field_validator("x")
        @classmethod
        def _small(cls, x: int) -> int:
            raise ValueError("x is at most 3")

    with pytest.raises(ValidationError) as caught:
        Body.model_validate({"x": 5})
    assert field_errors(caught.value.errors()) == [{"field": "x", "message": "x is at most 3", "type": "value_error"}]


def test_a_duplicate_key_is_a_422_naming_it() -> None:
    """Review R14: `{"task": "lora", "task": "pretrain"}` was sized as pretrain without a word."""
    body = b'{"model": {"preset": "llama-3.1-8b"}, "task": "lora", "task": "pretrain", "tokens": 1e6}'
    with pytest.raises(Refusal) as caught:
        parse_body(body)
    assert (caught.value.field, caught.value.type, caught.value.params) == ("task", "duplicate_key", {"key": "task"})
    assert caught.value.message == messages.BODY_REFUSALS["en"]["duplicate_key"].format(key="task")
    assert (
        messages.BODY_REFUSALS["zh"]["duplicate_key"].format(key="task").startswith("键 'task' 在同一对象中出现了两次")
    )
    with pytest.raises(Refusal) as nested:
        parse_body(b'{"serving": {"slo": {"ttft_ms": 1, "tpot_ms": 2}}, "x": [{"a": 1, "a": 1}]}')
    assert nested.value.field == "x.0.a"
    assert parse_body(b'{"a": {"k": 1}, "b": {"k": 1}}') == {"a": {"k": 1}, "b": {"k": 1}}  # one key per object


@pytest.mark.parametrize(("method", "path"), BODY_ROUTES)
def test_every_json_route_refuses_a_duplicate_key(client: TestClient, method: str, path: str) -> None:
    response = client.request(method, path, content=b'{"x": 1, "x": 2}', headers=JSON)
    body = _problem(response, 422, "invalid-input")
    assert body["errors"] == [
        {
            "field": "x",
            "message": messages.BODY_REFUSALS["en"]["duplicate_key"].format(key="x"),
            "type": "duplicate_key",
            "params": {"key": "x"},
        }
    ], (method, path)


def test_recommend_refuses_a_second_task(client: TestClient) -> None:
    body = b'{"model":{"preset":"llama-3.1-8b"},"task":"lora","task":"pretrain","tokens":1e6}'
    response = client.post("/recommend", content=body, headers=JSON)
    assert _problem(response, 422, "invalid-input")["errors"][0]["field"] == "task"
