"""The wizard's quote form when the units are gone (app.web.quote_form): the refusal is shown on the form in the
page's language, nothing of the refused quote is kept, and the printed quote shows its start and reservation."""

from __future__ import annotations

import io
import re
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from fastapi.testclient import TestClient
from pypdf import PdfReader
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.planner.schemas import OptionOut, RecommendIn
from app.quotes.models import Quote
from app.text.i18n import Translator
from app.web.quote_form import quote_from_form
from tests.factories import recommend, sales_key, units_available

CARD = "a100-40g-pcie-card"
BODY = {"model": {"preset": "llama-2-7b"}, "task": "lora", "constraints": {"objective": "cheapest"}}
FIELDS = {"name": "Li Wei", "company": "", "email": "li.wei@example.com", "months": "1"}


@pytest.fixture(autouse=True)
def _sales_tool(client: TestClient, db: Session) -> None:
    """The quotes here are a sales tool's (an API key with quotes:write), which hold their units: a quote issued
    without a key holds nothing (review R4-5, tests/capacity/test_anonymous_holds.py)."""
    client.headers.update(sales_key(client, db))


def test_a_capacity_taken_between_results_and_quote_is_shown_on_the_form(client: TestClient, db: Session) -> None:
    units_available(db, CARD, "shenzhen", 1)
    option = OptionOut.model_validate(recommend(client, BODY)["options"][0])
    assert (option.sku.id, option.cost.units) == (CARD, 1)
    taken = {"sku_id": CARD, "quantity": 1, "term": "monthly", "region": "shenzhen"}
    taken["customer"] = {"name": "Ada", "email": "ada@example.org"}
    assert client.post("/quotes", json=taken).status_code == 201
    quotes = db.scalar(select(func.count()).select_from(Quote))
    url, entry = quote_from_form(db, RecommendIn.model_validate(BODY), option, FIELDS, [], Translator("zh"), 14)
    assert url is None
    [message] = [m for messages in entry.errors.values() for m in messages]
    assert message.startswith("深圳自 ") and "没有 1 张卡（a100-40g-pcie-card）" in message
    assert db.scalar(select(func.count()).select_from(Quote)) == quotes  # the refused quote was not kept


def test_the_printed_quote_shows_its_start_and_what_it_holds(client: TestClient, db: Session) -> None:
    units_available(db, CARD, "shenzhen", 4)
    body = {"sku_id": CARD, "quantity": 2, "term": "monthly", "months": 1, "region": "shenzhen"}
    quote = client.post("/quotes", json=body | {"customer": {"name": "Ada", "email": "ada@example.org"}}).json()
    today = datetime.now(ZoneInfo("Asia/Shanghai")).date().isoformat()
    page = client.get(quote["links"]["print"]).text
    assert f"<dt>Rental starts</dt><dd>{today}</dd>" in page
    assert f"<dt>Reserved</dt><dd>2 × card in Shenzhen, {today} to {quote['reservation']['last_day']}</dd>" in page
    assert "<dt>租期开始</dt>" in client.get(quote["links"]["print"], params={"lang": "zh"}).text


def test_the_results_page_says_what_is_free(client: TestClient, db: Session) -> None:
    units_available(db, CARD, "shenzhen", 3)
    page = client.get("/results?preset=llama-2-7b&task=lora&objective=cheapest", headers={"accept": "text/html"}).text
    assert 'data-availability="available"' in page and "3 free in Shenzhen from " in page
    zh = client.get("/results?preset=llama-2-7b&task=lora&objective=cheapest&lang=zh", headers={"accept": "text/html"})
    assert "深圳 自 " in zh.text and " 起空闲 3 个" in zh.text


# (SKU, region, lang): what the printed quote's reservation and regions read, in the words of the results page
HELD = [
    (CARD, "shenzhen", "en", "2 × card in Shenzhen", "Shenzhen"),
    (CARD, "shenzhen", "zh", "深圳 2 张卡", "深圳"),
    ("h100-80g-sxm-8x", "singapore", "en", "2 × server in Singapore", "Singapore"),
    ("h100-80g-sxm-8x", "singapore", "zh", "新加坡 2 台服务器", "新加坡"),
]


@pytest.mark.parametrize(("sku", "region", "lang", "held", "regions"), HELD)
def test_the_printed_quote_names_its_region_and_unit_in_the_readers_words(
    client: TestClient, db: Session, sku: str, region: str, lang: str, held: str, regions: str
) -> None:
    units_available(db, sku, region, 4)
    body = {"sku_id": sku, "quantity": 2, "term": "monthly", "months": 1, "region": region}
    quote = client.post("/quotes", json=body | {"customer": {"name": "Ada", "email": "ada@example.org"}}).json()
    assert "reservation" in quote and quote["reservation"], quote
    page = client.get(quote["links"]["print"], params={"lang": lang}).text
    label = {"en": ("Reserved", "Regions"), "zh": ("已预留", "地域")}[lang]
    assert re.search(rf"<dt>{label[0]}</dt><dd>{held}[，,] ?\d{{4}}-", page), page
    assert f"<dt>{label[1]}</dt><dd>{regions}</dd>" in page
    assert f" {region}" not in re.sub(r"<[^>]+>", " ", page).replace(f"/{region}", "")
    pdf = client.get(quote["links"]["pdf"], params={"lang": lang})
    assert pdf.status_code == 200, pdf.text[:500]
    text = "".join(p.extract_text() for p in PdfReader(io.BytesIO(pdf.content)).pages).replace(" ", "")
    assert held.replace(" ", "") in text and region not in text, text


def test_the_wizard_start_date_reaches_the_results_and_the_quote(client: TestClient, db: Session) -> None:
    units_available(db, CARD, "shenzhen", 3)
    start = (datetime.now(ZoneInfo("Asia/Shanghai")).date() + timedelta(days=95)).isoformat()
    wizard = client.get("/?lang=zh", headers={"accept": "text/html"}).text
    assert 'name="start_date" type="date"' in wizard and "租期开始" in wizard
    query = f"preset=llama-2-7b&task=lora&objective=cheapest&start_date={start}"
    page = client.get(f"/results?{query}", headers={"accept": "text/html"}).text
    assert f"3 free in Shenzhen from {start}" in page and f"start_date={start}" in page  # its quote link
    form = {"preset": "llama-2-7b", "task": "lora", "objective": "cheapest", "start_date": start, "option": "1"}
    posted = client.post("/quote", data={**form, **FIELDS}, follow_redirects=False)
    assert posted.status_code == 303, posted.text
    quote = client.get(posted.headers["location"].split("/print")[0]).json()
    assert (quote["start_date"], quote["reservation"]) == (start, None)  # the wizard's quote holds nothing (R4-5)
    assert "units_not_reserved" in [note["code"] for note in quote["note_codes"]]
    late = client.get("/results?preset=llama-2-7b&task=lora&start_date=2099-01-01", headers={"accept": "text/html"})
    assert 'id="f-start_date"' in late.text and "must be from today" in late.text
