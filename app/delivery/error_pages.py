"""Friendly HTML error pages for people in a browser; the JSON API keeps its problem+json.

A request gets the HTML page when it asks for `text/html` (browsers do, API clients do not) and
its path is not one of the API's. Each exception handler installed by app.common.errors is wrapped, not
replaced: everything else still gets the problem+json answer. Unexpected exceptions inside the
web routes (WebRoute) are logged and answered with the 500 page; elsewhere the observability
middleware keeps the last word.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from fastapi import FastAPI, Request, Response
from fastapi.exceptions import RequestValidationError
from starlette.responses import HTMLResponse

from app.delivery.deps import UnitOfWorkRoute
from app.text.i18n import Translator, negotiate
from app.text.templating import templates

log = logging.getLogger("app.web")
API_PREFIXES = (
    "/catalog",
    "/estimate",
    "/recommend",
    "/quotes",
    "/healthz",
    "/readyz",
    "/metrics",
    "/docs",
    "/openapi.json",
    "/admin",
    "/static",
)
# The pages under the API's paths a customer opens in a browser: a quote's printable page and its PDF (the links the
# quote and its emails carry), answered with the page in their language when the quote is not found.
PAGES = re.compile(r"^/quotes/[^/]+(?:/print|\.pdf)$")
Handler = Callable[[Request, Any], Response | Awaitable[Response]]  # as Starlette keeps them


def wants_html(request: Request) -> bool:
    path = request.url.path
    is_api = not PAGES.match(path) and any(
        path == prefix or path.startswith(prefix + "/") or path.startswith(prefix + ".") for prefix in API_PREFIXES
    )
    return not is_api and "text/html" in request.headers.get("accept", "")


def error_page(request: Request, status: int, *, message: str | None = None) -> HTMLResponse:
    t = Translator(negotiate(request))
    template = {404: "errors/404.html", 500: "errors/500.html"}.get(status, "errors/error.html")
    context = {
        "t": t,
        "lang": t.lang,
        "status": status,
        "message": message,
        "request_id": getattr(request.state, "request_id", None),
    }
    return templates.TemplateResponse(request, template, context, status_code=status)


def _status_of(exc: Exception) -> int:
    return int(getattr(exc, "status_code", None) or getattr(exc, "status", None) or 500)


def _html_or(handler: Handler) -> Callable[[Request, Exception], Awaitable[Response]]:
    async def handle(request: Request, exc: Exception) -> Response:
        if wants_html(request) and not isinstance(exc, RequestValidationError):
            response = error_page(request, _status_of(exc))
            for name, value in (getattr(exc, "headers", None) or {}).items():
                response.headers.setdefault(name, value)
            return response
        answer = handler(request, exc)
        return await answer if isinstance(answer, Awaitable) else answer

    return handle


def install_html_error_pages(app: FastAPI) -> None:
    """Call after app.common.errors.install_error_handlers: wraps each handler but the last-resort one."""
    for key, handler in list(app.exception_handlers.items()):
        if key in (Exception, 500):
            continue
        app.exception_handlers[key] = _html_or(handler)


def _handled_elsewhere(request: Request, exc: Exception) -> bool:
    handlers = request.app.exception_handlers
    return any(cls in handlers for cls in type(exc).__mro__ if cls is not Exception)


class WebRoute(UnitOfWorkRoute):
    """A page route: an unexpected exception becomes the friendly 500 page (and is logged)."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def guarded(request: Request) -> Response:
            try:
                return await handler(request)
            except Exception as exc:
                if _handled_elsewhere(request, exc):
                    raise
                log.exception(
                    "unhandled error in a web page",
                    extra={"request_id": getattr(request.state, "request_id", None)},
                    exc_info=exc,
                )
                return error_page(request, 500)

        return guarded
