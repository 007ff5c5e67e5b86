"""The ASGI app, built by a factory. Nothing heavy happens at import: the engine is made in lifespan."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import cache
from pathlib import Path

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from app.api import catalog, health
from app.db.engine import build_engine, build_sessionmaker
from app.errors import install_error_handlers
from app.settings import Settings, get_settings

STATIC_DIR = Path(__file__).resolve().parents[1] / "static"
DESCRIPTION = (
    "Sizes GPU servers for training, fine-tuning and serving large language models: per-GPU memory, "
    "parallel plans, speed, cost and quotes. Money is a decimal string with an ISO 4217 currency code; "
    "memory is GiB (2^30 bytes). Errors are RFC 9457 problem details."
)


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or get_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        engine = build_engine(settings.database_url)
        app.state.engine = engine
        app.state.sessionmaker = build_sessionmaker(engine)
        yield
        engine.dispose()

    app = FastAPI(title="gpu-sizer", version="0.1.0", description=DESCRIPTION, lifespan=lifespan)
    app.state.settings = settings
    install_error_handlers(app)
    app.include_router(health.router)
    app.include_router(catalog.router)
    if STATIC_DIR.is_dir():
        app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    return app


@cache
def _default_app() -> FastAPI:
    return create_app()


def __getattr__(name: str) -> FastAPI:
    """`app.main:app` for uvicorn: built from the environment on first access, not at import."""
    if name == "app":
        return _default_app()
    raise AttributeError(name)
