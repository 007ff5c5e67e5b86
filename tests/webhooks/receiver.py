"""A webhook receiver for the tests and benchmarks/webhooks.py: a threaded HTTP server on 127.0.0.1 that
verifies every request's Standard Webhooks signature with the reference library (`standardwebhooks`) and
keeps what it got. It answers `statuses` in turn (then 200), each after `delay_s`."""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from standardwebhooks.webhooks import Webhook, WebhookVerificationError

SHUTDOWN_POLL_S = 0.02  # how often the stand-in server looks for shutdown()


@dataclass
class Received:
    message_id: str
    body: dict[str, Any]
    status: int  # what the receiver answered


@dataclass
class Receiver:
    url: str = ""
    secret: str | None = None
    delay_s: float = 0.0
    statuses: list[int] = field(default_factory=list)
    received: list[Received] = field(default_factory=list)
    bad_signatures: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def _answer(self, headers: dict[str, str], raw: bytes) -> int:
        if self.delay_s:
            time.sleep(self.delay_s)
        with self.lock:
            try:
                assert self.secret is not None, "a request before the endpoint's secret was known"
                body = Webhook(self.secret).verify(raw, headers)
            except (WebhookVerificationError, AssertionError):
                self.bad_signatures += 1
                return 400
            status = self.statuses.pop(0) if self.statuses else 200
            self.received.append(Received(headers["webhook-id"], body, status))
            return status

    def delivered(self) -> Counter[str]:
        """How many times each webhook-id was answered with 2xx."""
        with self.lock:
            return Counter(r.message_id for r in self.received if 200 <= r.status < 300)

    def wait_for(self, count: int, timeout_s: float) -> Counter[str]:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if len(done := self.delivered()) >= count:
                return done
            time.sleep(0.05)
        raise AssertionError(f"{len(self.delivered())} of {count} webhooks arrived within {timeout_s} s")


class _OneStartAtATime(ThreadingHTTPServer):
    """A thread a request, each started once the one before runs: under coverage on Python 3.11 two threads
    installing the trace hook at once make one die in its bootstrap (python/cpython#98257, as tests/servers.py
    `released_together` says), which failed a webhook test once."""

    def process_request(self, request: Any, client_address: Any) -> None:
        running = threading.Event()

        def run() -> None:
            running.set()
            self.process_request_thread(request, client_address)

        threading.Thread(target=run, daemon=True).start()
        running.wait(5)


@contextmanager
def receiving(delay_s: float = 0.0) -> Iterator[Receiver]:
    receiver = Receiver(delay_s=delay_s)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length", "0")))
            status = receiver._answer({k.lower(): v for k, v in self.headers.items()}, raw)
            answer = json.dumps({"ok": status < 300}).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *_args: object) -> None:
            pass

    server = _OneStartAtATime(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    # shutdown() waits for serve_forever's next poll: at its default 0.5 s that was half a second a test
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": SHUTDOWN_POLL_S}, daemon=True)
    thread.start()
    receiver.url = f"http://127.0.0.1:{server.server_address[1]}/hooks/gpu-sizer?token=receiver-own-token"
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
