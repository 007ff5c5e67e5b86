"""Each domain vocabulary (a `Literal` in app/estimator/vocabulary.py) is spelled out in at most two
files of app/: its declaration, and at most one other file that needs a subset of it by name. Spelled
out means two or more of its values as string constants in one tuple, list, set or `Literal`; tables
keyed by the values (labels, byte sizes) are the way to attach meaning to them and do not count.
Everywhere else imports the tuples derived with `typing.get_args`."""

from __future__ import annotations

import ast
import functools
import typing
from pathlib import Path

from app.estimator import vocabulary

APP = Path(__file__).resolve().parents[1] / "app"
LITERALS = {
    name: set(typing.get_args(value))
    for name, value in vars(vocabulary).items()
    if typing.get_origin(value) is typing.Literal and len(typing.get_args(value)) >= 2
}


def spelled(node: ast.AST) -> set[str]:
    """The string constants a collection or a `Literal[...]` spells out."""
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        items = node.elts
    elif isinstance(node, ast.Subscript) and getattr(node.value, "id", None) == "Literal":
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    else:
        return set()
    return {i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str)}


@functools.cache
def places() -> dict[str, set[str]]:
    """The files of app/ that spell out each vocabulary (read once a run: both tests ask)."""
    found: dict[str, set[str]] = {name: set() for name in LITERALS}
    for path in APP.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            words = spelled(node)
            if len(words) < 2:
                continue
            for name, values in LITERALS.items():
                if len(words & values) >= 2:
                    found[name].add(str(path.relative_to(APP)))
    return found


def test_the_scan_sees_the_declarations() -> None:
    assert "estimator/vocabulary.py" in places()["Task"]


def test_each_vocabulary_is_spelled_out_in_at_most_two_files() -> None:
    assert {name: sorted(files) for name, files in places().items() if len(files) > 2} == {}
