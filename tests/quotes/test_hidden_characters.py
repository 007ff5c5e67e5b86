"""A customer's name and company are printed on the quote, its page and its PDF as written: a control character or
a bidirectional formatting character (a right-to-left override U+202E reverses how the rest of the line reads,
Unicode Standard Annex #9 §2; CVE-2021-42574) is a 422 naming the field, and nothing is written (review R5-12: the
override was stored and printed). SQLite and PostgreSQL."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.quotes.models import Quote
from tests.quotes.helpers import h100_body


@pytest.mark.parametrize("field", ["name", "company"])
@pytest.mark.parametrize("hidden", ["\u202e", "\u2066", "\u200f", "\x07"])
def test_a_hidden_character_in_a_printed_field_is_a_422_and_writes_nothing(
    client: TestClient, db: Session, field: str, hidden: str
) -> None:
    before = db.scalar(select(func.count()).select_from(Quote))
    body = h100_body()
    body["customer"] = {**body["customer"], field: f"{hidden}evil{hidden}Corp"}
    response = client.post("/quotes", json=body)
    assert response.status_code == 422, response.text
    [error] = response.json()["errors"]
    assert error["field"] == f"customer.{field}"
    assert "bidirectional" in error["message"]
    assert db.scalar(select(func.count()).select_from(Quote)) == before


def test_right_to_left_script_itself_is_taken(client: TestClient) -> None:
    """Arabic or Hebrew letters are text, not formatting: a company so named is quoted."""
    body = h100_body()
    body["customer"] = {**body["customer"], "company": "شركة الحوسبة", "name": "דנה"}
    response = client.post("/quotes", json=body)
    assert response.status_code == 201, response.text
    assert response.json()["customer"]["company"] == "شركة الحوسبة"
