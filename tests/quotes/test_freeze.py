"""An issued quote is frozen: later price, discount, add-on and SKU changes (even retirement) leave
every figure and the printed page byte for byte as they were."""

from __future__ import annotations

from datetime import UTC, datetime

from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.catalog.models import SkuPrice
from app.catalog.repository import get_addon, get_sku_by_slug
from tests.quotes.helpers import h100_body


def _documents(client: TestClient, quote_id: str) -> tuple[bytes, bytes, bytes]:
    return (
        client.get(f"/quotes/{quote_id}").content,
        client.get(f"/quotes/{quote_id}/print").content,
        client.get(f"/quotes/{quote_id}/print?lang=zh").content,
    )


def _change_the_catalog(db: Session) -> None:
    sku = get_sku_by_slug(db, "h100-80g-sxm-8x")
    db.add(
        SkuPrice(
            sku=sku,
            amount_minor=9_500_000,
            currency="CNY",
            effective_from=datetime.now(UTC),
            created_by="admin@example.com",
        )
    )
    next(d for d in sku.discounts if d.term == "annual").discount_bp = 2000
    sku.name = "8x H100 80G SXM (renamed)"
    get_addon(db, sku.id, "infiniband-400g").amount_minor = 500_000
    db.flush()
    db.expire_all()


def test_price_changes_leave_an_issued_quote_unchanged(client: TestClient, db: Session) -> None:
    issued = client.post("/quotes", json=h100_body()).json()
    before = _documents(client, issued["id"])

    _change_the_catalog(db)
    later = client.post("/quotes", json=h100_body()).json()  # the catalog did change…
    assert (later["unit_list_price"], later["unit_effective_price"]) == ("95000.00", "76000.00")
    assert later["lines"][1]["amount"] == "120000.00"
    assert later["total"] == "1944000.00"  # 2 × 12 × 76000.00 + 2 × 12 × 5000.00
    assert later["lines"][0]["description"] == "8x H100 80G SXM (renamed)"

    assert _documents(client, issued["id"]) == before  # …the issued quote did not
    assert client.get(f"/quotes/{issued['id']}").json()["total"] == "2040000.00"


def test_retiring_the_sku_leaves_an_issued_quote_unchanged(client: TestClient, db: Session) -> None:
    issued = client.post("/quotes", json=h100_body()).json()
    before = _documents(client, issued["id"])
    _change_the_catalog(db)
    get_sku_by_slug(db, "h100-80g-sxm-8x").status = "retired"
    db.flush()
    db.expire_all()

    refused = client.post("/quotes", json=h100_body())
    assert refused.status_code == 422
    assert refused.json()["errors"][0]["message"].startswith(
        "SKU 'h100-80g-sxm-8x' is retired and can no longer be quoted; active SKUs: a100-40g-pcie-card, "
    )
    assert _documents(client, issued["id"]) == before
    assert b"8x H100 80G SXM NVSwitch server" in before[1] and b"2,040,000.00" in before[1]
