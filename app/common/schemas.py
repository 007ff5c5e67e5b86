"""Shared bases for the JSON API's bodies.

Every request body inherits `RequestModel`: unknown fields are refused (a typo is an error, not a
silent default) and `NaN`/`Infinity` (which Python's JSON parser accepts, and `1e400` overflows to)
are refused as values. A yes/no field takes only JSON `true`/`false` (not `"yes"`, `1` or `"on"`), and a
number field takes no boolean (`true` is not 1): pydantic's lax mode converts both, and its strict mode would
also refuse `1e8` for a whole number and `"12000"` for an amount, so `RequestModel` refuses just these.
Numeric ranges and list lengths stay on each field (`Field(ge=…, le=…)`, `max_length=…`). An object with more
unknown members than a problem lists (app.common.errors.MAX_FIELD_ERRORS) is one `extra_forbidden` error on the object,
counting them, and is not validated further: 60,000 unknown keys cost pydantic an error each to build.

A response that shows a domain result field for field, or a domain value read from a request, is
built with `mirror`: the fields named like the source's attributes are copied, and only what the
target words differently is spelled out.
"""

from __future__ import annotations

import dataclasses
import re
import types
from collections.abc import Callable
from decimal import Decimal
from typing import Annotated, Any, Literal, TypeVar, Union, get_args, get_origin

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from app.common.errors import MAX_FIELD_ERRORS
from app.common.money import MoneyError, check_currency, check_tender
from app.text import messages

T = TypeVar("T")


