"""Peak memory at first contact: the estimator's error on published rows before any change they motivated.

Run: .venv/bin/python benchmarks/memory_first_contact.py             (first contact beside the estimator as checked out)
     .venv/bin/python benchmarks/memory_first_contact.py --record    (records rows not yet recorded)

Rows: tests/estimator/memory_first_contact.py (with the modules it gathers beside it). `--record` runs the estimator
as committed on every row that tests/estimator/data/memory_first_contact.json does not hold yet and adds it with the
commit that added its source
(the HEAD it ran at, which must hold the rows and an unmodified app/) and the day; a recorded row is never
rewritten, so the file keeps the out-of-sample figure after the model changes. Each estimate is read the way its
source measured (app.estimator.memory.measured_bytes: allocated, reserved or the device). Error = ours / published - 1.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path
from typing import Any

if str(Path(__file__).resolve().parents[1]) not in sys.path:
    sys.path.append(str(Path(__file__).resolve().parents[1]))

import _first_contact as first_contact

from app.estimator.memory import estimate_memory, measured_bytes
from app.estimator.specs import GIB
from tests.estimator.memory_first_contact import MEMORY_FIRST_CONTACT, FirstContactCase

ROOT = Path(__file__).resolve().parents[1]
RECORD = ROOT / "tests" / "estimator" / "data" / "memory_first_contact.json"
ROWS_MODULE = "tests/estimator/memory_first_contact*.py"  # the rows and the modules beside it (a git pathspec)


def estimate(case: FirstContactCase) -> tuple[float, bool]:
    """The estimate read as the source measured it, GiB, and whether the gate judges the plan to fit its card (each
    row is a run that ran, so every "no" refuses a plan the world runs)."""
    breakdown = estimate_memory(case.model, case.workload, case.plan, case.cluster).breakdown
    return measured_bytes(breakdown, case.plan, case.cluster, case.measured) / GIB, breakdown.gpu_fits


def estimate_as_read(case: FirstContactCase) -> float:
    """The estimate on the stage the source read (FirstContactCase.stage: Megatron-LM's last rank), GiB: the fitted,
    like-for-like comparison; first contact stays the worst stage's, as recorded."""
    breakdown = case.breakdown()
    return measured_bytes(breakdown, case.plan, case.cluster, case.measured) / GIB


def load() -> dict:
    return first_contact.load(RECORD)


def record() -> None:
    def row(case: Any) -> dict[str, Any]:
        ours, fits = estimate(case)
        return {
            "label": case.label,
            "source": case.source,
            "reading": case.measured,
            "published_gib": case.published_gib,
            "first_contact_gib": round(ours, 3),
            "first_contact_error": round(ours / case.published_gib - 1.0, 4),
            "first_contact_fits": fits,
        }

    first_contact.record(RECORD, ROWS_MODULE, MEMORY_FIRST_CONTACT, row)


def report() -> None:
    data = load()
    first = {row["label"]: row for row in data["rows"]}
    by_source: dict[str, list[tuple[float, float]]] = {}
    fits: dict[str, list[bool]] = {}
    print(f"{'first contact':>13} {'now':>7} {'published':>9} {'ours':>6}  row")
    staged: set[str] = set()
    for case in MEMORY_FIRST_CONTACT:
        worst, fit = estimate(case)
        ours = worst if case.stage is None else estimate_as_read(case)
        now = ours / case.published_gib - 1.0
        was = first.get(case.label, {}).get("first_contact_error")
        first_error = "n/a" if was is None else f"{was:+.1%}"
        where = ""
        if case.stage is not None:  # read on the stage the source names; the worst stage's beside it
            staged.add(case.source)
            where = f" [stage {case.stage}; worst stage {worst / case.published_gib - 1.0:+.1%}]"
        print(f"{first_error:>13} {now:+7.1%} {case.published_gib:9.2f} {ours:6.2f}  {case.label}{where}")
        if was is not None:
            by_source.setdefault(case.source, []).append((was, now))
            fits.setdefault(case.source, []).append(first[case.label]["first_contact_fits"])
    print()
    for source, pairs in by_source.items():
        was = [w for w, _ in pairs]
        now = [n for _, n in pairs]
        print(
            f"{source}: {len(pairs)} rows; first contact median |error| {statistics.median(map(abs, was)):.1%} "
            f"(signed median {statistics.median(was):+.1%}, {min(was):+.1%} to {max(was):+.1%}); "
            f"now {statistics.median(map(abs, now)):.1%} (fitted"
            + (", on the stage the source read" if source in staged else "")
            + "); judged to fit at first contact: "
            f"{sum(fits[source])} of {len(fits[source])}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--record", action="store_true", help="record the rows not yet recorded, at HEAD")
    args = parser.parse_args()
    record() if args.record else report()


if __name__ == "__main__":
    main()
