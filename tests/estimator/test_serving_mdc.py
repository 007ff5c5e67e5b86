"""The wait for a sequence slot of a disaggregated decode replica (app/estimator/serving_sim.py `mdc_wait_quantiles`,
review R8-2): Erlang C, and the M/D/c heavy-traffic form checked against the exact M/D/1 queue at c = 1."""

from __future__ import annotations

import pytest

from app.estimator.serving_sim import erlang_c, md1_wait_quantiles, mdc_wait_quantiles


def test_erlang_c_matches_the_textbook_values() -> None:
    """M/M/2 at a = 1 erlang: C = a² / (a² + 2(2 − a)·(1 + a)) = 1/3 (Kleinrock Vol. 1 §3.5, eq. 3.40); M/M/1: C = ρ.
    Closed forms, so to 1e-12."""
    assert erlang_c(2, 1.0) == pytest.approx(1 / 3, abs=1e-12)
    assert erlang_c(1, 0.7) == pytest.approx(0.7, abs=1e-12)
    assert erlang_c(34, 34.0) == 1.0 and erlang_c(34, 0.0) == 0.0


@pytest.mark.parametrize("rho", [0.8, 0.9, 0.95, 0.98])
def test_the_heavy_traffic_form_at_one_server_is_the_exact_md1_wait(rho: float) -> None:
    """At c = 1 the form reads the exact M/D/1 percentiles (serving_sim.md1_wait_quantiles, Iversen & Staalhage 1999)
    within 10 % at ρ ≥ 0.8: the heavy-traffic law is exact as ρ → 1 and the slot queues it floors load to there."""
    exact = md1_wait_quantiles(rho)
    form = mdc_wait_quantiles(rho, 1, 1.0)
    for got, want in zip((form.p50, form.p90, form.p99), exact, strict=True):
        assert got == pytest.approx(want, rel=0.10)


def test_slots_held_eleven_seconds_at_99_percent_wait_tens_of_seconds() -> None:
    """Review R8-2: 3 requests/s on 34 slots held 300 × 37.2 ms = 11.2 s each (ρ = 0.98): the p90 wait is tens of
    seconds; at 2 requests/s (ρ = 0.66) none at p90."""
    busy = mdc_wait_quantiles(3.0, 34, 300 * 0.0372)
    assert busy.p90 > 10.0
    assert mdc_wait_quantiles(2.0, 34, 300 * 0.0372).p90 == 0.0
    assert mdc_wait_quantiles(3.1, 34, 11.0).p90 == float("inf")  # ρ ≥ 1
