"""The peers' own virtualenv (.peers-venv at the repository root), created on first use.

llm-analysis pins old dependencies, so it never enters the product's environment; the benchmarks talk to
it through `_llm_analysis_runner.py` in a subprocess, passing JSON on stdin and reading JSON on stdout.
"""

from __future__ import annotations

import json
import subprocess
import sys
import venv
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PEERS_VENV = ROOT / ".peers-venv"
RUNNER = Path(__file__).resolve().parent / "_llm_analysis_runner.py"
PEER_REQUIREMENT = "llm-analysis==0.2.2"  # the version docs/validation.md compares against


def peers_python() -> Path:
    """Path of the peers' interpreter; creates the venv and installs llm-analysis when missing."""
    python = PEERS_VENV / "bin" / "python"
    if not python.exists():
        print(f"creating {PEERS_VENV} (python3 -m venv + pip install {PEER_REQUIREMENT}) ...", file=sys.stderr)
        venv.EnvBuilder(with_pip=True).create(PEERS_VENV)
    probe = subprocess.run([str(python), "-c", "import llm_analysis"], capture_output=True)
    if probe.returncode != 0:
        subprocess.run([str(python), "-m", "pip", "install", "-q", PEER_REQUIREMENT], check=True)
    return python


def run_llm_analysis(request: dict[str, Any]) -> dict[str, Any]:
    """Send one request to the runner inside the peers' venv and return its JSON answer."""
    completed = subprocess.run(
        [str(peers_python()), str(RUNNER)], input=json.dumps(request), capture_output=True, text=True, check=False
    )
    if completed.returncode != 0:
        raise RuntimeError(f"llm-analysis runner failed:\n{completed.stderr[-2000:]}")
    return json.loads(completed.stdout.strip().splitlines()[-1])
