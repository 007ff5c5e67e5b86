"""POST /mcp in process: what every route passes first (the body size limit, app.common.jsonguard's bounds, the rate
limit) and the API key after it; the tools' input schemas are the REST request models' own."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from pydantic import ValidationError
from sqlalchemy import text
from sqlalchemy.exc import OperationalError

from app.common.errors import Conflict, NotFound
from app.common.settings import Settings
from app.db.engine import DatabaseUnavailable, build_engine
from app.entry.main import create_app
from app.estimator.specs import EstimatorError
from app.mcp.http import required_scopes
from app.mcp.server import build_server
from app.mcp.tools import TOOLS, input_schema, output_schema, problem_of
from app.planner.schemas import EstimateIn, EstimateOut, RecommendIn, RecommendOut
from app.quotes.schemas import QuoteCreate, QuoteOut
from tests.ratewindow import pin_to_window_start

HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}


def _call(name: str, arguments: Any = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": name, "arguments": arguments or {}}}


def test_the_tools_take_the_rest_request_models_and_answer_the_rest_response_models() -> None:
    models = {name: (tool.input, tool.output) for name, tool in TOOLS.items()}
    assert models["estimate"] == (EstimateIn, EstimateOut)
    assert models["recommend"] == (RecommendIn, RecommendOut)
    assert models["create_quote"] == (QuoteCreate, QuoteOut)
    assert models["get_quote"][1] is QuoteOut
    assert input_schema(TOOLS["recommend"]) == RecommendIn.model_json_schema()
    assert input_schema(TOOLS["list_models"])["properties"] == {}
    assert output_schema(TOOLS["create_quote"])["properties"]["total"]["type"] == "string"  # money: a decimal string
    server = build_server(lambda _ctx: pytest.fail("no call runs here"))
    assert server.get_tool_input_schema is not None
    assert server.get_tool_input_schema("create_quote") == QuoteCreate.model_json_schema()
    assert server.get_tool_input_schema("no_such_tool") is None


def test_each_tool_call_needs_its_scope() -> None:
    assert {name: tool.scope for name, tool in TOOLS.items()} == {
        "list_models": "recommend",
        "list_skus": "recommend",
        "estimate": "recommend",
        "recommend": "recommend",
        "create_quote": "quotes:write",
        "get_quote": "quotes:read",
    }
    assert required_scopes(LIST) == set()
    assert required_scopes(_call("create_quote")) == {"quotes:write"}
    assert required_scopes([_call("get_quote"), _call("recommend")]) == {"quotes:read", "recommend"}  # a batch
    assert required_scopes(_call("no_such_tool")) == {"recommend"}
    assert required_scopes("not an object") == set()


def test_a_refusal_is_the_problem_the_rest_api_answers() -> None:
    with pytest.raises(ValidationError) as invalid:
        RecommendIn.model_validate({"model": {"preset": "llama-2-7b"}, "task": "lora", "tokens": -1})
    refused = problem_of(invalid.value)
    assert (refused["status"], refused["title"], [e["field"] for e in refused["errors"]]) == (
        422,
        "Invalid input",
        ["tokens"],
    )
    assert problem_of(NotFound("no quote x"))["status"] == 404
    assert problem_of(Conflict("taken"))["type"].endswith("/conflict")
    assert problem_of(EstimatorError("too big", field="plan.tp"))["errors"][0]["field"] == "plan.tp"
    assert problem_of(DatabaseUnavailable("down"))["status"] == 503
    assert problem_of(OperationalError("SELECT 1", {}, Exception("locked")))["status"] == 503
    assert problem_of(RuntimeError("bug"))["status"] == 500


def test_posting_without_a_key_is_401_and_other_methods_405(client: TestClient) -> None:
    refused = client.post("/mcp", json=LIST, headers=HEADERS)
    assert refused.status_code == 401 and refused.headers["content-type"] == "application/problem+json"
    assert refused.headers["www-authenticate"] == "Bearer"
    assert client.post("/mcp", json=_call("recommend"), headers=HEADERS).status_code == 401
    assert client.get("/mcp").status_code == 405 and client.delete("/mcp").status_code == 405
    not_json = client.post("/mcp", content=b"{not json", headers=HEADERS)  # the SDK would answer it; the key first
    assert not_json.status_code == 401


def test_mcp_without_a_database_fails_in_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from app.__main__ import main

    monkeypatch.setenv("DATABASE_URL", "postgresql+psycopg://nobody@127.0.0.1:1/none")
    assert main(["mcp"]) == 2
    assert capsys.readouterr().err.startswith("error: ")


def test_a_body_outside_the_json_bounds_is_refused_naming_the_field(client: TestClient) -> None:
    deep: Any = 1
    for _ in range(40):
        deep = [deep]
    too_deep = client.post("/mcp", json=_call("recommend", {"model": deep}), headers=HEADERS)
    assert too_deep.status_code == 422, too_deep.text
    assert too_deep.json()["errors"][0]["field"].startswith("params.arguments.model.0.0")
    nul = client.post("/mcp", content=json.dumps(_call("get_quote", {"public_id": "a\u0000"})), headers=HEADERS)
    assert nul.status_code == 422 and nul.json()["errors"][0]["field"] == "params.arguments.public_id"
    big = client.post("/mcp", content=b'{"x": "' + b"a" * (1024 * 1024) + b'"}', headers=HEADERS)
    assert big.status_code == 413


@pytest.fixture()
def limited(database_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[TestClient, str]]:
    """An app with the default rate-limited paths at 2 a minute, and a client address of this test's own."""
    pin_to_window_start(monkeypatch)
    host = f"10.9.{uuid.uuid4().int % 250}.{uuid.uuid4().hex[:8]}"
    settings = Settings(database_url=database_url, env="test", rate_limit_per_minute=2)
    with TestClient(create_app(settings), raise_server_exceptions=False, client=(host, 50000)) as client:
        yield client, host
    engine = build_engine(database_url)
    with engine.begin() as connection:
        connection.execute(text("DELETE FROM rate_limit_counters WHERE key LIKE :k"), {"k": f"%|{host}"})
    engine.dispose()


def test_posts_to_mcp_are_rate_limited(limited: tuple[TestClient, str]) -> None:
    client, _ = limited
    statuses = [client.post("/mcp", json=LIST, headers=HEADERS).status_code for _ in range(3)]
    assert statuses == [401, 401, 429]
