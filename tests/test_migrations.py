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


def test_the_seeded_fabric_gets_its_bandwidth_on_upgrade(scratch_url: str) -> None:
    """Revision 0013 adds the add-on bandwidth and gives the seeded InfiniBand add-on, still without a figure, the
    8 × 400 Gb/s the seed states (app/catalog/seed_data.py); down and up again keeps it so."""
    from sqlalchemy import text
    from sqlalchemy.orm import Session

    from app.catalog.seed import seed_catalog

    upgrade(scratch_url)
    engine = create_engine(scratch_url)
    with Session(engine) as session, session.begin():
        seed_catalog(session)
    engine.dispose()
    downgrade(scratch_url, "0011")
    engine = create_engine(scratch_url)
    columns = {c["name"] for c in inspect(engine).get_columns("sku_addons")}
    engine.dispose()
    assert "ports_per_server" not in columns
    upgrade(scratch_url)
    engine = create_engine(scratch_url)
    with engine.connect() as connection:
        rows = connection.execute(text("SELECT code, ports_per_server, port_gbps, bandwidth_source FROM sku_addons"))
        [(code, ports, gbps, source)] = list(rows)
    engine.dispose()
    assert (code, ports, gbps) == ("infiniband-400g", 8, 400) and "DGX H100" in source
