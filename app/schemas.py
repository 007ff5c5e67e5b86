"""Shared bases for the JSON API's request bodies.

Every request body inherits `RequestModel`: unknown fields are refused (a typo is an error, not a
silent default) and `NaN`/`Infinity` (which Python's JSON parser accepts, and `1e400` overflows to)
are refused as values. Numeric ranges and list lengths stay on each field (`Field(ge=…, le=…)`,
`max_length=…`).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints

from app.money import MoneyError, check_currency


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
