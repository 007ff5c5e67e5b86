"""Bounds on a JSON document the service reads, whoever sent it: nested at most MAX_JSON_DEPTH deep,
finite numbers only, no NUL characters. Request bodies pass through it (app.http.hygiene), and so does
a config.json read from the Hugging Face Hub (app.hub): free-form JSON has no schema to carry these
rules, PostgreSQL refuses NUL in text, Python's parser reads `NaN`, `Infinity` and `1e400` as
numbers, and deep nesting costs recursion in every layer that walks it.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

MAX_JSON_DEPTH = 32  # the deepest real body (an admin SKU with prices, a quote's plan) is 5 levels


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
