"""Request hygiene (pure ASGI), before any route sees a request: no NUL characters anywhere, no
non-finite numbers in a JSON body, and JSON nested at most MAX_JSON_DEPTH deep (app.jsonguard says
why). Refusals are 422 problem+json naming the field (or the site's HTML error page for a browser on
a page). The body is already bounded by the body-size limit outside this one.
"""

from __future__ import annotations

from urllib.parse import parse_qsl

from starlette.requests import Request
from starlette.types import Message, Receive, Scope, Send

from app.error_pages import error_page, wants_html
from app.errors import http_problem
from app.http.asgi import HttpMiddleware
from app.jsonguard import NO_NUL, Refusal, check_body

_BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def _check_pairs(raw: bytes, where: str) -> None:
    for name, value in parse_qsl(raw.decode("latin-1"), keep_blank_values=True):
        if "\x00" in name or "\x00" in value:
            raise Refusal(name.replace("\x00", "") or where, NO_NUL, "nul_character")


def _content_type(scope: Scope) -> str:
    for name, value in scope.get("headers", ()):
        if name == b"content-type":
            header: bytes = value  # ASGI: headers are (bytes, bytes) pairs
            return header.decode("latin-1").split(";")[0].strip().lower()
    return ""


class HygieneMiddleware(HttpMiddleware):
    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            if b"\x00" in scope.get("path", "").encode() or b"%00" in scope.get("raw_path", b""):
                raise Refusal("path", NO_NUL, "nul_character")
            _check_pairs(scope.get("query_string", b""), "query")
            kind = _content_type(scope)
            if scope["method"] not in _BODY_METHODS or not (kind.endswith("json") or kind.endswith("urlencoded")):
                await self.app(scope, receive, send)
                return
            body, messages = await _read_body(receive)
            if kind.endswith("urlencoded"):
                _check_pairs(body, "form")
            else:
                check_body(body)
        except Refusal as refusal:
            await _refuse(scope, receive, send, refusal)
            return
        await self.app(scope, _replay(messages, receive), send)


async def _read_body(receive: Receive) -> tuple[bytes, list[Message]]:
    messages: list[Message] = []
    chunks: list[bytes] = []
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    return b"".join(chunks), messages


def _replay(messages: list[Message], receive: Receive) -> Receive:
    pending = list(messages)

    async def replay() -> Message:
        return pending.pop(0) if pending else await receive()

    return replay


async def _refuse(scope: Scope, receive: Receive, send: Send, refusal: Refusal) -> None:
    detail = f"{refusal.field}: {refusal.message}"
    request = Request(scope)
    if wants_html(request):
        await error_page(request, 422, message=detail)(scope, receive, send)
        return
    errors = [{"field": refusal.field, "message": refusal.message, "type": refusal.type}]
    await http_problem(422, detail, errors=errors)(scope, receive, send)
