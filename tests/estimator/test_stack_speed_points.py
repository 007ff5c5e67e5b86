"""One speed point per stack and task, calibrated on that stack's published runs (app/estimator/performance.py
TUNING_SPEED; app/planner/stacks.py `speed_point`). Each factor is the median of published ÷ our point (no stack
stated) over the stack's rows of that task group in tests/estimator/validation_cases.py, rounded to two decimals:
the constant's source is this computation. Tolerance: 0.005, the rounding."""

from __future__ import annotations

import statistics
from dataclasses import replace

import pytest

from app.estimator.performance import TUNING_SPEED, estimate_performance
from tests.estimator.validation_cases import THROUGHPUT, stack_tuning


def _ratios(tuning: str) -> list[float]:
    out = []
    for case in THROUGHPUT:
        if stack_tuning(case.source, case.workload.task) != tuning:
            continue
        point = estimate_performance(case.model, case.workload, replace(case.plan, tuning=None), case.cluster)
        out.append(case.tokens_per_s_per_gpu / point.performance.tokens_per_s_per_gpu)
    return out


@pytest.mark.parametrize(("tuning", "runs"), [("torchtitan", 10), ("trainer", 4), ("trainer_peft", 15)])
def test_each_stack_point_is_the_median_of_its_runs(tuning: str, runs: int) -> None:
    ratios = _ratios(tuning)
    assert len(ratios) == runs
    assert TUNING_SPEED[tuning] == pytest.approx(statistics.median(ratios), abs=0.005)


def test_a_stated_stack_moves_the_point_by_its_factor_and_says_so() -> None:
    case = next(c for c in THROUGHPUT if c.source == "fms-acceleration" and c.workload.task == "lora")
    point = estimate_performance(case.model, case.workload, replace(case.plan, tuning=None), case.cluster)
    stated = estimate_performance(case.model, case.workload, case.plan, case.cluster)
    assert case.plan.tuning == "trainer_peft"
    ratio = stated.performance.tokens_per_s_per_gpu / point.performance.tokens_per_s_per_gpu
    assert ratio == pytest.approx(TUNING_SPEED["trainer_peft"])
    assert "tuning_trainer_peft" in [n.code for n in stated.assumptions]
    # the range spans the stacks either way
    assert stated.performance.tokens_per_s_per_gpu_range == point.performance.tokens_per_s_per_gpu_range
