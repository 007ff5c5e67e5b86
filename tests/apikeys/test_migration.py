"""Revision 0014 on both databases: the api_keys table and quotes.organisation come and go, and the quotes
issued before (and with a key) survive the way down and up again (SQLite rebuilds the quotes table to drop
the column)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import create_engine, inspect, select, text
from sqlalchemy.orm import Session

from app.db.migrate import downgrade, upgrade
from app.entry.seed import seed_database
from app.quotes import service as quotes_service
from app.quotes.models import Quote
from app.quotes.schemas import QuoteCreate
from tests.conftest import BACKENDS
from tests.quotes.helpers import a100_body
from tests.servers import scratch_database


@pytest.fixture(params=BACKENDS)
def scratch_url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with scratch_database(request.param, tmp_path_factory, "apikeys_migration") as url:
        yield url


def _columns(url: str) -> tuple[set[str], set[str]]:
    engine = create_engine(url)
    found = inspect(engine)
    tables = set(found.get_table_names())
    columns = {c["name"] for c in found.get_columns("quotes")}
    engine.dispose()
    return tables, columns


def test_up_down_up_keeps_the_quotes(scratch_url: str) -> None:
    upgrade(scratch_url)
    engine = create_engine(scratch_url)
    with Session(engine) as session:
        seed_database(session)
        session.commit()
        keyed = quotes_service.create_quote(session, data=QuoteCreate(**a100_body()), organisation="Acme")
        plain = quotes_service.create_quote(session, data=QuoteCreate(**a100_body()))
    assert "api_keys" in _columns(scratch_url)[0] and "organisation" in _columns(scratch_url)[1]
    downgrade(scratch_url, "0011")
    tables, columns = _columns(scratch_url)
    assert "api_keys" not in tables and "organisation" not in columns
    with engine.connect() as connection:
        numbers = set(connection.scalars(text("SELECT number FROM quotes")))
    assert numbers == {keyed.quote.number, plain.quote.number}
    upgrade(scratch_url)
    with Session(engine) as session:
        rows = session.execute(select(Quote.number, Quote.organisation)).all()
    assert {tuple(row) for row in rows} == {(keyed.quote.number, None), (plain.quote.number, None)}
    engine.dispose()
