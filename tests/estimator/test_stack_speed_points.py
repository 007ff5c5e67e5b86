"""One speed point per stack and task, calibrated on that stack's published runs (app/estimator/performance.py
TUNING_SPEED; app/planner/stacks.py `speed_point`). Each factor is the median of published ÷ our point (no stack
stated) over the stack's rows of that task group in tests/estimator/validation_cases.py, rounded to two decimals:
the constant's source is this computation. Tolerance: 0.005, the rounding."""

from __future__ import annotations

import statistics
from dataclasses import replace

import pytest

from app.estimator.performance import (
    AMPERE_PRETRAIN_FASTEST,
    FASTEST_PUBLISHED_MFU,
    RANGE_HIGH,
    RANGE_LOW,
    STACK_CENTRED,
    TUNING_SPEED,
    calibration_distance,
    estimate_performance,
    generation,
)
from app.estimator.vocabulary import PRETRAINING_TASKS
from tests.estimator.validation_cases import THROUGHPUT, ThroughputCase, stack_tuning


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
    # the range moves with the stack's point (performance.py STACK_CENTRED): RANGE_LOW to RANGE_HIGH of it
    low, high = stated.performance.tokens_per_s_per_gpu_range or (0.0, 0.0)
    point_low, point_high = point.performance.tokens_per_s_per_gpu_range or (0.0, 0.0)
    assert (low, high) == pytest.approx(
        (point_low * TUNING_SPEED["trainer_peft"], point_high * TUNING_SPEED["trainer_peft"])
    )


@pytest.mark.parametrize("tuning", sorted(STACK_CENTRED))
def test_each_stacks_range_is_centred_on_its_runs_and_holds_them(tuning: str) -> None:
    """Before, the range spanned the stacks around the unstated point: the Trainer with PEFT's point sat 4 % above the
    slow end and 3 of its 15 fms-acceleration runs (0.68-0.72 of the unstated point) were below the range. Now the
    range is RANGE_LOW to RANGE_HIGH of the stack's point, and every run of the stack is inside it (in-sample: the
    factor is the median of these runs)."""
    cases = [c for c in THROUGHPUT if stack_tuning(c.source, c.workload.task) == tuning]
    for case in cases:
        stated = estimate_performance(case.model, case.workload, case.plan, case.cluster).performance
        low, high = stated.tokens_per_s_per_gpu_range or (0.0, 0.0)
        assert low <= case.tokens_per_s_per_gpu <= high, case.label
        # centred: the point sits where the generic range puts it, RANGE_LOW and RANGE_HIGH of it either side
        assert low / stated.tokens_per_s_per_gpu == pytest.approx(RANGE_LOW * _slow_widening(case), rel=1e-6)
        fastest = AMPERE_PRETRAIN_FASTEST if _ampere_pretrain(case) else RANGE_HIGH
        # ... no faster than the fastest published run of the generation and precision, nor slower than the point
        ceiling = FASTEST_PUBLISHED_MFU.get((generation(case.cluster.gpu), case.workload.precision))
        if ceiling is not None:
            fastest = max(1.0, min(fastest, ceiling / stated.mfu_full_attention))
        assert high / stated.tokens_per_s_per_gpu == pytest.approx(fastest, rel=1e-6)


def _slow_widening(case: ThroughputCase) -> float:
    """The calibration-distance widening of the case's slow end (MoE, offload, Ampere pre-training), as a factor."""
    slowest, _kinds = calibration_distance(
        case.model.is_moe, case.plan.offload != "none", False, _ampere_pretrain(case)
    )
    return slowest / RANGE_LOW


def _ampere_pretrain(case: ThroughputCase) -> bool:
    return generation(case.cluster.gpu) == "ampere" and case.workload.task in PRETRAINING_TASKS
