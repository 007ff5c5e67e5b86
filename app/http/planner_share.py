"""A fair share of the planner per client (pure ASGI): at most PLANNER_SEARCHES_PER_CLIENT requests that run the
planner in flight per client in this worker process; another from the same client meanwhile is refused at once, 429
with `Retry-After: 1`, before its body is read.

The rate limit (app.http.ratelimit) counts requests a minute, not their cost: a plan search may take up to
PLANNER_TIME_BUDGET_MS (3 s), so one client sending 20 at once within its 600 a minute kept both workers' cores busy
and another client's 10 ms /estimate waited 6.5 s (review R6-1). With this cap a client runs at most
PLANNER_SEARCHES_PER_CLIENT searches per worker and every other client's requests share the cores with them.

The client is the API key it presents (a digest of the `Authorization: Bearer gsk_…` token: no database read on
the hot path; a token that is no live key runs nothing, its route answers 401) or else its address. Counted in this
process only: the cap is per worker, so `serve --workers N` lets a client run N × the cap at most.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from app.apikeys import service as apikeys_service
from app.common.errors import http_problem
from app.delivery.error_pages import error_page, wants_html
from app.http.ratelimit import entries, match

RETRY_AFTER_S = 1  # a search ends within PLANNER_TIME_BUDGET_MS (3 s); most in well under a second


def client_of(scope: Scope) -> str:
    """The API key a request presents (a digest of its token), else the client's address."""
    for name, value in scope.get("headers", ()):
        if name == b"authorization":
            key = apikeys_service.bearer_key(value.decode("latin-1"))
            if key is not None:
                return "key|" + hashlib.sha256(key.encode()).hexdigest()[:24]
    return "addr|" + str((scope.get("client") or ("unknown", 0))[0])


class PlannerShareMiddleware:
    def __init__(self, app: ASGIApp, *, per_client: int, paths: Iterable[str]) -> None:
        self.app = app
        self.per_client = per_client
        self.paths = entries(paths)
        self.running: dict[str, int] = {}  # touched only on the event loop: no lock

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "").rstrip("/") or "/" if scope["type"] == "http" else ""
        if scope["type"] != "http" or scope["method"] == "OPTIONS" or match(path, *self.paths) is None:
            await self.app(scope, receive, send)
            return
        client = client_of(scope)
        running = self.running.get(client, 0)
        if running >= self.per_client:
            await self._refuse(scope, receive, send, running)
            return
        self.running[client] = running + 1
        try:
            await self.app(scope, receive, send)
        finally:
            left = self.running[client] - 1
            if left:
                self.running[client] = left
            else:
                del self.running[client]

    async def _refuse(self, scope: Scope, receive: Receive, send: Send, running: int) -> None:
        detail = (
            f"This client already has {running} plan searches running on this server process (at most "
            f"{self.per_client} at once); retry when one has finished."
        )
        headers = {"Retry-After": str(RETRY_AFTER_S)}
        request = Request(scope)
        if scope["method"] == "GET" and wants_html(request):
            response = error_page(request, 429, message=detail)
            response.headers.update(headers)
            await response(scope, receive, send)
            return
        await http_problem(429, detail, headers=headers)(scope, receive, send)
