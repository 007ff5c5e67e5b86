"""API keys for sales tools: each belongs to an organisation the admin names, carries scopes and its own
rate limit, and is stored only as a keyed hash (HMAC-SHA256 under API_KEY_SECRET, app.apikeys.service):
the plain key is shown once, when it is issued."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, CheckConstraint, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from app.db.base import Base, UtcDateTime, utcnow


class ApiKey(Base):
    """One key; `prefix` (its first characters) tells keys apart in lists and logs-free support talk."""

    __tablename__ = "api_keys"
    __table_args__ = (CheckConstraint("rate_limit_per_minute > 0", name="rate_limit_positive"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(100))
    organisation: Mapped[str] = mapped_column(String(100), index=True)
    prefix: Mapped[str] = mapped_column(String(16))
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    scopes: Mapped[list[str]] = mapped_column(JSON)  # a subset of app.apikeys.schemas.SCOPES
    rate_limit_per_minute: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    created_by: Mapped[str] = mapped_column(String(254))  # the admin's email
    expires_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    last_used_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    revoked_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
