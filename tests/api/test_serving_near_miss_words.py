"""A serving near miss over HTTP reads as what it is (review R2): the binding target, the peak asked, latencies in a
readable unit, and no headroom claimed for a deployment that misses its targets."""

from __future__ import annotations

from fastapi.testclient import TestClient

A100_CHAT = {
    "model": {"preset": "llama-3.1-70b"},
    "task": "serving",
    "serving": {
        "input_tokens": 2000, "output_tokens": 400, "input_tokens_p95": 6000, "output_tokens_p95": 1000,
        "requests_per_s": 20, "prefix_cache_hit_rate": 0.3,
        "slo": {"ttft_ms": 1500, "tpot_ms": 40, "percentile": "p99"},
    },
    "constraints": {"gpu_types": ["a100-80g-sxm"], "max_nodes": 16},
}  # fmt: skip


def test_the_a100_near_miss_names_tp8_on_16_servers_missing_the_p99_targets_at_the_peak(client: TestClient) -> None:
    """Both targets named: the p99 TPOT, and the p99 TTFT since a request waits for one of the sequence slots the
    launch admits (--max-num-seqs)."""
    response = client.post("/recommend", json=A100_CHAT)
    assert response.status_code == 200, response.text
    result = response.json()
    assert not result["options"]
    (miss,) = result["near_misses"]
    assert (miss["plan"]["tp"], miss["plan"]["dp"]) == (8, 16)
    assert "TPOT ≤ 40 ms" in miss["miss_reason"] and "TTFT ≤ 1500 ms" in miss["miss_reason"]
    explanation = miss["explanation"]
    assert "the peak of 30 requests/s" in explanation  # 20 × the peak factor 1.5, not what the replicas carry
    assert "headroom" not in explanation and "misses the latency targets" in explanation
