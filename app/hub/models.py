"""The Hub config cache: one row per model id (case-folded, as the Hub matches ids) and revision.

A row holds either a config the estimator can size (compact JSON, at most HF_CONFIG_MAX_BYTES) or a
remembered refusal (`miss`: the error code and its parameters) that expires after HF_MISS_TTL_S. The
table is kept under HF_CACHE_MAX_BYTES (the sum of `size_bytes`) by deleting the rows used least
recently (`used_at`), so what any client sends bounds it; a config is read from the Hub again after
its row is evicted or deleted.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from app.db.base import Base, UtcDateTime, utcnow
from app.planner.schemas import HF_ID_MAX_CHARS


class HubConfig(Base):
    __tablename__ = "hub_configs"
    __table_args__ = (UniqueConstraint("hf_key", "revision"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    hf_key: Mapped[str] = mapped_column(String(HF_ID_MAX_CHARS))  # the id case-folded: Qwen/X and qwen/x share a row
    revision: Mapped[str] = mapped_column(String(100))
    config_json: Mapped[str | None] = mapped_column(Text, nullable=True)  # compact JSON; None for a miss
    miss: Mapped[str | None] = mapped_column(Text, nullable=True)  # {"code": …, "params": …} of a refusal
    size_bytes: Mapped[int] = mapped_column(Integer)  # what the row counts against HF_CACHE_MAX_BYTES
    fetched_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    used_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow, index=True)
    expires_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)  # misses only
