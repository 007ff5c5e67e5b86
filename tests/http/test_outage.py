"""PostgreSQL goes away and comes back: a real server against a private PostgreSQL instance.

The test starts its own PostgreSQL (initdb into a temporary folder, on a free port, as the
`postgres` OS user), migrates and seeds it, serves the app with uvicorn, stops PostgreSQL
(`pg_ctl stop -m immediate`), checks that endpoints that need the database answer 503
problem+json within two seconds while the others keep working, then starts PostgreSQL again and
checks that the same server recovers without a restart.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from app.common.errors import PROBLEM_BASE
from app.common.settings import Settings
from app.db.engine import build_engine, build_sessionmaker
from app.db.migrate import upgrade
from app.entry.seed import seed_database
from tests.servers import LiveServerFactory, free_port

PG_BINARIES = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
pytestmark = pytest.mark.skipif(
    not PG_BINARIES or shutil.which("runuser") is None or os.geteuid() != 0,
    reason="needs PostgreSQL server binaries and root (to run initdb as the postgres user)",
)
DEADLINE_S = 2.0


class PrivatePostgres:
    def __init__(self, root: Path) -> None:
        self.bin = Path(PG_BINARIES[-1]).parent
        self.data = root / "data"
        self.port = free_port()
        self.url = f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/postgres"
        shutil.chown(root, "postgres", "postgres")
        self.root = root

    def _as_postgres(self, *args: str) -> None:
        done = subprocess.run(["runuser", "-u", "postgres", "--", *args], capture_output=True, text=True, timeout=60)
        if done.returncode != 0:
            raise RuntimeError(f"{Path(args[0]).name} failed: {done.stderr.strip() or done.stdout.strip()}")

    def init(self) -> None:
        self._as_postgres(str(self.bin / "initdb"), "-D", str(self.data), "-A", "trust", "-U", "postgres")

    def start(self) -> None:
        options = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._as_postgres(
            str(self.bin / "pg_ctl"), "-D", str(self.data), "-o", options, "-l", str(self.root / "log"), "-w", "start"
        )

    def stop(self, mode: str = "immediate") -> None:
        self._as_postgres(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop")


@pytest.fixture(scope="module")
def postgres() -> Iterator[PrivatePostgres]:
    # Not under pytest's tmp folder: that one is private to root, and PostgreSQL runs as `postgres`.
    root = Path(tempfile.mkdtemp(prefix="gpu-sizer-outage-"))
    server = PrivatePostgres(root)
    server.init()
    server.start()
    upgrade(server.url)
    engine = build_engine(server.url)
    with build_sessionmaker(engine).begin() as session:
        seed_database(session)
    engine.dispose()
    yield server
    subprocess.run(
        [
            "runuser",
            "-u",
            "postgres",
            "--",
            str(server.bin / "pg_ctl"),
            "-D",
            str(server.data),
            "-m",
            "immediate",
            "stop",
        ],
        capture_output=True,
        timeout=60,
    )
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def server(postgres: PrivatePostgres, live_server_factory: LiveServerFactory) -> Iterator[httpx.Client]:
    """The app served on the private PostgreSQL (live_server_factory: waits for /healthz, stops the
    process group), with the default limits."""
    fields = Settings.model_fields  # the limits the factory turns off, at their defaults again
    limits = {
        name.upper(): str(fields[name].default) for name in ("rate_limit_per_minute", "planner_searches_per_client")
    }
    with (
        live_server_factory(database_url=postgres.url, prepare="none", limits=limits) as live,
        httpx.Client(base_url=live.base, timeout=10) as client,
    ):
        yield client


def _timed(client: httpx.Client, method: str, path: str, **kwargs: object) -> tuple[httpx.Response, float]:
    started = time.perf_counter()
    response = client.request(method, path, **kwargs)
    return response, time.perf_counter() - started


def _estimate_request(client: httpx.Client) -> dict | None:
    """A POST /estimate on a built-in GPU type, once the estimator's route exists (it needs no database)."""
    paths = client.get("/openapi.json").json()["paths"]
    if "/estimate" not in paths:
        return None
    from tests.http.examples import ESTIMATE_BODY  # the smallest valid body, kept next to the fuzzing examples

    return ESTIMATE_BODY


def test_outage_and_recovery(postgres: PrivatePostgres, server: httpx.Client) -> None:
    assert server.get("/readyz").status_code == 200
    assert server.get("/catalog/skus").status_code == 200
    estimate = _estimate_request(server)

    postgres.stop("immediate")
    try:
        for path in ("/catalog/skus", "/catalog/gpus", "/readyz"):
            response, seconds = _timed(server, "GET", path)
            assert response.status_code == 503, (path, response.text)
            assert response.headers["content-type"] == "application/problem+json"
            assert response.json()["type"] == PROBLEM_BASE + "service-unavailable"
            assert response.headers["retry-after"] == "5"
            assert seconds < DEADLINE_S, (path, seconds)
        health, seconds = _timed(server, "GET", "/healthz")
        assert (health.status_code, health.json()) == (200, {"status": "ok"})
        assert seconds < DEADLINE_S
        if estimate is not None:
            response, seconds = _timed(server, "POST", "/estimate", json=estimate)
            assert response.status_code == 200, response.text
            assert seconds < DEADLINE_S
    finally:
        postgres.start()

    deadline = time.monotonic() + 10
    while server.get("/readyz").status_code != 200 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert server.get("/readyz").json() == {"status": "ready", "database": "ok"}
    skus = server.get("/catalog/skus")
    assert skus.status_code == 200
    assert {sku["id"] for sku in skus.json()} >= {"a100-40g-pcie-card", "a100-80g-sxm-8x", "h100-80g-sxm-8x"}
