"""Each domain vocabulary (a `Literal` in app/estimator/vocabulary.py, or the webhooks' in app/webhooks/models.py) is
spelled out in at most two files of app/: its declaration, and at most one other file that needs a subset of it by
name. Spelled out means two or more of its values as string constants in one tuple, list, set or `Literal`; tables
keyed by the values (labels, byte sizes) are the way to attach meaning to them and do not count. Everywhere else
imports the `Literal`, or the tuples derived with `typing.get_args`. All of a vocabulary's values spelled out is its
declaration, which one file holds (review R7-8: the webhook delivery statuses and event types were declared twice)."""

from __future__ import annotations

import ast
import functools
import typing
from pathlib import Path

from app.estimator import vocabulary
from app.webhooks import models as webhook_models, schemas as webhook_schemas
from tests import source_trees

APP = Path(__file__).resolve().parents[1] / "app"
# The modules whose `Literal`s are vocabularies (a name both declare, one imported from the other, is one vocabulary).
LITERALS = {
    name: set(typing.get_args(value))
    for module in (vocabulary, webhook_models, webhook_schemas)
    for name, value in vars(module).items()
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
    for path in source_trees.trees():
        for node in source_trees.nodes(path):
            words = spelled(node)
            if len(words) < 2:
                continue
            for name, values in LITERALS.items():
                if len(words & values) >= 2:
                    found[name].add(str(path.relative_to(APP)))
    return found


def declarations() -> dict[str, set[str]]:
    """The files of app/ that declare each vocabulary: a module-level name bound to all of its values (a `Literal`, a
    tuple, list or set; a `Literal[...]` of other `Literal`s names them and is not counted)."""
    found: dict[str, set[str]] = {name: set() for name in LITERALS}
    for path, tree in source_trees.trees().items():
        for node in tree.body:
            value = node.value if isinstance(node, ast.Assign | ast.AnnAssign) else None
            words = spelled(value) if value is not None else set()
            for name, values in LITERALS.items():
                if words >= values:
                    found[name].add(str(path.relative_to(APP)))
    return found


def test_the_scan_sees_the_declarations() -> None:
    assert "estimator/vocabulary.py" in places()["Task"]
    assert {"DeliveryStatus", "EventType"} <= LITERALS.keys()
    assert "estimator/vocabulary.py" in declarations()["Task"]


def test_each_vocabulary_is_declared_in_one_file() -> None:
    assert {name: sorted(files) for name, files in declarations().items() if len(files) > 1} == {}


def test_each_vocabulary_is_spelled_out_in_at_most_two_files() -> None:
    assert {name: sorted(files) for name, files in places().items() if len(files) > 2} == {}
