"""A catalog import that changes nothing is no change (review R4-12), on SQLite and PostgreSQL: it writes no audit
row, so it never blocks the next import of an export made before it; and a conflict words a real import as "the
catalog import of … UTC by …", in English and Chinese, never "catalog catalog"."""

from __future__ import annotations

import copy

from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.admin.models import AuditEntry
from app.text.i18n_admin import ADMIN_EN, ADMIN_ZH
from tests.admin.conftest import Admin

IMPORT = "/admin/api/catalog/import"


def _export(client: TestClient, admin: Admin) -> dict:
    response = client.get("/admin/api/catalog/export", headers=admin.headers)
    assert response.status_code == 200
    return response.json()


def _audit(db: Session) -> int:
    return db.scalar(select(func.count()).select_from(AuditEntry))


def test_a_no_op_import_writes_nothing_and_blocks_no_later_import(
    client: TestClient, db: Session, alice: Admin
) -> None:
    older = _export(client, alice)
    same = _export(client, alice)
    rows = _audit(db)
    assert client.post(IMPORT, headers=alice.headers, json=same).status_code == 200
    assert _audit(db) == rows  # nothing changed: nothing audited
    again = client.post(IMPORT, headers=alice.headers, json=older)  # an export made before it: no conflict
    assert again.status_code == 200, again.text
    assert again.json()["skus_updated"] == [] and _audit(db) == rows


def test_a_conflict_words_an_earlier_import_as_the_catalog_import(
    client: TestClient, db: Session, alice: Admin
) -> None:
    older = _export(client, alice)
    changed = copy.deepcopy(older)
    changed["skus"][0]["notes"] = "imported notes"
    assert client.post(IMPORT, headers=alice.headers, json=changed).status_code == 200
    refused = client.post(IMPORT, headers=alice.headers, json=older)
    assert refused.status_code == 409, refused.text
    detail = refused.json()["detail"]
    assert "catalog catalog" not in detail
    assert "the catalog import of " in detail and " UTC by alice@example.com" in detail
    assert ADMIN_EN["admin_change_catalog_import"].startswith("the catalog import of {at}")
    assert ADMIN_ZH["admin_change_catalog_import"] == "{actor} 于 {at}（UTC）进行的目录导入"
