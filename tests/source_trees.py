"""The app's source as syntax trees, parsed and walked once a process: the tests that read the code
(tests/test_messages.py, tests/test_vocabulary_places.py) share them instead of parsing and walking every file of
app/ again each (about a second of CPU a pass, six passes). Read only: no test changes a tree."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

APP = Path(__file__).resolve().parents[1] / "app"


@cache
def trees() -> dict[Path, ast.Module]:
    """Every module of app/, by path, in path order."""
    return {path: ast.parse(path.read_text(encoding="utf-8")) for path in sorted(APP.rglob("*.py"))}


@cache
def nodes(path: Path) -> tuple[ast.AST, ...]:
    """Every node of a module's tree, as ast.walk gives them."""
    return tuple(ast.walk(trees()[path]))


def package_trees(packages: tuple[str, ...]) -> dict[Path, ast.Module]:
    """The modules of the named packages of app/ (`planner`, `quotes`, …), by path, in path order."""
    return {path: tree for path, tree in trees().items() if path.relative_to(APP).parts[0] in packages}
