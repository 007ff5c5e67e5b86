"""Rate limiting middleware (pure ASGI) for the configured paths: 429 with Retry-After.

On the API paths only unsafe methods (POST, PUT, PATCH, DELETE) count; on the pages every request
counts, GETs included, because the wizard's result pages run the planner from their query string and a
quote's PDF is rendered on its first GET. An entry with `*` is an fnmatch pattern (`/quotes/*/accept`; `*` matches any
characters, `/` included): all the paths it matches share one counter per client. The
key is the client address (behind a proxy, uvicorn's --proxy-headers makes that the real client's
address). The refusal is problem+json, or the site's HTML error page for a browser on a page.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from fnmatch import fnmatchcase

from anyio import to_thread
from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from app.error_pages import error_page, wants_html
from app.errors import http_problem
from app.http.metrics import RATE_LIMITED
from app.ratelimit.service import RateLimiter

_PATTERN = re.compile(r"[*?\[]")
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def _entries(paths: Iterable[str]) -> tuple[frozenset[str], tuple[str, ...]]:
    """Exact paths, and fnmatch patterns (`*` matches any characters, `/` included: `/quotes/*/accept`, `/admin/*`)."""
    cleaned = [path.rstrip("/") or "/" for path in paths]
    return frozenset(p for p in cleaned if not _PATTERN.search(p)), tuple(p for p in cleaned if _PATTERN.search(p))


def _match(path: str, exact: frozenset[str], patterns: tuple[str, ...]) -> str | None:
    if path in exact:
        return path
    return next((pattern for pattern in patterns if fnmatchcase(path, pattern)), None)


class RateLimitMiddleware:
    """Counts per client and per configured entry: every quote's PDF shares the `/quotes/*.pdf` counter."""

    def __init__(self, app: ASGIApp, *, per_minute: int, paths: Iterable[str], pages: Iterable[str] = ()) -> None:
        self.app = app
        self.paths = _entries(paths)
        self.pages = _entries(pages)
        self.limiter = RateLimiter(limit=per_minute)

    def entry_for(self, method: str, path: str) -> tuple[str | None, bool]:
        """The configured entry a request counts under (None: not counted), and whether it is a page."""
        path = path.rstrip("/") or "/"
        if method == "OPTIONS":
            return None, False
        page = _match(path, *self.pages)
        if page is not None:
            return page, True
        return (_match(path, *self.paths) if method not in SAFE_METHODS else None), False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        entry, is_page = self.entry_for(scope["method"], scope.get("path", ""))
        if entry is None:
            await self.app(scope, receive, send)
            return
        client = (scope.get("client") or ("unknown", 0))[0]
        engine = scope["app"].state.engine
        decision = await to_thread.run_sync(self.limiter.hit, engine, f"{entry}|{client}")
        if decision.allowed:
            await self.app(scope, receive, send)
            return
        RATE_LIMITED.labels(entry).inc()
        detail = f"Too many requests to {entry}; try again in {decision.retry_after_s} s."
        headers = {"Retry-After": str(decision.retry_after_s), "RateLimit-Limit": str(self.limiter.limit)}
        request = Request(scope)
        if is_page and wants_html(request):
            response = error_page(request, 429, message=detail)
            response.headers.update(headers)
            await response(scope, receive, send)
            return
        await http_problem(429, detail, headers=headers)(scope, receive, send)
