"""Stalled and trickled request bodies, over a real server (uvicorn's receive loop is what waits on them): the body
must arrive within BODY_READ_TIMEOUT_S or the request gets 408 and its connection closed, and the per-address body
budget counts bytes received, not a declared Content-Length (review R4-8: a 1 byte/s body was still open at 90 s,
and a few stalled uploads declaring 500 kB each made the address's next small request a 429)."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from urllib.parse import urlsplit

import httpx
import pytest

from tests.servers import LiveServerFactory

pytestmark = pytest.mark.slow

TIMEOUT_S = 1.5
BUDGET = 200_000
DECLARED = 500_000  # each stalled upload declares more than the whole budget
ESTIMATE = {"model": {"preset": "llama-2-7b"}, "task": "lora", "hardware": {"gpu": "h100-80g-sxm"}}


@pytest.fixture(scope="module")
def server(live_server_factory: LiveServerFactory) -> Iterator[str]:
    limits = {"BODY_READ_TIMEOUT_S": str(TIMEOUT_S), "BODY_BUDGET_BYTES_PER_MINUTE": str(BUDGET)}
    with live_server_factory("stalled", limits=limits) as server:
        yield server.base


def _stalled_upload(base_url: str, path: str = "/estimate") -> socket.socket:
    """A POST whose head declares DECLARED bytes of JSON and whose body stops after 4 bytes."""
    address = urlsplit(base_url)
    sock = socket.create_connection((address.hostname, address.port), timeout=10)
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {DECLARED}\r\n\r\n"
    )
    sock.sendall(head.encode() + b'{"a"')
    return sock


def _trickle_until_answered(sock: socket.socket, within_s: float) -> tuple[bytes, bool, float]:
    """Send a byte every 0.2 s until the server answers and closes; (what it sent, whether it closed, seconds)."""
    started = time.monotonic()
    sock.settimeout(0.2)
    answer, closed = b"", False
    while time.monotonic() - started < within_s:
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            try:
                sock.sendall(b" ")
            except OSError:  # reset by the server after its answer
                closed = True
                break
            continue
        if not chunk:
            closed = True
            break
        answer += chunk
    return answer, closed, time.monotonic() - started


def test_a_trickled_body_gets_408_and_its_connection_closed(server: str) -> None:
    with _stalled_upload(server) as sock:
        answer, closed, seconds = _trickle_until_answered(sock, within_s=TIMEOUT_S + 8)
    assert answer.startswith(b"HTTP/1.1 408 "), answer[:200]  # before: nothing, the body still awaited
    head, _, body = answer.partition(b"\r\n\r\n")
    assert b"connection: close" in head.lower()
    assert b"application/problem+json" in head
    assert b"request-timeout" in body
    assert closed
    assert TIMEOUT_S - 0.1 <= seconds < TIMEOUT_S + 5  # the whole body's clock: a trickle does not reset it


def _one_window() -> None:
    """The budget's window is a fixed minute: keep the uploads and the request after them in one."""
    into = time.time() % 60
    if into > 50:
        time.sleep(60 - into + 0.5)


def test_stalled_uploads_do_not_spend_their_address_body_budget(server: str) -> None:
    _one_window()
    uploads = [_stalled_upload(server) for _ in range(3)]  # 1.5 MB declared, 12 bytes sent
    try:
        time.sleep(0.3)  # their heads are read and, before, charged
        with httpx.Client(base_url=server, timeout=30) as http:
            started = time.monotonic()
            assert http.get("/healthz").status_code == 200
            assert time.monotonic() - started < 1.0  # no thread is held by a stalled body
            response = http.post("/estimate", json=ESTIMATE)
        assert response.status_code == 200, response.text  # before: 429 "more than 200000 bytes"
    finally:
        for upload in uploads:
            upload.close()


def test_the_bytes_received_still_count_against_the_budget(server: str) -> None:
    _one_window()
    pad = {**ESTIMATE, "pad": "p" * 60_000}  # refused as unknown (422), but its bytes count
    with httpx.Client(base_url=server, timeout=30) as http:
        statuses = [http.post("/estimate", json=pad).status_code for _ in range(5)]
    assert statuses[:3] == [422, 422, 422]
    assert 429 in statuses[3:]
