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

from tests.servers import LiveServerFactory, free_port

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


def test_migrate_seed_serve_over_http(tmp_path: Path, live_server_factory: LiveServerFactory) -> None:
    env = {"DATABASE_URL": f"sqlite:///{tmp_path / 'a.db'}", "PORT": str(free_port())}
    assert _run(["migrate"], env).returncode == 0
    assert "sku a100-40g-pcie-card" in _run(["seed"], env).stdout
    assert _run(["seed"], env).stdout.strip() == "seed: nothing to do"
    with live_server_factory(database_url=env["DATABASE_URL"], prepare="none") as live:
        base = live.base
        assert httpx.get(f"{base}/readyz").status_code == 200
        skus = {s["id"]: s for s in httpx.get(f"{base}/catalog/skus").json()}
        assert skus["a100-40g-pcie-card"]["price"]["terms"]["annual"]["monthly_effective"] == "2240.00"


def test_migrate_says_it_created_then_upgraded_nothing(tmp_path: Path) -> None:
    env = {"DATABASE_URL": f"sqlite:///{tmp_path / 'new.db'}"}
    assert "created the schema" in _run(["migrate"], env).stdout
    assert "already at the latest revision" in _run(["migrate"], env).stdout


def test_prod_refuses_to_serve_on_laptop_defaults(tmp_path: Path) -> None:
    env = {
        "ENV": "prod",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'prod.db'}",
        "HF_ENDPOINT": "http://mirror.internal:8080",
        "HF_TOKEN": "hf_secret",
        "PORT": str(free_port()),
    }
    result = _run(["serve"], env)
    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("error: ENV=prod refuses to serve: DATABASE_URL is SQLite")
    assert "HF_TOKEN would travel unencrypted" in line
    assert "TRUSTED_HOSTS is at its default" in line
    assert "API_KEY_SECRET is the development default" in line
    assert "hf_secret" not in line
    # The same settings but named hosts, an https Hub and a real API key secret leave only the database to fix.
    env |= {"HF_ENDPOINT": "https://mirror.internal", "TRUSTED_HOSTS": "sizer.example.com", "API_KEY_SECRET": "k" * 64}
    (line,) = _run(["serve"], env).stderr.strip().splitlines()
    assert line == (
        "error: ENV=prod refuses to serve: DATABASE_URL is SQLite: production runs on PostgreSQL (one file on "
        "one host is neither shared by app servers nor backed up by pg_dump; docs/operations.md)"
    )
