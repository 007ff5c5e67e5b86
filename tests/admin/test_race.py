"""Two admins saving the same SKU at the same moment, each in its own committed transaction: both
read version 1 and pass the version check, the first commits, and the second's UPDATE … WHERE
version = 1 matches no row, so it gets 409 and the first edit survives. Runs on a scratch database
of its own (SQLite file, PostgreSQL database) because it commits."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from app.admin import catalog_editing, service
from app.admin.schemas import SkuPatch
from app.common.errors import Conflict
from app.db.engine import build_engine, build_sessionmaker
from app.entry.seed import seed_database
from tests.conftest import BACKENDS
from tests.servers import migrated_database

CARD = "a100-40g-pcie-card"


@pytest.fixture(params=BACKENDS)
def scratch_url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with migrated_database(request.param, tmp_path_factory, "admin_race") as url:
        yield url


def test_simultaneous_saves_one_wins_the_other_gets_409(scratch_url: str) -> None:
    engine = build_engine(scratch_url)
    sessions = build_sessionmaker(engine)
    with sessions.begin() as setup:
        seed_database(setup)
    alice = service.Actor(None, "alice@example.com", "api")
    bob = service.Actor(None, "bob@example.com", "api")
    first, second = sessions(), sessions()
    try:
        seen_by_alice, seen_by_bob = (
            catalog_editing.get_sku(first, CARD),
            catalog_editing.get_sku(second, CARD),
        )  # both hold v1
        assert seen_by_alice.version == seen_by_bob.version == 1
        catalog_editing.update_sku(first, slug=CARD, data=SkuPatch(version=1, name="Alice's name"), actor=alice)
        first.commit()
        with pytest.raises(
            Conflict, match=r"was changed by alice@example.com at .* \(version 1 → 2\): name\."
        ) as raced:
            catalog_editing.update_sku(second, slug=CARD, data=SkuPatch(version=1, name="Bob's name"), actor=bob)
        second.rollback()
        # review R6-6: the 409 lists what the other save changed, as a stale version's does (docs/admin.md)
        errors = {e["field"]: e for e in raced.value.errors or []}
        assert errors["version"]["code"] == "stale_sku_by" and errors["version"]["current"] == 2
        assert errors["name"]["current"] == "Alice's name"
    finally:
        first.close()
        second.close()
    with sessions() as check:
        sku = catalog_editing.get_sku(check, CARD)
        assert (sku.name, sku.version) == ("Alice's name", 2)
        history = service.audit_page(check, service.AuditFilter(entity_type="sku"))[0]
        assert [(e.actor, e.after["name"]) for e in history] == [("alice@example.com", "Alice's name")]
    engine.dispose()
