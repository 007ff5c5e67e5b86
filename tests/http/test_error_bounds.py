"""A 422 is bounded like the request is (review R4-7: a 1 MB body of 60,000 unknown keys came back as a 5.2 MB
problem listing 60,000 errors, after 0.9 s): `errors[]` lists at most MAX_FIELD_ERRORS and counts the rest in
`errors_omitted`, a field path is cut like a message, and an object with more unknown members than that is one
error, before pydantic builds one per member."""

from __future__ import annotations

import json

from fastapi.testclient import TestClient
from pydantic import ValidationError

from app.common.errors import DETAIL_ERRORS, MAX_FIELD_ERRORS, MAX_MESSAGE_CHARS, InvalidInput, app_error_response
from app.mcp.tools import problem_of
from tests.http.conftest import Echo

JSON = {"content-type": "application/json"}
RECOMMEND = {"model": {"preset": "llama-3.1-8b"}, "task": "lora", "tokens": 1e8}


def test_60000_unknown_keys_are_one_error_in_a_small_answer(client: TestClient) -> None:
    body = json.dumps({**RECOMMEND, **{f"k{i}": i for i in range(60_000)}}).encode()
    assert len(body) > 990_000  # the review's body, within MAX_BODY_BYTES
    response = client.post("/recommend", content=body, headers=JSON)
    assert response.status_code == 422, response.text[:500]
    assert len(response.content) < 1000  # before: 5,209,183 bytes
    problem = response.json()
    assert [(e["field"], e["type"]) for e in problem["errors"]] == [("body", "extra_forbidden")]
    assert "60000 members" in problem["errors"][0]["message"]
    assert "errors_omitted" not in problem


def test_a_few_unknown_keys_are_still_named_one_by_one(client: TestClient) -> None:
    typos = {f"k{i}": i for i in range(MAX_FIELD_ERRORS)}
    response = client.post("/recommend", json={**RECOMMEND, **typos})
    assert response.status_code == 422
    assert [e["field"] for e in response.json()["errors"]] == list(typos)


def test_an_answer_lists_at_most_20_errors_and_counts_the_rest(probe_client: TestClient) -> None:
    body = {"items": ["a"] * 10, **{f"k{i}": i for i in range(MAX_FIELD_ERRORS)}}  # 10 + 20 + `x` missing
    response = probe_client.post("/probe/echo", json=body)
    assert response.status_code == 422
    problem = response.json()
    assert len(problem["errors"]) == MAX_FIELD_ERRORS  # before: all 31
    assert problem["errors_omitted"] == 31 - MAX_FIELD_ERRORS
    assert problem["detail"].count(": ") == DETAIL_ERRORS


def test_a_huge_unknown_key_is_not_echoed_back(probe_client: TestClient) -> None:
    response = probe_client.post("/probe/echo", json={"x": 1, "k" * 100_000: 1})
    assert response.status_code == 422
    assert len(response.json()["errors"][0]["field"]) == MAX_MESSAGE_CHARS
    assert len(response.content) < 1500  # before: 200 KB, the key in `errors` and in `detail`


def test_a_domain_422_and_an_mcp_tool_error_are_capped_alike() -> None:
    errors = [{"field": f"rows.{i}", "message": "bad", "type": "value_error"} for i in range(50)]
    rendered = json.loads(app_error_response(InvalidInput("rows: bad", errors=errors)).body)
    assert (len(rendered["errors"]), rendered["errors_omitted"]) == (MAX_FIELD_ERRORS, 30)
    try:
        Echo.model_validate({"items": ["a"] * 10, **{f"k{i}": i for i in range(MAX_FIELD_ERRORS)}})
    except ValidationError as exc:
        tool_problem = problem_of(exc)
    assert (len(tool_problem["errors"]), tool_problem["errors_omitted"]) == (MAX_FIELD_ERRORS, 11)
