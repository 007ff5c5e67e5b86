"""A pydantic field error in words: in the page's language, from its `type` and `ctx` (the bounds, the digits a
decimal may have, a required or a choice field), for the wizards' and the admin's forms alike; and the API's
English message (app/common/errors.py, app/mcp). Either way a pattern mismatch says what the field allows
(app/text/input_words.py), never the regular expression, and a validator's refusal reads without pydantic's
"Value error, " prefix."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

from app.text import messages
from app.text.i18n import Translator
from app.text.input_words import PATTERNS, SHOULD_BE

BILLION = 1_000_000_000


def pydantic_message(err: Mapping[str, Any], t: Translator) -> str:
    """A pydantic error in the page's language where its type is a plain bound; else its own message."""
    ctx = err.get("ctx") or {}
    bounds = {
        "greater_than": ("err_gt", "gt"),
        "greater_than_equal": ("err_ge", "ge"),
        "less_than": ("err_lt", "lt"),
        "less_than_equal": ("err_le", "le"),
    }
    kind = err.get("type", "")
    if kind in bounds and bounds[kind][1] in ctx:
        key, bound = bounds[kind]
        return t(key, limit=_limit_words(ctx[bound], err.get("loc", ()), t))
    if kind in ("int_parsing", "int_from_float"):
        return t("err_integer")
    if kind in ("float_parsing", "decimal_parsing"):
        return t("err_number")
    if kind == "literal_error":
        return t("err_choice")
    if kind == "hidden_characters":  # a printed field's control or bidi formatting character (app.common.schemas)
        return t("err_hidden_characters")
    if kind == "decimal_string":  # money in plain notation (app.common.schemas.decimal_string)
        return t("err_decimal_string", example=ctx.get("example", ""))
    decimals = {
        "decimal_max_digits": ("err_max_digits", "max_digits"),
        "decimal_max_places": ("err_max_places", "decimal_places"),
        "decimal_whole_digits": ("err_whole_digits", "whole_digits"),
    }
    if kind in decimals and decimals[kind][1] in ctx:
        return t(decimals[kind][0], n=ctx[decimals[kind][1]])
    if kind == "missing" or (kind in ("string_too_short", "too_short") and ctx.get("min_length") == 1):
        return t("err_required")
    if kind == "string_too_long" and "max_length" in ctx:  # a customer's name or company (app.quotes.schemas)
        return t("err_max_length", n=ctx["max_length"])
    if kind == "string_too_short" and "min_length" in ctx:
        return t("err_min_length", n=ctx["min_length"])
    if kind == "value_error" and "email" in str(err.get("msg", "")).lower():
        return t("err_email")
    return plain_message(err, t.lang)


def plain_message(err: Mapping[str, Any], lang: str = "en") -> str:
    """pydantic's message, but a pattern mismatch in `lang`'s words of what the field allows, and a validator's
    own text without pydantic's "Value error, " (the API's `errors[].message`, in English)."""
    ctx = err.get("ctx") or {}
    if err.get("type") in messages.REFUSALS["en"]:  # a request model's refusal by its code (coded_error)
        return messages.refusal(str(err["type"]), ctx, lang)
    pattern = ctx.get("pattern")
    if err.get("type") == "string_pattern_mismatch" and isinstance(pattern, str):
        words = PATTERNS[lang].get(pattern) or PATTERNS["en"].get(pattern)
        if words is not None:
            return SHOULD_BE[lang].format(allowed=words)
    return str(err.get("msg", "invalid")).removeprefix("Value error, ")


def _limit_words(bound: Any, loc: Iterable[Any], t: Translator) -> str:
    """Bounds in the form's units: the API counts parameters and tokens, the form billions."""
    names = [str(part) for part in loc]
    value = float(bound) if isinstance(bound, int | float | Decimal) else bound
    if names[-1:] in (["params"], ["tokens"]) and isinstance(value, float):
        value = value / BILLION
    if isinstance(value, float):
        return t.number(value, 2)
    return str(value)
