"""Serving at first contact: the estimator's error on published serving runs before any change they motivated.

Run: .venv/bin/python benchmarks/serving_first_contact.py  (first contact beside the estimator as checked out)
     .venv/bin/python benchmarks/serving_first_contact.py --record    (records rows not yet recorded)

Rows: tests/estimator/serving_first_contact.py. `--record` runs the estimator as committed on every row that
tests/estimator/data/serving_first_contact.json does not hold yet and adds it with the commit that added its source
(the HEAD it ran at, which must hold the rows and an unmodified app/) and the day; a recorded row is never
rewritten, so the file keeps the out-of-sample figure after the model changes. Error = ours / published - 1.
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

from tests.estimator.serving_first_contact import SERVING_FIRST_CONTACT, predict

ROOT = Path(__file__).resolve().parents[1]
RECORD = ROOT / "tests" / "estimator" / "data" / "serving_first_contact.json"
ROWS_MODULE = "tests/estimator/serving_first_contact.py"
GROUPS = {
    "ttft_ms": "latency",
    "tpot_ms": "latency",
    "output_tokens_per_s": "throughput",
    "input_tokens_per_s": "throughput",
}


def load() -> dict:
    return first_contact.load(RECORD)


def record() -> None:
    def row(case: Any) -> dict[str, Any]:
        ours = predict(case)
        return {
            "label": case.label,
            "source": case.source,
            "metric": case.metric,
            "published": case.published,
            "first_contact": round(ours, 3),
            "first_contact_error": round(ours / case.published - 1.0, 4),
        }

    first_contact.record(RECORD, ROWS_MODULE, SERVING_FIRST_CONTACT, row)


def report() -> None:
    first = {row["label"]: row for row in load()["rows"]}
    groups: dict[str, list[tuple[float, float]]] = {}
    print(f"{'first contact':>13} {'now':>7} {'published':>10} {'ours':>10}  row")
    for case in SERVING_FIRST_CONTACT:
        ours = predict(case)
        now = ours / case.published - 1.0
        was = first.get(case.label, {}).get("first_contact_error")
        shown = "n/a" if was is None else f"{was:+.1%}"
        print(f"{shown:>13} {now:+7.1%} {case.published:10.2f} {ours:10.2f}  {case.label}")
        if was is not None:
            groups.setdefault(GROUPS[case.metric], []).append((was, now))
    print()
    for group, pairs in groups.items():
        was = [w for w, _ in pairs]
        now = [n for _, n in pairs]
        print(
            f"{group}: {len(pairs)} rows; first contact median |error| {statistics.median(map(abs, was)):.1%} "
            f"(signed median {statistics.median(was):+.1%}); now {statistics.median(map(abs, now)):.1%} "
            f"(signed {statistics.median(now):+.1%}; fitted once a change used them)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--record", action="store_true", help="record the rows not yet recorded, at HEAD")
    args = parser.parse_args()
    record() if args.record else report()


if __name__ == "__main__":
    main()
