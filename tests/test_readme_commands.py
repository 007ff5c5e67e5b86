"""The README's commands work as written on a fresh checkout after `make run` (which installs the
`gpu-sizer` console script in .venv/bin): every `.venv/bin/gpu-sizer …` line in README.md and docs/
runs here, in the order written, on a fresh SQLite database. The issue it fixes: every
`python -m app …` line failed with `ModuleNotFoundError: babel` outside the virtualenv."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / ".venv" / "bin" / "gpu-sizer"
INLINE = re.compile(r"`([^`\n]*\.venv/bin/gpu-sizer[^`\n]*)`")
PASSWORD = "correct horse battery staple"


def readme_commands() -> list[str]:
    """Shell lines from fenced blocks and inline code that run the console script, `serve` excepted
    (it does not return; tests/test_cli.py serves over HTTP)."""
    commands: list[str] = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("**/*.md"))]:
        fenced = False
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("```"):
                fenced = not fenced
                continue
            if fenced and ".venv/bin/gpu-sizer" in line:
                commands.append(line.split("  #")[0].strip())
            elif not fenced:
                commands += INLINE.findall(line)
    return [c for c in commands if re.search(r"gpu-sizer [a-z]", c) and not re.search(r"gpu-sizer serve\b", c)]


def test_the_readme_names_every_command() -> None:
    found = " ".join(readme_commands())
    for command in ("migrate", "seed", "recommend", "set-exchange-rate", "create-admin", "create-token"):
        assert f".venv/bin/gpu-sizer {command}" in found, command


def test_every_readme_command_runs_as_written(tmp_path: Path) -> None:
    if not SCRIPT.exists():
        pytest.fail(f"{SCRIPT} is missing: `make install` creates it ([project.scripts] in pyproject.toml)")
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path),
        "DATABASE_URL": f"sqlite:///{tmp_path / 'readme.db'}",
        "PASSWORD": PASSWORD,
    }
    for command in readme_commands():
        result = subprocess.run(
            ["bash", "-o", "pipefail", "-ec", command],
            cwd=ROOT,
            env=env,
            input=f"{PASSWORD}\n{PASSWORD}\n",  # create-admin's two prompts (no terminal: getpass reads stdin)
            capture_output=True,
            text=True,
            timeout=180,
            start_new_session=True,
        )
        assert result.returncode == 0, (command, result.stdout[-2000:], result.stderr[-2000:])
