"""API key shapes: what an admin sends to issue one, and what a list shows (never the key, never its hash)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import BaseModel, Field, StringConstraints

from app.common.schemas import RequestModel
from app.estimator.vocabulary import ApiScope

# A sales team's CRM behind one address: 600 a minute is five times the anonymous RATE_LIMIT_PER_MINUTE default.
DEFAULT_RATE_LIMIT_PER_MINUTE = 600
MAX_RATE_LIMIT_PER_MINUTE = 100_000  # a typo guard, not a capacity figure: 1,667 requests a second
Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100)]


class ApiKeyCreate(RequestModel):
    name: Name = Field(description="What the key is for, e.g. the CRM it is pasted into", examples=["HubSpot"])
    organisation: Name = Field(
        description="Whose key it is: quotes made with it are that organisation's, and it searches only those",
        examples=["Acme Sales"],
    )
    scopes: list[ApiScope] = Field(min_length=1, max_length=3, description="What the key may do")
    expires_at: datetime | None = Field(default=None, description="When it stops working (none: never)")
    rate_limit_per_minute: int = Field(
        default=DEFAULT_RATE_LIMIT_PER_MINUTE,
        ge=1,
        le=MAX_RATE_LIMIT_PER_MINUTE,
        description="Requests a minute the key may make on the rate-limited paths, in place of the per-address limit",
    )


class ApiKeyOut(BaseModel):
    id: int
    name: str
    organisation: str
    prefix: str = Field(description="The key's first characters, to tell keys apart; the key itself is not kept")
    scopes: list[ApiScope]
    rate_limit_per_minute: int
    created_at: datetime
    created_by: str
    expires_at: datetime | None
    last_used_at: datetime | None = Field(description="Kept to within a minute")
    revoked_at: datetime | None


class ApiKeyIssued(ApiKeyOut):
    key: str = Field(description="The key, shown this once: send it as `Authorization: Bearer <key>`")
