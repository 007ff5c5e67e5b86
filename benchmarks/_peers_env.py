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


class LlmAnalysisSlices:
    """llm-analysis's LLMAnalysis.training() timed in slices on demand, in one subprocess kept open: a benchmark
    alternates its own slices with these, so both sides meet the same moments of a shared machine."""

    def __init__(self, cases: list[dict[str, Any]]) -> None:
        self._process = subprocess.Popen(
            [str(peers_python()), str(RUNNER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        self._send(json.dumps({"mode": "slices", "cases": cases}))
        self.cases = int(self._receive()["cases"])

    def run(self, seconds: float) -> dict[str, Any]:
        """One slice: {"evaluations", "seconds", "per_second"}."""
        self._send(str(seconds))
        return self._receive()

    def close(self) -> None:
        if self._process.stdin is not None:
            self._process.stdin.close()
        self._process.wait(timeout=30)

    def _send(self, line: str) -> None:
        assert self._process.stdin is not None
        self._process.stdin.write(line + "\n")
        self._process.stdin.flush()

    def _receive(self) -> dict[str, Any]:
        assert self._process.stdout is not None
        line = self._process.stdout.readline()
        if not line:
            raise RuntimeError("llm-analysis runner stopped")
        answer: dict[str, Any] = json.loads(line)
        return answer
