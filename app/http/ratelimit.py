"""Rate limiting middleware (pure ASGI) for the configured paths: 429 problem+json with Retry-After.

Only unsafe methods (POST, PUT, PATCH, DELETE) on the listed paths count; the key is the client
address (behind a proxy, uvicorn's --proxy-headers makes that the real client's address).
"""

from __future__ import annotations

from anyio import to_thread
from starlette.types import ASGIApp, Receive, Scope, Send

from app.errors import http_problem
from app.http.metrics import RATE_LIMITED
from app.ratelimit.service import RateLimiter

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


class RateLimitMiddleware:
    def __init__(self, app: ASGIApp, *, per_minute: int, paths: list[str]) -> None:
        self.app = app
        self.paths = frozenset(path.rstrip("/") or "/" for path in paths)
        self.limiter = RateLimiter(limit=per_minute)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "").rstrip("/") or "/"
        if scope["type"] != "http" or scope["method"] in SAFE_METHODS or path not in self.paths:
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
        await http_problem(429, detail, headers=headers)(scope, receive, send)
