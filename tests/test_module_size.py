"""scripts/module_size.py, the 800-line limit `make lint` checks: it passes on this repository, fails on a long module
that is not a named exception, and fails on an exception that is no longer needed."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("module_size", ROOT / "scripts" / "module_size.py")
assert _spec is not None and _spec.loader is not None
module_size = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(module_size)


def _module(root: Path, name: str, lines: int) -> None:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("x = 1\n" * lines)


def test_the_repository_keeps_the_limit() -> None:
    assert module_size.problems(ROOT) == []


def test_a_long_module_without_an_exception_fails(tmp_path: Path) -> None:
    _module(tmp_path, "app/planner/long.py", module_size.MAX_LINES + 1)
    _module(tmp_path, "app/planner/short.py", module_size.MAX_LINES)
    for name in module_size.EXCEPTIONS:
        _module(tmp_path, name, module_size.MAX_LINES + 1)
    found = module_size.problems(tmp_path)
    assert found == ["app/planner/long.py: 801 lines > 800; split it by job (or name an exception here, with why)"]
    assert module_size.main(["module_size.py", str(tmp_path)]) == 1


def test_an_exception_no_longer_needed_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the repository's own list may be empty: two exceptions named here, one still needed and one not
    exceptions = {"app/planner/shrunk.py": "split since", "app/planner/still_long.py": "not yet split"}
    monkeypatch.setattr(module_size, "EXCEPTIONS", exceptions)
    _module(tmp_path, "app/planner/shrunk.py", module_size.MAX_LINES)
    _module(tmp_path, "app/planner/still_long.py", module_size.MAX_LINES + 1)
    assert module_size.problems(tmp_path) == [
        "app/planner/shrunk.py: listed as an exception but no longer over 800 lines; remove it from the list"
    ]
