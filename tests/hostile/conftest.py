"""Hostile-request fixtures: one real `python -m app serve` per test module on a throwaway SQLite database
(migrated and seeded by the CLI), so that a request that would stall the service shows as a timeout."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.servers import app_cli, free_port, running_server

# A request that loops over a pasted count took hours before its count was bounded; an answer within this
# many seconds is an answer, not a stall (the bounded ones take milliseconds even on a loaded machine).
ANSWER_WITHIN_S = 20


@pytest.fixture(scope="module")
def live_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    database = tmp_path_factory.mktemp("hostile") / "hostile.db"
    env = {
        "DATABASE_URL": f"sqlite:///{database}",
        "PORT": str(free_port()),
        "ENV": "test",
        "RATE_LIMIT_PER_MINUTE": "0",
    }
    app_cli(["migrate"], env)
    app_cli(["seed"], env)
    with running_server(env) as base_url:
        yield base_url


@pytest.fixture()
def http(live_server: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=live_server, timeout=ANSWER_WITHIN_S) as client:
        yield client
