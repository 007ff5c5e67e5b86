"""The delivery worker against a real HTTP receiver, on committed data in a database of its own (both
databases): retries with backoff on 500, gives up after WEBHOOKS_RETRY_FOR_S, never sends one delivery
from two workers, retakes a dead worker's claim when its lease ends, and refuses private addresses at
delivery time."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from app.db.base import utcnow
from app.db.engine import build_engine, build_sessionmaker
from app.webhooks import service
from app.webhooks.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint
from app.webhooks.schemas import EndpointPatch
from app.webhooks.signing import new_secret
from app.webhooks.worker import DeliveryWorker, WorkerConfig
from tests.servers import app_cli, migrated_database
from tests.webhooks.receiver import Receiver, receiving

CONFIG = WorkerConfig(
    concurrency=4,
    timeout_s=5,
    lease_s=30,
    poll_s=0.02,
    sweep_every_s=60,
    allow_private=True,
    backoff=service.Backoff(base_s=0.02, cap_s=0.1, retry_for_s=60),
)
RUN_TIMEOUT_S = 30


@pytest.fixture()
def maker(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[sessionmaker[Session]]:
    with migrated_database(backend, tmp_path_factory, "webhook_worker") as url:
        engine = build_engine(url)
        yield build_sessionmaker(engine)
        engine.dispose()


@pytest.fixture()
def receiver() -> Iterator[Receiver]:
    with receiving() as receiver:
        yield receiver


def _endpoint_and_events(maker: sessionmaker[Session], receiver: Receiver, count: int) -> int:
    receiver.secret = new_secret()
    with maker.begin() as session:
        endpoint = WebhookEndpoint(url=receiver.url, events=["quote.issued"], secret=receiver.secret, active=True)
        session.add(endpoint)
        session.flush()
        for n in range(count):
            data = {"number": f"Q-2026-{n:06d}", "status": "issued", "total": "10.00"}
            service.record_event(session, event_type="quote.issued", subject=data["number"], data=data)
        return endpoint.id


def _drain(maker: sessionmaker[Session], config: WorkerConfig = CONFIG, *, until: float = RUN_TIMEOUT_S) -> None:
    """Run workers until no delivery is pending (retries included) or `until` seconds pass."""
    deadline = time.monotonic() + until
    while time.monotonic() < deadline:
        asyncio.run(asyncio.wait_for(DeliveryWorker(maker, config).run(until_idle=True), RUN_TIMEOUT_S))
        with maker() as session:
            if not session.scalars(select(WebhookDelivery).where(WebhookDelivery.status == "pending")).all():
                return
        time.sleep(0.02)
    raise AssertionError(f"deliveries still pending after {until} s")


def _deliveries(maker: sessionmaker[Session]) -> list[WebhookDelivery]:
    with maker() as session:
        return list(session.scalars(select(WebhookDelivery).order_by(WebhookDelivery.id)))


def _attempts(maker: sessionmaker[Session]) -> list[WebhookAttempt]:
    with maker() as session:
        return list(session.scalars(select(WebhookAttempt).order_by(WebhookAttempt.id)))


def test_a_500_is_retried_with_backoff_until_it_is_taken(maker: sessionmaker[Session], receiver: Receiver) -> None:
    _endpoint_and_events(maker, receiver, 1)
    receiver.statuses = [500, 500]
    _drain(maker)
    assert [r.status for r in receiver.received] == [500, 500, 200]
    assert len({r.message_id for r in receiver.received}) == 1  # one webhook-id on every retry
    assert receiver.bad_signatures == 0
    [delivery] = _deliveries(maker)
    assert (delivery.status, delivery.attempts, delivery.last_status_code) == ("delivered", 3, 200)
    attempts = _attempts(maker)
    assert [a.status_code for a in attempts] == [500, 500, 200]
    assert attempts[0].response_body == '{"ok": false}' and attempts[0].duration_ms >= 0
    gaps = [(b.at - a.at).total_seconds() for a, b in zip(attempts, attempts[1:], strict=False)]
    assert all(gap >= CONFIG.backoff.base_s / 2 for gap in gaps), gaps


def test_a_receiver_that_keeps_failing_is_given_up_after_retry_for(
    maker: sessionmaker[Session], receiver: Receiver
) -> None:
    _endpoint_and_events(maker, receiver, 1)
    receiver.statuses = [500] * 1000
    config = replace(CONFIG, backoff=service.Backoff(base_s=0.02, cap_s=0.05, retry_for_s=1.0))
    _drain(maker, config)
    [delivery] = _deliveries(maker)
    assert delivery.status == "failed" and delivery.attempts == len(receiver.received) >= 2
    assert all(r.status == 500 for r in receiver.received)


def test_two_workers_send_each_event_once(maker: sessionmaker[Session], receiver: Receiver) -> None:
    _endpoint_and_events(maker, receiver, 40)
    receiver.delay_s = 0.01

    async def both() -> None:
        workers = [DeliveryWorker(maker, CONFIG), DeliveryWorker(maker, CONFIG)]
        await asyncio.wait_for(asyncio.gather(*(w.run(until_idle=True) for w in workers)), RUN_TIMEOUT_S)

    asyncio.run(both())
    _drain(maker)
    delivered = receiver.delivered()
    assert len(delivered) == 40 and set(delivered.values()) == {1}
    assert receiver.bad_signatures == 0
    assert {d.status for d in _deliveries(maker)} == {"delivered"}


def test_a_dead_workers_claim_is_retaken_when_its_lease_ends(maker: sessionmaker[Session], receiver: Receiver) -> None:
    _endpoint_and_events(maker, receiver, 1)
    with maker.begin() as session:
        [dead] = service.claim(session, lease_s=30, limit=10)  # claimed, then the worker died
    asyncio.run(DeliveryWorker(maker, CONFIG).run(until_idle=True))
    assert receiver.received == []  # still leased
    with maker.begin() as session:
        session.get(WebhookDelivery, dead.delivery_id).claimed_until = utcnow() - timedelta(seconds=1)
    _drain(maker)
    assert len(receiver.delivered()) == 1
    with maker.begin() as session:  # the dead worker's late report only logs its attempt
        late = service.Outcome(status_code=500, duration_ms=1)
        assert service.record_outcome(session, job=dead, outcome=late, backoff=CONFIG.backoff) is None
    [delivery] = _deliveries(maker)
    assert (delivery.status, delivery.attempts) == ("delivered", 1)


def test_private_addresses_are_refused_at_delivery_time(maker: sessionmaker[Session], receiver: Receiver) -> None:
    _endpoint_and_events(maker, receiver, 1)
    config = replace(CONFIG, allow_private=False, backoff=service.Backoff(base_s=0.02, cap_s=0.05, retry_for_s=0.2))
    _drain(maker, config)
    assert receiver.received == []
    attempts = _attempts(maker)
    assert attempts and all(a.error.startswith("refused: ") and a.status_code is None for a in attempts)
    assert all("receiver-own-token" not in a.error and "127.0.0.1" not in a.error for a in attempts)
    assert _deliveries(maker)[0].status == "failed"


def test_replay_sends_the_same_message_again(maker: sessionmaker[Session], receiver: Receiver) -> None:
    _endpoint_and_events(maker, receiver, 1)
    _drain(maker)
    with maker.begin() as session:
        service.replay(session, delivery_id=_deliveries(maker)[0].id)
    _drain(maker)
    assert [n for n in receiver.delivered().values()] == [2]  # same webhook-id: receivers can tell
    assert [d.status for d in _deliveries(maker)] == ["delivered", "delivered"]


def test_logs_carry_neither_secret_nor_url_path(
    maker: sessionmaker[Session], receiver: Receiver, caplog: pytest.LogCaptureFixture
) -> None:
    _endpoint_and_events(maker, receiver, 2)
    receiver.statuses = [500]
    caplog.set_level(logging.DEBUG)  # every logger, httpx's request lines and httpcore's included
    _drain(maker)
    assert "HTTP Request: POST http://127.0.0.1" in caplog.text  # httpx did log the requests…
    assert "receiver-own-token" not in caplog.text and "/hooks/gpu-sizer" not in caplog.text  # …by origin only
    assert receiver.secret is not None and receiver.secret.removeprefix("whsec_") not in caplog.text


def test_the_cli_delivers_what_is_due(backend: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    with receiving() as receiver, migrated_database(backend, tmp_path_factory, "webhook_cli") as url:
        engine = build_engine(url)
        _endpoint_and_events(build_sessionmaker(engine), receiver, 3)
        engine.dispose()
        done = app_cli(["deliver-webhooks", "--once"], {"DATABASE_URL": url, "WEBHOOKS_ALLOW_PRIVATE": "true"})
        assert "delivering what is due" in done.stdout
        assert len(receiver.delivered()) == 3 and receiver.bad_signatures == 0


def test_a_failing_database_is_logged_once_and_polled_ever_less_often(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Each failed round waits twice as long as the one before (poll_s 0.02 s: 0.04, 0.08, 0.16 s after the first three
    failures). Measured as the gaps between failures, which a busy machine only lengthens: a count of rounds in a
    fixed 0.5 s (before) fell to 1 when the test ran beside other suites on two cores."""
    engine = build_engine(f"sqlite:///{tmp_path}/no-schema.db")  # no tables: every round fails
    worker = DeliveryWorker(build_sessionmaker(engine), CONFIG)
    seen: dict[int, float] = {}  # failures in a row -> when the count reached it

    async def until_four_failures() -> None:
        task = asyncio.create_task(worker.run())
        deadline = time.monotonic() + RUN_TIMEOUT_S
        while worker.failures < 4 and time.monotonic() < deadline:
            seen.setdefault(worker.failures, time.monotonic())
            await asyncio.sleep(0.002)
        seen.setdefault(worker.failures, time.monotonic())
        worker.stop()
        await asyncio.wait_for(task, RUN_TIMEOUT_S)

    asyncio.run(until_four_failures())
    engine.dispose()
    errors = [r for r in caplog.records if r.name == "app.webhooks" and r.levelname == "ERROR"]
    assert len(errors) == 1
    assert {1, 2, 3, 4} <= seen.keys(), seen
    gaps = [seen[n + 1] - seen[n] for n in (1, 2, 3)]
    # the pause after n failures is poll_s × 2**n; 5 ms for the sampling and the timer's resolution
    assert all(gap >= CONFIG.poll_s * 2**n - 0.005 for n, gap in zip((1, 2, 3), gaps, strict=True)), gaps


