"""Shared bases for the JSON API's request bodies.

Every request body inherits `RequestModel`: unknown fields are refused (a typo is an error, not a
silent default) and `NaN`/`Infinity` (which Python's JSON parser accepts, and `1e400` overflows to)
are refused as values. Numeric ranges and list lengths stay on each field (`Field(ge=…, le=…)`,
`max_length=…`).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class RequestModel(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
