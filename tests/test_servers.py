"""The test harness itself: a server the tests start keeps answering however much it writes to stderr.

Before: `running_server` piped the server's stderr and never read it, so a server that wrote more than the
pipe holds (64 KiB on Linux) blocked in write() with its event loop, and every later request hung until its
client gave up. With LOG_LEVEL=info each request writes a JSON access-log line (~300 bytes), so 600
requests write ~180 KiB, about three pipes' worth."""

from __future__ import annotations

import httpx
import pytest

from tests.servers import seeded_server

REQUESTS = 600


def test_a_server_that_logs_a_lot_keeps_answering(tmp_path_factory: pytest.TempPathFactory) -> None:
    with (
        seeded_server(tmp_path_factory, "chatty", extra_env={"LOG_LEVEL": "info"}) as base,
        httpx.Client(base_url=base, timeout=10) as client,
    ):
        statuses = [client.get("/healthz").status_code for _ in range(REQUESTS)]
    assert statuses == [200] * REQUESTS
