"""Every unsafe route, and every page but the cheap reads named here, counts under a rate-limit entry of
the default settings: a walk over the app's route table, so a route added without a limit fails here."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from app.common.settings import Settings
from app.entry.main import create_app
from app.http.ratelimit import RateLimitMiddleware

UNSAFE = {"POST", "PUT", "PATCH", "DELETE"}
# Unsafe routes allowed without a limit: none.
UNSAFE_EXEMPT: set[tuple[str, str]] = set()
# GETs that neither run the planner, nor read the Hugging Face Hub, nor render a PDF: a row or two read, a
# template or a file sent. Everything else a GET can reach must be limited.
CHEAP_READS = {
    "/openapi.json",  # built once per process
    "/docs",
    "/healthz",  # the liveness probe must never be refused
    "/metrics",  # Prometheus text, off unless turned on, and then for the internal network only
    "/readyz",
    "/catalog/skus",  # the catalog, cached per process (app.catalog.cache)
    "/catalog/gpus",
    "/models",  # the shipped presets
    "/favicon.ico",
    "/",  # the wizard's empty form
    "/serve",  # the serving form
    "/quotes/{public_id}",  # one quote read by its 192-bit id
    # Quote search: an API key's calls count against the key's own limit (the /quotes entry, any method, for
    # keyed requests: test_keyed_search_counts_against_the_key); without a live key or an admin it is a 401.
    "/quotes",
    "/quotes/{public_id}/print",  # the printable page of one quote (HTML; the PDF is limited)
    "/quote/{public_id}/accept",  # the accept form of one quote
}
ADMIN_READS = "/admin"  # GETs under /admin answer only a signed-in admin (tests/admin/test_auth.py walks them)


def _endpoints(routes: list) -> Iterator:
    for route in routes:
        if hasattr(route, "effective_candidates"):  # an included router (FastAPI keeps them nested)
            yield from _endpoints(route.effective_candidates())
        elif getattr(route, "methods", None):  # a Mount (static files) takes no method list: GETs of files
            yield route


def _operations() -> list[tuple[str, str]]:
    app = create_app(Settings(database_url="sqlite://", env="test", metrics_enabled=True))
    return sorted(
        (method, route.path) for route in _endpoints(app.routes) for method in route.methods if method != "HEAD"
    )


OPERATIONS = _operations()
DEFAULTS = Settings(database_url="sqlite://", env="test")
LIMITER = RateLimitMiddleware(
    lambda *_: None, per_minute=1, paths=DEFAULTS.rate_limit_paths, pages=DEFAULTS.rate_limit_pages
)


def _concrete(path: str) -> str:
    return re.sub(r"\{[^}]+\}", "x1", path)


def test_the_walk_sees_the_apps_routes() -> None:
    assert {("POST", "/quotes"), ("GET", "/serve/results"), ("POST", "/admin/api/skus")} <= set(OPERATIONS)
    # POST /mcp (app.mcp.http: the MCP SDK answers it) is walked too, POST its one method
    assert [op for op in OPERATIONS if op[1] == "/mcp"] == [("POST", "/mcp")]
    assert {path for method, path in OPERATIONS if method == "GET"} >= CHEAP_READS  # no stale exemption


@pytest.mark.parametrize(("method", "path"), [op for op in OPERATIONS if op[0] in UNSAFE])
def test_every_unsafe_route_is_rate_limited(method: str, path: str) -> None:
    entry, _ = LIMITER.entry_for(method, _concrete(path))
    assert entry is not None or (method, path) in UNSAFE_EXEMPT, f"{method} {path} has no rate limit"


@pytest.mark.parametrize(("method", "path"), [op for op in OPERATIONS if op[0] == "GET"])
def test_every_page_but_the_cheap_reads_is_rate_limited(method: str, path: str) -> None:
    if path in CHEAP_READS or path == ADMIN_READS or path.startswith(ADMIN_READS + "/"):
        return
    entry, is_page = LIMITER.entry_for(method, _concrete(path))
    assert entry is not None and is_page, f"GET {path} is neither a cheap read nor rate-limited"


def test_quote_issuing_pages_count_their_gets_and_posts() -> None:
    for path in ("/serve/quote", "/quote"):
        assert LIMITER.entry_for("GET", path) == LIMITER.entry_for("POST", path) == (path, True)
    assert LIMITER.entry_for("POST", "/quote/abc/accept") == ("/quote/*/accept", False)
    assert LIMITER.entry_for("GET", "/quote/abc/accept") == (None, False)


def test_keyed_search_counts_against_the_key() -> None:
    assert LIMITER.entry_for("GET", "/quotes") == (None, False)  # anonymous: refused (401), not counted
    assert LIMITER.keyed_entry("/quotes") == "/quotes"  # with an API key: counted, at the key's limit
