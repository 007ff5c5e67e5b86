"""Browser-test fixtures: one real uvicorn server per test module on a throwaway SQLite database
(migrated and seeded by the CLI, as `make run` does), and Debian's Chromium driven by Playwright.

Playwright never downloads a browser here: it launches /usr/bin/chromium (`make browser` installs
it). Without it the browser tests skip, or fail under CI=true.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.web.browser import new_page

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
ROOT = Path(__file__).resolve().parents[2]
STARTUP_TIMEOUT_S = 30


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _run_cli(command: str, env: dict[str, str]) -> None:
    done = subprocess.run([sys.executable, "-m", "app", command], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)
    if done.returncode:
        raise RuntimeError(f"python -m app {command} failed: {done.stderr or done.stdout}")


def _wait_ready(base_url: str, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited: {process.stdout.read() if process.stdout else ''}")
        try:
            if httpx.get(f"{base_url}/readyz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"the server did not answer within {STARTUP_TIMEOUT_S} s")


@pytest.fixture(scope="module")
def live_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`python -m app migrate`, `seed`, `serve` on a free port; the base URL, for one test module."""
    port = _free_port()
    database = tmp_path_factory.mktemp("web") / "web.db"
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{database}", "HOST": "127.0.0.1", "PORT": str(port),
           "ENV": "test", "LOG_LEVEL": "warning", "RATE_LIMIT_PER_MINUTE": "0"}
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    _run_cli("migrate", env)
    _run_cli("seed", env)
    process = subprocess.Popen([sys.executable, "-m", "app", "serve"], cwd=ROOT, env=env, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    base_url = f"http://127.0.0.1:{port}"
    try:
        _wait_ready(base_url, process)
        yield base_url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="module")
def chromium() -> Iterator[object]:
    if not os.access(CHROMIUM, os.X_OK):
        message = f"{CHROMIUM} is missing: run `make browser` (apt-get install chromium)"
        if os.environ.get("CI") == "true":
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield browser
        browser.close()


@pytest.fixture()
def page(chromium: object) -> Iterator[object]:
    page = new_page(chromium)
    yield page
    page.context.close()


@pytest.fixture()
def page_no_js(chromium: object) -> Iterator[object]:
    page = new_page(chromium, javascript=False)
    yield page
    page.context.close()
