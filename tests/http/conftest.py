"""A small router of our own for the hardening tests, so they do not depend on other domains' routes."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest
from fastapi import APIRouter, FastAPI
from fastapi.testclient import TestClient
from pydantic import Field

from app.common.errors import NotFound
from app.common.schemas import RequestModel
from app.common.settings import Settings
from app.delivery.deps import UnitOfWorkRoute
from app.entry.main import create_app
from tests.conftest import served_app


class Echo(RequestModel):
    x: float
    items: list[int] = Field(default=[], max_length=10)


probe = APIRouter(prefix="/probe", route_class=UnitOfWorkRoute)  # as every router of the app


@probe.post("/echo")
def echo(body: Echo) -> dict[str, float]:
    return {"x": body.x}


@probe.get("/boom")
def boom() -> dict[str, str]:
    raise RuntimeError("secret-internal-detail")


@probe.get("/missing")
def missing() -> dict[str, str]:
    raise NotFound("No such thing.")


def probe_app(settings: Settings) -> FastAPI:
    app = create_app(settings)
    app.include_router(probe)
    return app


@pytest.fixture()
def sqlite_settings(tmp_path) -> Settings:
    return Settings(
        database_url=f"sqlite:///{tmp_path / 'probe.db'}", env="test", rate_limit_per_minute=0, metrics_enabled=True
    )


@pytest.fixture(scope="session")
def probe_settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """sqlite_settings on a file of the worker's: the probe routes read no database."""
    database = tmp_path_factory.mktemp("probe") / "probe.db"
    return Settings(database_url=f"sqlite:///{database}", env="test", rate_limit_per_minute=0, metrics_enabled=True)


@pytest.fixture()
def probe_client(probe_settings: Settings) -> Iterator[TestClient]:
    """A client of the probe app, built once a worker and served again (tests/conftest.py `served_app`)."""
    with served_app(probe_settings, probe_app) as app, TestClient(app, raise_server_exceptions=False) as client:
        yield client


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Known fuzzing findings in other domains' routes (tests/http/test_fuzz.py) are expected failures."""
    fuzzing = sys.modules.get("tests.http.test_fuzz")  # not collected by a run that leaves slow out
    if fuzzing is None:
        return
    known_findings: dict[str, str] = fuzzing.KNOWN_FINDINGS
    for item in items:
        for key, reason in known_findings.items():
            if item.name.endswith(f"[{key}]"):
                item.add_marker(pytest.mark.xfail(reason=f"fuzzing finding: {reason}", strict=False))
