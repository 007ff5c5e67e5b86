"""Queries on the Hub config cache."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.hub.models import HubConfig


def get_config(session: Session, hf_id: str, revision: str) -> str | None:
    return session.scalar(select(HubConfig.config_json).where(HubConfig.hf_id == hf_id, HubConfig.revision == revision))


def keep_config(session: Session, hf_id: str, revision: str, config_json: str) -> None:
    """Store a fetched config; a concurrent request that stored the same one first wins (same content)."""
    try:
        with session.begin_nested():
            session.add(HubConfig(hf_id=hf_id, revision=revision, config_json=config_json))
    except IntegrityError:
        pass  # the unique (hf_id, revision) row exists: another request fetched it meanwhile
