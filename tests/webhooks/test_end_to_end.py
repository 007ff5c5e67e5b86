"""Webhooks end to end over real HTTP (`python -m app serve`, two worker processes on PostgreSQL): quotes
issued, accepted and cancelled through the API reach a local receiver, each signature verified with the
Standard Webhooks library; the server is stopped while deliveries are in flight and started again, and
the receiver still sees every event exactly once; a receiver answering 500 gets the retries."""

from __future__ import annotations

import time
from collections import Counter

import httpx
import pytest

from tests.quotes.helpers import a100_body
from tests.servers import LiveServerFactory, app_cli, migrate_and_seed, scratch_database
from tests.webhooks.receiver import Receiver, receiving

PASSWORD = "a long enough secret"
QUOTES, ACCEPTED, CANCELLED = 8, 3, 2
FAST_RETRIES = {
    "WEBHOOKS_ALLOW_PRIVATE": "true",  # the receiver is on 127.0.0.1
    "WEBHOOKS_BACKOFF_BASE_S": "0.1",
    "WEBHOOKS_POLL_S": "0.1",
    "QUOTES_PER_MINUTE": "0",
}


def _changes(base: str, token: str, receiver: Receiver) -> None:
    """Register the endpoint (the receiver learns its secret), then issue, accept and cancel quotes."""
    admin = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=base, timeout=30) as client:
        events = ["quote.issued", "quote.accepted", "quote.cancelled", "quote.expired"]
        created = client.post("/admin/api/webhooks", json={"url": receiver.url, "events": events}, headers=admin)
        assert created.status_code == 201, created.text
        receiver.secret = created.json()["secret"]
        quotes = [client.post("/quotes", json=a100_body()).json() for _ in range(QUOTES)]
        for quote in quotes[:ACCEPTED]:
            assert client.post(quote["links"]["accept"]).status_code == 200
        for quote in quotes[ACCEPTED : ACCEPTED + CANCELLED]:
            assert client.post(f"/admin/api/quotes/{quote['id']}/cancel", headers=admin).status_code == 200


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_every_event_once_across_a_restart_and_retries_on_500(
    backend: str, tmp_path_factory: pytest.TempPathFactory, live_server_factory: LiveServerFactory
) -> None:
    workers = 2 if backend == "postgresql" else 1
    total = QUOTES + ACCEPTED + CANCELLED
    with receiving(delay_s=0.3) as receiver, scratch_database(backend, tmp_path_factory, "webhooks_e2e") as url:
        migrate_and_seed(url)
        app_cli(["create-admin", "ops@example.com", "--password-stdin"], {"DATABASE_URL": url}, PASSWORD + "\n")
        token = app_cli(["create-token", "ops@example.com"], {"DATABASE_URL": url}).stdout.split()[-1]
        with live_server_factory(database_url=url, prepare="none", workers=workers, env=FAST_RETRIES) as live:
            _changes(live.base, token, receiver)
            before_stop = len(receiver.delivered())
        assert before_stop < total, "the server was meant to stop while deliveries were still due"
        with live_server_factory(database_url=url, prepare="none", workers=workers, env=FAST_RETRIES) as live:
            base = live.base
            receiver.wait_for(total, timeout_s=60)
            time.sleep(1.0)  # a second copy of anything would have arrived by now
            assert set(receiver.delivered().values()) == {1}
            types = Counter(r.body["type"] for r in receiver.received)
            assert types == {"quote.issued": QUOTES, "quote.accepted": ACCEPTED, "quote.cancelled": CANCELLED}

            receiver.statuses = [500, 500]
            with httpx.Client(base_url=base, timeout=30) as client:
                number = client.post("/quotes", json=a100_body()).json()["number"]
                receiver.wait_for(total + 1, timeout_s=60)
                admin = {"Authorization": f"Bearer {token}"}
                page = client.get("/admin/api/webhooks/deliveries?limit=1", headers=admin).json()
                [latest] = page["items"]
                assert (latest["quote_number"], latest["status"], latest["attempts"]) == (number, "delivered", 3)
                log = client.get(f"/admin/api/webhooks/deliveries/{latest['id']}", headers=admin).json()["log"]
                assert [a["status_code"] for a in log] == [500, 500, 200]
                listing = client.get("/admin/api/webhooks", headers=admin).text
                assert (
                    receiver.secret is not None
                    and receiver.secret not in listing
                    and "receiver-own-token" not in listing
                )
        retried = [r for r in receiver.received if r.body["data"]["number"] == number]
        assert [r.status for r in retried] == [500, 500, 200] and len({r.message_id for r in retried}) == 1
        assert receiver.bad_signatures == 0
