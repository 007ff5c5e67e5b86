"""Request ids, one JSON access-log line per request, and Prometheus metrics by route template."""

from __future__ import annotations

import json
import logging
import re

import pytest
from fastapi.testclient import TestClient

from app.http.logging import JsonFormatter


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.setFormatter(JsonFormatter())
        self.lines: list[dict] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(json.loads(self.format(record)))


@pytest.fixture()
def access_lines():
    handler = _Lines()
    logger = logging.getLogger("app.access")
    logger.addHandler(handler)
    yield handler.lines
    logger.removeHandler(handler)


def test_request_id_is_generated_and_returned(probe_client: TestClient) -> None:
    first, second = probe_client.get("/healthz"), probe_client.get("/healthz")
    assert re.fullmatch(r"[0-9a-f]{32}", first.headers["x-request-id"])
    assert first.headers["x-request-id"] != second.headers["x-request-id"]


def test_request_id_is_accepted_from_the_client(probe_client: TestClient) -> None:
    response = probe_client.get("/healthz", headers={"X-Request-ID": "edge-7f3a.42"})
    assert response.headers["x-request-id"] == "edge-7f3a.42"


def test_malformed_request_id_is_replaced(probe_client: TestClient) -> None:
    response = probe_client.get("/healthz", headers={"X-Request-ID": "x" * 200})
    assert re.fullmatch(r"[0-9a-f]{32}", response.headers["x-request-id"])


def test_one_json_line_per_request(probe_client: TestClient, access_lines: list[dict]) -> None:
    probe_client.get("/healthz", headers={"X-Request-ID": "req-1"})
    probe_client.post("/probe/echo", json={"x": "bad"}, headers={"X-Request-ID": "req-2"})
    assert len(access_lines) == 2
    first, second = access_lines
    assert {k: first[k] for k in ("logger", "method", "path", "route", "status", "request_id")} == {
        "logger": "app.access",
        "method": "GET",
        "path": "/healthz",
        "route": "/healthz",
        "status": 200,
        "request_id": "req-1",
    }
    assert (second["method"], second["status"], second["request_id"]) == ("POST", 422, "req-2")
    assert isinstance(first["duration_ms"], float) and first["duration_ms"] >= 0


def test_unexpected_error_is_logged_with_traceback_and_request_id(probe_client: TestClient) -> None:
    handler = _Lines()
    logging.getLogger("app.errors").addHandler(handler)
    try:
        probe_client.get("/probe/boom", headers={"X-Request-ID": "boom-1"})
    finally:
        logging.getLogger("app.errors").removeHandler(handler)
    assert [(line["message"], line["request_id"]) for line in handler.lines] == [("unhandled error", "boom-1")]
    assert "RuntimeError: secret-internal-detail" in handler.lines[0]["exc_info"]


def _sample(text: str, name: str, **labels: str) -> float:
    wanted = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    for line in text.splitlines():
        if not labels and line.startswith(name + " "):
            return float(line.rsplit(" ", 1)[1])
        if line.startswith(name + "{"):
            got = ",".join(sorted(line[len(name) + 1 : line.index("}")].split(",")))
            if got == wanted:
                return float(line.rsplit(" ", 1)[1])
    return 0.0


def test_metrics_count_requests_by_route_template(probe_client: TestClient) -> None:
    before = probe_client.get("/metrics").text
    probe_client.get("/healthz")
    probe_client.get("/healthz")
    probe_client.get("/no/such/page")
    probe_client.get("/docs/assets/swagger-ui.css")
    probe_client.get("/openapi.json")
    response = probe_client.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain; version=")
    after = response.text

    def delta(name: str, **labels: str) -> float:
        return _sample(after, name, **labels) - _sample(before, name, **labels)

    assert delta("http_requests_total", method="GET", route="/healthz", status="200") == 2
    assert delta("http_requests_total", method="GET", route="<unmatched>", status="404") == 1
    assert delta("http_request_duration_seconds_count", method="GET", route="/healthz") == 2
    assert delta("http_requests_total", method="GET", route="/docs/assets", status="200") == 1  # a mount
    assert delta("http_requests_total", method="GET", route="/openapi.json", status="200") == 1
    assert "/no/such/page" not in after
    assert "db_pool_checked_out" in after


def test_metrics_count_estimates_searches_and_plan_evaluations(client: TestClient) -> None:
    before = client.get("/metrics").text
    workload = {"model": {"preset": "llama-2-7b"}, "task": "full_finetune", "tokens": 1e9}
    first = client.post("/recommend", json=workload).json()["search"]
    second = client.post("/recommend", json=workload).json()["search"]  # the same searches: from the cache
    assert second["cached_configurations"] == second["configurations"] > 0
    estimate = {"model": {"preset": "llama-2-7b"}, "task": "lora", "hardware": {"gpu": "a100-40g-sxm"}}
    assert client.post("/estimate", json=estimate).status_code == 200  # no plan: the planner's search picks one
    after = client.get("/metrics").text

    def delta(name: str, **labels: str) -> float:
        return _sample(after, name, **labels) - _sample(before, name, **labels)

    assert delta("planner_recommendations_total", outcome="options") == 2
    misses = first["configurations"] - first["cached_configurations"] + 1  # + the estimate's one configuration
    assert delta("planner_configurations_total", cache="miss") == misses
    hits = first["cached_configurations"] + second["configurations"]
    assert delta("planner_configurations_total", cache="hit") == hits
    memory = delta("planner_plan_evaluations_total", kind="memory")
    assert memory > first["memory_evaluations"]  # the recommendation's, plus the estimate's search
    assert delta("planner_search_duration_seconds_count") == 3
    assert delta("estimator_estimates_total", kind="estimate") == 1
