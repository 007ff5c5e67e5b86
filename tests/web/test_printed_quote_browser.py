"""The printed quote in headless Chromium against a real server (reviews R5-4, R5-11): a serving quote shows the
caveat on its time per token and the speculative decoding it assumes, in English and Chinese; a 1-card quote counts
its card and the GPU it rents, not the server's four."""

from __future__ import annotations

import httpx

from app.text import messages
from tests.quotes.helpers import a100_body
from tests.quotes.test_serving_caveats import ASSUMED, CUSTOMER, REVIEWED


def _quote(live_server: str, body: dict) -> dict:
    response = httpx.post(f"{live_server}/quotes", json=body, timeout=60)
    assert response.status_code == 201, response.text
    return response.json()


def test_a_printed_serving_quote_shows_its_latency_caveat_and_assumptions(live_server: str, page) -> None:
    option = httpx.post(f"{live_server}/recommend", json=REVIEWED, timeout=120).json()["options"][0]
    quote = _quote(live_server, {**option["quote"], "customer": CUSTOMER})
    (frozen,) = [n["params"] for n in quote["note_codes"] if n["code"] == "moe_low_concurrency_unvalidated"]
    for lang in ("en", "zh"):
        page.goto(f"{live_server}{quote['links']['print']}?lang={lang}")
        notes = page.inner_text("section.notes")
        assert messages.quote_note("moe_low_concurrency_unvalidated", frozen, lang) in notes, lang
        job = page.inner_text("section.job")
        for words in ASSUMED[lang]:
            assert words in job, (lang, words)


def test_a_printed_one_card_quote_states_the_card_it_rents(live_server: str, page) -> None:
    quote = _quote(live_server, a100_body(quantity=1))
    page.goto(f"{live_server}{quote['links']['print']}?lang=en")
    assert page.inner_text("table.lines tbody td.num >> nth=0") == "1 card"
    configuration = page.inner_text("main")
    assert "1 × NVIDIA A100 40GB PCIe, rented by the card (in a server of 4)" in configuration
    assert "4 × NVIDIA A100 40GB PCIe" not in configuration
