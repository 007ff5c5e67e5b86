"""A line's term discount is taken off its subtotal and rounded once (app.common.money.discounted_line), so the stated
percentage holds to the cent, and /recommend's option prices by the same rule as the quote it issues. Before, the
discounted unit price was rounded first and multiplied out: the review's case, 33,333.33 a month at 12.5 % for 12
months, took 50,000.04 off 399,999.96 (29,166.66375 rounded to 29,166.66, × 12) where 12.5 % is 49,999.995.
SQLite and PostgreSQL."""

from __future__ import annotations

from decimal import Decimal

from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.catalog.repository import get_sku_by_slug
from tests.factories import new_price, recommend

SKU = "a100-80g-sxm-8x"
CUSTOMER = {"name": "Ada", "company": "Acme", "email": "ada@example.org"}


def _review_price(db: Session) -> None:
    sku = get_sku_by_slug(db, SKU)
    assert sku is not None
    new_price(db, SKU, 3_333_333)
    next(d for d in sku.discounts if d.term == "annual").discount_bp = 1250
    db.flush()
    db.expire_all()


def test_the_annual_discount_comes_off_the_line_subtotal_rounded_once(client: TestClient, db: Session) -> None:
    _review_price(db)
    body = {"sku_id": SKU, "quantity": 1, "term": "annual", "months": 12, "customer": CUSTOMER}
    response = client.post("/quotes", json=body)
    assert response.status_code == 201, response.text
    quote = response.json()
    (line,) = quote["lines"]
    # 12.5 % of 399,999.96 is 49,999.995: half up, 50,000.00 (was 50,000.04 and a total of 349,999.92)
    assert (quote["subtotal"], line["discount"], line["amount"]) == ("399999.96", "50000.00", "349999.96")
    assert (quote["discount_total"], quote["total"]) == ("50000.00", "349999.96")
    assert line["discount_percent"] == "12.5"


def test_the_option_and_its_quote_agree_under_the_same_rule(client: TestClient, db: Session) -> None:
    _review_price(db)
    answer = recommend(
        client,
        model={"preset": "llama-3.1-8b"},
        task="lora",
        tokens=2e8,
        constraints={"term": "annual", "gpu_types": ["a100-80g-sxm"], "max_nodes": 1},
    )
    option = next(o for o in answer["options"] if o["sku"]["id"] == SKU)
    assert option["cost"]["job_total"] == "349999.96"
    response = client.post("/quotes", json={**option["quote"], "customer": CUSTOMER})
    assert response.status_code == 201, response.text
    assert Decimal(response.json()["total"]) == Decimal(option["cost"]["job_total"])


def test_the_schema_says_how_a_month_and_the_total_are_rounded(client: TestClient) -> None:
    """Review R5-9: a sales tool multiplied `monthly_effective` (2,474.99) by 12 and got 29,699.88 against a
    `job_total` of 29,699.90. Both are right by the one rule; the API's schema now says so where the field is read."""
    schemas = client.get("/openapi.json").json()["components"]["schemas"]
    for name in ("CostOut", "ConvertedCostOut"):
        description = schemas[name]["properties"]["monthly_effective"].get("description", "")
        assert "job_total" in description and "minor units" in description, name
