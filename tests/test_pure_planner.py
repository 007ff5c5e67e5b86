"""scripts/pure_planner.py, which `make lint` runs: every module of app/planner/ is held pure by the import contract
or named as not pure with why. It passes on this repository and fails on a module placed nowhere, on one placed
twice and on a stale name."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("pure_planner", ROOT / "scripts" / "pure_planner.py")
assert _spec is not None and _spec.loader is not None
pure_planner = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(pure_planner)


def _copy(tmp_path: Path) -> Path:
    """The repository's pyproject.toml and app/planner/ module names (empty files) under tmp_path."""
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    for module in pure_planner.planner_modules(ROOT) - {"app.planner"}:
        name = module.removeprefix("app.planner.")
        package = ROOT / "app" / "planner" / name
        path = tmp_path / "app" / "planner" / (f"{name}/__init__.py" if package.is_dir() else f"{name}.py")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()
    (tmp_path / "app" / "planner" / "__init__.py").touch()
    return tmp_path


def test_every_planner_module_is_placed() -> None:
    assert pure_planner.problems(ROOT) == []


def test_a_module_placed_nowhere_fails(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    assert pure_planner.problems(root) == []
    (root / "app" / "planner" / "new_rule.py").touch()
    assert [line.split(":")[0] for line in pure_planner.problems(root)] == ["app.planner.new_rule"]


def test_a_module_placed_twice_or_gone_fails(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    (root / "app" / "planner" / "workload.py").unlink()  # named in NOT_PURE, gone
    (root / "app" / "planner" / "stacks.py").unlink()  # listed in the contract, gone
    found = pure_planner.problems(root)
    assert any(line.startswith("app.planner.workload: named in NOT_PURE but no such module") for line in found)
    assert any(line.startswith("app.planner.stacks: listed in the contract but no such module") for line in found)
    pyproject = root / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text().replace('"app.planner.stacks",', '"app.planner.stacks", "app.planner.cli",')
    )
    assert any(
        "app.planner.cli: held pure by the contract and named in NOT_PURE" in line
        for line in pure_planner.problems(root)
    )
