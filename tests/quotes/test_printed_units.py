"""The printed quote says what it rents in words that read (review R5-11): a line's quantity in its unit, plural where
it is ("2 cards", "6 servers", not "2 card" / "6 server"); the GPU row the cards rented, not the server's ("1 × NVIDIA
A100 40GB PCIe, rented by the card", not "4 × …" on a 1-card quote); and the amounts in its notes grouped as its lines
are ("CNY 120,000.00", not "120000.00 CNY"), in English and Chinese, on the page and in the PDF. SQLite and
PostgreSQL."""

from __future__ import annotations

import html
import io
import re
from typing import Any

from fastapi.testclient import TestClient
from pypdf import PdfReader
from sqlalchemy.orm import Session

from tests.quotes.helpers import a100_body, h100_body
from tests.quotes.test_scheduled_price import _schedule_rise


def _issue(client: TestClient, body: dict[str, Any]) -> dict[str, Any]:
    response = client.post("/quotes", json=body)
    assert response.status_code == 201, response.text
    return response.json()


def _page(client: TestClient, quote: dict[str, Any], lang: str) -> str:
    text = client.get(quote["links"]["print"], params={"lang": lang}).text
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", text)))


def test_a_card_quote_states_the_cards_it_rents(client: TestClient) -> None:
    one = _issue(client, a100_body(quantity=1))
    page = _page(client, one, "en")
    assert "Quantity 1 card " in page and "1 card 3 " in page  # the configuration block and the line (3 months)
    assert "1 × NVIDIA A100 40GB PCIe, rented by the card (in a server of 4)" in page
    assert "4 × NVIDIA A100 40GB PCIe" not in page
    assert "1 × NVIDIA A100 40GB PCIe，按卡租用（所在服务器共 4 张）" in _page(client, one, "zh")
    two = _page(client, _issue(client, a100_body(quantity=2)), "en")
    assert "2 cards 3 " in two and "2 card " not in two


def test_a_server_quote_counts_its_servers_and_its_gpus(client: TestClient) -> None:
    quote = _issue(client, h100_body())
    page = _page(client, quote, "en")
    assert "2 servers 12 " in page and "2 server " not in page
    assert "8 × NVIDIA H100 80GB SXM per server (16 in all)" in page
    zh = _page(client, quote, "zh")
    assert "2 台服务器 12 " in zh and "每台服务器 8 × NVIDIA H100 80GB SXM（共 16 张）" in zh


def test_the_amounts_in_a_quotes_notes_are_grouped_as_its_lines(client: TestClient, db: Session) -> None:
    _effective, start = _schedule_rise(db)
    quote = _issue(client, h100_body(start_date=start))
    for lang in ("en", "zh"):
        page = _page(client, quote, lang)
        assert "CNY 120,000.00" in page and "CNY 100,000.00" in page, lang
        assert not re.search(r"\d{4,}\.\d\d CNY|CNY \d{4,}\.\d\d", page), lang
        pdf = client.get(quote["links"]["pdf"], params={"lang": lang}).content
        text = "".join(p.extract_text() for p in PdfReader(io.BytesIO(pdf)).pages)
        assert "120,000.00" in text and "120000.00" not in text, lang
