"""Request hygiene (pure ASGI), before any route sees a request: no NUL characters anywhere, no
non-finite numbers in a JSON body, and JSON nested at most MAX_JSON_DEPTH deep. Refusals are 422
problem+json naming the field (or the site's HTML error page for a browser on a page).

Why here and not in each schema: free-form parts of a body (a pasted `hf_config`) have no schema to
carry the rule, PostgreSQL refuses NUL in text (a 500 after the route did its work), Python's JSON
parser reads `NaN`, `Infinity` and `1e400` as numbers, and a deeply nested body costs recursion
in every layer that walks it. The body is already bounded by the body-size limit outside this one.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any
from urllib.parse import parse_qsl

from starlette.requests import Request
from starlette.types import Message, Receive, Scope, Send

from app.error_pages import error_page, wants_html
from app.errors import http_problem
from app.http.asgi import HttpMiddleware

MAX_JSON_DEPTH = 32  # the deepest real body (an admin SKU with prices, a quote's plan) is 5 levels
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


class Refusal(Exception):
    def __init__(self, field: str, message: str, type_: str) -> None:
        super().__init__(message)
        self.field, self.message, self.type = field, message, type_


NO_NUL = "Input must not contain NUL characters"
FINITE = "Input should be a finite number"  # pydantic's words for the same refusal on a typed field


Trail = tuple[Any, str | int] | None  # (parent trail, key): a path built only when a refusal names it


def _path(trail: Trail) -> str:
    parts: list[str] = []
    while trail is not None:
        trail, key = trail
        parts.append(str(key))
    return ".".join(reversed(parts)) or "body"


def _check_scalar(item: Any, trail: Trail) -> None:
    if isinstance(item, str):
        if "\x00" in item:
            raise Refusal(_path(trail), NO_NUL, "nul_character")
    elif isinstance(item, float) and (item != item or item in (math.inf, -math.inf)):
        raise Refusal(_path(trail), FINITE, "finite_number")


def check_json(value: Any) -> None:
    """Depth, finiteness and NUL characters of a parsed JSON value, walked without recursion."""
    stack: list[tuple[Any, int, Trail]] = [(value, 0, None)]
    while stack:
        item, depth, trail = stack.pop()
        if isinstance(item, dict):
            pairs: Any = item.items()
        elif isinstance(item, list):
            pairs = enumerate(item)
        else:
            _check_scalar(item, trail)
            continue
        if depth >= MAX_JSON_DEPTH:
            raise Refusal(_path(trail), f"JSON is nested deeper than {MAX_JSON_DEPTH} levels.", "json_too_deep")
        for key, child in pairs:
            if isinstance(key, str) and "\x00" in key:
                raise Refusal(_path(trail), "a key contains a NUL character.", "nul_character")
            if isinstance(child, dict | list):
                stack.append((child, depth + 1, (trail, key)))
            else:
                _check_scalar(child, (trail, key))


# An escaped NUL (`\u0000`) not itself escaped (`\\u0000` is a backslash and "u0000"); a raw NUL byte is
# not valid JSON, so the parser refuses that one.
_ESCAPED_NUL = re.compile(r"(?<!\\)(?:\\\\)*\\u0000")
# A literal that may overflow a float to infinity (an exponent of 100 or more, or 300 digits in a row)
_HUGE_LITERAL = re.compile(r"[eE][+]?0*[1-9][0-9]{2,}|[0-9]{300}")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_INNERMOST = re.compile(r"\[\]|\{\}")


def _too_deep(text: str) -> bool:
    """Nesting deeper than MAX_JSON_DEPTH, found by peeling the innermost brackets a level at a time (C speed)."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    for _ in range(MAX_JSON_DEPTH):
        if not brackets:
            return False
        brackets = _INNERMOST.sub("", brackets)
    return bool(brackets)


def check_body(body: bytes) -> None:
    """Refuse a JSON body nested too deep, with a non-finite number or with a NUL character.

    The common case is checked at C speed (regular expressions, the parser's own hooks); only a body
    that fails is walked in Python, to name the field.
    """
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return  # the route's own parser reports it
    constants = False

    def parse_constant(name: str) -> float:  # NaN, Infinity, -Infinity: noted, refused once the walk names the field
        nonlocal constants
        constants = True
        return float(name)

    try:
        value = json.loads(text, parse_constant=parse_constant)
    except RecursionError as exc:  # Python's parser recurses in C: thousands deep is too deep
        raise Refusal("body", f"JSON is nested deeper than {MAX_JSON_DEPTH} levels.", "json_too_deep") from exc
    except ValueError:
        return  # not JSON: the route's own parser reports it
    nul = "\\u0000" in text and _ESCAPED_NUL.search(text)
    if constants or nul or _HUGE_LITERAL.search(text) or _too_deep(text):
        check_json(value)


def _check_pairs(raw: bytes, where: str) -> None:
    for name, value in parse_qsl(raw.decode("latin-1"), keep_blank_values=True):
        if "\x00" in name or "\x00" in value:
            raise Refusal(name.replace("\x00", "") or where, NO_NUL, "nul_character")


def _content_type(scope: Scope) -> str:
    for name, value in scope.get("headers", ()):
        if name == b"content-type":
            return value.decode("latin-1").split(";")[0].strip().lower()
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
