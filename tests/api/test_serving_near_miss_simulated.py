"""A serving near miss cites the latency its own `serving.latency` block shows (review R3-3): the simulated
percentile of the SLO at the peak, or the queue growing without bound where the replicas saturate. Before, a near
miss limited by the servers or cards the SKU rents quoted the closed forms' steady-state figures ("TTFT 589 ms" beside
a saturated p99 of 8,244 ms; "374 ms / 44.1 ms, missing TPOT" beside a p99 of 1,019 / 54.2 ms missing both)."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.text.words import latency

TRT_8B = {
    "model": {"preset": "llama-3.1-8b"},
    "task": "serving",
    "serving": {
        "engine": "trt-llm", "input_tokens": 500, "output_tokens": 200, "requests_per_s": 50,
        "slo": {"ttft_ms": 500, "tpot_ms": 30, "percentile": "p99"},
    },
    "constraints": {"limit": 3},
}  # fmt: skip
A100_70B = {
    "model": {"preset": "llama-3.1-70b"},
    "task": "serving",
    "serving": {
        "input_tokens": 2000, "output_tokens": 500, "requests_per_s": 20,
        "slo": {"ttft_ms": 1000, "tpot_ms": 40, "percentile": "p99"},
    },
    "constraints": {"limit": 3, "gpu_types": ["a100-80g-sxm"]},
}  # fmt: skip


def _agrees(miss: dict[str, Any]) -> None:
    peak = miss["serving"]["latency"]["peak"]
    reason = miss["miss_reason"]
    if peak["saturated"]:
        assert "grows without bound" in reason, reason
        return
    assert f"p99 TTFT is {latency(peak['ttft_ms']['p99'], 'en')}" in reason, reason
    assert f"p99 TPOT {latency(peak['tpot_ms']['p99'], 'en')}" in reason, reason


@pytest.mark.parametrize("body", [TRT_8B, A100_70B], ids=["8b-trt-llm", "70b-a100"])
def test_every_latency_near_miss_cites_its_simulated_peak(client: TestClient, body: dict[str, Any]) -> None:
    response = client.post("/recommend", json=body)
    assert response.status_code == 200, response.text
    latency_misses = [
        m for m in response.json()["near_misses"] if m["serving"].get("latency") and "TTFT" in (m["miss_reason"] or "")
    ]
    assert latency_misses
    for miss in latency_misses:
        _agrees(miss)


def test_the_70b_a100_miss_names_its_saturated_slots(client: TestClient) -> None:
    """16 A100 servers at the peak of 30 requests/s: each replica's launch admits 33 sequences (--max-num-seqs, the
    closed loop's within a p99 TPOT of 40 ms), held about 20 s each, so its slots are loaded past 1 and the queue for
    them grows (it read a p99 TTFT of 1,019 ms while the simulation ran 200 sequences the launch does not admit)."""
    response = client.post("/recommend", json=A100_70B)
    assert response.status_code == 200, response.text
    (miss,) = [m for m in response.json()["near_misses"] if m["sku"]["gpu"].startswith("a100")]
    assert miss["serving"]["latency"]["peak"]["saturated"] is True and miss["serving"]["meets_slo"] is False
    assert "grows without bound" in miss["miss_reason"] and "TTFT ≤ 1000 ms" in miss["miss_reason"]
