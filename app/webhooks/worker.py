"""The delivery worker: claims due deliveries from the database, sends them (httpx.AsyncClient, at most
WEBHOOKS_CONCURRENCY at once, each within WEBHOOKS_TIMEOUT_S) and records each attempt.

It runs as one asyncio task in each server process (started by the app's lifespan), or on its own
(`python -m app deliver-webhooks`). Database calls run on a thread of the worker's own, never on the
threads that serve requests, and the sending awaits on the event loop, so a slow receiver stalls no
request. Which process sends a delivery is decided by the database (app/webhooks/repository.py
`claim_due`): each delivery is claimed by one worker for WEBHOOKS_LEASE_S; one that dies holding it
gives it up when the lease ends. On shutdown the worker claims nothing more and lets the requests in
flight finish and be recorded, so a restart sends nothing twice.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

import httpx
from sqlalchemy.orm import Session, sessionmaker

from app.common.settings import Settings
from app.common.tls import client_context
from app.db.base import utcnow
from app.webhooks import service
from app.webhooks.addresses import AddressRefused, target_now
from app.webhooks.schemas import url_origin
from app.webhooks.signing import headers

log = logging.getLogger("app.webhooks")
T = TypeVar("T")
USER_AGENT = "gpu-sizer-webhooks/1"
MAX_PAUSE_S = 30.0  # between rounds while the database keeps failing
DRAIN_MARGIN_S = 2.0  # beyond WEBHOOKS_TIMEOUT_S, to record the last attempts on shutdown
_sending: Counter[str] = Counter()  # the webhook URLs being called now, for _HideWebhookUrls


class _HideWebhookUrls(logging.Filter):
    """httpx logs each request's full URL at INFO; a webhook URL may carry the receiver's token, so its
    line keeps only the origin."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) > 1 and str(args[1]) in _sending:
            record.args = (args[0], url_origin(str(args[1])) + "/…", *args[2:])
        return True


_url_filter = _HideWebhookUrls()


@dataclass(frozen=True, slots=True)
class WorkerConfig:
    concurrency: int
    timeout_s: float
    lease_s: float
    poll_s: float
    sweep_every_s: float
    allow_private: bool
    backoff: service.Backoff

    @classmethod
    def from_settings(cls, settings: Settings) -> WorkerConfig:
        return cls(
            concurrency=settings.webhooks_concurrency,
            timeout_s=settings.webhooks_timeout_s,
            lease_s=settings.webhooks_lease_s,
            poll_s=settings.webhooks_poll_s,
            sweep_every_s=settings.webhooks_expiry_sweep_s,
            allow_private=settings.webhooks_allow_private,
            backoff=service.Backoff(
                base_s=settings.webhooks_backoff_base_s,
                cap_s=settings.webhooks_backoff_cap_s,
                retry_for_s=settings.webhooks_retry_for_s,
            ),
        )


Sweep = Callable[[Session], int]  # a unit of work run now and then (quotes past validity → expired)


