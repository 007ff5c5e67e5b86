"""The Alembic migrations own the schema: up, down to base and up again on both databases,
and the ORM models match the migrated schema (`alembic check`)."""

from __future__ import annotations

import pytest
from alembic import command
from sqlalchemy import create_engine, inspect, text
from sqlalchemy.engine import make_url

from app.db.migrate import alembic_config, downgrade, upgrade
from tests.conftest import BACKENDS, require_backend_url


@pytest.fixture(params=BACKENDS)
def scratch_url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):  # noqa: ANN201
    """A database of its own, so that going down to base does not disturb the other tests."""
    url = require_backend_url(request.param, tmp_path_factory, name="migrations")
    if request.param == "sqlite":
        yield url
        return
    name = f"{make_url(url).database}_migrations"
    admin = create_engine(url, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    yield make_url(url).set(database=name).render_as_string(hide_password=False)
    with admin.connect() as connection:
        connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


def _tables(url: str) -> set[str]:
    engine = create_engine(url)
    names = set(inspect(engine).get_table_names()) - {"alembic_version"}
    engine.dispose()
    return names


def test_up_down_up(scratch_url: str) -> None:
    upgrade(scratch_url)
    assert {"gpu_types", "skus", "sku_prices", "term_discounts"} <= _tables(scratch_url)
    downgrade(scratch_url, "base")
    assert _tables(scratch_url) == set()
    upgrade(scratch_url)
    assert {"gpu_types", "skus", "sku_prices", "term_discounts"} <= _tables(scratch_url)


def test_models_match_migrations(scratch_url: str) -> None:
    upgrade(scratch_url)
    command.check(alembic_config(scratch_url))  # raises when autogenerate would emit operations
