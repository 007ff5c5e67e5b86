"""DP attention with expert parallelism over the API (review R10): DeepSeek-V3 on 8 x H100 servers was sized only as
plain TP 16, its MLA cache replicated on every rank: 10 requests/s of 2,000 / 500 tokens took 4 x TP 16 (8 servers) and
20 requests/s of 4,000 / 500 got no option nor near miss. SGLang's DeepSeek deployments run `--enable-dp-attention
--dp-size N --ep-size N` (LMSYS, "Deploying DeepSeek with PD Disaggregation and Large-scale Expert Parallelism on 96
H100 GPUs", 2025-05): each rank caches its own sequences."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient


def _ask(rps: float, prompt: int, output: int, slo: dict[str, float] | None = None) -> dict[str, Any]:
    serving: dict[str, Any] = {"input_tokens": prompt, "output_tokens": output, "requests_per_s": rps}
    serving |= {"engine": "sglang"} | ({"slo": slo} if slo else {})
    return {"model": {"preset": "deepseek-v3"}, "task": "serving", "serving": serving,
            "constraints": {"gpu_types": ["h100-80g-sxm"]}}  # fmt: skip


def _check_dp(option: dict[str, Any]) -> None:
    tp = option["plan"]["tp"]
    assert option["plan"]["ep"] == tp >= 16, option["plan"]
    command = option["launch"]["command"]
    for flag in (f"--tp-size {tp}", f"--dp-size {tp}", "--enable-dp-attention", f"--ep-size {tp}"):
        assert flag in command, command
    # each rank caches its own sequences: many times the one GPU's cache a TP 16 replica holds (329,437 tokens)
    assert option["serving"]["kv_cache_tokens"] > 1_000_000, option["serving"]


def test_ten_requests_a_second_take_fewer_servers_with_dp_attention(client: TestClient) -> None:
    body = client.post("/recommend", json=_ask(10, 2000, 500, {"ttft_ms": 2000, "tpot_ms": 50})).json()
    best = body["options"][0]
    _check_dp(best)
    assert best["plan"]["dp"] * best["launch"]["servers_per_replica"] < 8  # plain TP 16 took 4 replicas, 8 servers


def test_r10_twenty_requests_a_second_is_a_priced_near_miss(client: TestClient) -> None:
    """20 requests/s of 4,000 / 500 within TPOT 50 ms: the nearest shape is DP attention at the most servers the
    SKU rents, shown with its price and the TPOT it reaches, not a bare max_nodes rejection."""
    body = client.post("/recommend", json=_ask(20, 4000, 500, {"ttft_ms": 2000, "tpot_ms": 50})).json()
    assert body["near_misses"], body["rejected"]
    miss = body["near_misses"][0]
    _check_dp(miss)
    assert miss["cost"]["monthly_effective"]


def test_the_dp_attention_option_quotes(client: TestClient) -> None:
    body = client.post("/recommend", json=_ask(10, 2000, 500, {"ttft_ms": 2000, "tpot_ms": 50})).json()
    customer = {"name": "Li Wei", "email": "li.wei@example.com"}
    response = client.post("/quotes", json=body["options"][0]["quote"] | {"customer": customer})
    assert response.status_code == 201, response.text


def test_estimate_runs_a_dp_attention_plan_and_refuses_a_mismatched_ep(client: TestClient) -> None:
    workload = _ask(10, 2000, 500)
    del workload["constraints"]
    hardware = {"sku": "h100-80g-sxm-8x", "nodes": 2}
    plan = {"tp": 16, "dp": 1, "ep": 16}
    response = client.post("/estimate", json=workload | {"hardware": hardware, "plan": plan})
    assert response.status_code == 200, response.text
    assert response.json()["plan"]["ep"] == 16
    assert response.json()["serving"]["kv_cache_tokens"] > 1_000_000
    refused = client.post("/estimate", json=workload | {"hardware": hardware, "plan": plan | {"ep": 8}})
    assert refused.status_code == 422, refused.text
