"""The serving estimator against published measurements (tests/estimator/serving_cases.py cites each).

Goals (the issue's): median |error| ≤ 15 % on throughput/latency and ≤ 10 % on KV capacity, for the
fitted and for the held-out cases separately, and no case worse than 40 %.
"""

from __future__ import annotations

import statistics

import pytest

from app.estimator.serving import estimate_serving
from app.estimator.specs import Cluster
from tests.estimator.serving_cases import CASES, ServingCase, relative_error

SPEED_MEDIAN = 0.15
KV_MEDIAN = 0.10
CASE_CEILING = 0.40


def _errors(split: str, kv: bool) -> list[float]:
    return [abs(relative_error(c)) for c in CASES if c.split == split and (c.metric == "kv_cache_tokens") == kv]


def test_the_validation_set_is_large_and_diverse() -> None:
    """≥ 25 measured results from ≥ 5 projects; at least a third held out of the fit."""
    sources = {c.label.split()[0] for c in CASES}
    assert len(CASES) >= 25 and len(sources) >= 5
    assert sum(c.split == "holdout" for c in CASES) >= len(CASES) / 3
    fit_sources = {c.label.split()[0] for c in CASES if c.split == "fit"}
    holdout_sources = {c.label.split()[0] for c in CASES if c.split == "holdout" and c.metric != "kv_cache_tokens"}
    assert not fit_sources & holdout_sources


@pytest.mark.parametrize("split", ["fit", "holdout"])
def test_median_error_on_throughput_and_latency(split: str) -> None:
    assert statistics.median(_errors(split, kv=False)) <= SPEED_MEDIAN


@pytest.mark.parametrize("split", ["fit", "holdout"])
def test_median_error_on_kv_capacity(split: str) -> None:
    assert statistics.median(_errors(split, kv=True)) <= KV_MEDIAN


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.label)
def test_each_case_within_the_ceiling(case: ServingCase) -> None:
    assert abs(relative_error(case)) <= CASE_CEILING


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.label)
def test_no_published_configuration_is_called_does_not_fit(case: ServingCase) -> None:
    """A source ran it on this hardware, so the estimate must hold at least one sequence of its lengths."""
    cluster = Cluster(gpu=case.gpu, gpus_per_node=case.gpus_per_node)
    estimate = estimate_serving(case.model, case.cfg, cluster, tp=case.tp)
    assert estimate.max_concurrency >= 1
    assert estimate.output_tokens_per_s > 0