class RequestModel(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    @model_validator(mode="before")
    @classmethod
    def _few_unknown_members(cls, data: Any) -> Any:
        """More than MAX_FIELD_ERRORS unknown members: one error on the object, before pydantic makes one each."""
        if not isinstance(data, dict) or len(data) <= MAX_FIELD_ERRORS:  # the common case: one len()
            return data
        known = cls.model_fields.keys()
        unknown = [name for name in data if name not in known]
        if len(unknown) <= MAX_FIELD_ERRORS:
            return data
        first = ", ".join(str(name)[:UNKNOWN_NAME_CHARS] for name in unknown[:3])
        raise PydanticCustomError(
            "extra_forbidden",
            "Extra inputs are not permitted: {count} members this object does not take ({first}, …)",
            {"count": len(unknown), "first": first},
        )

    @field_validator("*", mode="before")
    @classmethod
    def _no_loose_booleans(cls, value: Any, info: ValidationInfo) -> Any:
        """A boolean field takes only a boolean, and a number field no boolean."""
        if info.field_name is None or value is None:
            return value
        kind = _scalar_kind(cls.model_fields[info.field_name].annotation)
        if kind == "bool" and not isinstance(value, bool):
            raise PydanticCustomError("bool_type", "Input should be true or false")
        if kind == "bool_literal" and isinstance(value, int | float) and not isinstance(value, bool):
            # Literal[True] matches 1 in lax mode (1 == True): a choice of true/false takes JSON true/false
            words = _literal_words(cls.model_fields[info.field_name].annotation)
            allowed = ", ".join(str(word).lower() if isinstance(word, bool) else repr(word) for word in words)
            raise PydanticCustomError("literal_error", "Input should be {allowed}", {"allowed": allowed})
        if kind == "number" and isinstance(value, bool):
            raise PydanticCustomError("number_type", "Input should be a number, not true or false")
        return value


UNKNOWN_NAME_CHARS = 40  # of each unknown member named in the error (app.common.errors caps the message at 200)
NUMBER_TYPES = (int, float, Decimal)


def _scalar_kind(annotation: Any) -> Literal["bool", "bool_literal", "number", "other"]:
    """ "bool" for a field of bool (or bool | None), "bool_literal" for a choice that includes true or false
    (Literal[False, True, "auto"]), "number" for one of numbers only (int, float, Decimal, optionally None), else
    "other"; Annotated metadata (ranges, descriptions) is looked through."""
    members = [member for member in _members(annotation) if member is not type(None)]
    if any(isinstance(word, bool) for word in _literal_words(annotation)):
        return "bool_literal"
    if members and all(member is bool for member in members):
        return "bool"
    if members and all(member in NUMBER_TYPES for member in members):
        return "number"
    return "other"


def _members(annotation: Any) -> list[Any]:
    origin = get_origin(annotation)
    if origin is Annotated:
        return _members(get_args(annotation)[0])
    if origin is Union or origin is types.UnionType:
        return [member for arg in get_args(annotation) for member in _members(arg)]
    return [annotation]


def _literal_words(annotation: Any) -> list[Any]:
    """The values a Literal field (or one of a union's Literal members) allows; empty for other fields."""
    return [word for member in _members(annotation) if get_origin(member) is Literal for word in get_args(member)]


def _money_check(check: Callable[[str], str]) -> Callable[[str], str]:
    """An app.common.money check as a field's validator: its MoneyError is the field's ValueError (a 422)."""

    def validate(value: str) -> str:
        try:
            return check(value)
        except MoneyError as exc:
            raise ValueError(str(exc)) from exc

    return validate


CurrencyCode = Annotated[str, StringConstraints(strip_whitespace=True, pattern=r"^[A-Za-z]{3}$")]  # as ISO 4217 spells
Currency = Annotated[
    CurrencyCode,
    AfterValidator(_money_check(check_currency)),
    Field(description="ISO 4217 code", examples=["CNY"]),
]
# What the catalog prices in (the admin's prices and add-ons, a catalog import): a currency legal tender today, never
# one of ISO 4217's codes for no money (XXX, XAU, XTS…) nor a withdrawn one (review R5-10). A budget's currency stays a
# Currency: /recommend refuses one no price converts into with the currencies that do (`unknown_currency`).
PriceCurrency = Annotated[
    CurrencyCode,
    AfterValidator(_money_check(check_tender)),  # a known code (check_currency), legal tender today
    Field(description="ISO 4217 code of a currency legal tender today", examples=["CNY"]),
]


# What changes how printed text is shown rather than what it says: C0 and C1 controls, and Unicode's bidirectional
# formatting characters (marks U+200E, U+200F; embeddings and overrides U+202A–U+202E; isolates U+2066–U+2069), which
# reorder the text around them (Unicode Standard Annex #9 §2; "Trojan Source", CVE-2021-42574): a right-to-left
# override in a company name reverses how it reads on a printed quote (review R5-12).
HIDDEN_CHARACTERS = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _shown_as_written(value: str) -> str:
    if HIDDEN_CHARACTERS.search(value):
        raise PydanticCustomError(
            "hidden_characters",
            "must not contain control characters or bidirectional formatting characters (U+200E, U+200F, "
            "U+202A to U+202E, U+2066 to U+2069)",
        )
    return value


PrintedText = AfterValidator(_shown_as_written)  # a field printed on a quote, its page and its PDF


def money_pattern(digits: int, places: int) -> str:
    """A money amount as the API takes it: a decimal string of at most `digits` whole digits and `places` decimals;
    no sign, exponent or JSON number (a float is never money). The admin's prices (app/admin/schemas.py `Amount`)
    and the budgets of POST /recommend (app/planner/schemas.py) both read it."""
    return rf"^\d{{1,{digits}}}(\.\d{{1,{places}}})?$"


PLAIN_DECIMAL = re.compile(r"^[+-]?\d+(\.\d+)?$")  # digits and a point: no exponent, comma, NaN or JSON number


def decimal_string(example: str) -> Callable[[Any], Any]:
    """A before-validator of a Decimal field that takes money as a decimal string in plain notation, as the admin's
    prices (`money_pattern`): a JSON number or "1e5" is a 422 `decimal_string` naming the field (review R4-10: both
    were taken, and echoed back as "1E+5"); the field's own bounds (> 0, its decimal places and digits) then apply,
    each worded by its pydantic type (app/text/field_words.py)."""

    def check(value: Any) -> Any:
        if value is None:
            return value
        if not isinstance(value, str) or not PLAIN_DECIMAL.fullmatch(value.strip()):
            raise PydanticCustomError(
                "decimal_string",
                'must be a decimal string such as "{example}": digits and a point, no exponent or JSON number',
                {"example": example},
            )
        return value.strip()

    return check


def mirror(target: type[T], source: object, **computed: Any) -> T:
    """`target` (a pydantic model or a dataclass) from `source`'s attributes that bear its field names,
    and the `computed` fields (which win)."""
    names = [name for name in _field_names(target) if name not in computed and hasattr(source, name)]
    return target(**{name: getattr(source, name) for name in names}, **computed)


def _field_names(target: type[Any]) -> list[str]:
    if issubclass(target, BaseModel):
        return list(target.model_fields)
    return [f.name for f in dataclasses.fields(target)]


def coded_error(code: str, **params: Any) -> PydanticCustomError:
    """A request model's own refusal by its code (app/text/refusal_words.py) and figures: pydantic's 422 carries the
    code as `errors[].type` and the figures as `errors[].params` (app.common.errors), its English as the message,
    and the pages and a Chinese request read it in their language."""
    # pydantic puts a context value in for each `{name}` of the template; the text is rendered already, and has none
    return PydanticCustomError(code, messages.refusal(code, params), params)
