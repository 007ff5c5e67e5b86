"""`gpu-sizer mcp`: the MCP server over stdio, for a client that starts it as a local process (Claude Desktop's
`mcpServers`). It reads and writes the database DATABASE_URL names, as `gpu-sizer serve` does; no API key is
asked for: whoever can start the process can read its database already. Quotes it issues count against the
client "mcp-stdio" (QUOTES_PER_MINUTE)."""

from __future__ import annotations

from typing import Any

import anyio
from mcp.server.context import ServerRequestContext
from mcp.server.stdio import stdio_server

from app.common.settings import Settings
from app.db.engine import build_engine, build_sessionmaker, check_connection
from app.mcp.server import Caller, build_server

STDIO_CLIENT = "mcp-stdio"


async def _serve(settings: Settings) -> None:
    engine = build_engine(settings.database_url)
    try:
        check_connection(engine)
        caller = Caller(settings=settings, open_session=build_sessionmaker(engine), client=STDIO_CLIENT)

        def caller_of(_ctx: ServerRequestContext[Any, Any]) -> Caller:
            return caller

        server = build_server(caller_of)
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
    finally:
        engine.dispose()


def serve_stdio(settings: Settings) -> None:
    """Serve MCP on stdin and stdout until the client closes stdin."""
    anyio.run(_serve, settings)
