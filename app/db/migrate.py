"""Run Alembic migrations from code (the CLI and the tests use this; no create_all anywhere).

The migrations are package data (app/migrations), found beside this package, so an installed wheel
migrates the same as a checkout; alembic.ini at the repository root is only for the `alembic` command
(new revisions) and is not read here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine

MIGRATIONS = Path(__file__).resolve().parents[1] / "migrations"


def alembic_config(database_url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["database_url"] = database_url
    return config


def upgrade(database_url: str, revision: str = "head") -> None:
    command.upgrade(alembic_config(database_url), revision)


def downgrade(database_url: str, revision: str = "base") -> None:
    command.downgrade(alembic_config(database_url), revision)


@dataclass(frozen=True)
class Revisions:
    before: str | None  # None: a database without the schema
    head: str


def revisions(engine: Engine, database_url: str) -> Revisions:
    """The revision the database is at, and the latest the migrations know."""
    with engine.connect() as connection:
        before = MigrationContext.configure(connection).get_current_revision()
    head = ScriptDirectory.from_config(alembic_config(database_url)).get_current_head()
    return Revisions(before=before, head=head or "")
