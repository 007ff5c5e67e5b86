"""Keeping a table under a size cap: delete the rows used least recently until the excess is gone (the Hub config
cache, the stored quote PDFs)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import Executable
from sqlalchemy.orm import Session


def evict_least_used(
    session: Session, excess: int, least_used: Executable, remove: Callable[[list[tuple[Any, ...]]], None]
) -> int:
    """Delete rows until `excess` bytes are gone: `least_used` selects a batch of rows' keys and, last, their sizes,
    used least recently first; `remove` deletes the keys chosen from each batch. The count deleted."""
    deleted = 0
    while excess > 0:
        rows = session.execute(least_used).all()
        if not rows:
            break
        keys = []
        for *key, size in rows:
            if excess <= 0:
                break
            keys.append(tuple(key))
            excess -= size
        remove(keys)
        deleted += len(keys)
    return deleted
