"""Recording a first-contact set: each new row's figure at the commit that added it, once, before any change it
could motivate (benchmarks/memory_first_contact.py, benchmarks/serving_first_contact.py)."""

from __future__ import annotations

import datetime
import json
import subprocess
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def load(path: Path) -> dict:
    if path.exists():
        return json.loads(path.read_text(encoding="utf-8"))
    return {"sources": {}, "rows": []}


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()


def record(path: Path, rows_module: str, cases: Iterable[Any], row: Callable[[Any], dict[str, Any]]) -> None:
    """Append each case not yet recorded (`row(case)`: its figures) with the commit it is measured at; refuses
    while app/ or the rows module differs from that commit."""
    if _git("status", "--porcelain", "--", "app", rows_module):
        raise SystemExit("app/ or the rows module differs from HEAD: commit the rows before recording them")
    head = _git("rev-parse", "HEAD")
    today = datetime.datetime.now(datetime.UTC).date().isoformat()
    data = load(path)
    seen = {entry["label"] for entry in data["rows"]}
    added = 0
    for case in cases:
        if case.label in seen:
            continue
        data["sources"].setdefault(case.source, {"added_in": head, "recorded": today, "citation": case.citation})
        data["rows"].append(row(case) | {"estimator_commit": head})
        added += 1
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"recorded {added} rows at {head[:10]} in {path.relative_to(ROOT)}")
