"""Rate limiting middleware (pure ASGI) for the configured paths: 429 with Retry-After.

On the API paths only unsafe methods (POST, PUT, PATCH, DELETE) count; on the pages every request
counts, GETs included, because the wizard's result pages run the planner from their query string and a
quote's PDF is rendered on its first GET. An entry with `*` is an fnmatch pattern (`/quotes/*/accept`; `*` matches any
characters, `/` included): all the paths it matches share one counter per client. The
key is the client address (behind a proxy, uvicorn's --proxy-headers makes that the real client's
address). The refusal is problem+json, or the site's HTML error page for a browser on a page.

A request carrying a live API key (`Authorization: Bearer gsk_…`, app.apikeys) on a watched path counts
against the key instead, at the key's own limit per minute, whatever the method (a key's GET /quotes
searches count too), with one counter for all the key's paths: a sales team's CRM behind one address is
limited by what the admin gave its key, not by the address. A header with no live key counts per address
as any anonymous request does (the route then answers 401).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from fnmatch import fnmatchcase

from anyio import to_thread
from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError
from starlette.datastructures import State
from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from app.apikeys import service as apikeys_service
from app.common.errors import http_problem
from app.delivery.error_pages import error_page, wants_html
from app.http.metrics import RATE_LIMITED
from app.ratelimit.service import Decision, RateLimiter

_PATTERN = re.compile(r"[*?\[]")
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def entries(paths: Iterable[str]) -> tuple[frozenset[str], tuple[str, ...]]:
    """Exact paths, and fnmatch patterns (`*` matches any characters, `/` included: `/quotes/*/accept`, `/admin/*`)."""
    cleaned = [path.rstrip("/") or "/" for path in paths]
    return frozenset(p for p in cleaned if not _PATTERN.search(p)), tuple(p for p in cleaned if _PATTERN.search(p))


def match(path: str, exact: frozenset[str], patterns: tuple[str, ...]) -> str | None:
    if path in exact:
        return path
    return next((pattern for pattern in patterns if fnmatchcase(path, pattern)), None)


def _authorization(scope: Scope) -> str | None:
    """The `Authorization` header when it carries an API key (admin API tokens count per address)."""
    for name, value in scope.get("headers", ()):
        if name == b"authorization":
            text = value.decode("latin-1")
            return text if apikeys_service.bearer_key(text) is not None else None
    return None


class RateLimitMiddleware:
    """Counts per client and per configured entry: every quote's PDF shares the `/quotes/*.pdf` counter."""

    def __init__(self, app: ASGIApp, *, per_minute: int, paths: Iterable[str], pages: Iterable[str] = ()) -> None:
        self.app = app
        self.paths = entries(paths)
        self.pages = entries(pages)
        self.limiter = RateLimiter(limit=per_minute)

    def entry_for(self, method: str, path: str) -> tuple[str | None, bool]:
        """The configured entry a request counts under (None: not counted), and whether it is a page."""
        path = path.rstrip("/") or "/"
        if method == "OPTIONS":
            return None, False
        page = match(path, *self.pages)
        if page is not None:
            return page, True
        return (match(path, *self.paths) if method not in SAFE_METHODS else None), False

    def keyed_entry(self, path: str) -> str | None:
        """The entry a request with an API key counts under, whatever its method (GET /quotes searches too)."""
        return match(path.rstrip("/") or "/", *self.paths)

    def _key_limit(self, app_state: State, authorization: str) -> tuple[int, int] | None:
        """(key id, limit) of a live API key; None when there is none or the database cannot say (then the
        request counts per address, and the route itself refuses a key it cannot check)."""
        secret = app_state.settings.api_key_secret.get_secret_value()
        try:
            with app_state.engine.connect() as connection:
                return apikeys_service.rate_limit_of(connection, authorization, secret=secret)
        except SQLAlchemyError:
            return None

    def _hit(self, engine: Engine, key: str, limit: int) -> Decision:
        return self.limiter.hit(engine, key, limit=limit)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        entry, is_page = self.entry_for(scope["method"], scope.get("path", ""))
        authorization = _authorization(scope)
        if entry is None and authorization is not None:
            entry = self.keyed_entry(scope.get("path", ""))
            authorization = authorization if entry is not None else None
        if entry is None:
            await self.app(scope, receive, send)
            return
        app_state = scope["app"].state
        keyed = await to_thread.run_sync(self._key_limit, app_state, authorization) if authorization else None
        if keyed is not None:
            key, limit = f"apikey|{keyed[0]}", keyed[1]
        else:
            key, limit = f"{entry}|{(scope.get('client') or ('unknown', 0))[0]}", self.limiter.limit
        decision = await to_thread.run_sync(self._hit, app_state.engine, key, limit)
        if decision.allowed:
            await self.app(scope, receive, send)
            return
        RATE_LIMITED.labels(entry).inc()
        whose = "this API key's requests" if keyed is not None else f"requests to {entry}"
        detail = f"Too many {whose}; try again in {decision.retry_after_s} s."
        headers = {"Retry-After": str(decision.retry_after_s), "RateLimit-Limit": str(limit)}
        request = Request(scope)
        if is_page and wants_html(request):
            response = error_page(request, 429, message=detail)
            response.headers.update(headers)
            await response(scope, receive, send)
            return
        await http_problem(429, detail, headers=headers)(scope, receive, send)
