"""Long-output serving sized by the cache each engine actually holds (review R9-2): vLLM V1 allocates KV blocks as
tokens are generated and preempts the last admitted request when they run out (vllm-project/vllm@b4622cf9
vllm/v1/core/sched/scheduler.py schedule, _preempt_request), so under load a running sequence holds about
input + output / 2 tokens, not input + output. Qwen2.5-14B at 1,000 in / 4,000 out, 0.5 requests/s (0.75 at the
peak) and a 50 ms TPOT: reserving each request's whole length, 2 replicas of 4x A100 40G carried 0.528 of the 0.75
requests/s and the cheapest option was an 8x A100 80G server (CNY 30,000)."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

QWEN_LONG_OUTPUT: dict[str, Any] = {
    "model": {"preset": "qwen2.5-14b"},
    "task": "serving",
    "serving": {"input_tokens": 1000, "output_tokens": 4000, "requests_per_s": 0.5, "slo": {"tpot_ms": 50}},
    "constraints": {"objective": "cheapest"},
}


def test_four_a100_40g_is_still_a_near_miss_for_bandwidth_not_cache(client: TestClient) -> None:
    """Under vLLM's rule the cache of a TP 2 replica of A100 40G PCIe holds 70 sequences, not 42 (the estimator test
    test_serving_kv_growth.py), but its decode steps are then HBM-bound: a replica completes at most 0.340 requests/s
    (about 66 sequences at ~48 ms a step) and the 4 cards the SKU rents hold 2 replicas, 0.68 of the 0.75 requests/s
    peak; the peak needs 3. So the card SKU stays a near miss, for its bandwidth, and the cheapest option stays the
    8x A100 80G server."""
    response = client.post("/recommend", json=QWEN_LONG_OUTPUT)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["options"][0]["sku"]["id"] == "a100-80g-sxm-8x"
    miss = next(m for m in body["near_misses"] if m["sku"]["id"] == "a100-40g-pcie-card")
    assert "the peak needs about 3 replicas of 2 GPUs" in miss["miss_reason"], miss["miss_reason"]
