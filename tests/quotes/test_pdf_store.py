"""Stored quote PDFs are bounded whatever clients ask for: one per quote and language (a new status
replaces it, it does not add one), and all of them together under PDF_STORE_MAX_BYTES, the least
recently used deleted first (and rendered again when asked for)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from fastapi.testclient import TestClient
from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from app.common.settings import Settings
from app.quotes import repository
from app.quotes.models import Quote, QuoteDocument
from tests.conftest import client_for
from tests.quotes.helpers import h100_body


def _documents(db: Session, quote_id: int) -> dict[str, tuple[str, int]]:
    rows = db.execute(
        select(QuoteDocument.lang, QuoteDocument.html_sha256, QuoteDocument.size_bytes).where(
            QuoteDocument.quote_id == quote_id
        )
    )
    return {lang: (digest, size) for lang, digest, size in rows}


def test_a_new_status_replaces_the_stored_pdf(client: TestClient, db: Session) -> None:
    quote = client.post("/quotes", json=h100_body()).json()
    row_id = db.scalar(select(Quote.id).where(Quote.public_id == quote["id"]))
    assert row_id is not None
    issued = client.get(f"/quotes/{quote['id']}.pdf")
    assert issued.status_code == 200
    assert client.get(f"/quotes/{quote['id']}.pdf").content == issued.content  # served as stored
    first = _documents(db, row_id)
    assert list(first) == ["en"] and first["en"][1] == len(issued.content)

    assert client.post(f"/quotes/{quote['id']}/accept").status_code == 200
    accepted = client.get(f"/quotes/{quote['id']}.pdf")
    assert accepted.status_code == 200 and accepted.content != issued.content
    after = _documents(db, row_id)
    assert list(after) == ["en"] and after["en"][0] != first["en"][0]  # replaced, not added
    assert client.get(f"/quotes/{quote['id']}.pdf?lang=zh").status_code == 200
    assert sorted(_documents(db, row_id)) == ["en", "zh"]


def test_stored_pdfs_stay_under_the_cap_least_recently_used_first(client: TestClient, db: Session) -> None:
    cap = 1024 * 1024
    pdf = b"%PDF-" + b"x" * 150_000  # about a quote's PDF (143 kB in English, 253 kB in Chinese)
    public_ids = [client.post("/quotes", json=h100_body()).json()["id"] for _ in range(12)]  # 1.8 MB of PDFs
    quotes = [db.scalar(select(Quote.id).where(Quote.public_id == public_id)) or 0 for public_id in public_ids]
    old = datetime.now(UTC) - timedelta(hours=1)
    for index, quote_id in enumerate(quotes):
        repository.keep_document(
            db, quote_id=quote_id, lang="en", html_sha256=f"{index:064x}", pdf=pdf, max_total_bytes=cap
        )
        stored = db.scalar(select(func.sum(func.length(QuoteDocument.pdf))))
        assert stored is not None and stored <= cap
        if index == 8:  # six kept ([3] to [8]): all an hour old, then [3] is read
            db.execute(update(QuoteDocument).values(used_at=old))
            assert repository.cached_document(db, quote_id=quotes[3], lang="en", html_sha256=f"{3:064x}") == pdf
    kept = set(db.scalars(select(QuoteDocument.quote_id)))
    assert kept == {quotes[3], *quotes[7:]}  # the three stored after the read evicted [4] to [6], not [3]
    assert len(kept) == cap // len(pdf)
    assert repository.documents_bytes(db) == len(kept) * len(pdf)


def test_the_cap_is_a_setting_read_by_the_pdf_route(app_settings: Settings, db: Session) -> None:
    with client_for(app_settings.model_copy(update={"pdf_store_max_bytes": 1024 * 1024}), db) as client:
        ids = [client.post("/quotes", json=h100_body()).json()["id"] for _ in range(2)]
        for public_id in ids:
            for lang in ("en", "zh"):
                assert client.get(f"/quotes/{public_id}.pdf?lang={lang}").status_code == 200
    assert repository.documents_bytes(db) <= 1024 * 1024
