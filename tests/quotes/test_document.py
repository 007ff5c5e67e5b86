"""The printable page, yearly numbering, and money kept off floats on the whole path."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.quotes import repository
from app.quotes.service import line_amounts
from tests.quotes.helpers import h100_body


def test_printable_page_has_every_block(client: TestClient) -> None:
    quote = client.post("/quotes", json=h100_body()).json()
    response = client.get(quote["links"]["print"])
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    page = response.text
    assert '<link rel="stylesheet" href="/static/css/print.css">' in page
    assert client.get("/static/css/print.css").status_code == 200
    for text in (
        f'Quote <span class="number">{quote["number"]}</span>',  # header
        "GPU server rental (gpu-sizer)",  # seller block
        "<strong>深圳算力科技</strong>",
        "li.wei@example.com",  # customer block
        "8 × NVIDIA H100 80GB SXM",
        "NVLink + NVSwitch 900 GB/s",  # configuration
        "<dt>Parallel plan</dt><dd>tensor parallel 8 × pipeline 2, ZeRO-1 over the data-parallel ranks</dd>",
        "<dt>Model</dt><dd>Llama 3 70B, 70.6 billion parameters</dd>",  # the job in words
        "100,000.00",
        "−360,000.00 (15%)",
        "2,040,000.00",  # line items and term discount
        "Term discount (15%)",
        "CNY 2,040,000.00",  # totals
        "Indicative price: the catalog gives this price for reference",  # the catalog's note
        "InfiniBand NDR 400G, per node: priced on consultation, not included in the total.",
    ):
        assert text in page, text
    assert re.search(r"<dt>Valid until</dt><dd>\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC</dd>", page)


def test_chinese_labels(client: TestClient) -> None:
    quote = client.post("/quotes", json=h100_body()).json()
    page = client.get(quote["links"]["print"] + "?lang=zh").text
    assert '<html lang="zh-CN">' in page and f"<title>报价单 {quote['number']}</title>" in page
    assert "合计 (CNY)" in page and "面议" in page
    assert client.get(quote["links"]["print"] + "?lang=fr").status_code == 422


def test_numbers_restart_each_year_without_gaps(db: Session) -> None:
    numbers = []
    for year in (2031, 2031, 2032, 2031):
        numbers.append((year, repository.next_number(db, year)))
    assert numbers == [(2031, 1), (2031, 2), (2032, 1), (2031, 3)]


def test_money_arithmetic_refuses_floats() -> None:
    assert line_amounts(10_000_000, 2, 12, 1500) == (240_000_000, 36_000_000, 204_000_000)
    with pytest.raises(TypeError, match="integer minor units, got float"):
        line_amounts(100000.0, 2, 12, 1500)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="got Decimal"):
        from decimal import Decimal

        line_amounts(Decimal("100000.00"), 2, 12, 1500)  # type: ignore[arg-type]
