"""Real processes for the tests: `python -m app …` commands, a server on a free loopback port, and
scratch databases of their own for tests that commit (so the shared rolled-back database is never
disturbed).

A test module starts its servers through one fixture, `live_server_factory` (tests/conftest.py, a
`LiveServerFactory`): a database of its own (or the one named), prepared (`migrate` and `seed` through the CLI as
`make run` does, in the test process, or not at all), its CLI `setup` run, then `python -m app serve` with the
workers, limits and other settings asked for. The `live_server` fixture is that factory's default server for one
test module. `running_server` (any command, any environment) is what the factory calls; tests/conftest.py marks the
tests that use any of these `slow`.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypeVar

import httpx
import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from app.db.engine import build_engine, build_sessionmaker
from app.db.migrate import upgrade
from app.entry.seed import seed_database
from tests.conftest import require_backend_url

ROOT = Path(__file__).resolve().parents[1]
STARTUP_TIMEOUT_S = 30
BARRIER_TIMEOUT_S = 60  # threads released together wait at most this long for each other: a lost one fails the test
STDERR_LINES_KEPT = 200  # the tail of a server's stderr quoted when it exits early


T = TypeVar("T")


def released_together(count: int, work: Callable[[int, Callable[[], object]], T]) -> list[T]:
    """`work(i, release)` for i in range(count), each on a thread of its own; `release()` waits (at most
    BARRIER_TIMEOUT_S) until every thread has called it, so the requests made after it leave together.

    The threads start one at a time, each once the one before runs its work. Under coverage on Python 3.11, two
    threads installing the trace hook at the same moment make one of them die in its bootstrap (a process-wide
    guard in CPython's _PyEval_SetTrace, python/cpython#98257): with a thread pool, the others then waited at the
    barrier for good, which is how a full `make test` once ran past CI's limit."""
    barrier = threading.Barrier(count, timeout=BARRIER_TIMEOUT_S)
    results: dict[int, T] = {}
    errors: list[BaseException] = []

    def run(index: int, running: threading.Event) -> None:
        running.set()
        try:
            results[index] = work(index, barrier.wait)
        except BaseException as exc:  # re-raised in the test's thread below
            errors.append(exc)
            barrier.abort()

    threads = []
    for index in range(count):
        running = threading.Event()
        thread = threading.Thread(target=run, args=(index, running), daemon=True)
        thread.start()
        if not running.wait(BARRIER_TIMEOUT_S):
            barrier.abort()
            raise RuntimeError(f"thread {index} of {count} never ran its work")
        threads.append(thread)
    for thread in threads:
        thread.join(timeout=3 * BARRIER_TIMEOUT_S)
    if errors:
        raise errors[0]
    assert len(results) == count, f"{count - len(results)} of {count} threads did not finish"
    return [results[index] for index in range(count)]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def app_cli(
    args: list[str], env: dict[str, str], stdin: str = "", *, check: bool = True, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """`python -m app ARGS` from the repository root with `env` (added to this process's environment)."""
    return subprocess.run(
        [sys.executable, "-m", "app", *args],
        cwd=ROOT,
        env={**os.environ, **env},
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=check,
    )


def server_env(database_url: str, **extra: str) -> dict[str, str]:
    """The environment of a test server on `database_url`: a free port, ENV=test, no rate limit and no planner share
    per client, then `extra`."""
    return {
        "DATABASE_URL": database_url,
        "PORT": str(free_port()),
        "ENV": "test",
        "RATE_LIMIT_PER_MINUTE": "0",
        "PLANNER_SEARCHES_PER_CLIENT": "0",  # one client address runs the whole mix: no per-client share
        **extra,
    }


def migrate_and_seed(
    database_url: str, setup: list[tuple[list[str], str]] | None = None, env: dict[str, str] | None = None
) -> None:
    """`migrate`, `seed`, then each (`args`, stdin) of `setup`, through the CLI, on `database_url` (with `env`)."""
    env = {**(env or {}), "DATABASE_URL": database_url}
    for args, stdin in [(["migrate"], ""), (["seed"], ""), *(setup or [])]:
        app_cli(args, env, stdin)


@contextmanager
def running_server(
    env: dict[str, str],
    *,
    workers: int = 1,
    command: list[str] | None = None,
    cwd: Path = ROOT,
    host: str | None = None,
    log: deque[str] | None = None,
) -> Iterator[str]:
    """`python -m app serve` (or `command`, e.g. an installed `gpu-sizer serve`, run in `cwd`) with `env` (which names
    DATABASE_URL and PORT); yields the base URL once /healthz answers (asked with `host` as its Host header, where
    given), and stops the whole process group (uvicorn and its workers) afterwards. `log`, where given, receives the
    server's stderr lines as they come (else the last STDERR_LINES_KEPT are kept for an early exit's message)."""
    env = {**os.environ, "HOST": "127.0.0.1", "LOG_LEVEL": "warning", **env}
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    process = subprocess.Popen(
        [*(command or [sys.executable, "-m", "app", "serve"]), "--workers", str(workers)],
        cwd=cwd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    # The pipe is read all along: a server that writes more than the pipe holds (64 KiB of warnings) would
    # otherwise block in write() with its event loop, and every request to it would hang.
    stderr_tail: deque[str] = deque(maxlen=STDERR_LINES_KEPT) if log is None else log
    drain = threading.Thread(target=_drain, args=(process, stderr_tail), daemon=True)
    drain.start()
    base = f"http://127.0.0.1:{env['PORT']}"
    try:
        _wait_ready(base, process, {"Host": host} if host else {}, stderr_tail, drain)
        yield base
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=5)
        drain.join(timeout=5)
        if process.stderr is not None:  # left open it is a ResourceWarning, an error under filterwarnings
            process.stderr.close()


def _drain(process: subprocess.Popen[str], tail: deque[str]) -> None:
    if process.stderr is None:
        return
    try:
        for line in process.stderr:
            tail.append(line)
    except ValueError:  # closed under us at teardown
        return


def _wait_ready(
    base: str,
    process: subprocess.Popen[str],
    headers: dict[str, str],
    stderr_tail: deque[str],
    drain: threading.Thread,
) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            drain.join(timeout=5)
            raise RuntimeError(f"the server exited: {''.join(stderr_tail)}")
        try:
            if httpx.get(f"{base}/healthz", headers=headers, timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"the server did not answer within {STARTUP_TIMEOUT_S} s")


@contextmanager
def scratch_database(backend: str, tmp_path_factory: pytest.TempPathFactory, name: str) -> Iterator[str]:
    """An empty database of its own: a SQLite file, or `<test database>_<name>` on PostgreSQL
    (created now, dropped afterwards)."""
    url = require_backend_url(backend, tmp_path_factory, name=name)
    if backend == "sqlite":
        yield url
        return
    database = f"{make_url(url).database}_{name}"
    server = create_engine(url, isolation_level="AUTOCOMMIT")
    with server.connect() as connection:
        connection.execute(text(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)'))
        connection.execute(text(f'CREATE DATABASE "{database}"'))
    try:
        yield make_url(url).set(database=database).render_as_string(hide_password=False)
    finally:
        with server.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)'))
        server.dispose()


_migrated_sqlite: list[Path] = []  # the run's SQLite file migrated to head, copied by migrated_database


@contextmanager
def migrated_database(backend: str, tmp_path_factory: pytest.TempPathFactory, name: str) -> Iterator[str]:
    """`scratch_database` migrated to head (not seeded). On SQLite a copy of a file migrated once a run: Alembic's
    upgrade costs a few tenths of a second of CPU each time, and the copy is the same schema byte for byte."""
    with scratch_database(backend, tmp_path_factory, name) as url:
        if backend != "sqlite":
            upgrade(url)
            yield url
            return
        if not _migrated_sqlite:
            template = tmp_path_factory.mktemp("migrated") / "head.db"
            upgrade(f"sqlite:///{template}")
            _migrated_sqlite.append(template)
        database = make_url(url).database
        assert database is not None
        shutil.copyfile(_migrated_sqlite[0], database)
        yield url


Prepare = Literal["cli", "seeded", "migrated", "none"]


@dataclass(frozen=True)
class LiveServer:
    """A server started by `LiveServerFactory`: its base URL, its database, and the standard output of each `setup`
    command (e.g. the token `create-token` printed)."""

    base: str
    database_url: str
    outputs: list[str] = field(default_factory=list)


class LiveServerFactory:
    """The one way a test module starts a real server (the `live_server_factory` fixture). Calling it gives a context
    manager that yields a `LiveServer` and stops the server (and drops its scratch database) when it ends:

    - the database: `database_url` where given (the caller's), else a scratch one of `backend` named `name`
      (`scratch_database`, PostgreSQL's created and dropped here);
    - `prepare`: "cli" runs `migrate` and `seed` through the CLI (as `make run` does), "seeded" migrates (on SQLite,
      a copy of the run's migrated file: `migrated_database`) and seeds in the test process, "migrated" only
      migrates, "none" leaves the database as it is;
    - `setup`: CLI commands (`args`, stdin) run on it afterwards, e.g. `create-admin`; their output in `outputs`;
    - the server: `workers`, `limits` and `env` (settings as environment variables, added to `server_env`'s free
      port, ENV=test, no rate limit and no planner share per client), and `running_server`'s `command`, `cwd`,
      `host` and `log`.
    """

    def __init__(self, tmp_path_factory: pytest.TempPathFactory) -> None:
        self._tmp_path_factory = tmp_path_factory

    @contextmanager
    def __call__(
        self,
        name: str = "live",
        *,
        backend: str = "sqlite",
        database_url: str | None = None,
        prepare: Prepare = "cli",
        setup: list[tuple[list[str], str]] | None = None,
        workers: int = 1,
        limits: dict[str, str] | None = None,
        env: dict[str, str] | None = None,
        command: list[str] | None = None,
        cwd: Path = ROOT,
        host: str | None = None,
        log: deque[str] | None = None,
    ) -> Iterator[LiveServer]:
        with ExitStack() as stack:
            url = database_url or stack.enter_context(self._database(backend, name, prepare))
            settings = server_env(url, **(limits or {}), **(env or {}))
            if prepare == "cli":
                migrate_and_seed(url, env=settings)
            elif database_url is not None and prepare != "none":
                _prepare_in_process(url, seed=prepare == "seeded")
            outputs = [app_cli(args, settings, stdin).stdout for args, stdin in setup or []]
            base = stack.enter_context(
                running_server(settings, workers=workers, command=command, cwd=cwd, host=host, log=log)
            )
            yield LiveServer(base, url, outputs)

    @contextmanager
    def _database(self, backend: str, name: str, prepare: Prepare) -> Iterator[str]:
        if prepare in ("seeded", "migrated"):
            with migrated_database(backend, self._tmp_path_factory, name) as url:
                if prepare == "seeded":
                    _prepare_in_process(url, seed=True, migrate=False)
                yield url
            return
        with scratch_database(backend, self._tmp_path_factory, name) as url:
            yield url


def _prepare_in_process(url: str, *, seed: bool, migrate: bool = True) -> None:
    if migrate:
        upgrade(url)
    if seed:
        engine = build_engine(url)
        with build_sessionmaker(engine).begin() as session:
            seed_database(session)
        engine.dispose()
