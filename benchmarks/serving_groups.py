"""Serving accuracy by group over every published serving row (tests/estimator/serving_cases.py and the
first-contact sets of tests/estimator/serving_first_contact.py), as the estimator is checked out.

Run: .venv/bin/python benchmarks/serving_groups.py [--rows] [--worst N] [--by KEY[,KEY...]]
(KEY: source, engine, gpu, tp, arch, metric; several keys split by their combination, e.g. --by tp,arch,metric)

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


# what --by splits each group by: the source (a label's first word, the project or release that published it), the
# engine, the GPU, the tensor-parallel degree, the architecture (dense or MoE), the metric (tpot_ms, ttft_ms, ...)
KEYS = ("source", "engine", "gpu", "tp", "arch", "metric")


def rows() -> list[tuple[str, str, float]]:
    """(group, label, error) for every row."""
    return [(group, label, error) for group, label, error, _ in described_rows()]


def described_rows() -> list[tuple[str, str, float, dict[str, str]]]:
    """(group, label, error, {key: value} for each of KEYS) for every row."""
    out = []
    for case in serving_cases.CASES:
        error = serving_cases.relative_error(case)
        keys = _keys(case.label, case.cfg.engine, case.gpu.id, case.tp, case.model.is_moe, case.metric)
        out.append((_group(case.metric, case.cfg.concurrency), case.label, error, keys))
    for row in serving_first_contact.SERVING_FIRST_CONTACT:
        error = serving_first_contact.predict(row) / row.published - 1.0
        keys = _keys(row.label, row.cfg.engine, row.gpu.id, row.tp, row.model.is_moe, row.metric)
        out.append((_group(row.metric, row.cfg.concurrency), row.label, error, keys))
    return out


def _keys(label: str, engine: str, gpu: str, tp: int, moe: bool, metric: str) -> dict[str, str]:
    arch = "moe" if moe else "dense"
    return {"source": label.split()[0], "engine": engine, "gpu": gpu, "tp": f"tp{tp}", "arch": arch, "metric": metric}


def _by_keys(text: str) -> tuple[str, ...]:
    """--by's comma-separated keys, each one of KEYS."""
    keys = tuple(text.split(","))
    unknown = [key for key in keys if key not in KEYS]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown key(s) {', '.join(unknown)}; choose from {', '.join(KEYS)}")
    return keys


def _summary(errors: list[float]) -> str:
    return (
        f"{len(errors):3} rows  median |error| {statistics.median(map(abs, errors)):5.1%} "
        f"(signed {statistics.median(errors):+.1%}), worst {max(map(abs, errors)):.1%}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", action="store_true", help="print every row's error")
    parser.add_argument("--worst", type=int, default=0, metavar="N", help="print the N rows of largest |error|")
    parser.add_argument(
        "--by", type=_by_keys, metavar="KEY[,KEY...]",
        help=f"print each group's figures split by these keys' combination ({', '.join(KEYS)})",
    )  # fmt: skip
    args = parser.parse_args()
    described = described_rows()
    groups: dict[str, list[float]] = {}
    split: dict[tuple[str, str], list[float]] = {}
    for group, label, error, keys in described:
        groups.setdefault(group, []).append(error)
        if args.by:
            split.setdefault((group, "/".join(keys[key] for key in args.by)), []).append(error)
        if args.rows:
            print(f"{error:+7.1%}  {group:22}  {label}")
    if args.worst:
        print(f"worst {args.worst} rows by |error|:")
        for group, label, error, _ in sorted(described, key=lambda row: -abs(row[2]))[: args.worst]:
            print(f"{error:+7.1%}  {group:22}  {label}")
    for group in ("latency, one request", "latency, loaded", "throughput", "KV capacity"):
        if args.by:
            for (of, value), errors in sorted(split.items()):
                if of == group:
                    print(f"  {group:22} {value:24} {_summary(errors)}")
        errors = groups.get(group, [])
        if errors:
            print(f"{group:22} {_summary(errors)}")


if __name__ == "__main__":
    main()
