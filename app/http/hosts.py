"""Trusted hosts (pure ASGI): a request whose Host header is not listed gets a 400 problem+json.

Entries are exact host names, `*.example.com` for subdomains, or `*` for any host.
"""

from __future__ import annotations

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from app.common.errors import http_problem


class TrustedHostMiddleware:
    def __init__(self, app: ASGIApp, *, allowed_hosts: list[str]) -> None:
        self.app = app
        self.allow_any = "*" in allowed_hosts
        self.exact = frozenset(h.lower() for h in allowed_hosts if not h.startswith("*"))
        self.suffixes = tuple(h[1:].lower() for h in allowed_hosts if h.startswith("*."))

    def allows(self, host: str) -> bool:
        host = host.lower()
        # Drop the port; an IPv6 literal keeps its brackets ("[::1]:8000" → "[::1]").
        host = host.split("]", 1)[0] + "]" if host.startswith("[") else host.split(":", 1)[0]
        return self.allow_any or host in self.exact or host.endswith(self.suffixes)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or self.allow_any:
            await self.app(scope, receive, send)
            return
        if self.allows(Headers(scope=scope).get("host", "")):
            await self.app(scope, receive, send)
            return
        await http_problem(400, "The Host header names a host this service does not serve.")(scope, receive, send)
