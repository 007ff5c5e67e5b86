"""Hostile-request fixtures: a client of `live_server` (tests/conftest.py: one real `python -m app serve` per
test module on a throwaway SQLite database, migrated and seeded by the CLI), so that a request that would
stall the service shows as a timeout."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

# A request that loops over a pasted count took hours before its count was bounded; an answer within this
# many seconds is an answer, not a stall (the bounded ones take milliseconds even on a loaded machine).
ANSWER_WITHIN_S = 20


@pytest.fixture()
def http(live_server: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=live_server, timeout=ANSWER_WITHIN_S) as client:
        yield client
