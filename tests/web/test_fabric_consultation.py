"""The wizard shows a multi-server option whose fabric add-on is priced on consultation with its totals followed by
"+ fabric on consultation" (中文 "+ 组网费用面议") and a note that they leave it out; a one-server option, and one
whose fabric is priced, show none (app/templates/web/_option.html). Before, nothing beside the total said so."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.catalog.repository import get_addon, get_sku_by_slug

HTML = {"accept": "text/html,application/xhtml+xml"}
QUERY = "preset=llama-3.1-70b&task=full_finetune&tokens_b=20"
WORDS = {"en": "+ fabric on consultation", "zh": "+ 组网费用面议"}
NOTE = {"en": "priced on consultation: the totals leave it out", "zh": "其价格面议，未计入各项合计"}


def _cards(page: str) -> list[tuple[int, str]]:
    """(servers, the card's HTML) of each option card on the results page."""
    parts = re.split(r'(?=<article class="option)', page)[1:]
    return [(int(re.search(r'data-nodes="(\d+)"', part).group(1)), part.split("</article>")[0]) for part in parts]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_totals_of_a_multi_server_option_say_the_fabric_is_on_consultation(client: TestClient, lang: str) -> None:
    page = client.get(f"/results?{QUERY}&lang={lang}", headers=HTML)
    assert page.status_code == 200, page.text
    cards = _cards(page.text)
    assert any(nodes > 1 for nodes, _ in cards)
    for nodes, card in cards:
        marks = card.count(f'<span class="plus-fabric">{WORDS[lang]}</span>')
        assert marks == (3 if nodes > 1 else 0), (lang, nodes)  # beside the monthly, annual and job totals
        assert (NOTE[lang] in card) == (nodes > 1)
    rank = next(i for i, (nodes, _) in enumerate(cards, start=1) if nodes > 1)
    quote_page = client.get(f"/quote?{QUERY}&lang={lang}&option={rank}", headers=HTML)
    assert WORDS[lang] in quote_page.text


def test_a_priced_fabric_shows_no_consultation_mark(client: TestClient, db: Session) -> None:
    sku = get_sku_by_slug(db, "h100-80g-sxm-8x")
    addon = get_addon(db, sku.id, "infiniband-400g") if sku is not None else None
    assert addon is not None
    addon.amount_minor = 800_000
    db.flush()
    page = client.get(f"/results?{QUERY}&lang=en", headers=HTML).text
    assert any(nodes > 1 for nodes, _ in _cards(page))
    assert WORDS["en"] not in page
