"""Request body size limit and per-client body budget (pure ASGI): 413 or 429 problem+json, never
reading past either.

A declared `Content-Length` over the limit is refused before the body is read; a chunked body is
counted as it streams and refused as soon as it passes the limit. The body is never echoed. The
budget bounds the bytes of bodies one client sends a worker process per minute, counted as they arrive
(BodyBudgetMiddleware).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.common.errors import http_problem
from app.http.asgi import HttpMiddleware, ResponseWatch, refused_before_response


class BodyTooLarge(HTTPException):
    def __init__(self, limit: int) -> None:
        super().__init__(413, f"The request body is larger than the limit of {limit} bytes.")


class BodyLimitMiddleware(HttpMiddleware):
    def __init__(self, app: ASGIApp, *, max_bytes: int) -> None:
        super().__init__(app)
        self.max_bytes = max_bytes

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        declared = _content_length(scope)
        if declared is not None and declared > self.max_bytes:
            await self._refuse(scope, receive, send)
            return
        received = 0

        def count(body: bytes) -> None:
            nonlocal received
            received += len(body)
            if received > self.max_bytes:
                raise BodyTooLarge(self.max_bytes)

        if await _refused_while_streaming(self.app, scope, receive, send, count, BodyTooLarge):
            await self._refuse(scope, receive, send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        detail = f"The request body is larger than the limit of {self.max_bytes} bytes."
        # Connection: close, so the server does not try to read the rest of the body we refused.
        response = http_problem(413, detail, headers={"Connection": "close"})
        await response(scope, receive, send)


async def _refused_while_streaming(
    app: ASGIApp,
    scope: Scope,
    receive: Receive,
    send: Send,
    count: Callable[[bytes], None],
    refusal: type[HTTPException],
) -> bool:
    """Run `app` with each body chunk it receives passed to `count`, which raises `refusal` to stop the body.
    True when it did so before the response started (the caller answers); after, the refusal propagates."""

    async def counted_receive() -> Message:
        message = await receive()
        if message["type"] == "http.request":
            count(message.get("body", b""))
        return message

    watched = ResponseWatch(send)
    return await refused_before_response(app, scope, counted_receive, watched, refusal) is not None


def _chunked(scope: Scope) -> bool:
    return any(name == b"transfer-encoding" for name, _ in scope.get("headers", ()))


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


class OverBudget(HTTPException):
    """A chunked body that took its client past the body budget as it streamed (an HTTPException, so that
    a route reading the body answers it as such)."""

    def __init__(self, detail: str, retry_after: int) -> None:
        super().__init__(429, detail, headers={"Retry-After": str(retry_after)})


class BodyBudget:
    """Bytes of request bodies per client in the current fixed window, counted in this worker process.

    In-process on purpose: the budget protects this process's CPU (every body byte is read and may be
    parsed here), so it is this process's count that matters, and it costs no database round trip. The
    counts are dropped as each window ends, so they hold one window's clients at most."""

    def __init__(self, *, max_bytes: int, window_s: int) -> None:
        self.max_bytes, self.window_s = max_bytes, window_s
        self._window = 0
        self._spent: dict[str, int] = {}

    def charge(self, client: str, size: int, *, now: float | None = None) -> int:
        """Count `size` bytes against `client`; 0 when within the budget, else seconds until it renews."""
        now = time.time() if now is None else now
        window = int(now) - int(now) % self.window_s
        if window != self._window:
            self._window, self._spent = window, {}
        spent = self._spent.get(client, 0) + size
        self._spent[client] = spent
        return 0 if spent <= self.max_bytes else max(1, window + self.window_s - int(now))


class BodyBudgetMiddleware(HttpMiddleware):
    """429 once a client's request bodies pass BODY_BUDGET_BYTES_PER_MINUTE in this process. Bytes are charged as
    they arrive, whatever Content-Length declares (a declared size charged up front let a few stalled uploads,
    a few bytes each, throttle their address: review R4-8); a client already past the budget is refused before
    its body is read, and the body that takes it past is refused unparsed."""

    def __init__(self, app: ASGIApp, *, max_bytes: int, window_s: int = 60) -> None:
        super().__init__(app)
        self.budget = BodyBudget(max_bytes=max_bytes, window_s=window_s)

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        client = (scope.get("client") or ("unknown", 0))[0]
        declared = _content_length(scope)
        if declared == 0 or (declared is None and not _chunked(scope)):  # no body
            await self.app(scope, receive, send)
            return
        retry_after = self.budget.charge(client, 0)
        if retry_after:
            await self._refuse(scope, receive, send, retry_after)
            return
        await self._streamed(scope, receive, send, client)

    async def _streamed(self, scope: Scope, receive: Receive, send: Send, client: str) -> None:
        """The body is charged as it arrives."""
        retry_after = 0

        def charge(body: bytes) -> None:
            nonlocal retry_after
            if body:
                retry_after = self.budget.charge(client, len(body))
                if retry_after:
                    raise OverBudget(self._detail(retry_after), retry_after)

        if await _refused_while_streaming(self.app, scope, receive, send, charge, OverBudget):
            await self._refuse(scope, receive, send, retry_after)

    def _detail(self, retry_after: int) -> str:
        return (
            f"This client has sent more than {self.budget.max_bytes} bytes of request bodies within "
            f"{self.budget.window_s} s; try again in {retry_after} s."
        )

    async def _refuse(self, scope: Scope, receive: Receive, send: Send, retry_after: int) -> None:
        # The connection stays open: the server skips the unread body (at most MAX_BODY_BYTES, unparsed),
        # cheaper than a client reconnecting after every refusal (benchmarks/hostile.py --hostile-address fixed).
        headers = {"Retry-After": str(retry_after)}
        await http_problem(429, self._detail(retry_after), headers=headers)(scope, receive, send)
