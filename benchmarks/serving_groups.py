"""Serving accuracy by group over every published serving row (tests/estimator/serving_cases.py and the
first-contact sets of tests/estimator/serving_first_contact.py), as the estimator is checked out.

Run: .venv/bin/python benchmarks/serving_groups.py [--rows]

Groups: one request (TTFT or TPOT with one sequence in flight), loaded latency (TTFT or TPOT with several in flight
or at an offered request rate), throughput (output tokens/s), KV capacity (tokens). Error = ours / published - 1;
the figure is the median |error| (signed median, worst). Rows that motivated a change are fitted, not predicted:
the first-contact figures are in tests/estimator/data/serving_first_contact.json.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

if str(Path(__file__).resolve().parents[1]) not in sys.path:
    sys.path.append(str(Path(__file__).resolve().parents[1]))

from tests.estimator import serving_cases, serving_first_contact


def _group(metric: str, concurrency: int | None) -> str:
    if metric == "kv_cache_tokens":
        return "KV capacity"
    if metric in ("output_tokens_per_s", "input_tokens_per_s"):
        return "throughput"
    return "latency, one request" if concurrency == 1 else "latency, loaded"


def rows() -> list[tuple[str, str, float]]:
    """(group, label, error) for every row."""
    out = []
    for case in serving_cases.CASES:
        error = serving_cases.relative_error(case)
        out.append((_group(case.metric, case.cfg.concurrency), case.label, error))
    for row in serving_first_contact.SERVING_FIRST_CONTACT:
        error = serving_first_contact.predict(row) / row.published - 1.0
        out.append((_group(row.metric, row.cfg.concurrency), row.label, error))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", action="store_true", help="print every row's error")
    args = parser.parse_args()
    groups: dict[str, list[float]] = {}
    for group, label, error in rows():
        groups.setdefault(group, []).append(error)
        if args.rows:
            print(f"{error:+7.1%}  {group:22}  {label}")
    for group in ("latency, one request", "latency, loaded", "throughput", "KV capacity"):
        errors = groups.get(group, [])
        if errors:
            print(
                f"{group:22} {len(errors):3} rows  median |error| {statistics.median(map(abs, errors)):5.1%} "
                f"(signed {statistics.median(errors):+.1%}), worst {max(map(abs, errors)):.1%}"
            )


if __name__ == "__main__":
    main()
