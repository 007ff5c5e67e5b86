"""The revisions keep building exactly the schema they built when they were written: the SQL of the whole upgrade
chain, on PostgreSQL (Alembic's offline `--sql` mode) and on SQLite (the statements an upgrade of an empty file
executes: batch mode reflects tables there, so it has no offline mode), equals, byte for byte, the SQL recorded in
tests/golden/ from the revisions as first written. Two things vary from run to run and are written in one form: the
catalog revision's token (a fresh uuid4) and, on SQLite, the order of the constraints of a table that batch mode
rebuilds from reflection (set order): a CREATE TABLE lists its columns as executed and its constraints sorted, and a
run of CREATE INDEX statements is sorted.

A new revision changes the chain's SQL: regenerate both files (`python -m tests.test_migrations_sql`) and check
that the diff only adds the new revision's statements, at the end.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

from alembic import command
from sqlalchemy import create_engine, event

from app.db.migrate import alembic_config

GOLDEN = Path(__file__).parent / "golden"
# The catalog revision token is a fresh uuid4 hex at each run (revisions 0006, 0008, 0013).
_TOKEN = re.compile(r"'[0-9a-f]{32}'")


def postgresql_sql() -> str:
    config = alembic_config("postgresql+psycopg://offline@localhost/offline")
    config.output_buffer = io.StringIO()
    command.upgrade(config, "head", sql=True)
    return _TOKEN.sub("'<token>'", config.output_buffer.getvalue())


def sqlite_sql(tmp_dir: Path) -> str:
    url = f"sqlite:///{tmp_dir / 'chain.db'}"
    engine = create_engine(url)
    statements: list[str] = []

    @event.listens_for(engine, "before_cursor_execute")
    def record(conn: object, cursor: object, statement: str, parameters: object, *args: object) -> None:
        statements.append(f"{_canonical(statement.strip())};  -- {parameters!r}\n")

    config = alembic_config(url)
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "head")
    engine.dispose()
    return _TOKEN.sub("'<token>'", "".join(_indexes_sorted(statements)))


def _indexes_sorted(statements: list[str]) -> list[str]:
    """Each run of consecutive CREATE INDEX statements sorted (batch mode recreates a table's indexes in set order)."""
    result: list[str] = []
    run: list[str] = []
    for statement in [*statements, ""]:
        if statement.startswith(("CREATE INDEX", "CREATE UNIQUE INDEX")):
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


def test_postgresql_upgrade_sql_is_unchanged() -> None:
    assert postgresql_sql() == (GOLDEN / "migrations_postgresql.sql").read_text()


def test_sqlite_upgrade_sql_is_unchanged(tmp_path: Path) -> None:
    assert sqlite_sql(tmp_path) == (GOLDEN / "migrations_sqlite.sql").read_text()


if __name__ == "__main__":
    import tempfile

    GOLDEN.mkdir(exist_ok=True)
    (GOLDEN / "migrations_postgresql.sql").write_text(postgresql_sql())
    with tempfile.TemporaryDirectory() as tmp:
        (GOLDEN / "migrations_sqlite.sql").write_text(sqlite_sql(Path(tmp)))