def test_a_url_httpx_refuses_is_a_failed_attempt_not_a_stuck_delivery(
    maker: sessionmaker[Session], receiver: Receiver
) -> None:
    endpoint_id = _endpoint_and_events(maker, receiver, 1)
    with maker.begin() as session:  # written past the API's check, as an older release might have
        session.get(WebhookEndpoint, endpoint_id).url = "http://xn--a/hook"  # an IDNA name httpx refuses
    config = replace(CONFIG, backoff=service.Backoff(base_s=0.02, cap_s=0.05, retry_for_s=0.2))
    _drain(maker, config)
    attempts = _attempts(maker)
    assert attempts and {a.error for a in attempts} == {"InvalidCodepoint"}
    assert _deliveries(maker)[0].status == "failed"


def test_events_raised_while_paused_are_sent_in_order_on_resume(
    maker: sessionmaker[Session], receiver: Receiver
) -> None:
    """Before: a paused endpoint got no delivery rows, so its receiver never saw those events."""
    endpoint_id = _endpoint_and_events(maker, receiver, 0)
    with maker.begin() as session:
        service.update_endpoint(session, endpoint_id=endpoint_id, data=EndpointPatch(active=False), allow_private=True)
        for n in range(3):
            data = {"number": f"Q-2026-{n:06d}", "status": "issued", "total": "10.00"}
            service.record_event(session, event_type="quote.issued", subject=data["number"], data=data)
    asyncio.run(asyncio.wait_for(DeliveryWorker(maker, CONFIG).run(until_idle=True), RUN_TIMEOUT_S))
    assert receiver.received == [] and [d.status for d in _deliveries(maker)] == ["held"] * 3
    with maker.begin() as session:
        service.update_endpoint(session, endpoint_id=endpoint_id, data=EndpointPatch(active=True), allow_private=True)
    _drain(maker, replace(CONFIG, concurrency=1))
    assert [r.body["data"]["number"] for r in receiver.received] == [f"Q-2026-{n:06d}" for n in range(3)]
    assert [d.status for d in _deliveries(maker)] == ["delivered"] * 3 and receiver.bad_signatures == 0


def test_a_delivery_held_longer_than_retry_for_still_gets_its_retries(
    maker: sessionmaker[Session], receiver: Receiver
) -> None:
    """Before: the retry window ran from the event's creation, so an event held through a long pause failed for
    good on its first 500 after the resume."""
    endpoint_id = _endpoint_and_events(maker, receiver, 0)
    with maker.begin() as session:
        service.update_endpoint(session, endpoint_id=endpoint_id, data=EndpointPatch(active=False), allow_private=True)
        data = {"number": "Q-2026-000001", "status": "issued", "total": "10.00"}
        raised = utcnow() - timedelta(days=2)
        service.record_event(session, event_type="quote.issued", subject=data["number"], data=data, now=raised)
    with maker.begin() as session:
        service.update_endpoint(session, endpoint_id=endpoint_id, data=EndpointPatch(active=True), allow_private=True)
    receiver.statuses = [500]
    _drain(maker, replace(CONFIG, backoff=service.Backoff(base_s=0.02, cap_s=0.05, retry_for_s=60)))
    assert [r.status for r in receiver.received] == [500, 200]
    [delivery] = _deliveries(maker)
    assert (delivery.status, delivery.attempts) == ("delivered", 2)
