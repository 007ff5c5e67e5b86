"""Every field an audit entry records is shown under its label on GET /admin/audit, in English and Chinese
(app/admin/audit_labels.py, words in app/text/i18n_admin.py). Before, an API key's entry showed `organisation`,
`prefix`, `rate_limit_per_minute`, `created_by` (and a token's `user`) as raw keys beside translated ones, and the
key's numeric id under the SKU id's label "Id (lower-case, dashes)". SQLite and PostgreSQL."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.admin import capacity_editing, catalog_editing, catalog_transfer
from app.admin.pages import audit_label
from app.admin.schemas import ImportReport, audit_changes
from app.admin.service import Actor, create_token, issue_api_key, token_snapshot
from app.apikeys.schemas import ApiKeyCreate
from app.apikeys.service import get_key, snapshot as key_snapshot
from app.capacity.models import MaintenanceHold
from app.catalog.models import SkuAvailability, SkuPrice
from app.catalog.repository import get_addon, get_sku_by_slug
from app.text.i18n import Translator
from app.webhooks.models import WebhookEndpoint
from app.webhooks.service import endpoint_snapshot
from tests.admin.conftest import Admin, sign_in

SKU_ID_LABELS = ("Id (lower-case, dashes)", "ID（小写字母、短横线）")


def _key(db: Session, alice: Admin) -> int:
    data = ApiKeyCreate(name="HubSpot", organisation="Acme Sales", scopes=["recommend"], rate_limit_per_minute=90)
    actor = Actor(alice.user.id, alice.user.email, "api")
    return issue_api_key(db, data=data, actor=actor).id


def _audited(db: Session, alice: Admin) -> dict[str, dict[str, Any]]:
    """What each entity type's audit entries record: the snapshots app.admin writes them from."""
    sku = get_sku_by_slug(db, "h100-80g-sxm-8x")
    assert sku is not None
    addon = get_addon(db, sku.id, "infiniband-400g")
    assert addon is not None
    price = SkuPrice(amount_minor=100, currency="CNY", effective_from=datetime.now(UTC), note="n")
    hold = MaintenanceHold(region="shenzhen", starts_on=date(2027, 1, 1), ends_on=date(2027, 1, 2), units=1, note="")
    hold.version = 1
    endpoint = WebhookEndpoint(url="https://example.org/hook", events=["quote.issued"], description="", active=True)
    key = get_key(db, key_id=_key(db, alice))
    actor = Actor(alice.user.id, alice.user.email, "api")
    _value, token = create_token(db, user=alice.user, name="script", actor=actor)
    return {
        "api_key": key_snapshot(key),
        "api_token": token_snapshot(token, alice.user),
        "sku": {**catalog_editing.snapshot(sku), "price": {"amount": "1", "currency": "CNY"}},
        "sku_price": catalog_editing._price_snapshot(price, 1) or {},
        "sku_availability": catalog_editing._availability_snapshot(SkuAvailability(units_available=1, version=1)) or {},
        "sku_addon": catalog_editing.addon_out(addon).model_dump(),
        "maintenance_hold": capacity_editing._snapshot(hold) or {},
        "webhook": endpoint_snapshot(endpoint),
        "webhook_delivery": {"replay_of": 1, "endpoint_id": 1},
        "quote": {"status": "cancelled", "id": "x"},
        "catalog": ImportReport(
            gpu_types_created=[], skus_created=[], skus_updated=[], skus_unchanged=[], prices_added=0
        ).model_dump(),
        "sku.import": catalog_transfer._full_snapshot(db, sku),
    }


def _filled(value: Any) -> Any:
    """`value` with every null set, so each of its fields is a change (an entry shows a field that was set)."""
    if isinstance(value, dict):
        return {key: _filled(child) for key, child in value.items()}
    return "set" if value is None else value


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_audited_field_has_a_label(db: Session, alice: Admin, lang: str) -> None:
    t = Translator(lang)
    missing = [
        (entity, change.field)
        for entity, snap in _audited(db, alice).items()
        for change in audit_changes(None, _filled(snap))
        if audit_label(t, entity.split(".")[0], change.field) is None
    ]
    assert not missing, " ".join(f"{e}.{f}" for e, f in missing)
    assert audit_label(t, "api_key", "id") not in SKU_ID_LABELS


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_audit_page_labels_an_issued_keys_fields(client: TestClient, db: Session, alice: Admin, lang: str) -> None:
    _key(db, alice)
    sign_in(client, alice.user.email)
    page = client.get("/admin/audit", params={"lang": lang, "entity_type": "api_key"}).text
    rows = dict(re.findall(r'<th scope="row" title="([^"]+)">([^<]+)</th>', page))
    for field in ("organisation", "prefix", "rate_limit_per_minute", "created_by", "id", "name", "scopes"):
        assert field in rows and rows[field] != field, (field, rows)
    assert rows["id"] not in SKU_ID_LABELS
