"""The configs read from the Hugging Face Hub, one row per model id and revision.

A row is written once, after a fetch that passed the JSON bounds (app.jsonguard); later requests for
the same id and revision read it instead of the Hub, so a model sized once stays sizeable while the
Hub is unreachable. Nothing refreshes a row: delete it to read the Hub again.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import DateTime, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from app.db.base import Base, utcnow
from app.planner.schemas import HF_ID_MAX_CHARS


class HubConfig(Base):
    __tablename__ = "hub_configs"
    __table_args__ = (UniqueConstraint("hf_id", "revision"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    hf_id: Mapped[str] = mapped_column(String(HF_ID_MAX_CHARS))
    revision: Mapped[str] = mapped_column(String(100))
    config_json: Mapped[str] = mapped_column(Text)  # config.json as the Hub served it (UTF-8 text)
    fetched_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
