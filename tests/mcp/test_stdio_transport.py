"""`gpu-sizer mcp` (`python -m app mcp`): the MCP server over stdio, started by the SDK's own stdio client as an
MCP host (Claude Desktop) starts it, listing the tools and running recommend, create_quote and get_quote, each
result equal to the REST answer of a server on the same database."""

from __future__ import annotations

import anyio
import httpx2
import pytest

from tests.mcp.helpers import RECOMMEND, check_tools_match_rest, problem_of, stdio_session
from tests.servers import LiveServerFactory, migrate_and_seed, scratch_database


def test_the_sdk_client_runs_the_tools_over_stdio_with_the_rest_numbers(
    tmp_path_factory: pytest.TempPathFactory, live_server_factory: LiveServerFactory
) -> None:
    with scratch_database("sqlite", tmp_path_factory, "mcp_stdio") as url:
        migrate_and_seed(url)

        async def scenario(base: str) -> None:
            with httpx2.Client(base_url=base, timeout=60) as rest:
                async with stdio_session(url) as session:
                    await check_tools_match_rest(session, rest, headers={})
                    for bad in ({"model": {"preset": "nope"}}, {**RECOMMEND, "tokens": -1, "colour": "red"}):
                        refused = problem_of(await session.call_tool("recommend", bad))
                        assert refused["status"] == 422 and refused["errors"], refused
                        assert refused == rest.post("/recommend", json=bad).json()  # the route's own problem

        with live_server_factory(database_url=url, prepare="none") as live:
            anyio.run(scenario, live.base)
