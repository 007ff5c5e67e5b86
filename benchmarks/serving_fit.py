"""Fit the serving estimator's speed constants on the `fit` cases only, then report both splits.

    .venv/bin/python benchmarks/serving_fit.py          # errors of the shipped constants, both splits
    .venv/bin/python benchmarks/serving_fit.py --refit  # search again from the shipped values

Coordinate descent over a small grid per constant, minimising median |error| + mean |error| / 2 over
the fit cases' throughput/latency figures. The held-out cases ([lmdeploy], [vllm]#2031, [sglang], [inferencex]) are
only evaluated, never optimised. The KV-capacity constants come straight from logged values (see
app/estimator/serving/memory.py) and are not searched. Paste the printed values into app/estimator/serving/step.py,
where they are set and read.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.estimator.serving import step as step_time
from tests.estimator.serving_cases import CASES, relative_error

SCALARS = (
    "DECODE_HBM_EFFICIENCY",
    "KV_HBM_EFFICIENCY",
    "STEP_COMPUTE_EFFICIENCY",
    "PREFILL_COMPUTE_EFFICIENCY",
    "ATTENTION_COMPUTE_EFFICIENCY",
    "MOE_GEMM_EFFICIENCY",
)
DICTS = (
    ("WEIGHT_ONLY_STREAM_EFFICIENCY", "int8"),
    ("WEIGHT_ONLY_STREAM_EFFICIENCY", "int4"),
    ("STEP_OVERHEAD_S", "trt-llm"),
    ("ALLREDUCE_LATENCY_S", "none"),
    ("ALLREDUCE_LATENCY_S", "trt-llm"),
)
STEPS = (0.8, 0.9, 0.95, 1.05, 1.1, 1.25)


def _speed(split: str) -> list:
    return [c for c in CASES if c.split == split and c.metric != "kv_cache_tokens"]


def objective(cases: list) -> float:
    errors = [abs(relative_error(c)) for c in cases]
    return statistics.median(errors) + statistics.fmean(errors) / 2


def _get(name: str, key: str | None) -> float:
    value = getattr(step_time, name)
    return value[key] if key else value


def _set(name: str, key: str | None, value: float) -> None:
    if key:
        getattr(step_time, name)[key] = value
    else:
        setattr(step_time, name, value)


def fit(rounds: int = 4) -> dict[str, float]:
    cases = _speed("fit")
    knobs = [(name, None) for name in SCALARS] + list(DICTS)
    best = objective(cases)
    for _ in range(rounds):
        improved = False
        for name, key in knobs:
            start = _get(name, key)
            for step in STEPS:
                candidate = start * step
                if not key and candidate > 0.98:
                    continue
                _set(name, key, candidate)
                score = objective(cases)
                if score < best - 1e-6:
                    best, start, improved = score, candidate, True
            _set(name, key, start)
        if not improved:
            break
    return {f"{n}[{k}]" if k else n: round(_get(n, k), 6) for n, k in knobs}


def report() -> None:
    for split in ("fit", "holdout"):
        for kind in ("speed", "kv"):
            cases = [c for c in CASES if c.split == split and (c.metric == "kv_cache_tokens") == (kind == "kv")]
            errors = [abs(relative_error(c)) for c in cases]
            median, worst = statistics.median(errors), max(errors)
            print(f"{split:8s} {kind:5s} n={len(cases):2d} median {median:6.1%} worst {worst:6.1%}")


if __name__ == "__main__":
    report()
    if "--refit" in sys.argv:
        for name, value in fit().items():
            print(f"{name} = {value}")
        print("after the search:")
        report()
