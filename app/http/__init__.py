"""HTTP hardening shared by every route: limits, security headers, CORS, trusted hosts, observability.

Outermost first: observability (request id, access log, metrics, last-resort 500) → security
headers → trusted hosts → CORS → body read timeout → body size limit → body budget per client → rate limit →
the planner's share per client → request hygiene (NUL characters in the path and query) → the app's routes, which
parse and check their body off the event loop (app.delivery.bodies).
"""

from __future__ import annotations

from fastapi import FastAPI
from starlette.middleware.cors import CORSMiddleware

from app.common.settings import Settings
from app.http.body_limit import BodyBudgetMiddleware, BodyLimitMiddleware
from app.http.body_timeout import BodyTimeoutMiddleware
from app.http.hosts import TrustedHostMiddleware
from app.http.hygiene import HygieneMiddleware
from app.http.observability import REQUEST_ID_HEADER, ObservabilityMiddleware
from app.http.planner_share import PlannerShareMiddleware
from app.http.ratelimit import RateLimitMiddleware
from app.http.security import SecurityHeadersMiddleware


def install_middleware(app: FastAPI, settings: Settings) -> None:
    # add_middleware puts each new one outside the previous ones: add innermost first.
    app.add_middleware(HygieneMiddleware)
    if settings.planner_searches_per_client > 0 and settings.planner_paths:
        app.add_middleware(
            PlannerShareMiddleware, per_client=settings.planner_searches_per_client, paths=settings.planner_paths
        )
    if settings.rate_limit_per_minute > 0 and (settings.rate_limit_paths or settings.rate_limit_pages):
        app.add_middleware(
            RateLimitMiddleware,
            per_minute=settings.rate_limit_per_minute,
            paths=settings.rate_limit_paths,
            pages=settings.rate_limit_pages,
        )
    if settings.body_budget_bytes_per_minute > 0:
        app.add_middleware(BodyBudgetMiddleware, max_bytes=settings.body_budget_bytes_per_minute)
    app.add_middleware(BodyLimitMiddleware, max_bytes=settings.max_body_bytes)
    if settings.body_read_timeout_s > 0:
        app.add_middleware(BodyTimeoutMiddleware, timeout_s=settings.body_read_timeout_s)
    if settings.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.cors_origins,
            allow_methods=["GET", "POST", "PUT", "PATCH", "DELETE"],
            allow_headers=["Content-Type", "Authorization", REQUEST_ID_HEADER, "Idempotency-Key", "If-Match"],
            expose_headers=[REQUEST_ID_HEADER, "Retry-After", "ETag", "Location"],
            max_age=600,
        )
    app.add_middleware(TrustedHostMiddleware, allowed_hosts=settings.trusted_hosts)
    app.add_middleware(SecurityHeadersMiddleware)
    app.add_middleware(ObservabilityMiddleware)
