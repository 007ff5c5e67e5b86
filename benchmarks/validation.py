"""Out-of-sample validation: throughput and GPU-hours on published runs, fit set and held-out set apart.

Run: .venv/bin/python benchmarks/validation.py            (ours, as checked out)
     .venv/bin/python benchmarks/validation.py --markdown  (a Markdown section for docs/validation.md)

Cases: tests/estimator/validation_cases.py (each with its configuration and citation). For every case it prints
the published figure, ours and the error (ours / published - 1), and whether the published value lies inside
`performance.tokens_per_s_per_gpu_range` (throughput) or `performance.gpu_hours_range` (GPU-hours). The summary
gives median and worst |error|, coverage and the median half-width of the range (half the range over its
midpoint) per set. A case the estimator cannot express (it raises) is reported as n/a, not dropped silently.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

if str(Path(__file__).resolve().parents[1]) not in sys.path:
    sys.path.append(str(Path(__file__).resolve().parents[1]))

from app.estimator.performance import estimate_performance  # noqa: E402
from tests.estimator.validation_cases import GPU_HOURS, THROUGHPUT  # noqa: E402


@dataclass
class Row:
    label: str
    source: str
    split: str
    published: float
    ours: float | None
    low: float | None
    high: float | None

    @property
    def error(self) -> float | None:
        return None if self.ours is None else self.ours / self.published - 1.0

    @property
    def inside(self) -> bool | None:
        if self.low is None or self.high is None:
            return None
        return self.low <= self.published <= self.high

    @property
    def half_width(self) -> float | None:
        if self.low is None or self.high is None:
            return None
        return (self.high - self.low) / (self.high + self.low)


def throughput_rows() -> list[Row]:
    rows = []
    for case in THROUGHPUT:
        try:
            perf = estimate_performance(case.model, case.workload, case.plan, case.cluster).performance
        except ValueError as error:
            print(f"n/a {case.label}: {error}", file=sys.stderr)
            rows.append(Row(case.label, case.source, case.split, case.tokens_per_s_per_gpu, None, None, None))
            continue
        span = getattr(perf, "tokens_per_s_per_gpu_range", None) or (None, None)
        rows.append(
            Row(case.label, case.source, case.split, case.tokens_per_s_per_gpu, perf.tokens_per_s_per_gpu, *span)
        )
    return rows


def gpu_hours_rows() -> list[Row]:
    rows = []
    for case in GPU_HOURS:
        try:
            perf = estimate_performance(case.model, case.workload, case.plan, case.cluster).performance
        except ValueError as error:
            print(f"n/a {case.label}: {error}", file=sys.stderr)
            rows.append(Row(case.label, case.source, case.split, case.gpu_hours, None, None, None))
            continue
        span = getattr(perf, "gpu_hours_range", None) or (None, None)
        rows.append(Row(case.label, case.source, case.split, case.gpu_hours, perf.gpu_hours, *span))
    return rows


def summary(rows: list[Row]) -> dict[str, str]:
    errors = [abs(r.error) for r in rows if r.error is not None]
    inside = [r.inside for r in rows if r.inside is not None]
    widths = [r.half_width for r in rows if r.half_width is not None]
    sources = sorted({r.source for r in rows})
    return {
        "cases": f"{len(rows)} ({len(errors)} answered)",
        "sources": str(len(sources)),
        "median |error|": f"{statistics.median(errors):.1%}" if errors else "n/a",
        "worst |error|": f"{max(errors):.1%}" if errors else "n/a",
        "inside range": f"{sum(inside)} of {len(inside)} ({sum(inside) / len(inside):.0%})" if inside else "n/a",
        "median half-width": f"±{statistics.median(widths):.0%}" if widths else "n/a",
    }


def _fmt(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:,.0f}" if value >= 100 else f"{value:,.1f}"


def table(title: str, rows: list[Row], markdown: bool) -> list[str]:
    out = [f"### {title}", ""] if markdown else [title]
    head = ["case", "source", "set", "published", "ours", "error", "range", "inside"]
    if markdown:
        out += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        err = "n/a" if r.error is None else f"{r.error:+.1%}"
        span = "n/a" if r.low is None else f"{_fmt(r.low)}–{_fmt(r.high)}"
        inside = {None: "n/a", True: "yes", False: "no"}[r.inside]
        cells = [r.label, r.source, r.split, _fmt(r.published), _fmt(r.ours), err, span, inside]
        out.append("| " + " | ".join(cells) + " |" if markdown else "  " + " | ".join(cells))
    out.append("")
    for split in ("fit", "holdout"):
        part = [r for r in rows if r.split == split]
        if part:
            text = ", ".join(f"{k} {v}" for k, v in summary(part).items())
            out.append(f"- **{split}**: {text}" if markdown else f"  {split}: {text}")
    out.append("")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--markdown", action="store_true", help="print Markdown tables")
    args = parser.parse_args()
    lines = table("Training throughput, tokens/s per GPU", throughput_rows(), args.markdown)
    lines += table("GPU-hours of whole training runs", gpu_hours_rows(), args.markdown)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
