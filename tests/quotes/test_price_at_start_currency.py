"""A quote priced at a scheduled list price in another currency than today's prints each price in its own currency
(review R7-2): a USD 90,000.00 price from a later day on h100-80g-sxm-8x, whose price today is CNY 100,000.00, was
noted "90000.00 USD a month from … (today's: 100000.00 USD)", and the printed page and PDF "当前标价：USD 100,000.00":
the note's one `currency` served both prices. Today's price now carries its own, `current_currency`; a note frozen
before it (no `current_currency`) still reads, in the one currency it kept. SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta

from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.capacity.service import catalog_today
from app.quotes.printing import quote_money
from app.text import messages
from tests.factories import new_price
from tests.quotes.helpers import h100_body
from tests.quotes.test_pdf import _pdf

SKU = "h100-80g-sxm-8x"


def test_the_start_price_and_todays_are_each_in_their_own_currency(client: TestClient, db: Session) -> None:
    today = catalog_today(db)
    effective = datetime.combine(today + timedelta(days=20), time(0), tzinfo=UTC)
    new_price(db, SKU, 9_000_000, currency="USD", effective_from=effective)
    db.expire_all()
    start = (today + timedelta(days=21)).isoformat()
    response = client.post("/quotes", json=h100_body(start_date=start))
    assert response.status_code == 201, response.text
    quote = response.json()
    assert (quote["currency"], quote["unit_list_price"]) == ("USD", "90000.00")
    (note,) = [n for n in quote["note_codes"] if n["code"] == "price_at_start"]
    assert note["params"] == {
        "start_date": start,
        "effective_from": effective.date().isoformat(),
        "monthly_list": "90000.00",
        "currency": "USD",
        "current": "100000.00",
        "current_currency": "CNY",
    }
    english = next(n for n in quote["notes"] if n.startswith("Priced at the list price in force"))
    assert "90000.00 USD a month" in english
    assert "(today's: 100000.00 CNY)" in english  # was 100000.00 USD
    page = client.get(quote["links"]["print"], params={"lang": "zh"}).text
    assert "自 " + effective.date().isoformat() + " 起每月 USD 90,000.00（当前标价：CNY 100,000.00）" in page
    assert "当前标价：USD" not in page
    text, _fonts = _pdf(client.get(quote["links"]["pdf"], params={"lang": "zh"}).content)
    assert "CNY 100,000.00" in text and "USD 100,000.00" not in text


def test_a_note_frozen_before_todays_currency_was_kept_still_reads() -> None:
    """A quote issued before `current_currency` kept one currency for both prices: it reads as it was issued."""
    frozen = {
        "start_date": "2027-01-05",
        "effective_from": "2026-12-20",
        "monthly_list": "120000.00",
        "current": "100000.00",
        "currency": "CNY",
    }
    assert messages.quote_note("price_at_start", frozen).endswith(
        "120000.00 CNY a month from 2026-12-20 (today's: 100000.00 CNY)."
    )
    assert messages.quote_note("price_at_start", frozen, "zh", quote_money).endswith(
        "自 2026-12-20 起每月 CNY 120,000.00（当前标价：CNY 100,000.00）。"
    )
