"""The MCP server (the SDK's low-level `Server`): lists TOOLS and runs them, whatever the transport.

The low-level server, not the SDK's decorator-based MCPServer, because a tool's input schema here is the
JSON schema of a REST request model as it stands (the arguments of `recommend` are POST /recommend's body),
which MCPServer would instead derive from a function's parameters. A call runs its service on a worker thread
(the planner's search is CPU work, the database blocking I/O), never on the event loop.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

from anyio import to_thread
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp_types import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool as McpTool,
    ToolAnnotations,
)
from sqlalchemy.orm import Session, sessionmaker

from app.common.settings import Settings
from app.estimator.vocabulary import ApiScope
from app.mcp.tools import TOOLS, Tool, as_text, input_schema, now, output_schema, problem, problem_of, run_tool

SERVER_NAME = "gpu-sizer"
SERVER_VERSION = "0.1.0"  # the service's version, as pyproject.toml and app.entry.main name it
INSTRUCTIONS = (
    "Sizes, plans and quotes GPU servers for training, fine-tuning and serving large language models. "
    "Call recommend with a workload (a model preset from list_models, a task, tokens), then create_quote with "
    "an option's quote and the customer; get_quote reads a quote's status. Money is a decimal string with "
    "an ISO 4217 currency code; memory is GiB."
)


@dataclass(frozen=True)
class Caller:
    """Where a call runs: the app's settings and sessions, and the client it counts against (quote limits)."""

    settings: Settings
    open_session: sessionmaker[Session]
    client: str
    organisation: str | None = None  # the API key's (app.apikeys): its quotes are that organisation's
    scopes: frozenset[ApiScope] | None = None  # the API key's; None: every tool (stdio)

    def may_call(self, tool: Tool) -> bool:
        return self.scopes is None or tool.scope in self.scopes


CallerOf = Callable[[ServerRequestContext[Any, Any]], Caller]


def _listed(tool: Tool) -> McpTool:
    return McpTool(
        name=tool.name,
        description=tool.description,
        input_schema=input_schema(tool),
        output_schema=output_schema(tool),
        annotations=ToolAnnotations(
            read_only_hint=tool.read_only, destructive_hint=False, idempotent_hint=tool.read_only
        ),
    )


@cache
def _listed_tools() -> dict[str, McpTool]:
    """Every tool as tools/list shows it, built once a process: the JSON schemas of the REST models do not
    change while it runs, and generating them costs tens of milliseconds each time an app starts."""
    return {name: _listed(tool) for name, tool in TOOLS.items()}


def _error(document: dict[str, Any]) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=as_text(document))], is_error=True)


def build_server(caller_of: CallerOf) -> Server[Any]:
    """The server; `caller_of` tells each call's settings, sessions and client (HTTP: the app's; stdio: its own)."""
    listed = _listed_tools()

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], _params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        """The tools the caller may call: an API key's scopes leave out the others (an assistant then never
        tries a tool its key is refused)."""
        caller = caller_of(ctx)
        return ListToolsResult(tools=[listed[name] for name, tool in TOOLS.items() if caller.may_call(tool)])

    async def call_tool(ctx: ServerRequestContext[Any, Any], params: CallToolRequestParams) -> CallToolResult:
        tool = TOOLS.get(params.name)
        if tool is None:
            return _error(problem(404, f"No tool {params.name!r}; the tools are {', '.join(TOOLS)}."))
        caller, arrived_at = caller_of(ctx), now()
        if not caller.may_call(tool):  # refused before this over HTTP (app.mcp.http): a second line of defence
            return _error(problem(403, f"this API key does not have the scope {tool.scope!r} this tool needs"))
        try:
            result = await to_thread.run_sync(
                lambda: run_tool(
                    tool,
                    params.arguments or {},
                    settings=caller.settings,
                    open_session=caller.open_session,
                    client=caller.client,
                    organisation=caller.organisation,
                    arrived_at=arrived_at,
                )
            )
        except Exception as exc:  # every failure is the problem document REST answers (app.mcp.tools.problem_of)
            return _error(problem_of(exc))
        return CallToolResult(content=[TextContent(type="text", text=as_text(result))], structured_content=result)

    def schema_of(name: str) -> dict[str, Any] | None:
        tool = TOOLS.get(name)
        return None if tool is None else input_schema(tool)

    return Server(
        SERVER_NAME,
        version=SERVER_VERSION,
        instructions=INSTRUCTIONS,
        get_tool_input_schema=schema_of,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
