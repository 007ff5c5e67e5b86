"""Revision 0003 on both databases: its tables, the audit log's append-only triggers, and a clean
downgrade to 0002 (triggers and the PostgreSQL trigger function go too) and back up."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import create_engine, inspect, text

from app.db.migrate import downgrade, upgrade
from tests.conftest import BACKENDS
from tests.servers import scratch_database

TABLES = {"admin_users", "admin_sessions", "api_tokens", "audit_log", "login_attempts", "sku_availability"}


@pytest.fixture(params=BACKENDS)
def scratch(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    with scratch_database(request.param, tmp_path_factory, "admin_migration") as url:
        yield request.param, url


def _state(url: str, backend: str) -> tuple[set[str], set[str]]:
    engine = create_engine(url)
    with engine.connect() as connection:
        tables = set(inspect(connection).get_table_names()) & TABLES
        query = (
            "SELECT tgname FROM pg_trigger WHERE NOT tgisinternal"
            if backend == "postgresql"
            else "SELECT name FROM sqlite_master WHERE type = 'trigger'"
        )
        triggers = {row[0] for row in connection.execute(text(query)) if "audit" in row[0]}
        if backend == "postgresql":
            triggers |= {
                f"function {row[0]}"
                for row in connection.execute(
                    text("SELECT proname FROM pg_proc WHERE proname = 'audit_log_append_only'")
                )
            }
    engine.dispose()
    return tables, triggers


def test_0003_up_down_up(scratch: tuple[str, str]) -> None:
    backend, url = scratch
    expected_triggers = (
        {"audit_log_append_only", "audit_log_no_truncate", "function audit_log_append_only"}
        if backend == "postgresql"
        else {"audit_log_no_update", "audit_log_no_delete"}
    )
    upgrade(url)
    assert _state(url, backend) == (TABLES, expected_triggers)
    downgrade(url, "0002")
    assert _state(url, backend) == (set(), set())
    upgrade(url)
    assert _state(url, backend) == (TABLES, expected_triggers)
