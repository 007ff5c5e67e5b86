"""A colocated replica's wait for a sequence slot (issue 29): its launch admits `--max-num-seqs` sequences
(serving_launch.replica_max_seqs, estimator rule launch_max_seqs: the closed loop's within the SLO, at most what the
KV cache holds), each held from admission to its last token; a request that arrives while all are busy waits for
one before its prefill starts.

The simulation admits at most that many and queues the rest (serving_run.py), so the wait is in its time to first
token already (one H100 replica of Llama-3.1-8B, 16 slots held about 19 s, at a peak of 0.6 requests/s: a simulated
p90 of 1.05 s before the floor). Each percentile is then held at least to the M/D/c queue's on the launch's slots
(serving_sim.mdc_wait_quantiles: Erlang C with Kingman's heavy-traffic tail for c servers, Köllerström 1974), a
maximum and not a sum, and a replica whose slots are loaded to 1 or more at the peak is saturated, never meeting."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.estimator.presets import get_preset
from app.estimator.serving import ServingConfig, ServingEstimate, estimate_serving, replicas_for_slo
from app.estimator.serving_sim import mdc_wait_quantiles
from app.planner.offers import Constraints
from app.planner.serving import search_serving
from app.planner.serving_option import replica_cluster
from tests.planner.test_serving_search import OFFERS

LLAMA_8B = get_preset("llama-3.1-8b").model
# long outputs and a small max_num_seqs: each of the 16 slots is held for 2,000 decode steps
SLOTS_BIND = ServingConfig(input_tokens=1000, output_tokens=2000, max_num_seqs=16, slo_ttft_ms=2000, slo_tpot_ms=60)
NODE = replica_cluster(next(o for o in OFFERS if o.sku_id == "h100-node"), 1, 1)


def _one_replica(rate: float) -> ServingEstimate:
    return estimate_serving(LLAMA_8B, replace(SLOTS_BIND, requests_per_s=rate), NODE, tp=1, replicas=1)


def _slot_wait_p90(estimate: ServingEstimate, peak_rate: float, slots: int) -> tuple[float, float]:
    """(the idle replica's TTFT, the M/D/c queue's p90 wait for one of `slots` at `peak_rate`), seconds."""
    assert estimate.latency is not None and estimate.isolated_ttft_ms is not None and estimate.request_overhead_ms
    held = estimate.latency["peak"].held_s
    isolated = (estimate.isolated_ttft_ms + estimate.request_overhead_ms) / 1e3
    return isolated, mdc_wait_quantiles(peak_rate, slots, held).p90


@pytest.mark.parametrize("rate", [0.2, 0.4, 0.5])
def test_ttft_at_the_peak_is_at_least_the_slot_queue(rate: float) -> None:
    estimate = _one_replica(rate)
    assert estimate.max_concurrency == 16  # the slots, max_num_seqs (the KV cache holds more)
    isolated, wait = _slot_wait_p90(estimate, rate * 1.5, 16)
    peak = estimate.latency["peak"] if estimate.latency else None
    assert peak is not None and not peak.saturated
    assert peak.ttft.p90 >= isolated + wait - 1e-9
    if rate >= 0.4:  # ρ = 0.6 × 19.4 / 16 = 0.73 and up: the slots bind
        assert wait > 1.0


def test_the_floor_is_a_maximum_not_a_second_wait() -> None:
    """At 0.4 requests/s (0.6 at the peak) the simulation's own p90 (1.05 s of waiting) lies under the M/D/c queue's
    (1.19 s): the p90 is the queue's, not the two summed."""
    estimate = _one_replica(0.4)
    isolated, wait = _slot_wait_p90(estimate, 0.6, 16)
    assert estimate.latency is not None
    assert estimate.latency["peak"].ttft.p90 == pytest.approx(isolated + wait, rel=1e-12)
    assert estimate.meets_slo is True  # 1.27 s at the p90 ≤ 2 s


def test_saturated_slots_never_meet() -> None:
    """0.6 requests/s, 0.9 at the peak: 0.9 × 20.5 s held = 18.4 sequences wanted on 16 slots."""
    estimate = _one_replica(0.6)
    assert estimate.latency is not None and estimate.latency["peak"].saturated
    assert estimate.meets_slo is False and estimate.utilization is not None and estimate.utilization["peak"] >= 1


def test_the_replicas_needed_count_the_slot_wait() -> None:
    """At 0.5 requests/s one replica's p90 TTFT at the peak is the slot queue's ≈ 30 s: the count that meets is 2."""
    found = replicas_for_slo(LLAMA_8B, replace(SLOTS_BIND, requests_per_s=0.5), NODE, tp=1)
    assert found is not None and found[0] == 2 and found[1].ttft.p90 <= 2.0


@pytest.mark.parametrize("rate", [1.0, 5.0])
def test_no_shown_option_with_saturated_slots_meets(rate: float) -> None:
    """Every option the search shows: its peak TTFT p90 at least the M/D/c wait on the slots its launch admits
    (ServingOption.max_seqs), and where those slots are loaded to 1 or more, no claim to meet the SLO."""
    cfg = replace(SLOTS_BIND, requests_per_s=rate)
    result = search_serving(LLAMA_8B, cfg, OFFERS, Constraints(max_nodes=16), peak_factor=1.5)
    shown = [*result.options, *result.near_misses]
    assert result.options
    for option in shown:
        estimate = option.estimate
        if estimate.latency is None or option.max_seqs is None:
            continue
        peak, peak_rate = estimate.latency["peak"], rate * 1.5 / option.replicas
        if peak_rate * peak.held_s >= option.max_seqs:
            assert estimate.meets_slo is False and peak.saturated, option.offer.sku_id
            continue
        isolated, wait = _slot_wait_p90(estimate, peak_rate, option.max_seqs)
        assert peak.ttft.p90 >= isolated + wait - 1e-9, (option.offer.sku_id, option.tp, option.replicas)
