"""Prometheus metrics: request counts and latency by route template, database pool gauges.

With several uvicorn workers each process keeps its own values; `python -m app serve --workers N`
sets PROMETHEUS_MULTIPROC_DIR so that /metrics sums them (prometheus-client's multiprocess mode).
"""

from __future__ import annotations

import os

from fastapi import APIRouter, Request, Response
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
)
from sqlalchemy import Engine
from sqlalchemy.pool import QueuePool

from app.delivery.deps import UnitOfWorkRoute

REQUESTS = Counter("http_requests_total", "HTTP requests answered", ["method", "route", "status"])
LATENCY = Histogram(
    "http_request_duration_seconds",
    "Time to answer an HTTP request",
    ["method", "route"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
)
POOL_CHECKED_OUT = Gauge("db_pool_checked_out", "Database connections in use", multiprocess_mode="livesum")
POOL_SIZE = Gauge("db_pool_size", "Database connections held by the pool", multiprocess_mode="livesum")
RATE_LIMITED = Counter("http_rate_limited_total", "Requests refused with 429", ["route"])

router = APIRouter(tags=["observability"], route_class=UnitOfWorkRoute)


def observe_pool(engine: Engine | None) -> None:
    pool = getattr(engine, "pool", None)
    if isinstance(pool, QueuePool):
        POOL_CHECKED_OUT.set(pool.checkedout())
        POOL_SIZE.set(pool.checkedin() + pool.checkedout())


def _registry() -> CollectorRegistry:
    if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        return REGISTRY
    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry)
    return registry


@router.get(
    "/metrics",
    summary="Prometheus metrics",
    response_class=Response,
    responses={200: {"content": {CONTENT_TYPE_LATEST: {"schema": {"type": "string"}}}}},
)
def metrics(request: Request) -> Response:
    observe_pool(getattr(request.app.state, "engine", None))
    return Response(generate_latest(_registry()), media_type=CONTENT_TYPE_LATEST)
