"""A serving near miss judged by the simulation at the peak, on a request that sets no latency target: the words
name the load it misses and no target (before, the `{slo}` of `slo_peak_saturated` had nothing to fill it, and
`/recommend` answered 500, KeyError 'slo', for a saturated near miss without an SLO)."""

from __future__ import annotations

import math

import pytest

from app.estimator.serving import ServingConfig
from app.planner.serving_misses import simulated_miss
from app.text import messages

NO_SLO = ServingConfig(input_tokens=4000, output_tokens=500, requests_per_s=20.0)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_saturated_peak_without_a_target_is_worded_without_one(lang: str) -> None:
    code, params = simulated_miss(NO_SLO, None)
    assert code == "slo_peak" and params["saturated"] and params["ttft_ms"] is None and math.isinf(params["tpot_ms"])
    text = messages.misses([(code, params)], lang)
    assert text is not None and "p90" in text
    assert ("missing" not in text) if lang == "en" else ("达不到" not in text)


def test_a_saturated_peak_with_a_target_still_names_it() -> None:
    with_target = ServingConfig(input_tokens=4000, output_tokens=500, requests_per_s=20.0, slo_tpot_ms=50.0)
    text = messages.misses([simulated_miss(with_target, None)], "en")
    assert text is not None and text.endswith("missing TPOT ≤ 50 ms")
