"""What the MCP tests share: the inputs, the SDK client's session over either transport, and the comparison of a
tool's result with the REST answer to the same input."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult

from tests.servers import ROOT

TOOL_NAMES = ["list_models", "list_skus", "estimate", "recommend", "create_quote", "get_quote"]
RECOMMEND = {"model": {"preset": "llama-2-7b"}, "task": "lora", "tokens": 100_000_000}
ESTIMATE = {**RECOMMEND, "hardware": {"gpu": "a100-40g-pcie"}}
CUSTOMER = {"name": "Li Wei", "company": "Shenzhen Compute", "email": "li.wei@example.com"}
# A quote's own fields, different for every quote issued: the rest (prices, lines, totals, plan) must match.
PER_QUOTE = {"id", "number", "created_at", "valid_until", "links"}
TIMEOUT_S = 60


@asynccontextmanager
async def http_session(base_url: str, key: str | None) -> AsyncIterator[ClientSession]:
    """The SDK's streamable HTTP client on `base_url`/mcp, sending `key` as a bearer token."""
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=TIMEOUT_S) as http,
        streamable_http_client(f"{base_url}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


@asynccontextmanager
async def stdio_session(database_url: str) -> AsyncIterator[ClientSession]:
    """The SDK's stdio client running `python -m app mcp` on `database_url`."""
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "app", "mcp"], env={"DATABASE_URL": database_url}, cwd=ROOT
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


def result_of(result: CallToolResult) -> dict[str, Any]:
    """A successful tool result's structured content, checked equal to the JSON of its text block."""
    assert not result.is_error, result.content
    structured: dict[str, Any] = result.structured_content
    (block,) = result.content
    assert json.loads(block.text) == structured  # type: ignore[union-attr]
    return structured


def problem_of(result: CallToolResult) -> dict[str, Any]:
    assert result.is_error
    (block,) = result.content
    problem: dict[str, Any] = json.loads(block.text)  # type: ignore[union-attr]
    return problem


def without_search(recommendation: dict[str, Any]) -> dict[str, Any]:
    """A recommendation less its `search` counters, which tell how much of the search the planner's cache of the
    process that ran it answered (another worker's, or the stdio server's, differs), not what it recommends."""
    assert set(recommendation["search"]) >= {"memory_evaluations", "cached_configurations"}
    return {name: value for name, value in recommendation.items() if name != "search"}


def without_per_quote(quote: dict[str, Any]) -> dict[str, Any]:
    return {name: value for name, value in quote.items() if name not in PER_QUOTE}


async def check_tools_match_rest(session: ClientSession, rest: httpx2.Client, *, headers: dict[str, str]) -> None:
    """list the tools, then recommend, create_quote and get_quote, each result equal to REST's for the same input."""
    listed = await session.list_tools()
    assert [tool.name for tool in listed.tools] == TOOL_NAMES
    schemas = {tool.name: tool.input_schema for tool in listed.tools}
    assert schemas["recommend"]["title"] == "RecommendIn" and schemas["create_quote"]["title"] == "QuoteCreate"

    assert result_of(await session.call_tool("list_models", {}))["models"] == rest.get("/models").json()
    assert result_of(await session.call_tool("list_skus", {}))["skus"] == rest.get("/catalog/skus").json()
    estimated = result_of(await session.call_tool("estimate", ESTIMATE))
    assert estimated == rest.post("/estimate", json=ESTIMATE, headers=headers).json()
    assert estimated["memory"]["per_gpu_gib"]["total"] > 0

    recommended = result_of(await session.call_tool("recommend", RECOMMEND))
    rest_recommended = rest.post("/recommend", json=RECOMMEND, headers=headers)
    assert rest_recommended.status_code == 200, rest_recommended.text
    assert without_search(recommended) == without_search(rest_recommended.json())
    assert recommended["options"], "the recommendation has no option to quote"

    body = {**recommended["options"][0]["quote"], "customer": CUSTOMER}
    quoted = result_of(await session.call_tool("create_quote", body))
    rest_quoted = rest.post("/quotes", json=body, headers=headers)
    assert rest_quoted.status_code == 201, rest_quoted.text
    assert quoted["id"] != rest_quoted.json()["id"] and quoted["status"] == "issued"
    assert without_per_quote(quoted) == without_per_quote(rest_quoted.json())
    assert quoted["total"] == rest_quoted.json()["total"] != "0.00"

    read = result_of(await session.call_tool("get_quote", {"public_id": quoted["id"]}))
    assert read == rest.get(f"/quotes/{quoted['id']}").json()
