"""Predicted throughput against published training runs (tests/estimator/perf_cases.py).

Tolerances: every case within 20 % of the published tokens/s per GPU, median absolute error ≤ 10 %
(issue 4 asks for ≤ 15 % median and none worse than 35 %). The efficiency constants in
performance.py were calibrated on 20 of these runs (the 4 Megatron-LM README MFU rows came after),
so this is mostly an in-sample check: it guards the model against regressions and shows that one
set of physical constants fits 24 runs on two GPU generations, six sources and three parallelism
styles (3D Megatron, FSDP, Llama 3 4D).
"""

from __future__ import annotations

import statistics

import pytest

from app.estimator.performance import estimate_performance
from tests.estimator.perf_cases import CASES, Case

CASE_TOLERANCE = 0.20
MEDIAN_TOLERANCE = 0.10


def relative_error(case: Case) -> float:
    predicted = estimate_performance(case.model, case.workload, case.plan, case.cluster).performance
    return predicted.tokens_per_s_per_gpu / case.tokens_per_s_per_gpu - 1


@pytest.mark.parametrize("case", CASES, ids=[c.label for c in CASES])
def test_case_within_tolerance(case: Case) -> None:
    assert abs(relative_error(case)) <= CASE_TOLERANCE, case.source


def test_median_error() -> None:
    assert statistics.median(abs(relative_error(c)) for c in CASES) <= MEDIAN_TOLERANCE


def test_cases_cover_at_least_four_sources_and_ten_runs() -> None:
    assert len(CASES) >= 10
    assert len({c.source for c in CASES}) >= 4


def test_llama3_405b_mfu_in_published_band() -> None:
    """Dubey et al. 2024 Table 4: 38-43 % BF16 MFU on 8K-16K H100."""
    for case in CASES:
        if case.model.name == "llama3-405b":
            mfu = estimate_performance(case.model, case.workload, case.plan, case.cluster).performance.mfu
            assert 0.33 <= mfu <= 0.47
