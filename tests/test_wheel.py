"""The wheel is the whole app: built from pyproject.toml, README.md and app/ alone (what the Dockerfile
copies), installed non-editably into a fresh virtual environment, and run from a folder that holds no
source, its `gpu-sizer` command migrates, seeds and serves pages with their CSS and a quote's PDF.

The fresh environment is made without pip and sees the project's environment through a .pth file
for the dependencies (installing them again would take minutes and the network); its own
site-packages comes first on sys.path, so `app` is imported from the wheel, which the test checks.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import httpx
import pytest

from tests.servers import LiveServerFactory, free_port

ROOT = Path(__file__).resolve().parents[1]
STARTUP_TIMEOUT_S = 30


def _run(command: list[str], *, cwd: Path, env: dict[str, str] | None = None) -> str:
    result = subprocess.run(
        command, cwd=cwd, env={**os.environ, **(env or {})}, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, f"{command}: {result.stdout}\n{result.stderr}"
    return result.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bin folder of a fresh virtual environment with the wheel installed (not editable)."""
    work = tmp_path_factory.mktemp("wheel")
    source = work / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "app", source / "app", ignore=shutil.ignore_patterns("__pycache__"))
    dist = work / "dist"
    _run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--wheel-dir", str(dist), str(source)], cwd=work
    )
    (wheel,) = dist.glob("gpu_sizer-*.whl")

    venv = work / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], cwd=work)
    python = venv / "bin" / "python"
    site = Path(
        _run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd=work).strip()
    )
    (site / "project-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    _run(
        [str(python), "-m", "pip", "install", "--no-deps", "--no-index", "--ignore-installed", "--quiet", str(wheel)],
        cwd=work,
    )
    imported = _run([str(python), "-c", "import app; print(app.__file__)"], cwd=work).strip()
    assert Path(imported).is_relative_to(site), imported  # the wheel's copy, not the checkout
    return venv / "bin"


def test_installed_wheel_migrates_seeds_and_serves_pages_css_and_a_pdf(
    installed: Path, tmp_path: Path, live_server_factory: LiveServerFactory
) -> None:
    gpu_sizer = installed / "gpu-sizer"
    env = {
        "DATABASE_URL": f"sqlite:///{tmp_path / 'wheel.db'}",
        "PORT": str(free_port()),
        "RATE_LIMIT_PER_MINUTE": "0",
        "PLANNER_SEARCHES_PER_CLIENT": "0",  # one client address runs the whole mix: no per-client share
        "ENV": "dev",
    }
    assert "created the schema" in _run([str(gpu_sizer), "migrate"], cwd=tmp_path, env=env)
    assert "already at the latest revision" in _run([str(gpu_sizer), "migrate"], cwd=tmp_path, env=env)
    assert "sku a100-40g-pcie-card" in _run([str(gpu_sizer), "seed"], cwd=tmp_path, env=env)
    serve = [str(gpu_sizer), "serve"]
    with live_server_factory(
        database_url=env["DATABASE_URL"], prepare="none", env=env, command=serve, cwd=tmp_path
    ) as live:
        base = live.base
        page = httpx.get(f"{base}/", timeout=30)
        assert page.status_code == 200
        assert '<link rel="stylesheet" href="/static/css/app.css">' in page.text
        css = httpx.get(f"{base}/static/css/app.css", timeout=30)
        assert css.status_code == 200
        assert css.headers["content-type"].startswith("text/css")
        assert httpx.get(f"{base}/static/js/app.js", timeout=30).status_code == 200
        body = {"model": {"preset": "llama-2-7b"}, "task": "lora", "seq_len": 2048, "tokens": 1e8}
        options = httpx.post(f"{base}/recommend", json=body, timeout=60).json()["options"]
        customer = {"name": "Ada", "company": "", "email": "ada@example.org"}
        quote = httpx.post(f"{base}/quotes", json={**options[0]["quote"], "customer": customer}, timeout=60)
        assert quote.status_code == 201, quote.text
        pdf = httpx.get(f"{base}/quotes/{quote.json()['id']}.pdf", timeout=60)
        assert pdf.status_code == 200, pdf.text
        assert pdf.headers["content-type"] == "application/pdf"
        assert pdf.content.startswith(b"%PDF-")


def test_the_health_check_passes_on_a_live_server_and_fails_without_one(
    installed: Path, tmp_path: Path, live_server_factory: LiveServerFactory
) -> None:
    """The image's HEALTHCHECK (`python -m app.entry.healthcheck`), with TRUSTED_HOSTS naming only a public name."""
    env = {
        "DATABASE_URL": f"sqlite:///{tmp_path / 'health.db'}",
        "PORT": str(free_port()),
        "TRUSTED_HOSTS": "sizer.example.com,*.example.org",
    }
    python = str(installed / "python")
    _run([str(installed / "gpu-sizer"), "migrate"], cwd=tmp_path, env=env)
    down = subprocess.run([python, "-m", "app.entry.healthcheck"], cwd=tmp_path, env={**os.environ, **env}, timeout=30)
    assert down.returncode == 1
    serve = [str(installed / "gpu-sizer"), "serve"]
    with live_server_factory(
        database_url=env["DATABASE_URL"], prepare="none", env=env, command=serve, cwd=tmp_path, host="sizer.example.com"
    ) as live:
        base = live.base
        assert httpx.get(f"{base}/readyz", timeout=10).status_code == 400  # 127.0.0.1 is not a served name
        _run([python, "-m", "app.entry.healthcheck"], cwd=tmp_path, env=env)
