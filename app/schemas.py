"""Shared bases for the JSON API's bodies.

Every request body inherits `RequestModel`: unknown fields are refused (a typo is an error, not a
silent default) and `NaN`/`Infinity` (which Python's JSON parser accepts, and `1e400` overflows to)
are refused as values. Numeric ranges and list lengths stay on each field (`Field(ge=…, le=…)`,
`max_length=…`).

A response that shows a domain result field for field is built with `mirror`: the fields named like
the result's attributes are copied, and only what the response words differently is spelled out.
"""

from __future__ import annotations

from typing import Annotated, Any, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints

from app.money import MoneyError, check_currency

M = TypeVar("M", bound=BaseModel)


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


def mirror(model: type[M], source: object, **computed: Any) -> M:
    """`model` from `source`'s attributes that bear its field names, and the `computed` fields (which win)."""
    names = [name for name in model.model_fields if name not in computed and hasattr(source, name)]
    copied = {name: getattr(source, name) for name in names}
    return model(**copied, **computed)
