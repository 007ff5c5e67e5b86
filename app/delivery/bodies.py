"""Request bodies are parsed and checked off the event loop, once the route is known.

FastAPI reads a JSON body with `await request.json()` on the event loop, and the checks of app.common.jsonguard
cost CPU in proportion to the body: run there, one crafted 1 MiB body held every request of the process
(the liveness probe too) for up to a second. The route class of every router (UnitOfWorkRoute) gives its
endpoint a `CheckedRequest` instead, FastAPI's documented way to change how a body is read: its `json()`
parses and checks the body in a thread (at most BODY_CHECK_THREADS at once per process, apart from the
WORKER_THREADS), within app.common.jsonguard's bounds on its size, nesting and numbers. A form body is checked
for NUL characters the same way. A path no route matches, or a method it does not take, never has its
body read, and the rate limit and the per-client body budget (app.http) come before any of it.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any
from urllib.parse import parse_qsl

from anyio import CapacityLimiter, to_thread
from fastapi import Request, Response
from fastapi.routing import APIRoute

from app.common.errors import BodyRefused
from app.common.jsonguard import NO_NUL, Refusal, parse_body

BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
# The checks hold the GIL while they run, so more threads than the two cores of the smallest host we run on
# only take turns; two let one small body pass a large one being checked.
BODY_CHECK_THREADS = 2
MAX_FORM_FIELDS = 1000  # Starlette's own limit on the fields of a form (Request.form's max_fields)


def body_check_limiter() -> CapacityLimiter:
    """The limiter of one worker process's body checks; made in the app's lifespan (an event loop's own)."""
    return CapacityLimiter(BODY_CHECK_THREADS)


def check_form(body: bytes) -> None:
    """A urlencoded form with a NUL character in a name or value is refused, naming the field."""
    if b"\x00" not in body and b"%00" not in body:  # the common case, at C speed
        return
    try:
        pairs = parse_qsl(body.decode("latin-1"), keep_blank_values=True, max_num_fields=MAX_FORM_FIELDS)
    except ValueError as exc:  # more fields than any form has, one of them with a NUL
        raise Refusal("form", NO_NUL, "nul_character") from exc
    for name, value in pairs:
        if "\x00" in name or "\x00" in value:
            raise Refusal(name.replace("\x00", "") or "form", NO_NUL, "nul_character")


async def _off_the_loop(request: Request, check: Callable[[bytes], Any]) -> Any:
    body = await request.body()
    try:
        return await to_thread.run_sync(check, body, limiter=request.app.state.body_limiter)
    except Refusal as refusal:
        raise BodyRefused(refusal.field, refusal.message, refusal.type, refusal.params) from refusal


class CheckedRequest(Request):
    """A request whose JSON body is parsed and checked (app.common.jsonguard) on a thread, not the event loop."""

    async def json(self) -> Any:
        if not hasattr(self, "_checked_json"):
            self._checked_json = await _off_the_loop(self, parse_body)
        return self._checked_json


def _content_type(request: Request) -> str:
    return request.headers.get("content-type", "").split(";", 1)[0].strip().lower()


class CheckedBodyRoute(APIRoute):
    """A route whose endpoint reads its body through CheckedRequest (forms checked before it runs)."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def checked(request: Request) -> Response:
            checked_request = CheckedRequest(request.scope, request.receive)
            if request.method in BODY_METHODS and _content_type(request).endswith("urlencoded"):
                await _off_the_loop(checked_request, check_form)
            return await handler(checked_request)

        return checked
