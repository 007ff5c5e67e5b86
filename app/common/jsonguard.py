"""Bounds on a JSON document the service reads, whoever sent it: nested at most MAX_JSON_DEPTH deep,
finite numbers only (none beyond what a 64-bit float holds), no NUL characters, and a bounded count of
arrays, objects and values. Request bodies pass through it (app.delivery.bodies, off the event loop), and so does
a config.json read from the Hugging Face Hub (app.hub): free-form JSON has no schema to carry these
rules, PostgreSQL refuses NUL in text, Python's parser reads `NaN`, `Infinity` and `1e400` as numbers
(and a 400-digit literal as an int no float can hold), and deep nesting costs recursion in every layer
that walks it.

The cost of one document is bounded before it is parsed: `bytes.count` (C speed, linear) gives an upper
bound on its arrays and objects and on its values (every value but the first of a container follows a
comma), and a document over MAX_JSON_CONTAINERS or MAX_JSON_VALUES is refused unread. Under those bounds
the parse is linear and the walk visits at most MAX_JSON_VALUES values, so no document costs more than a
few tens of milliseconds of CPU (benchmarks/hostile.py measures it).
"""

from __future__ import annotations

import json
import math
import sys
from typing import Any

from app.text.input_words import BODY_REFUSALS

MAX_JSON_DEPTH = 32  # the deepest real body (an admin SKU with prices, a quote's plan) is 5 levels
# The largest body a client sends is a catalog import (POST /admin/api/catalog/import): the seeded export
# has 11 arrays and objects and 35 commas per SKU, so a 1 MiB export (MAX_BODY_BYTES, about 1,100 SKUs)
# has about 12,000 and 40,000. Both bounds leave room above that; a pasted config.json has a few hundred.
MAX_JSON_CONTAINERS = 20_000
MAX_JSON_VALUES = 100_000
LARGEST_FLOAT = sys.float_info.max  # an int beyond it overflows every float the estimator computes with


class Refusal(Exception):
    def __init__(self, field: str, message: str, type_: str, params: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.field, self.message, self.type, self.params = field, message, type_, params


NO_NUL = "Input must not contain NUL characters"
FINITE = "Input should be a finite number"  # pydantic's words for the same refusal on a typed field
TOO_LARGE_NUMBER = "Input should be a number of at most 1.8e308 in size (a 64-bit float)"
TOO_DEEP = f"JSON is nested deeper than {MAX_JSON_DEPTH} levels."
NOT_UTF = "Input should be JSON encoded as UTF-8 (RFC 8259 §8.1): the body has bytes that are not UTF-8"


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
    elif isinstance(item, float):
        if item != item or item in (math.inf, -math.inf):
            raise Refusal(_path(trail), FINITE, "finite_number")
    elif isinstance(item, int) and not isinstance(item, bool) and not -LARGEST_FLOAT <= item <= LARGEST_FLOAT:
        raise Refusal(_path(trail), TOO_LARGE_NUMBER, "number_too_large")


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
            raise Refusal(_path(trail), TOO_DEEP, "json_too_deep")
        for key, child in pairs:
            if isinstance(key, str) and "\x00" in key:
                raise Refusal(_path(trail), "a key contains a NUL character.", "nul_character")
            if isinstance(child, dict | list):
                stack.append((child, depth + 1, (trail, key)))
            else:
                _check_scalar(child, (trail, key))


def check_size(body: bytes) -> None:
    """Refuse, unparsed, a document with more arrays and objects or more values than a real body has.

    Brackets and commas inside strings count too: the counts are upper bounds, found at C speed."""
    containers = body.count(b"[") + body.count(b"{")
    if containers > MAX_JSON_CONTAINERS:
        message = f"JSON has more than {MAX_JSON_CONTAINERS} arrays and objects."
        raise Refusal("body", message, "json_too_large")
    if containers + body.count(b",") > MAX_JSON_VALUES:
        raise Refusal("body", f"JSON has more than {MAX_JSON_VALUES} values.", "json_too_large")


class _DuplicateKey(Exception):
    pass


def _unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """json.loads's object_pairs_hook: the object, unless a key appears twice in it (the parser's own dict would
    keep the last silently: review R14, a body's second `task` replaced its first without a word)."""
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise _DuplicateKey
    return obj


class _Pairs(list[tuple[str, Any]]):
    """An object as its key-value pairs, duplicates kept: the second parse that finds where a duplicate lies."""


def _duplicate_key(body: bytes) -> Refusal:
    """The refusal naming the first duplicated key and the object it lies in (parsed again: only on a refusal)."""
    stack: list[tuple[Any, Trail]] = [(json.loads(body, object_pairs_hook=_Pairs), None)]
    while stack:
        item, trail = stack.pop()
        pairs: Any = item if isinstance(item, _Pairs) else enumerate(item) if isinstance(item, list) else ()
        seen: set[str] = set()
        for key, child in pairs:
            if isinstance(item, _Pairs) and key in seen:
                message = BODY_REFUSALS["en"]["duplicate_key"].format(key=key)
                return Refusal(_path((trail, key)), message, "duplicate_key", {"key": key})
            seen.add(key)
            stack.append((child, (trail, key)))
    raise AssertionError("no duplicate key in a body refused for one")  # pragma: no cover


def parse_body(body: bytes, *, unique_keys: bool = True) -> Any:
    """The parsed JSON document, within every bound above, or Refusal naming the field.

    A body that is not JSON raises the parser's own json.JSONDecodeError, for the caller to report as it reports any
    malformed body; one that is not UTF-8/16/32, or holds an integer literal of more digits than Python converts
    (beyond any float anyway), is a Refusal naming the body (before: FastAPI's bare 400 "There was an error parsing
    the body", no field named). A key twice in one object is a Refusal naming it, unless not `unique_keys` (a
    config.json read from the Hub: transformers itself keeps the last). CPU-bound: call it off the event loop.
    """
    check_size(body)

    def parse_constant(name: str) -> float:  # NaN, Infinity, -Infinity: refused once the walk names the field
        return float(name)

    try:
        value = json.loads(
            body, parse_constant=parse_constant, object_pairs_hook=_unique_object if unique_keys else None
        )
    except _DuplicateKey:
        raise _duplicate_key(body) from None
    except RecursionError as exc:  # Python's parser recurses in C: thousands deep is too deep
        raise Refusal("body", TOO_DEEP, "json_too_deep") from exc
    except UnicodeDecodeError as exc:  # FastAPI answers any error but JSONDecodeError with a bare 400
        raise Refusal("body", NOT_UTF, "json_encoding") from exc
    except json.JSONDecodeError:
        raise
    except ValueError as exc:  # an integer of more digits than int() converts (sys.get_int_max_str_digits, 4,300)
        raise Refusal("body", TOO_LARGE_NUMBER, "number_too_large") from exc
    check_json(value)
    return value


def check_body(body: bytes) -> None:
    """Refuse a JSON document that breaks a bound; one that is not JSON at all is left to its reader."""
    try:
        parse_body(body, unique_keys=False)
    except Refusal as refusal:
        if refusal.type != "json_encoding":
            raise
    except ValueError:
        return  # not JSON: the reader's own parser reports it (so does it a document not in UTF-8/16/32)
