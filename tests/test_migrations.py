"""The Alembic migrations own the schema: up, down to base and up again on both databases,
and the ORM models match the migrated schema (`alembic check`)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from alembic import command
from sqlalchemy import create_engine, inspect

from app.db.migrate import alembic_config, downgrade, upgrade
from tests.conftest import BACKENDS
from tests.servers import scratch_database


@pytest.fixture(params=BACKENDS)
def scratch_url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A database of its own, so that going down to base does not disturb the other tests."""
    with scratch_database(request.param, tmp_path_factory, "migrations") as url:
        yield url


def _tables(url: str) -> set[str]:
    engine = create_engine(url)
    names = set(inspect(engine).get_table_names()) - {"alembic_version"}
    engine.dispose()
    return names


def test_up_down_up(scratch_url: str) -> None:
    upgrade(scratch_url)
    assert {"gpu_types", "skus", "sku_prices", "term_discounts", "hub_configs"} <= _tables(scratch_url)
    downgrade(scratch_url, "base")
    assert _tables(scratch_url) == set()
    upgrade(scratch_url)
    assert {"gpu_types", "skus", "sku_prices", "term_discounts"} <= _tables(scratch_url)


def test_models_match_migrations(scratch_url: str) -> None:
    upgrade(scratch_url)
    command.check(alembic_config(scratch_url))  # raises when autogenerate would emit operations
