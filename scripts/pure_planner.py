"""Fail when a module of app/planner/ is neither held pure by the import contract "Pure estimator and planner: no
database, no web" (pyproject.toml, its source_modules) nor named below as orchestration or API models, with why; and
when a name below is listed in the contract too, or names no module. A new planner module is placed on purpose, so
the contract's list cannot fall behind the package (it had: 13 pure modules unguarded, three of them imported by no
listed module, where `import sqlalchemy` passed `make lint`). `make lint` runs this.

Run: python scripts/pure_planner.py [root]   (root: the repository, default this file's parent's parent)
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

CONTRACT = "Pure estimator and planner: no database, no web"

# module of app.planner -> why it may read the database, the web framework, the request models or the settings
NOT_PURE: dict[str, str] = {
    "app.planner": "the package's __init__ (empty)",
    "app.planner.cli": "the command line: reads the catalog from the database",
    "app.planner.cost_schemas": "API models (pydantic)",
    "app.planner.mappers": "turns search results into API models",
    "app.planner.market": "reads the catalog, prices and exchange rates from the database",
    "app.planner.memory_schemas": "API models (pydantic)",
    "app.planner.metrics": "Prometheus counters of the searches",
    "app.planner.model_schemas": "API models (pydantic)",
    "app.planner.schemas": "API models (pydantic)",
    "app.planner.service": "orchestration: a session in, the search, a response out",
    "app.planner.serving_mappers": "turns serving search results into API models",
    "app.planner.serving_request": "a serving request's models into the search's values",
    "app.planner.serving_schemas": "API models (pydantic)",
    "app.planner.serving_service": "orchestration of a serving recommendation",
    "app.planner.word_schemas": "API models (pydantic)",
    "app.planner.workload": "a request's models into the estimator's values; reads a SKU from the database",
}


def planner_modules(root: Path) -> set[str]:
    """Every module and package of app/planner/ (a package by its name, not its modules)."""
    base = root / "app" / "planner"
    found = {"app.planner"}
    for path in base.iterdir():
        if path.suffix == ".py" and path.name != "__init__.py":
            found.add(f"app.planner.{path.stem}")
        elif path.is_dir() and (path / "__init__.py").exists():
            found.add(f"app.planner.{path.name}")
    return found


def problems(root: Path) -> list[str]:
    """One line per planner module the contract neither lists nor names here, per name both list, per stale name."""
    config = tomllib.loads((root / "pyproject.toml").read_text())
    contract = next(c for c in config["tool"]["importlinter"]["contracts"] if c["name"] == CONTRACT)
    pure = {m for m in contract["source_modules"] if m == "app.planner" or m.startswith("app.planner.")}
    modules = planner_modules(root)
    found = [
        f"{m}: list it in the contract {CONTRACT!r} (pyproject.toml), or name it in NOT_PURE here with why"
        for m in sorted(modules - pure - NOT_PURE.keys())
    ]
    found += [f"{m}: held pure by the contract and named in NOT_PURE; keep one" for m in sorted(pure & NOT_PURE.keys())]
    found += [f"{m}: named in NOT_PURE but no such module; remove it" for m in sorted(NOT_PURE.keys() - modules)]
    found += [f"{m}: listed in the contract but no such module; remove it" for m in sorted(pure - modules)]
    return found


def main(argv: list[str]) -> int:
    root = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parent.parent
    found = problems(root)
    for line in found:
        print(line, file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
