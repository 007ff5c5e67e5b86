"""Review R7-8: an admin's cancel of a quote no longer issued (accepted, expired) is refused with a code
(`cancel_accepted`, `cancel_expired`) and its figures (`quote`), worded in the request's language from the catalog the
other quote refusals use (app.text.messages.quote_check): POST /admin/api/quotes/{id}/cancel answers Accept-Language: zh
in Chinese, and the admin's cancel page with `?lang=zh` shows the refusal and the quote's status in Chinese. It answered
English only. SQLite and PostgreSQL."""

from __future__ import annotations

import html
from datetime import UTC, datetime, timedelta
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.quotes.repository import get_by_public_id
from app.text import messages
from tests.admin.conftest import Admin, sign_in
from tests.admin.test_admin_chinese import HTML, vocabulary_words
from tests.quotes.helpers import a100_body

ZH = {"accept-language": "zh-CN,zh;q=0.9"}


def _accepted_and_expired(client: TestClient, db: Session) -> tuple[dict[str, Any], dict[str, Any]]:
    accepted, expired = (client.post("/quotes", json=a100_body()).json() for _ in range(2))
    assert client.post(accepted["links"]["accept"]).status_code == 200
    get_by_public_id(db, expired["id"]).valid_until = datetime.now(UTC) - timedelta(minutes=1)
    db.flush()
    return accepted, expired


def test_the_api_refuses_to_cancel_an_accepted_or_expired_quote_in_the_request_language(
    client: TestClient, db: Session, alice: Admin
) -> None:
    for quote, status in zip(_accepted_and_expired(client, db), ("accepted", "expired"), strict=True):
        url, code = f"/admin/api/quotes/{quote['id']}/cancel", f"cancel_{status}"
        english = client.post(url, headers=alice.headers)
        chinese = client.post(url, headers={**alice.headers, **ZH})
        assert (english.status_code, chinese.status_code) == (409, 409), chinese.text
        for answer, lang in ((english, "en"), (chinese, "zh")):
            problem = answer.json()
            [error] = problem["errors"]
            assert (problem["code"], error["type"], error["field"], error["params"]) == (
                code,
                code,
                "quote",
                {"quote": quote["number"]},
            )
            assert problem["detail"] == error["message"] == messages.quote_check(code, error["params"], lang)
        assert english.json()["detail"] == f"quote {quote['number']} is {status}; only an issued quote can be cancelled"
        assert "只有已出具的报价可以取消" in chinese.json()["detail"] and chinese.headers["vary"] == "Accept-Language"
    assert client.get(f"/quotes/{quote['id']}").json()["status"] == "expired"  # nothing was cancelled


def test_the_cancel_page_of_an_accepted_quote_reads_in_chinese(client: TestClient, db: Session, alice: Admin) -> None:
    accepted, _ = _accepted_and_expired(client, db)
    csrf = sign_in(client, alice.user.email)
    url = f"/admin/quotes/{accepted['id']}/cancel?lang=zh"
    page = client.get(url, headers=HTML)
    assert page.status_code == 200 and "此报价已接受：只有已出具的报价可以取消。" in page.text
    assert vocabulary_words(page.text, []) == []  # its status row and the sentence: 已接受, not "accepted"
    # Posted anyway (the page was open when the customer accepted): refused in Chinese, nothing cancelled.
    posted = client.post(url, data={"csrf_token": csrf, "confirm": "yes"}, headers=HTML, follow_redirects=False)
    refusal = messages.quote_check("cancel_accepted", {"quote": accepted["number"]}, "zh")
    assert posted.status_code == 409 and refusal in html.unescape(posted.text)
    assert "only an issued quote" not in posted.text and vocabulary_words(posted.text, []) == []
    english = client.get(f"/admin/quotes/{accepted['id']}/cancel?lang=en", headers=HTML).text
    assert "This quote is accepted: only an issued quote can be cancelled." in english
    assert client.get(f"/quotes/{accepted['id']}").json()["status"] == "accepted"
