"""Fit the TP all-reduce's in-place cost per call (ALLREDUCE_IN_PLACE_S in app/estimator/serving/step.py) on the TP >= 2
serving rows that led to it, and say how it does on a source left out of the fit.

    .venv/bin/python benchmarks/serving_allreduce_fit.py

One constant, shared by the engines that run their own all-reduce kernel (vLLM, SGLang, TensorRT-LLM), searched on a
1 us grid with serving_fit.py's objective (median |error| + mean |error| / 2). The rows: every TP >= 2 speed row of the
`fit` cases and of the first-contact sources whose decode step was examined for the TP gap (NIM, llm-k8s, datacrunch,
dstackai with every prompt in flight at once); not the held-out cases (InferenceX's SGLang TP 8 rows, LMDeploy: measured
with the fitted values, out of sample), the LambdaLabsML vLLM v0.5.4 rows (recorded before, not looked at for this) nor
the dstackai rows whose batches the KV cache could not hold. Leave-one-source-out: the constant is fitted without a
source and that source's rows are measured with it. The rows fitted on are fitted from here on, not predicted.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.estimator.serving import step as step_time
from app.estimator.serving.engines import _overhead_key
from tests.estimator import serving_cases, serving_first_contact

ENGINES = ("vllm", "sglang", "trt-llm")
FIRST_CONTACT = ("nim-h100", "nim-h100-isl500", "llmk8s-a100", "datacrunch-h200", "dstack-h100-405b")
GRID_US = range(0, 81)


def _dstack_in_flight(row: serving_first_contact.ServingFirstContact) -> bool:
    """The dstackai rows whose prompts were all in flight at once (N <= 32 at 128 tokens, N <= 16 at 2,048)."""
    isl, n = row.cfg.input_tokens, row.requests or 0
    return (isl == 128 and n <= 32) or (isl == 2048 and n <= 16)


def rows() -> list[tuple[str, object, object]]:
    """(source, row, error function) of every row the constant is fitted on."""
    out: list[tuple[str, object, object]] = []
    for case in serving_cases.CASES:
        if case.tp > 1 and case.metric != "kv_cache_tokens" and case.split == "fit":
            out.append((case.source.split(" ")[0], case, serving_cases.relative_error))
    for row in serving_first_contact.SERVING_FIRST_CONTACT:
        if row.tp > 1 and row.source in FIRST_CONTACT:
            if row.source == "dstack-h100-405b" and not _dstack_in_flight(row):
                continue
            out.append((row.source, row, lambda r: serving_first_contact.predict(r) / r.published - 1.0))
    return out


def _engine(row: object) -> str:
    return _overhead_key(row.cfg)  # type: ignore[attr-defined]


def errors(selected: list, engine: str, seconds: float) -> list[float]:
    step_time.ALLREDUCE_IN_PLACE_S[engine] = seconds
    return [error(row) for _, row, error in selected]


def objective(values: list[float]) -> float:
    magnitudes = [abs(v) for v in values]
    return statistics.median(magnitudes) + statistics.fmean(magnitudes) / 2


def fit(selected: list, engine: str) -> float:
    return min((objective(errors(selected, engine, us * 1e-6)), us * 1e-6) for us in GRID_US)[1]


def _summary(values: list[float]) -> str:
    magnitudes = [abs(v) for v in values]
    return f"median |error| {statistics.median(magnitudes):5.1%} (signed {statistics.median(values):+.1%})"


def main() -> None:
    shipped = dict(step_time.ALLREDUCE_IN_PLACE_S)
    step_time.ALLREDUCE_IN_PLACE_S.update(dict.fromkeys(ENGINES, 0.0))
    for engine in ENGINES:
        selected = [r for r in rows() if _engine(r[1]) == engine]
        sources = sorted({source for source, _, _ in selected})
        best = fit(selected, engine)
        print(f"{engine}: {len(selected)} rows from {len(sources)} sources, fitted {best * 1e6:.0f} us a call "
              f"(shipped {shipped[engine] * 1e6:.0f}); at 0: {_summary(errors(selected, engine, 0.0))}; "
              f"fitted: {_summary(errors(selected, engine, best))}")  # fmt: skip
        for source in sources if len(sources) > 1 else ():
            held = [r for r in selected if r[0] == source]
            value = fit([r for r in selected if r[0] != source], engine)
            at_zero, out = _summary(errors(held, engine, 0.0)), _summary(errors(held, engine, value))
            print(
                f"  without {source:28} {value * 1e6:3.0f} us; on it (n={len(held):2}): at 0 {at_zero},",
                f"out of sample {out}",
            )
        held_out = [c for c in serving_cases.CASES if c.split == "holdout" and c.tp > 1 and _engine(c) == engine]
        held_out = [c for c in held_out if c.metric != "kv_cache_tokens"]
        for value in (0.0, best) if held_out else ():
            step_time.ALLREDUCE_IN_PLACE_S[engine] = value
            found = _summary([serving_cases.relative_error(c) for c in held_out])
            print(f"  held-out cases (n={len(held_out)}) at {value * 1e6:.0f} us: {found}")
        step_time.ALLREDUCE_IN_PLACE_S[engine] = 0.0
    step_time.ALLREDUCE_IN_PLACE_S.update(shipped)


if __name__ == "__main__":
    main()
