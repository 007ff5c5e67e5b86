"""Alembic environment: one schema for SQLite (batch mode) and PostgreSQL.

The URL comes from `config.attributes["database_url"]` when the app runs the migrations
(app/db/migrate.py), else from the app settings (DATABASE_URL).
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection

from app.common.settings import get_settings
from app.db.engine import build_engine
from app.entry.models import target_metadata

config = context.config


def _database_url() -> str:
    url = config.attributes.get("database_url")
    if url:
        return str(url)
    return get_settings().database_url


def run_migrations_offline() -> None:
    url = _database_url()
    context.configure(
        url=url,
        target_metadata=target_metadata,
        literal_binds=True,
        render_as_batch=url.startswith("sqlite"),
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    engine = build_engine(_database_url())
    try:
        with engine.connect() as connection:
            _run(connection)
    finally:
        engine.dispose()  # one-shot: leave no pooled connections behind


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
