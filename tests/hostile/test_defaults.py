"""What the public port shows by default (real server): no Prometheus metrics."""

from __future__ import annotations

import httpx


def test_metrics_are_off_on_the_public_port_by_default(http: httpx.Client) -> None:
    assert http.get("/metrics").status_code == 404
    assert "/metrics" not in http.get("/openapi.json").json()["paths"]
    assert http.get("/healthz").status_code == 200
