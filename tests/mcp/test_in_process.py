"""The MCP server in process, on the test's rolled-back transaction (SQLite and PostgreSQL): the SDK's in-memory
client runs every tool with the REST numbers, refusals are the REST problems, and a keyed POST /mcp issues its
quote in the key's organisation."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from fastapi.testclient import TestClient
from mcp.client import Client
from mcp.server.context import ServerRequestContext
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from app.apikeys.schemas import ApiKeyCreate
from app.apikeys.service import issue_key
from app.common.jsonguard import NO_NUL
from app.common.settings import Settings
from app.mcp.server import Caller, build_server
from app.quotes.models import Quote
from tests.mcp.helpers import CUSTOMER, RECOMMEND, check_tools_match_rest, problem_of, without_per_quote
from tests.quotes.helpers import a100_body

HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.fixture()
def test_sessions(db: Session) -> sessionmaker[Session]:
    """Sessions on the test's connection, inside its transaction (their commits release savepoints)."""
    return sessionmaker(bind=db.connection(), join_transaction_mode="create_savepoint", expire_on_commit=False)


@pytest.fixture()
def caller(app_settings: Settings, test_sessions: sessionmaker[Session]) -> Caller:
    return Caller(settings=app_settings, open_session=test_sessions, client="in-process")


def _in_memory(caller: Caller) -> Client:
    def caller_of(_ctx: ServerRequestContext[Any, Any]) -> Caller:
        return caller

    return Client(build_server(caller_of))


def test_every_tool_answers_what_rest_answers(client: TestClient, caller: Caller) -> None:
    async def scenario() -> None:
        async with _in_memory(caller) as session:
            await check_tools_match_rest(session, client, headers={})

    anyio.run(scenario)


def test_refusals_are_the_rest_problems(client: TestClient, caller: Caller) -> None:
    bad_recommend = {**RECOMMEND, "tokens": -1}
    bad_quote = {**a100_body(), "sku_id": "no-such-sku"}
    bad_sku = {"model": {"preset": "llama-2-7b"}, "hardware": {"sku": "nope-sku", "nodes": 1}}  # review R7-5

    async def scenario() -> list[dict[str, Any]]:
        async with _in_memory(caller) as session:
            return [
                problem_of(await session.call_tool("recommend", bad_recommend)),
                problem_of(await session.call_tool("create_quote", bad_quote)),
                problem_of(await session.call_tool("estimate", bad_sku)),
                problem_of(await session.call_tool("get_quote", {"public_id": "no-such-quote"})),
                problem_of(await session.call_tool("get_quote", {})),
                problem_of(await session.call_tool("no_such_tool", {})),
                problem_of(await session.call_tool("get_quote", {"public_id": "a\u0000b"})),
            ]

    recommend, quote, sku, missing, empty, unknown, nul = anyio.run(scenario)
    assert recommend == client.post("/recommend", json=bad_recommend).json()
    assert quote == client.post("/quotes", json=bad_quote).json()
    assert sku == client.post("/estimate", json=bad_sku).json()
    assert (sku["status"], sku["errors"][0]["field"], sku["errors"][0]["type"]) == (422, "hardware.sku", "sku_unknown")
    assert missing == client.get("/quotes/no-such-quote").json()
    assert (empty["status"], empty["errors"][0]["field"]) == (422, "public_id")
    assert unknown["status"] == 404 and "create_quote" in unknown["detail"]
    assert nul["errors"] == [
        {"field": "public_id", "message": NO_NUL, "type": "nul_character"}
    ]  # app.common.jsonguard's


@pytest.fixture()
def keyed_client(client: TestClient, test_sessions: sessionmaker[Session]) -> Iterator[TestClient]:
    """The app's own sessions (POST /mcp's key check, its tools) on the test's transaction too."""
    app: Any = client.app
    app.state.sessionmaker = test_sessions
    yield client


def test_a_keyed_post_issues_the_quote_in_the_keys_organisation(
    keyed_client: TestClient, db: Session, app_settings: Settings
) -> None:
    secret = app_settings.api_key_secret.get_secret_value()
    data = ApiKeyCreate(name="assistant", organisation="Acme Sales", scopes=["quotes:write", "quotes:read"])
    key = issue_key(db, data=data, created_by="test", secret=secret).key
    db.flush()
    keyed = {**HEADERS, "Authorization": f"Bearer {key}"}
    body = {**a100_body(), "customer": CUSTOMER}
    message = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "create_quote", "arguments": body}}
    answer = keyed_client.post("/mcp", json=message, headers=keyed)
    assert answer.status_code == 200, answer.text
    assert answer.json()["id"] == 7
    quote = answer.json()["result"]["structuredContent"]
    row = db.scalars(select(Quote).where(Quote.public_id == quote["id"])).one()
    assert row.organisation == "Acme Sales"
    rest = keyed_client.post("/quotes", json=body, headers={"Authorization": f"Bearer {key}"})
    assert rest.status_code == 201, rest.text
    assert without_per_quote(quote) == without_per_quote(rest.json())
    listing = {"jsonrpc": "2.0", "id": 8, "method": "tools/list"}
    tools = keyed_client.post("/mcp", json=listing, headers=keyed).json()["result"]["tools"]
    assert [tool["name"] for tool in tools] == ["create_quote", "get_quote"]  # its scopes' tools
    recommend = {**message, "params": {"name": "recommend", "arguments": RECOMMEND}}
    assert keyed_client.post("/mcp", json=recommend, headers=keyed).status_code == 403


def test_a_key_lists_and_calls_only_the_tools_of_its_scopes(caller: Caller) -> None:
    reader = Caller(
        caller.settings, caller.open_session, "in-process", organisation="Acme", scopes=frozenset({"quotes:read"})
    )

    async def scenario() -> tuple[list[str], dict[str, Any]]:
        async with _in_memory(reader) as session:
            listed = [tool.name for tool in (await session.list_tools()).tools]
            return listed, problem_of(await session.call_tool("recommend", RECOMMEND))

    listed, refused = anyio.run(scenario)
    assert listed == ["get_quote"]
    assert refused["status"] == 403 and "'recommend'" in refused["detail"]
