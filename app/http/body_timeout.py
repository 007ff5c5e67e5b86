"""A request body must arrive within BODY_READ_TIMEOUT_S of the app starting to read it, or the request gets 408
(RFC 9110 §15.5.9) and its connection is closed (pure ASGI).

uvicorn bounds the idle time between requests on a kept-alive connection (`--timeout-keep-alive`) but not a body:
its `receive()` waits for the next chunk as long as the client takes (h11 and httptools alike), so a client that
declares a large Content-Length and stalls, or trickles a byte a second, held its request open until it gave up
(review R4-8: still open at 90 s). No thread is held meanwhile (the event loop waits, `/healthz` answers), but the
connection, its buffers and the request's task are. The clock covers the whole body, not the gap between chunks,
so a trickle cannot reset it.
"""

from __future__ import annotations

import anyio
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.common.errors import http_problem
from app.http.asgi import HttpMiddleware, ResponseWatch, refused_before_response


class BodyTimeout(HTTPException):
    """Raised from `receive()` (an HTTPException, so that a route reading the body answers it as such)."""

    def __init__(self, timeout_s: float) -> None:
        detail = f"The request body did not arrive within {timeout_s:g} s; send the request again."
        # Connection: close, so the server does not wait for, or try to parse, the rest of the body.
        super().__init__(408, detail, headers={"Connection": "close"})


class BodyTimeoutMiddleware(HttpMiddleware):
    def __init__(self, app: ASGIApp, *, timeout_s: float) -> None:
        super().__init__(app)
        self.timeout_s = timeout_s

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        deadline: float | None = None  # set at the first read: time before it is the app's, not the client's
        complete = False
        watched = ResponseWatch(send)

        async def timed_receive() -> Message:
            nonlocal deadline, complete
            # The body is in, or the app answers without it: what it waits for now (a disconnect, while it streams
            # a response) is waited for as long as it likes.
            if complete or watched.started:
                return await receive()
            deadline = anyio.current_time() + self.timeout_s if deadline is None else deadline
            with anyio.move_on_after(max(0.0, deadline - anyio.current_time())) as wait:
                message = await receive()
            if wait.cancelled_caught:
                raise BodyTimeout(self.timeout_s)
            complete = message["type"] != "http.request" or not message.get("more_body", False)
            return message

        timeout = await refused_before_response(self.app, scope, timed_receive, watched, BodyTimeout)
        if timeout is not None:  # read outside the routes (no handler answered it)
            await http_problem(408, str(timeout.detail), headers=dict(timeout.headers or {}))(scope, receive, send)
