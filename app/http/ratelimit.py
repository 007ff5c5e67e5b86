"""Rate limiting middleware (pure ASGI) for the configured paths: 429 with Retry-After.

On the API paths only unsafe methods (POST, PUT, PATCH, DELETE) count; on the pages every request
counts, GETs included, because the wizard's result pages run the planner from their query string. The
key is the client address (behind a proxy, uvicorn's --proxy-headers makes that the real client's
address). The refusal is problem+json, or the site's HTML error page for a browser on a page.
"""

from __future__ import annotations

from collections.abc import Iterable

from anyio import to_thread
from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from app.error_pages import error_page, wants_html
from app.errors import http_problem
from app.http.metrics import RATE_LIMITED
from app.ratelimit.service import RateLimiter

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


class RateLimitMiddleware:
    def __init__(self, app: ASGIApp, *, per_minute: int, paths: Iterable[str], pages: Iterable[str] = ()) -> None:
        self.app = app
        self.paths = frozenset(path.rstrip("/") or "/" for path in paths)
        self.pages = frozenset(path.rstrip("/") or "/" for path in pages)
        self.limiter = RateLimiter(limit=per_minute)

    def _counts(self, scope: Scope, path: str) -> bool:
        if scope["type"] != "http" or scope["method"] == "OPTIONS":
            return False
        return path in self.pages or (path in self.paths and scope["method"] not in SAFE_METHODS)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "").rstrip("/") or "/"
        if not self._counts(scope, path):
            await self.app(scope, receive, send)
            return
        client = (scope.get("client") or ("unknown", 0))[0]
        engine = scope["app"].state.engine
        decision = await to_thread.run_sync(self.limiter.hit, engine, f"{path}|{client}")
        if decision.allowed:
            await self.app(scope, receive, send)
            return
        RATE_LIMITED.labels(path).inc()
        detail = f"Too many requests to {path}; try again in {decision.retry_after_s} s."
        headers = {"Retry-After": str(decision.retry_after_s), "RateLimit-Limit": str(self.limiter.limit)}
        request = Request(scope)
        if path in self.pages and wants_html(request):
            response = error_page(request, 429, message=detail)
            response.headers.update(headers)
            await response(scope, receive, send)
            return
        await http_problem(429, detail, headers=headers)(scope, receive, send)
