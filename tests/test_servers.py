"""The test harness itself: a server the tests start keeps answering however much it writes to stderr.

Before: `running_server` piped the server's stderr and never read it, so a server that wrote more than the
pipe holds (64 KiB on Linux) blocked in write() with its event loop, and every later request hung until its
client gave up. With LOG_LEVEL=info each request writes a JSON access-log line (~300 bytes), so 600
requests write ~180 KiB, about three pipes' worth."""

from __future__ import annotations

import httpx

from tests.servers import LiveServerFactory

REQUESTS = 600


def test_a_server_that_logs_a_lot_keeps_answering(live_server_factory: LiveServerFactory) -> None:
    with (
        live_server_factory("chatty", env={"LOG_LEVEL": "info"}) as live,
        httpx.Client(base_url=live.base, timeout=10) as client,
    ):
        statuses = [client.get("/healthz").status_code for _ in range(REQUESTS)]
    assert statuses == [200] * REQUESTS