class DeliveryWorker:
    def __init__(self, maker: sessionmaker[Session], config: WorkerConfig, sweep: Sweep | None = None) -> None:
        self.maker, self.config, self.sweep = maker, config, sweep
        self.stopping = asyncio.Event()
        self.in_flight: set[asyncio.Task[None]] = set()
        self.wake = asyncio.Event()
        # One thread of its own for the database, so the worker never takes a thread that serves requests.
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="webhooks")
        self.next_sweep = 0.0
        self.failures = 0  # database errors in a row: the pause between rounds doubles with each, to MAX_PAUSE_S
        if _url_filter not in logging.getLogger("httpx").filters:
            logging.getLogger("httpx").addFilter(_url_filter)

    async def _db(self, step: Callable[[Session], T]) -> T:
        def unit_of_work() -> T:
            with self.maker.begin() as session:
                return step(session)

        return await asyncio.get_running_loop().run_in_executor(self.executor, unit_of_work)

    async def run(self, *, until_idle: bool = False) -> None:
        """Deliver until `stop()` (or, with `until_idle`, until nothing is due nor in flight)."""
        # No keep-alive: a connection is made to a checked address under one TLS name, and is not reused for
        # another name that happens to share the address.
        limits = httpx.Limits(max_connections=self.config.concurrency, max_keepalive_connections=0)
        timeout = httpx.Timeout(self.config.timeout_s)
        async with httpx.AsyncClient(
            timeout=timeout, limits=limits, follow_redirects=False, verify=client_context()
        ) as client:
            try:
                while not self.stopping.is_set():
                    started = await self._tick(client)
                    if until_idle and not started and not self.in_flight:
                        break
                    if not started:
                        await self._pause()
            finally:
                await self._drain()
                self.executor.shutdown(wait=False)

    async def _tick(self, client: httpx.AsyncClient) -> int:
        try:
            await self._maybe_sweep()
            free = self.config.concurrency - len(self.in_flight)
            jobs = await self._db(self._claimer(free)) if free > 0 else []
        except Exception:  # the database is down or busy: try again later, the server keeps serving
            if not self.failures:  # logged once per outage, not every round
                log.exception("webhooks: claiming deliveries failed; retrying with backoff")
            self.failures += 1
            return 0
        self.failures = 0
        for job in jobs:
            task = asyncio.create_task(self._deliver(client, job))
            self.in_flight.add(task)
            task.add_done_callback(self._done)
        return len(jobs)

    def _claimer(self, limit: int) -> Callable[[Session], list[service.Job]]:
        return lambda session: service.claim(session, lease_s=self.config.lease_s, limit=limit)

    def _done(self, task: asyncio.Task[None]) -> None:
        self.in_flight.discard(task)
        self.wake.set()

    async def _maybe_sweep(self) -> None:
        if self.sweep is None or time.monotonic() < self.next_sweep:
            return
        self.next_sweep = time.monotonic() + self.config.sweep_every_s
        sweep = self.sweep
        count = await self._db(sweep)
        if count:
            log.info("webhooks: %d quotes expired", count)

    async def _pause(self) -> None:
        self.wake.clear()
        waits = [asyncio.create_task(self.stopping.wait()), asyncio.create_task(self.wake.wait())]
        pause = min(MAX_PAUSE_S, self.config.poll_s * 2.0 ** min(self.failures, 16))
        await asyncio.wait(waits, timeout=pause, return_when=asyncio.FIRST_COMPLETED)
        for wait in waits:
            wait.cancel()

    async def _deliver(self, client: httpx.AsyncClient, job: service.Job) -> None:
        outcome = await send(client, job, allow_private=self.config.allow_private)
        backoff = self.config.backoff
        try:
            await self._db(lambda s: service.record_outcome(s, job=job, outcome=outcome, backoff=backoff))
        except Exception:  # unrecorded: the lease runs out and the delivery is sent again
            log.exception("webhooks: recording delivery %d failed", job.delivery_id)

    async def _drain(self) -> None:
        if self.in_flight:
            await asyncio.wait(set(self.in_flight), timeout=self.config.timeout_s + DRAIN_MARGIN_S)

    def stop(self) -> None:
        self.stopping.set()


async def send(client: httpx.AsyncClient, job: service.Job, *, allow_private: bool) -> service.Outcome:
    """One attempt. The log keeps the status, the time and the start of the answer; never the URL nor
    the secret (an error names its kind, the URL stays out of it)."""
    started = time.monotonic()
    target = None
    _sending[job.url] += 1

    def took() -> int:
        return int((time.monotonic() - started) * 1000)

    try:
        target = await target_now(job.url, allow_private=allow_private)
        _sending[target.url] += 1
        signed = headers(secret=job.secret, message_id=job.message_id, at=utcnow(), body=job.body)
        sent = {**signed, "user-agent": USER_AGENT, **({"host": target.host_header} if target.host_header else {})}
        extensions = {"sni_hostname": target.sni_hostname} if target.sni_hostname else {}
        request = client.build_request("POST", target.url, content=job.body, headers=sent, extensions=extensions)
        response = await client.send(request, stream=True)
        try:
            kept = await _start_of(response)
        finally:
            await response.aclose()
        return service.Outcome(status_code=response.status_code, duration_ms=took(), response_body=kept)
    except AddressRefused as exc:
        return service.Outcome(status_code=None, duration_ms=took(), error=f"refused: {exc}")
    except httpx.HTTPError as exc:
        return service.Outcome(status_code=None, duration_ms=took(), error=type(exc).__name__)
    except Exception as exc:  # a URL httpx will not send, say: a failed attempt like any other, retried
        log.warning("webhooks: delivery %d could not be sent: %s", job.delivery_id, type(exc).__name__)
        return service.Outcome(status_code=None, duration_ms=took(), error=type(exc).__name__)
    finally:
        for url in (job.url, target.url) if target is not None else (job.url,):
            _sending[url] -= 1
            if _sending[url] <= 0:
                del _sending[url]


async def _start_of(response: httpx.Response) -> str:
    kept = b""
    async for chunk in response.aiter_raw():
        kept += chunk
        if len(kept) >= service.RESPONSE_KEEP_BYTES:
            break
    return kept[: service.RESPONSE_KEEP_BYTES].decode("utf-8", "replace")


class Running:
    """A worker started on the running event loop (the app's lifespan); `stop` ends it after its drain."""

    def __init__(self, worker: DeliveryWorker) -> None:
        self.worker = worker
        self.task = asyncio.create_task(worker.run(), name="webhooks")

    async def stop(self) -> None:
        self.worker.stop()
        await self.task


def start(maker: sessionmaker[Session], settings: Settings, sweep: Sweep | None = None) -> Running | None:
    if not settings.webhooks_worker:
        return None
    return Running(DeliveryWorker(maker, WorkerConfig.from_settings(settings), sweep))
