"""A closed loop's SLO verdict judged on the asked percentile (review: llama-3.1-8b on one H100, 64 clients, prompts
of 8,000 tokens with a p95 of 30,000 and outputs of 500 (p95 1,500), SLO TTFT ≤ 7,163 ms and TPOT ≤ 58.3 ms: the p99
verdict read the steady state's 7,092 ms and 57.7 ms, "meets", as the p50 did).

The queueing arithmetic: the prompt lengths are the lognormal the simulation draws (serving_sim.Lengths), σ from
ln(30,000 / 8,000) = 1.32 is 1.39, so its p99 is exp(μ + 2.326σ) ≈ 77,000 tokens, capped at the 59,000 or so one
sequence may hold here: a p99 request prefills some seven times the mean prompt, and its prefill alone
(8B × 2 FLOP × 59,000 tokens ≈ 0.95 PFLOP, over a second at the H100's dense BF16 rate even before attention) takes
the TTFT past the 71 ms of margin the target leaves the steady state. Whatever the model's details, a p99 TTFT at
least the p50's plus a second must miss the target; the p50 verdict stays the steady state's."""

from __future__ import annotations

from dataclasses import replace

from app.estimator.hardware import get_gpu
from app.estimator.presets import get_preset
from app.estimator.serving import ServingConfig, estimate_serving
from app.estimator.specs import Cluster

H100 = Cluster(gpu=get_gpu("h100-80g-sxm"), gpus_per_node=8)
CFG = ServingConfig(
    input_tokens=8000, input_tokens_p95=30000, output_tokens=500, output_tokens_p95=1500, concurrency=64,
    slo_ttft_ms=7163, slo_tpot_ms=58.3, slo_percentile="p50",
)  # fmt: skip


def test_p99_closed_loop_is_judged_on_the_p99() -> None:
    model = get_preset("llama-3.1-8b").model
    median = estimate_serving(model, CFG, H100)
    tail = estimate_serving(model, replace(CFG, slo_percentile="p99"), H100)
    assert median.meets_slo is True and median.at_percentile_ms is None  # the p50: the steady state, as before
    assert tail.at_percentile_ms is not None
    ttft, tpot = tail.at_percentile_ms
    assert ttft >= median.ttft_ms + 1000  # a p99 prompt's prefill alone is over a second more (docstring)
    assert tpot >= median.tpot_ms
    assert tail.meets_slo is False
    # the reported figures stay the steady state's
    assert (tail.ttft_ms, tail.tpot_ms) == (median.ttft_ms, median.tpot_ms)


def test_constant_lengths_keep_the_steady_state_verdict() -> None:
    model = get_preset("llama-3.1-8b").model
    constant = replace(CFG, input_tokens_p95=None, output_tokens_p95=None, slo_percentile="p99")
    result = estimate_serving(model, constant, H100)
    assert result.at_percentile_ms is None  # every request alike: the closed loop's steady state is each one's


def test_closed_form_replicas_needed_carry_the_peak() -> None:
    """The closed forms' replicas_needed (the planner's candidates, no simulation) is the count that carries the peak
    the SLO is judged at: requests_per_s × peak_factor ÷ a replica's capacity within the SLO, rounded up (review: a
    near miss read 8 replicas needed, the offered 10 requests/s ÷ 1.39, while its text said the peak of 15 needs 11)."""
    model = get_preset("llama-3.1-8b").model
    cfg = ServingConfig(input_tokens=2000, output_tokens=300, requests_per_s=40, slo_ttft_ms=2000, slo_tpot_ms=60)
    flat = estimate_serving(model, replace(cfg, peak_factor=1.0), H100, simulate=False)
    peaked = estimate_serving(model, replace(cfg, peak_factor=2.0), H100, simulate=False)
    assert flat.replicas_needed is not None and peaked.replicas_needed is not None
    assert peaked.replicas_needed >= 2 * flat.replicas_needed - 1  # ⌈2x⌉ ≥ 2⌈x⌉ − 1
    assert peaked.replicas_needed > flat.replicas_needed
