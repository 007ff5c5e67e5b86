"""Request id, one JSON access-log line and metrics per request; the last word on unexpected errors.

Outermost middleware (pure ASGI). The request id comes from `X-Request-ID` when it looks like one,
else a new one; it goes back in `X-Request-ID` and into `request.state.request_id`. An exception
that escapes the app is logged with its traceback and answered with a 500 problem that carries the
request id and the security headers (Starlette's own last-resort handler sits outside our middleware).
"""

from __future__ import annotations

import logging
import re
import time
import uuid

from starlette.datastructures import MutableHeaders
from starlette.routing import Match, Mount, Route
from starlette.types import Message, Receive, Scope, Send

from app.common.errors import internal_error_response
from app.delivery.deps import ARRIVED_AT
from app.http.asgi import HttpMiddleware
from app.http.metrics import LATENCY, REQUESTS, observe_pool
from app.http.security import SECURITY_HEADERS

access_log = logging.getLogger("app.access")
error_log = logging.getLogger("app.errors")
REQUEST_ID_HEADER = "X-Request-ID"
_VALID_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")


def _request_id(scope: Scope) -> str:
    for name, value in scope.get("headers", ()):
        if name == b"x-request-id":
            candidate: str = value.decode("latin-1")  # ASGI: headers are (bytes, bytes) pairs
            if _VALID_REQUEST_ID.fullmatch(candidate):
                return candidate
    return uuid.uuid4().hex


def route_template(scope: Scope) -> str:
    """The matched route's path template (`/quotes/{quote_id}`), so metrics stay low-cardinality."""
    route = scope.get("route")
    if route is not None:
        return getattr(route, "path", "<unmatched>")
    # FastAPI records only its own routes in the scope; find /openapi.json, /docs and mounts here.
    # A mount has rewritten root_path in place by now: match on a clean copy of the request's path.
    probe = {"type": "http", "method": scope["method"], "path": scope["path"], "root_path": ""}
    for candidate in getattr(scope.get("app"), "routes", ()):
        if isinstance(candidate, (Route, Mount)) and candidate.matches(probe)[0] is Match.FULL:
            return candidate.path
    return "<unmatched>"


class ObservabilityMiddleware(HttpMiddleware):
    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        request_id = _request_id(scope)
        scope.setdefault("state", {})["request_id"] = request_id
        # a request's lock waits end by a time from here (app.delivery.deps)
        scope["state"][ARRIVED_AT] = time.monotonic()
        started_at = time.perf_counter()
        status = 500
        response_started = False

        async def send_with_id(message: Message) -> None:
            nonlocal status, response_started
            if message["type"] == "http.response.start":
                response_started = True
                status = message["status"]
                MutableHeaders(scope=message)[REQUEST_ID_HEADER] = request_id
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        except Exception as exc:
            error_log.exception("unhandled error", extra={"request_id": request_id}, exc_info=exc)
            if response_started:
                raise
            response = internal_error_response()
            response.headers.update(SECURITY_HEADERS)
            await response(scope, receive, send_with_id)
        finally:
            self._record(scope, request_id, status, time.perf_counter() - started_at)

    @staticmethod
    def _record(scope: Scope, request_id: str, status: int, seconds: float) -> None:
        route = route_template(scope)
        REQUESTS.labels(scope["method"], route, str(status)).inc()
        LATENCY.labels(scope["method"], route).observe(seconds)
        app = scope.get("app")
        observe_pool(getattr(getattr(app, "state", None), "engine", None))
        access_log.info(
            "request",
            extra={
                "method": scope["method"],
                "path": scope["path"],
                "route": route,
                "status": status,
                "duration_ms": round(seconds * 1000, 2),
                "request_id": request_id,
                "client": (scope.get("client") or ("", 0))[0],
            },
        )
