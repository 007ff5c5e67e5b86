"""`serve --workers N` starts each worker once (review R7: on a busy 2-core host every worker was killed and started
again at start-up, "Child process [n] died").

uvicorn (0.55, uvicorn/supervisors/multiprocess.py) pings each worker every half second and kills one that does not
answer within `timeout_worker_healthcheck` (5 s unless told). A worker answers from a thread it starts only once it
runs; before that, as a spawned process, it runs the parent's main script as `__mp_main__`: under the `gpu-sizer`
console script (the Docker image's CMD) that is `from app.__main__ import run`, which imported the whole CLI and so
the whole app. (Under `python -m app` multiprocessing skips a `*.__main__` module: spawn.py _fixup_main_from_name.)
Now app/__main__.py imports nothing at load, and the timeout is a setting (WORKER_HEALTHCHECK_TIMEOUT_S, 30 s)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections import deque
from pathlib import Path

import pytest

from app.common.settings import Settings
from app.entry import cli
from tests.servers import ROOT, LiveServerFactory, migrate_and_seed

BUSY_LOOPS = 2  # processes spinning on the server's core: each worker then gets about a quarter of it
STARTED = "Application startup complete"


def test_a_worker_imports_nothing_of_the_app_before_it_can_answer_a_health_check() -> None:
    """What a spawned worker imports before its ping thread runs: the main module of `python -m app`."""
    probe = "import sys, app.__main__; print(sorted(m for m in sys.modules if m.partition('.')[0] in TOPS))"
    tops = "TOPS = ('app', 'sqlalchemy', 'fastapi', 'starlette', 'pydantic', 'uvicorn', 'mcp'); "
    result = subprocess.run(
        [sys.executable, "-c", tops + probe], cwd=ROOT, capture_output=True, text=True, timeout=60, check=True
    )
    assert result.stdout.split("\n")[0] == "['app', 'app.__main__']"


def test_serve_gives_uvicorn_the_health_check_timeout_setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, object] = {}
    monkeypatch.setattr(cli.uvicorn, "run", lambda *_args, **kwargs: seen.update(kwargs))
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
    settings = Settings(database_url=f"sqlite:///{tmp_path / 'a.db'}", worker_healthcheck_timeout_s=45)
    cli.cmd_serve(settings, workers=2)
    assert (seen["workers"], seen["timeout_worker_healthcheck"]) == (2, 45)
    assert Settings().worker_healthcheck_timeout_s == 30


GPU_SIZER = Path(sys.executable).parent / "gpu-sizer"  # the console script `make install` puts beside the interpreter


@pytest.mark.skipif(shutil.which("taskset") is None, reason="needs taskset (util-linux) to share one core")
@pytest.mark.skipif(not GPU_SIZER.exists(), reason="needs the gpu-sizer console script (make install)")
def test_two_workers_sharing_a_busy_core_each_start_once(
    tmp_path: Path, live_server_factory: LiveServerFactory
) -> None:
    """`gpu-sizer serve --workers 2` and BUSY_LOOPS spinning processes on one core, as on the review's loaded host:
    both workers start, and the supervisor never reports one died. Before, each spent about 10 s of that core's
    time importing the app before its ping thread ran, and was killed at 5.5 s (then again: the server never came
    up)."""
    url = f"sqlite:///{tmp_path / 'a.db'}"
    migrate_and_seed(url)
    core = str(min(os.sched_getaffinity(0)))
    spin = "while True: pass"
    busy = [subprocess.Popen(["taskset", "-c", core, sys.executable, "-c", spin]) for _ in range(BUSY_LOOPS)]
    log: deque[str] = deque()
    try:
        command = ["taskset", "-c", core, str(GPU_SIZER), "serve"]
        with live_server_factory(
            database_url=url, prepare="none", workers=2, env={"LOG_LEVEL": "info"}, command=command, log=log
        ):
            deadline = time.monotonic() + 90
            while sum(STARTED in line for line in list(log)) < 2 and time.monotonic() < deadline:
                time.sleep(0.2)
            lines = list(log)
    finally:
        for process in busy:
            process.kill()
            process.wait(timeout=10)
    assert sum(STARTED in line for line in lines) == 2, "".join(lines)[-3000:]
    assert [line for line in lines if "died" in line] == []
