"""Shared bases for the JSON API's bodies.

Every request body inherits `RequestModel`: unknown fields are refused (a typo is an error, not a
silent default) and `NaN`/`Infinity` (which Python's JSON parser accepts, and `1e400` overflows to)
are refused as values. Numeric ranges and list lengths stay on each field (`Field(ge=…, le=…)`,
`max_length=…`).

A response that shows a domain result field for field, or a domain value read from a request, is
built with `mirror`: the fields named like the source's attributes are copied, and only what the
target words differently is spelled out.
"""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints

from app.money import MoneyError, check_currency

T = TypeVar("T")


class RequestModel(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


def _currency(value: str) -> str:
    try:
        return check_currency(value)
    except MoneyError as exc:
        raise ValueError(str(exc)) from exc


Currency = Annotated[
    str,
    StringConstraints(strip_whitespace=True, pattern=r"^[A-Za-z]{3}$"),
    AfterValidator(_currency),
    Field(description="ISO 4217 code", examples=["CNY"]),
]


def mirror(target: type[T], source: object, **computed: Any) -> T:
    """`target` (a pydantic model or a dataclass) from `source`'s attributes that bear its field names,
    and the `computed` fields (which win)."""
    names = [name for name in _field_names(target) if name not in computed and hasattr(source, name)]
    return target(**{name: getattr(source, name) for name in names}, **computed)


def _field_names(target: type[Any]) -> list[str]:
    if issubclass(target, BaseModel):
        return list(target.model_fields)
    return [f.name for f in dataclasses.fields(target)]
