"""The revisions keep building exactly the schema they built when they were written: the SQL of the whole upgrade
chain, and of the downgrade from head to base, on PostgreSQL (Alembic's offline `--sql` mode) and on SQLite (the
statements, reads left out, that an upgrade of an empty file executes, then a downgrade to base: batch mode reflects
tables there, so it has no offline mode), equals, byte for byte, the SQL recorded in tests/golden/ from the
revisions as first written. Two things vary from run to run and are written in one form: the catalog revision's
token (a fresh uuid4) and, on SQLite, the order of the constraints and indexes of a table that batch mode rebuilds
from reflection (set order): a CREATE TABLE lists its columns as executed and its constraints sorted, and a run of
CREATE or DROP INDEX statements is sorted.

A new revision changes the chain's SQL: regenerate the files (`python -m tests.test_migrations_sql`) and check that
the diff only adds the new revision's statements.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import create_engine, event

from app.db.migrate import alembic_config

GOLDEN = Path(__file__).parent / "golden"
# The catalog revision token is a fresh uuid4 hex at each run (revisions 0006, 0008, 0013).
_TOKEN = re.compile(r"'[0-9a-f]{32}'")
# What batch mode reads to reflect a table (in an order that varies), not what builds the schema.
_READS = ("PRAGMA", "SELECT")


def postgresql_sql(direction: str = "upgrade") -> str:
    config = alembic_config("postgresql+psycopg://offline@localhost/offline")
    config.output_buffer = io.StringIO()
    if direction == "upgrade":
        command.upgrade(config, "head", sql=True)
    else:
        command.downgrade(config, "head:base", sql=True)
    return _TOKEN.sub("'<token>'", config.output_buffer.getvalue())


def sqlite_sql(tmp_dir: Path, direction: str = "upgrade") -> str:
    url = f"sqlite:///{tmp_dir / 'chain.db'}"
    engine = create_engine(url)
    statements: list[str] = []

    @event.listens_for(engine, "before_cursor_execute")
    def record(conn: object, cursor: object, statement: str, parameters: object, *args: object) -> None:
        if not statement.lstrip().startswith(_READS):
            statements.append(f"{_canonical(statement.strip())};  -- {parameters!r}\n")

    config = alembic_config(url)
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "head")
        if direction == "downgrade":
            statements.clear()
            command.downgrade(config, "base")
    engine.dispose()
    return _TOKEN.sub("'<token>'", "".join(_indexes_sorted(statements)))


def _indexes_sorted(statements: list[str]) -> list[str]:
    """Each run of consecutive CREATE or DROP INDEX statements sorted (batch mode reflects indexes in set order)."""
    result: list[str] = []
    run: list[str] = []
    for statement in [*statements, ""]:
        if statement.startswith(("CREATE INDEX", "CREATE UNIQUE INDEX", "DROP INDEX")):
            run.append(statement)
            continue
        result.extend(sorted(run))
        run = []
        result.append(statement)
    return result[:-1]


def _canonical(statement: str) -> str:
    """A CREATE TABLE with its constraint lines sorted; any other statement as it is."""
    if not statement.startswith("CREATE TABLE"):
        return statement
    head, *body, tail = statement.split("\n")
    lines = [line.rstrip().removesuffix(",") for line in body]
    columns = [line for line in lines if not line.lstrip().startswith("CONSTRAINT")]
    constraints = sorted(line for line in lines if line.lstrip().startswith("CONSTRAINT"))
    return "\n".join([head, ", \n".join(columns + constraints), tail])


DIRECTIONS = ("upgrade", "downgrade")


def _golden(dialect: str, direction: str) -> Path:
    return GOLDEN / f"migrations_{dialect}{'' if direction == 'upgrade' else '_downgrade'}.sql"


@pytest.mark.parametrize("direction", DIRECTIONS)
def test_postgresql_sql_is_unchanged(direction: str) -> None:
    assert postgresql_sql(direction) == _golden("postgresql", direction).read_text()


@pytest.mark.parametrize("direction", DIRECTIONS)
def test_sqlite_sql_is_unchanged(direction: str, tmp_path: Path) -> None:
    assert sqlite_sql(tmp_path, direction) == _golden("sqlite", direction).read_text()


if __name__ == "__main__":
    import tempfile

    GOLDEN.mkdir(exist_ok=True)
    for direction in DIRECTIONS:
        _golden("postgresql", direction).write_text(postgresql_sql(direction))
        with tempfile.TemporaryDirectory() as tmp:
            _golden("sqlite", direction).write_text(sqlite_sql(Path(tmp), direction))
