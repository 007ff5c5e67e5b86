"""Fail when a module in app/ is longer than MAX_LINES, unless it is a named exception; and when an exception is no
longer needed (the file shrank below the limit or is gone), so the list cannot go stale.

A module past 800 lines has, here, always turned out to hold more than one job (the memory estimator at 1,605 lines
held four); the limit asks for the split when it is still cheap. `make lint` runs this.

Run: python scripts/module_size.py [root]   (root: the repository, default this file's parent's parent)
"""

from __future__ import annotations

import sys
from pathlib import Path

MAX_LINES = 800

# path (from the repository root) -> why it may be longer, for now
EXCEPTIONS: dict[str, str] = {}


def line_count(path: Path) -> int:
    with path.open("rb") as handle:
        return sum(1 for _ in handle)


def problems(root: Path) -> list[str]:
    """One line per module over the limit without an exception, and per exception no longer needed."""
    found = []
    for path in sorted((root / "app").rglob("*.py")):
        name = path.relative_to(root).as_posix()
        lines = line_count(path)
        if lines > MAX_LINES and name not in EXCEPTIONS:
            found.append(f"{name}: {lines} lines > {MAX_LINES}; split it by job (or name an exception here, with why)")
    for name in EXCEPTIONS:
        path = root / name
        if not path.exists() or line_count(path) <= MAX_LINES:
            stale = f"{name}: listed as an exception but no longer over {MAX_LINES} lines; remove it from the list"
            found.append(stale)
    return found


def main(argv: list[str]) -> int:
    root = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parent.parent
    found = problems(root)
    for line in found:
        print(line, file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
