"""The MCP server over streamable HTTP (POST /mcp) end to end: a real server on SQLite and on PostgreSQL, the SDK's
own client with an API key listing the tools and running recommend, create_quote and get_quote, each result equal
to the REST answer for the same input; a key without the tool's scope refused (403), no key or a wrong one 401."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import anyio
import httpx2
import pytest

from tests.conftest import BACKENDS
from tests.mcp.helpers import RECOMMEND, check_tools_match_rest, http_session, problem_of, result_of
from tests.servers import ROOT, LiveServerFactory

ADMIN = "ops@example.com"
ANONYMOUS_LIMIT = 5  # POSTs a minute per address and entry; a key has its own limit (600 by default)
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@dataclass(frozen=True)
class Keyed:
    base: str
    keys: dict[str, str]  # name → key: "all" (every scope), "recommend", "reader" (quotes:read only)


def _issue(admin: httpx2.Client, name: str, scopes: list[str]) -> str:
    body = {"name": name, "organisation": "Acme", "scopes": scopes}
    issued = admin.post("/admin/api/keys", json=body)
    assert issued.status_code == 201, issued.text
    key: str = issued.json()["key"]
    return key


@pytest.fixture(scope="module", params=BACKENDS)
def keyed(request: pytest.FixtureRequest, live_server_factory: LiveServerFactory) -> Iterator[Keyed]:
    """A seeded server of its own on two worker processes (MCP over HTTP keeps no session in one), anonymous
    POSTs limited to ANONYMOUS_LIMIT a minute, with an admin's API token that issued three keys."""
    setup = [
        (["create-admin", ADMIN, "--password-stdin"], "a long enough secret\n"),
        (["create-token", ADMIN, "--name", "mcp-tests"], ""),
    ]
    limits = {"RATE_LIMIT_PER_MINUTE": str(ANONYMOUS_LIMIT)}
    with live_server_factory("mcp_http", backend=request.param, setup=setup, workers=2, limits=limits) as live:
        token = live.outputs[-1].strip().splitlines()[-1]
        with httpx2.Client(base_url=live.base, headers={"Authorization": f"Bearer {token}"}) as admin:
            keys = {
                "all": _issue(admin, "assistant", ["recommend", "quotes:write", "quotes:read"]),
                "recommend": _issue(admin, "sizer", ["recommend"]),
                "reader": _issue(admin, "reader", ["quotes:read"]),
            }
            yield Keyed(live.base, keys)


def _call(base: str, key: str | None, name: str, arguments: dict[str, Any]) -> httpx2.Response:
    """One JSON-RPC tools/call, as an MCP client sends it, without the SDK."""
    headers = {**MCP_HEADERS, **({"Authorization": f"Bearer {key}"} if key else {})}
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
    return httpx2.post(f"{base}/mcp", json=message, headers=headers, timeout=60)


def test_the_sdk_client_lists_and_runs_the_tools_with_the_rest_numbers(keyed: Keyed) -> None:
    key = keyed.keys["all"]

    async def scenario() -> None:
        with httpx2.Client(base_url=keyed.base, timeout=60) as rest:
            async with http_session(keyed.base, key) as session:
                await check_tools_match_rest(session, rest, headers={"Authorization": f"Bearer {key}"})

    anyio.run(scenario)


def test_each_tool_needs_its_scope(keyed: Keyed) -> None:
    async def scenario() -> None:
        async with http_session(keyed.base, keyed.keys["recommend"]) as session:
            listed = [tool.name for tool in (await session.list_tools()).tools]  # the tools its scopes allow
            assert listed == ["list_models", "list_skus", "estimate", "recommend"]
            skus = result_of(await session.call_tool("list_skus", {}))
            assert "a100-40g-pcie-card" in {sku["id"] for sku in skus["skus"]}
        async with http_session(keyed.base, keyed.keys["reader"]) as session:  # a key without `recommend`
            assert [tool.name for tool in (await session.list_tools()).tools] == ["get_quote"]
            missing = problem_of(await session.call_tool("get_quote", {"public_id": "no-such-quote"}))
            assert missing["status"] == 404

    anyio.run(scenario)
    refused = _call(keyed.base, keyed.keys["recommend"], "create_quote", {})
    assert refused.status_code == 403 and refused.headers["content-type"] == "application/problem+json"
    assert "quotes:write" in refused.json()["detail"]
    assert _call(keyed.base, keyed.keys["reader"], "recommend", RECOMMEND).status_code == 403
    for key in (None, "gsk_" + "x" * 43, "not a key"):
        unauthorized = _call(keyed.base, key, "list_models", {})
        assert unauthorized.status_code == 401, unauthorized.text
        assert unauthorized.json()["detail"] == "a valid API key is required: Authorization: Bearer <key>"
    allowed = _call(keyed.base, keyed.keys["recommend"], "list_models", {})
    assert allowed.status_code == 200, allowed.text
    assert "llama-2-7b" in {model["id"] for model in allowed.json()["result"]["structuredContent"]["models"]}


def test_a_keyed_client_goes_past_the_anonymous_limit(keyed: Keyed) -> None:
    keyed_statuses = [_call(keyed.base, keyed.keys["recommend"], "list_models", {}).status_code for _ in range(8)]
    assert keyed_statuses == [200] * 8  # counted against the key, not the address
    anonymous = [_call(keyed.base, None, "list_models", {}).status_code for _ in range(2 * ANONYMOUS_LIMIT + 2)]
    assert 429 in anonymous and set(anonymous) == {401, 429}  # (two windows at most, should a minute turn meanwhile)


def _mcp_python_example() -> str:
    text = (ROOT / "docs" / "integrations.md").read_text(encoding="utf-8")
    section = text.split("\n## MCP\n", 1)[1].split("\n## ", 1)[0]
    (block,) = re.findall(r"^```python\n(.*?)^```", section, re.MULTILINE | re.DOTALL)
    return block


def test_the_python_example_of_the_docs_runs(keyed: Keyed) -> None:
    env = {**os.environ, "GPU_SIZER_URL": keyed.base, "GPU_SIZER_KEY": keyed.keys["all"]}
    result = subprocess.run(
        [sys.executable, "-c", _mcp_python_example()], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    number, total, currency, accept = result.stdout.split()
    assert re.fullmatch(r"Q-\d{4}-\d{6}", number) and currency == "CNY" and accept.endswith("/accept")
