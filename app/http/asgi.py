"""The base of our pure ASGI middleware: HTTP requests are handled, every other scope passes through."""

from __future__ import annotations

from typing import TypeVar

from starlette.types import ASGIApp, Message, Receive, Scope, Send

Refusal = TypeVar("Refusal", bound=Exception)


class HttpMiddleware:
    """Wraps `app`; `handle` sees only `http` scopes (lifespan and websocket go straight to `app`)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        await self.handle(scope, receive, send)

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        raise NotImplementedError


class ResponseWatch:
    """A `send` that passes each message on to the server's and notes whether the response has started: a
    middleware may still answer a refusal of its own before, not after."""

    __slots__ = ("send", "started")

    def __init__(self, send: Send) -> None:
        self.send = send
        self.started = False

    async def __call__(self, message: Message) -> None:
        self.started = self.started or message["type"] == "http.response.start"
        await self.send(message)


async def refused_before_response(
    app: ASGIApp, scope: Scope, receive: Receive, send: ResponseWatch, refusal: type[Refusal]
) -> Refusal | None:
    """Run `app`; the `refusal` it raised before its response started (the caller answers it), else None. A refusal
    raised after the response started propagates: the server closes the connection."""
    try:
        await app(scope, receive, send)
    except refusal as refused:
        if send.started:
            raise
        return refused
    return None
