"""The ASGI app, built by a factory. Nothing heavy happens at import: the engine is made in lifespan."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import cache
from pathlib import Path

from anyio import CapacityLimiter, to_thread
from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from app.admin.routes import install_admin
from app.api import catalog, estimate, health, quotes, recommend
from app.common.errors import install_error_handlers
from app.common.settings import Settings, get_settings
from app.db.engine import ServerLimits, build_engine, build_sessionmaker
from app.delivery.bodies import body_check_limiter
from app.delivery.error_pages import install_html_error_pages
from app.http import install_middleware, metrics as metrics_api
from app.http.docs import install_docs
from app.http.logging import configure_logging
from app.http.openapi import install_problem_openapi
from app.mcp import http as mcp_http
from app.planner.budget import set_time_budget
from app.planner.search import set_cache_size
from app.quotes.documents import PdfRenderer
from app.quotes.expiry import expire_due
from app.web import routes as web_routes, serve as web_serve
from app.webhooks import worker as webhooks_worker

STATIC_DIR = Path(__file__).resolve().parents[1] / "static"  # app/static, package data: shipped in the wheel
DESCRIPTION = (
    "Sizes GPU servers for training, fine-tuning and serving large language models: per-GPU memory, "
    "parallel plans, speed, cost and quotes. Money is a decimal string with an ISO 4217 currency code; "
    "memory is GiB (2^30 bytes). Errors are RFC 9457 problem details."
)


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or get_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        limits = ServerLimits(
            threads=settings.worker_threads,
            lock_timeout_ms=settings.db_lock_timeout_ms,
            statement_timeout_ms=settings.db_statement_timeout_ms,
            idle_in_transaction_timeout_ms=settings.db_idle_in_transaction_timeout_ms,
        )
        engine = build_engine(settings.database_url, limits)
        app.state.engine = engine
        app.state.sessionmaker = build_sessionmaker(engine)
        # Synchronous endpoints run on this many threads per worker (anyio's default is 40). Under the GIL
        # more threads only take turns on one core: a request then waits behind every other one in flight
        # instead of queueing briefly and running through (benchmarks/load.py: p99 halves at 4 vs 40).
        to_thread.current_default_thread_limiter().total_tokens = settings.worker_threads
        app.state.ready_limiter = CapacityLimiter(1)  # /readyz checks the database on a thread of its own
        app.state.body_limiter = body_check_limiter()  # request bodies are checked on threads of their own
        # Webhook deliveries, on this process's event loop; the database decides which process sends each one.
        webhooks = webhooks_worker.start(app.state.sessionmaker, settings, sweep=expire_due)
        async with mcp_http.lifespan(app):  # the MCP SDK's session manager (POST /mcp)
            yield
        if webhooks is not None:
            await webhooks.stop()
        app.state.pdf_renderer.close()
        engine.dispose()

    configure_process(settings)
    app = FastAPI(
        title="gpu-sizer", version="0.1.0", description=DESCRIPTION, lifespan=lifespan, docs_url=None, redoc_url=None
    )
    app.state.settings = settings
    app.state.pdf_renderer = PdfRenderer(
        workers=settings.pdf_workers, timeout_s=settings.pdf_timeout_s, max_waiting=settings.pdf_max_waiting
    )
    install_error_handlers(app)
    install_middleware(app, settings)
    install_docs(app)
    install_problem_openapi(app, settings)
    if settings.metrics_enabled:  # off by default: the public port does not publish the service's internals
        app.include_router(metrics_api.router)
    for router in (health.router, catalog.router, estimate.router, recommend.router, quotes.router, mcp_http.router):
        app.include_router(router)
    install_admin(app)
    app.include_router(web_routes.router)
    app.include_router(web_serve.router)
    install_html_error_pages(app)  # after every handler is installed: it wraps them
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")  # fails at start when not shipped
    return app


def configure_process(settings: Settings) -> None:
    """The settings' parts that hold for the whole process, not one app: the log level, the planner's search cache
    (emptied) and its time budget. create_app applies them; an app built earlier and served again (the tests') has
    them applied anew."""
    configure_logging(settings.log_level)
    set_cache_size(settings.planner_cache_size)
    set_time_budget(settings.planner_time_budget_ms)


@cache
def _default_app() -> FastAPI:
    return create_app()


def __getattr__(name: str) -> FastAPI:
    """`app.entry.main:app` for uvicorn: built from the environment on first access, not at import."""
    if name == "app":
        return _default_app()
    raise AttributeError(name)
