"""Review R7-8: POST /quotes/{id}/accept and the capacity refusals answer in the request's language
(`Accept-Language: zh`), as the browser's accept page does: the `message` of each `errors[]` entry and the `detail`
worded from its code; the codes (`type`, `code`) stay. SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.quotes import service
from app.quotes.repository import get_by_public_id
from app.text import messages
from tests.factories import sales_key, units_available
from tests.quotes.helpers import a100_body

ZH = {"accept-language": "zh-CN,zh;q=0.9"}
H100 = "h100-80g-sxm-8x"


def _h100(quantity: int, **changes: Any) -> dict[str, Any]:
    customer = {"name": "Ada", "email": "ada@example.org"}
    return {"sku_id": H100, "quantity": quantity, "term": "monthly", "months": 1, "region": "singapore",
            "customer": customer, **changes}  # fmt: skip


def _worded(problem: dict[str, Any], lang: str) -> str:
    """The problem's first error worded from its code and figures in `lang` (the catalog: app.text.messages)."""
    [error] = problem["errors"]
    return messages.quote_check(error["type"], error["params"], lang)


def test_accepting_an_expired_or_cancelled_quote_is_refused_in_chinese(client: TestClient, db: Session) -> None:
    expired, cancelled = (client.post("/quotes", json=a100_body()).json() for _ in range(2))
    get_by_public_id(db, expired["id"]).valid_until = datetime.now(UTC) - timedelta(minutes=1)
    db.flush()
    service.cancel_quote(db, public_id=cancelled["id"], actor="admin@example.com")
    for quote, code in ((expired, "accept_expired"), (cancelled, "accept_cancelled")):
        english = client.post(quote["links"]["accept"])
        chinese = client.post(quote["links"]["accept"], headers=ZH)
        assert (english.status_code, chinese.status_code) == (409, 409), chinese.text
        problem = chinese.json()
        assert (problem["code"], problem["errors"][0]["type"], problem["errors"][0]["field"]) == (code, code, "quote")
        assert problem["errors"][0]["params"]["quote"] == quote["number"]
        assert problem["detail"] == problem["errors"][0]["message"] == _worded(problem, "zh")
        assert "无法再接受" in problem["detail"] and chinese.headers["vary"] == "Accept-Language"
        assert english.json()["detail"] == _worded(english.json(), "en")  # the English sentence it was
    assert client.post(cancelled["links"]["accept"]).json()["detail"] == (
        f"quote {cancelled['number']} was cancelled and can no longer be accepted"
    )


def test_units_no_longer_free_are_refused_in_chinese(client: TestClient, db: Session) -> None:
    units_available(db, H100, "singapore", 3)
    sales = sales_key(client, db)
    assert client.post("/quotes", json=_h100(2), headers=sales).status_code == 201
    english = client.post("/quotes", json=_h100(2), headers=sales)
    chinese = client.post("/quotes", json=_h100(2), headers={**sales, **ZH})
    assert (english.status_code, chinese.status_code) == (409, 409), chinese.text
    problem = chinese.json()
    assert (problem["code"], problem["errors"][0]["type"]) == ("capacity_taken", "capacity_taken")
    assert problem["detail"] == problem["errors"][0]["message"] == _worded(problem, "zh")
    assert "新加坡" in problem["detail"] and english.json()["detail"] == _worded(english.json(), "en")


def test_an_accept_sales_must_confirm_is_refused_in_chinese(client: TestClient, db: Session) -> None:
    units_available(db, H100, "singapore", 3)
    anonymous = client.post("/quotes", json=_h100(3)).json()  # holds nothing: its link takes no units for good
    chinese = client.post(f"/quotes/{anonymous['id']}/accept", headers=ZH)
    assert chinese.status_code == 403, chinese.text
    problem = chinese.json()
    assert (problem["code"], problem["errors"][0]["type"]) == ("accept_needs_sales", "accept_needs_sales")
    assert problem["detail"] == problem["errors"][0]["message"] == _worded(problem, "zh")
