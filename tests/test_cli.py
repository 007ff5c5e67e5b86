"""The command line and a real server: one-line errors for bad configuration, and the
`make run` path (migrate, seed, serve) answering over HTTP."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.servers import free_port, running_server

ROOT = Path(__file__).resolve().parents[1]


def _run(args: list[str], env: dict[str, str], timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app", *args],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("mysql://root@127.0.0.1/x", "scheme 'mysql' is not supported"),
        ("not a url", "is not a URL"),
        ("postgresql://postgres@127.0.0.1:1/nothing", "cannot reach the database"),
    ],
)
def test_bad_database_url_is_one_clear_line(url: str, expected: str) -> None:
    started = time.monotonic()
    result = _run(["migrate"], {"DATABASE_URL": url})
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert expected in lines[0]
    assert time.monotonic() - started < 20


def test_migrate_seed_serve_over_http(tmp_path: Path) -> None:
    env = {"DATABASE_URL": f"sqlite:///{tmp_path / 'a.db'}", "PORT": str(free_port())}
    assert _run(["migrate"], env).returncode == 0
    assert "sku a100-40g-pcie-card" in _run(["seed"], env).stdout
    assert _run(["seed"], env).stdout.strip() == "seed: nothing to do"
    with running_server(env) as base:
        assert httpx.get(f"{base}/readyz").status_code == 200
        skus = {s["id"]: s for s in httpx.get(f"{base}/catalog/skus").json()}
        assert skus["a100-40g-pcie-card"]["price"]["terms"]["annual"]["monthly_effective"] == "2240.00"
