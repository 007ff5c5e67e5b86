"""issued → accepted | cancelled | expired; expiry computed on read; admin listing filters."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.common.errors import Conflict, InvalidInput
from app.quotes import service
from app.quotes.models import Quote
from app.quotes.repository import get_by_public_id
from tests.quotes.helpers import a100_body, h100_body


def _expire(db: Session, public_id: str) -> None:
    get_by_public_id(db, public_id).valid_until = datetime.now(UTC) - timedelta(minutes=1)
    db.flush()


def test_valid_for_fourteen_days_by_default(client: TestClient) -> None:
    quote = client.post("/quotes", json=a100_body()).json()
    created, valid_until = (datetime.fromisoformat(quote[k]) for k in ("created_at", "valid_until"))
    assert valid_until - created == timedelta(days=14)


def test_accept_once_and_again(client: TestClient) -> None:
    quote = client.post("/quotes", json=a100_body()).json()
    accepted = client.post(quote["links"]["accept"])
    assert (accepted.status_code, accepted.json()["status"]) == (200, "accepted")
    assert accepted.json()["accepted_at"] is not None
    again = client.post(quote["links"]["accept"]).json()
    assert (again["status"], again["accepted_at"]) == ("accepted", accepted.json()["accepted_at"])


def test_an_expired_quote_still_displays_but_cannot_be_accepted(client: TestClient, db: Session) -> None:
    quote = client.post("/quotes", json=a100_body()).json()
    _expire(db, quote["id"])
    shown = client.get(quote["links"]["self"]).json()
    assert (shown["status"], shown["total"]) == ("expired", "16800.00")
    page = client.get(quote["links"]["print"]).text
    assert "This quote has expired and can no longer be accepted." in page
    refused = client.post(quote["links"]["accept"])
    assert refused.status_code == 409
    assert refused.headers["content-type"] == "application/problem+json"
    assert refused.json()["detail"].startswith(f"quote {quote['number']} expired on ")
    assert refused.json()["detail"].endswith("and can no longer be accepted; ask for a new quote")
    assert get_by_public_id(db, quote["id"]).status == "issued"  # expiry is computed on read


def test_admin_cancels_then_accepting_is_refused(client: TestClient, db: Session) -> None:
    quote = client.post("/quotes", json=a100_body()).json()
    cancelled = service.cancel_quote(db, public_id=quote["id"], actor="admin@example.com", reason="duplicate")
    assert cancelled.status == "cancelled" and cancelled.cancelled_at is not None
    row = get_by_public_id(db, quote["id"])
    assert (row.cancelled_by, row.cancel_reason) == ("admin@example.com", "duplicate")
    refused = client.post(quote["links"]["accept"])
    assert (refused.status_code, refused.json()["detail"]) == (
        409,
        f"quote {quote['number']} was cancelled and can no longer be accepted",
    )
    assert "This quote was cancelled." in client.get(quote["links"]["print"]).text
    assert service.cancel_quote(db, public_id=quote["id"], actor="other@example.com").status == "cancelled"


def test_an_accepted_quote_cannot_be_cancelled(client: TestClient, db: Session) -> None:
    quote = client.post("/quotes", json=a100_body()).json()
    client.post(quote["links"]["accept"])
    with pytest.raises(Conflict, match="is accepted; only an issued quote can be cancelled"):
        service.cancel_quote(db, public_id=quote["id"], actor="admin@example.com")


def test_list_quotes_filters(client: TestClient, db: Session) -> None:
    ada = client.post("/quotes", json=a100_body()).json()
    li = client.post("/quotes", json=h100_body()).json()
    old = client.post("/quotes", json=a100_body(customer={"name": "Bo", "email": "bo@example.net"})).json()
    _expire(db, old["id"])
    client.post(li["links"]["accept"])
    row = get_by_public_id(db, old["id"])
    row.created_at = datetime.now(UTC) - timedelta(days=30)
    db.flush()

    def numbers(**filters: object) -> list[str]:
        return [q.number for q in service.list_quotes(db, **filters).items]

    assert numbers() == [li["number"], ada["number"], old["number"]]
    assert numbers(status="issued") == [ada["number"]]
    assert numbers(status="expired") == [old["number"]]
    assert numbers(status="accepted") == [li["number"]]
    assert numbers(customer="深圳算力") == [li["number"]]
    assert numbers(customer="EXAMPLE.ORG") == [ada["number"]]
    assert numbers(customer="%") == numbers(customer="_") == []
    assert numbers(created_to=datetime.now(UTC) - timedelta(days=1)) == [old["number"]]
    assert numbers(created_from=datetime.now(UTC) - timedelta(days=1)) == [li["number"], ada["number"]]
    page = service.list_quotes(db, limit=1, offset=1)
    assert (page.total, [q.number for q in page.items]) == (3, [ada["number"]])
    with pytest.raises(InvalidInput, match="'open' is not a quote status"):
        service.list_quotes(db, status="open")
    assert db.get(Quote, row.id).status == "issued"


def test_validity_is_configurable(db: Session) -> None:
    from app.quotes.schemas import QuoteCreate

    quote = service.create_quote(db, data=QuoteCreate.model_validate(a100_body()), validity_days=30).quote
    assert quote.valid_until - quote.created_at == timedelta(days=30)
