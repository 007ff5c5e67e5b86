"""POST /mcp: the MCP server over streamable HTTP, a route of the app like any other.

Stateless, with JSON answers: each POST carries its JSON-RPC message and gets its answer in the response, and
no MCP session lives in a worker process, so any worker of `serve --workers N` answers any request (a session
held in one process would be unknown to the others). The SDK's session manager runs in the app's lifespan
(`lifespan` here, entered by app.entry.main).

A request reaches the SDK only after what every route of the app passes: the middleware of app.http (the body
size limit, the body budget per client, the rate limit under the `/mcp` entry of RATE_LIMIT_PATHS, which counts
a keyed request against its key), then its body parsed and checked off the event loop within app.common.jsonguard's
bounds, as app.delivery.bodies does for the JSON API (422 naming the field), then its API key: every message needs
a live key (`Authorization: Bearer gsk_…`, app.apikeys), and a `tools/call` the scope its tool needs (TOOLS: `recommend`
for list_models, list_skus, estimate and recommend, `quotes:write` for create_quote, `quotes:read` for
get_quote). A refusal is the API's 401 or 403 problem+json, the same whether the key is wrong, revoked or expired.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import Any

from anyio import to_thread
from fastapi import APIRouter
from mcp.server.context import ServerRequestContext
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from sqlalchemy.orm import Session
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Message, Receive, Scope, Send

from app.apikeys import service as apikeys_service
from app.apikeys.service import Principal
from app.common.errors import Forbidden
from app.db.engine import SETTINGS
from app.delivery.deps import UnitOfWorkRoute
from app.estimator.vocabulary import API_SCOPES, ApiScope
from app.mcp.server import Caller, build_server
from app.mcp.tools import TOOLS

PATH = "/mcp"
PRINCIPAL = "api_key"  # request.state: the Principal of the request's API key
MANAGER = "mcp_sessions"  # app.state: the SDK's session manager, made in the lifespan


def _tool_names(message: Any) -> set[str]:
    """The tools a JSON-RPC message (or a batch of them) calls."""
    messages = message if isinstance(message, list) else [message]
    return {
        str(item["params"].get("name"))
        for item in messages
        if isinstance(item, dict) and item.get("method") == "tools/call" and isinstance(item.get("params"), dict)
    }


def required_scopes(message: Any) -> set[ApiScope]:
    """The scopes the tools a message calls need; an unknown tool needs `recommend` (the SDK answers it)."""
    return {TOOLS[name].scope if name in TOOLS else "recommend" for name in _tool_names(message)}


def _principal(session: Session, header: str | None, scopes: set[ApiScope]) -> Principal:
    """The live key holding every scope in `scopes`; with none asked (initialize, tools/list), any live key."""
    if scopes:
        return [apikeys_service.authenticate(session, header, scope) for scope in sorted(scopes)][-1]
    for scope in API_SCOPES[:-1]:
        with suppress(Forbidden):  # live (a dead key is Unauthorized), only without this scope: try the next
            return apikeys_service.authenticate(session, header, scope)
    return apikeys_service.authenticate(session, header, API_SCOPES[-1])


def authorize(request: Request, message: Any) -> Principal:
    """The principal of the request's live API key, holding every scope its tool calls need (Unauthorized,
    Forbidden otherwise). A message that calls no tool (initialize, tools/list) needs a live key of any scope."""
    session: Session = request.app.state.sessionmaker()
    session.info[SETTINGS] = request.app.state.settings
    try:
        principal = _principal(session, request.headers.get("authorization"), required_scopes(message))
        session.commit()  # the key's last-used touch
        return principal
    finally:
        session.close()


def _replay(body: bytes, receive: Receive) -> Receive:
    """`receive` giving the body already read, once, then what the client sends next (its disconnect)."""
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if sent:
            return await receive()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replayed


class SdkAnswer(Response):
    """The SDK's own answer: its session manager reads the request (its body replayed) and writes the response
    straight to the client, in place of a response the route would render."""

    def __init__(self, manager: StreamableHTTPSessionManager, body: bytes) -> None:
        super().__init__()
        self.manager, self.request_body = manager, body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.manager.handle_request(scope, _replay(self.request_body, receive), send)


router = APIRouter(tags=["mcp"], route_class=UnitOfWorkRoute)


@router.post(PATH, include_in_schema=False, response_class=Response)
async def mcp(request: Request) -> Response:
    """Streamable HTTP (docs/integrations.md#mcp). Not in OpenAPI: a JSON-RPC endpoint whose schemas are MCP's
    (the tools' own are in `tools/list`). GET and DELETE have nothing to serve without MCP sessions: 405."""
    try:
        # app.delivery.bodies: parsed and checked off the event loop, 422 naming the field
        message = await request.json()
    except ValueError:  # not JSON: the SDK answers with its JSON-RPC parse error, once the key is checked
        message = None
    setattr(request.state, PRINCIPAL, await to_thread.run_sync(authorize, request, message))
    return SdkAnswer(getattr(request.app.state, MANAGER), await request.body())


def _caller_of(ctx: ServerRequestContext[Any, Any]) -> Caller:
    """A call's settings and sessions are its app's; its client the key's organisation, or its address."""
    request = ctx.request
    if not isinstance(request, Request):  # pragma: no cover - the SDK hands every HTTP call its request
        raise RuntimeError("an MCP call over HTTP came without its request")
    principal: Principal = getattr(request.state, PRINCIPAL)
    address = request.client.host if request.client else "unknown"
    return Caller(
        settings=request.app.state.settings,
        open_session=request.app.state.sessionmaker,
        client=address,
        organisation=principal.organisation,
        scopes=principal.scopes,
    )


@asynccontextmanager
async def lifespan(app: Starlette) -> AsyncIterator[None]:
    """Runs the SDK's session manager (its task group) for as long as the app serves."""
    manager = StreamableHTTPSessionManager(
        app=build_server(_caller_of),
        json_response=True,
        stateless=True,
        # The app's TrustedHostMiddleware checks the Host header already (TRUSTED_HOSTS), against the host names
        # it serves rather than the SDK's loopback-only default, and CORS (CORS_ORIGINS) governs browser origins.
        security_settings=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        max_request_body_size=app.state.settings.max_body_bytes,
    )
    setattr(app.state, MANAGER, manager)
    async with manager.run():
        yield
