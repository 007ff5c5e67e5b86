"""Request hygiene (pure ASGI) for what every request carries, before any route sees it: no NUL
characters in the path or the query string. Refusals are 422 problem+json naming the field (or the
site's HTML error page for a browser on a page).

A request's body is not read here: that would cost every path, those no route matches too, and a JSON
body's checks cost CPU in proportion to its size. The route that takes a body checks it off the event
loop as it reads it (app.delivery.bodies), after the body budget and the rate limit.
"""

from __future__ import annotations

from urllib.parse import parse_qsl

from starlette.requests import Request
from starlette.types import Receive, Scope, Send

from app.common.errors import http_problem
from app.common.jsonguard import NO_NUL, Refusal
from app.delivery.error_pages import error_page, wants_html
from app.http.asgi import HttpMiddleware


def _check_query(raw: bytes) -> None:
    if b"\x00" not in raw and b"%00" not in raw:  # the common case, at C speed
        return
    for name, value in parse_qsl(raw.decode("latin-1"), keep_blank_values=True):
        if "\x00" in name or "\x00" in value:
            # named as a query parameter's other refusals are (app/common/errors.py: `query.limit`), review R5-13
            field = name.replace("\x00", "")
            raise Refusal(f"query.{field}" if field else "query", NO_NUL, "nul_character")


class HygieneMiddleware(HttpMiddleware):
    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            if b"\x00" in scope.get("path", "").encode() or b"%00" in scope.get("raw_path", b""):
                raise Refusal("path", NO_NUL, "nul_character")
            _check_query(scope.get("query_string", b""))
        except Refusal as refusal:
            await _refuse(scope, receive, send, refusal)
            return
        await self.app(scope, receive, send)


async def _refuse(scope: Scope, receive: Receive, send: Send, refusal: Refusal) -> None:
    detail = f"{refusal.field}: {refusal.message}"
    request = Request(scope)
    if wants_html(request):
        await error_page(request, 422, message=detail)(scope, receive, send)
        return
    errors = [{"field": refusal.field, "message": refusal.message, "type": refusal.type}]
    await http_problem(422, detail, errors=errors)(scope, receive, send)
