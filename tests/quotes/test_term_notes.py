"""A quote whose term bills far more than the job uses, or more than the other term would, says so (review R4-6): the
option's `term_longer_than_job` and `other_term_cheaper` are frozen into the quote's notes and note codes, and its
page and PDF print them in English and Chinese. SQLite and PostgreSQL."""

from __future__ import annotations

import io
from typing import Any

from fastapi.testclient import TestClient
from pypdf import PdfReader

from app.quotes.printing import quote_money
from app.text import messages
from tests.factories import recommend

# The review's case: an 8B full fine-tune of 5e10 tokens at 8192, annual term, cheapest: ~536 h of 8640 billed.
ANNUAL = {
    "model": {"preset": "llama-3.1-8b"},
    "task": "full_finetune",
    "tokens": 5e10,
    "seq_len": 8192,
    "constraints": {"term": "annual", "objective": "cheapest"},
}
CUSTOMER = {"name": "Ada", "company": "Acme", "email": "ada@example.org"}


def _issued(client: TestClient, body: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    option = recommend(client, body)["options"][0]
    response = client.post("/quotes", json={**option["quote"], "customer": CUSTOMER})
    assert response.status_code == 201, response.text
    return option, response.json()


def test_an_annual_quote_for_a_short_job_notes_the_term_warnings_of_its_option(client: TestClient) -> None:
    option, quote = _issued(client, ANNUAL)
    warned = {w["code"]: w for w in option["warnings"]}
    assert {"term_longer_than_job", "other_term_cheaper"} <= set(warned)
    codes = {n["code"]: n["params"] for n in quote["note_codes"]}
    assert {"term_longer_than_job", "other_term_cheaper"} <= set(codes)
    cheaper = codes["other_term_cheaper"]
    assert (cheaper["job_total"], cheaper["other_term"]) == (quote["total"], "monthly")
    # the same figures the option warned of: the other term's months and total, the billed and used hours
    for name in ("other_months", "other_total", "months", "job_total"):
        assert cheaper[name] == warned["other_term_cheaper"]["params"][name], name
    longer = codes["term_longer_than_job"]
    assert longer["billed_hours"] == warned["term_longer_than_job"]["params"]["billed_hours"] == 8640
    assert abs(float(longer["used_hours"]) - warned["term_longer_than_job"]["params"]["used_hours"]) < 0.1
    english = messages.quote_note("other_term_cheaper", cheaper)
    assert english == warned["other_term_cheaper"]["message"] and english in quote["notes"]
    for lang in ("en", "zh"):
        page = client.get(quote["links"]["print"], params={"lang": lang}).text
        for code, params in codes.items():
            if code in ("term_longer_than_job", "other_term_cheaper"):
                assert messages.quote_note(code, params, lang, quote_money) in page, (lang, code)
    assert "月付租期对这个任务更便宜" in client.get(quote["links"]["print"], params={"lang": "zh"}).text
    pdf = client.get(quote["links"]["pdf"], params={"lang": "zh"})
    text = (
        "".join(p.extract_text() for p in PdfReader(io.BytesIO(pdf.content)).pages).replace(" ", "").replace("\n", "")
    )
    assert "月付租期对这个任务更便宜" in text


def test_a_monthly_quote_that_bills_its_job_whole_notes_no_term_warning(client: TestClient) -> None:
    _option, quote = _issued(client, {**ANNUAL, "constraints": {"term": "monthly", "objective": "cheapest"}})
    codes = {n["code"] for n in quote["note_codes"]}
    assert not codes & {"term_longer_than_job", "other_term_cheaper"}
