"""No shown option's TTFT percentile at the peak is below the M/D/1 queue's on its own isolated prefill and
per-replica peak rate (app.estimator.serving_sim.md1_wait_quantiles, checked in tests/estimator/test_serving_md1.py),
so none claims an SLO that queue already misses; a disaggregated option reports the busier pool's utilisation.

The requests are those a review found below the bound: one seeded run of a thousand measured requests spreads widely
at high load (at ρ = 0.83 the p90 of such runs spans 1.80–3.13 s), and the replica search kept whichever count that
run let through (a 70B RAG deployment, 3 TP 8 prefill replicas at ρ = 0.83 read p90 1,879 ms against the queue's
2,403 ms and claimed a 2 s target)."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.estimator.serving_sim import PERCENTILES, md1_wait_quantiles

DISAGGREGATED_RAG = {
    "model": {"preset": "llama-3.1-70b"},
    "task": "serving",
    "serving": {"disaggregated": True, "input_tokens": 8000, "output_tokens": 300, "requests_per_s": 5,
                "slo": {"ttft_ms": 2000}},
}  # fmt: skip
SGLANG_P99 = {
    **DISAGGREGATED_RAG,
    "serving": {**DISAGGREGATED_RAG["serving"], "engine": "sglang", "slo": {"ttft_ms": 3000, "percentile": "p99"}},
}
LONG_PROMPTS_8B = {
    "model": {"preset": "llama-3.1-8b"},
    "task": "serving",
    "serving": {"input_tokens": 120000, "output_tokens": 300, "requests_per_s": 0.5, "slo": {"ttft_ms": 20000}},
}


def _options(client: TestClient, body: dict[str, Any]) -> list[dict[str, Any]]:
    response = client.post("/recommend", json=body)
    assert response.status_code == 200, response.text
    options = response.json()["options"]
    assert options, response.text[:2000]
    return list(options)


def _md1_ms(serving: dict[str, Any], peak_rps: float) -> dict[str, float]:
    """The M/D/1 time to first token at the peak, ms, read literally off the option: its `isolated_ttft_ms` as the
    service time D (for pools the prefill and the KV transfer), the peak shared among the replicas that prefill."""
    pools = serving.get("pools")
    replicas = pools["prefill"]["replicas"] if pools else serving["replicas"]
    service = serving["isolated_ttft_ms"]
    waits = md1_wait_quantiles(peak_rps / replicas * service / 1e3)
    return {q: service * (1 + wait) for q, wait in zip(PERCENTILES, waits, strict=True)}


@pytest.mark.parametrize("body", [DISAGGREGATED_RAG, SGLANG_P99, LONG_PROMPTS_8B], ids=["vllm-pd", "sglang-pd", "8b"])
def test_every_shown_option_queues_at_least_as_its_md1_queue(client: TestClient, body: dict[str, Any]) -> None:
    slo = body["serving"]["slo"]
    for option in _options(client, body):
        serving = option["serving"]
        peak = serving["latency"]["peak"]["ttft_ms"]
        bound = _md1_ms(serving, body["serving"]["requests_per_s"] * 1.5)
        for q in PERCENTILES:
            assert peak[q] >= bound[q] * (1 - 1e-9), (q, peak, bound, serving.get("pools"), serving["replicas"])
        if serving["meets_slo"]:
            assert bound[slo.get("percentile", "p90")] <= slo["ttft_ms"]


def _serving(preset: str, rate: float, lengths: tuple[int, int], **extra: Any) -> dict[str, Any]:
    serving = {"input_tokens": lengths[0], "output_tokens": lengths[1], "requests_per_s": rate}
    return {"model": {"preset": preset}, "task": "serving", "serving": serving | extra.pop("serving", {}), **extra}


# review R2 R2: 70B FP8 on vLLM read p90 292 ms against the literal M/D/1 queue's 438 ms; 8B on A100 357 / 408
SWEEP = {
    "70b-fp8-vllm": _serving("llama-3.1-70b", 20, (2000, 500), precision="fp8", weights="fp8",
                             serving={"slo": {"ttft_ms": 2000, "tpot_ms": 50}}),
    "8b-chat-vllm": _serving("llama-3.1-8b", 40, (1000, 250), serving={"slo": {"ttft_ms": 500, "tpot_ms": 30}}),
    "8b-sglang-p99": _serving("llama-3.1-8b", 12, (2000, 500),
                              serving={"engine": "sglang", "slo": {"ttft_ms": 1500, "percentile": "p99"}}),
    "7b-trt-llm": _serving("qwen2.5-7b", 8, (1000, 250), serving={"engine": "trt-llm", "slo": {"tpot_ms": 50}}),
    "70b-rag-vllm": _serving("llama-3.1-70b", 5, (8000, 300), serving={"slo": {"ttft_ms": 2000}}),
    "70b-chat-sglang": _serving("llama-3.1-70b", 10, (1000, 300),
                                serving={"engine": "sglang", "slo": {"tpot_ms": 50}}),
}  # fmt: skip


@pytest.mark.parametrize("body", SWEEP.values(), ids=SWEEP.keys())
def test_the_literal_md1_check_holds_for_every_shown_option(client: TestClient, body: dict[str, Any]) -> None:
    """Issue "Serving II", read literally: for every shown option, serving.latency.peak.ttft_ms.p90 is at least
    what an M/D/1 queue on its own isolated prefill (serving.isolated_ttft_ms) and per-replica peak rate gives (the
    server's fixed cost, request_overhead_ms, is on top of the queue, not in D); and one request's TTFT is the two
    summed, never below them."""
    answer = client.post("/recommend", json=body)
    assert answer.status_code == 200, answer.text
    near = [m for m in answer.json()["near_misses"] if m["serving"]["latency"]]
    shown = answer.json()["options"] + [m for m in near if not m["serving"]["latency"]["peak"]["saturated"]]
    assert shown
    peak_rps = body["serving"]["requests_per_s"] * 1.5
    for option in shown:
        serving = option["serving"]
        p90 = serving["latency"]["peak"]["ttft_ms"]["p90"]
        assert p90 >= _md1_ms(serving, peak_rps)["p90"] * (1 - 1e-9), (option["sku"]["id"], serving["replicas"])
        assert serving["request_overhead_ms"] >= 0
        assert serving["latency"]["average"]["ttft_ms"]["p50"] >= serving["isolated_ttft_ms"]


def test_disaggregated_rag_prefills_on_more_than_three_tp8_replicas(client: TestClient) -> None:
    """3 TP 8 prefill replicas (24 GPUs) at 7.5 requests/s run at ρ = 0.83: the M/D/1 p90 is 2.4 s, past the 2 s
    target; the option shown prefills on more GPUs and meets it."""
    (option,) = _options(client, DISAGGREGATED_RAG)
    serving = option["serving"]
    assert serving["meets_slo"] is True
    assert serving["pools"]["prefill"]["gpus"] > 24
    assert serving["latency"]["peak"]["ttft_ms"]["p90"] <= 2000


def test_a_disaggregated_option_reports_the_busier_pools_utilisation(client: TestClient) -> None:
    """The deployment's utilisation is its busier pool's, and each pool's is stated; the prefill pool is busy at
    least its prompts' share of the time (rate × isolated prefill per replica)."""
    for body in (DISAGGREGATED_RAG, SGLANG_P99):
        serving = _options(client, body)[0]["serving"]
        pools = serving["pools"]
        prefill, decode = pools["prefill"]["utilization"], pools["decode"]["utilization"]
        for load in ("average", "peak"):
            assert serving["utilization"][load] == pytest.approx(max(prefill[load], decode[load]), abs=1e-3)
        service_ms = serving["isolated_ttft_ms"]
        busy = body["serving"]["requests_per_s"] * 1.5 / pools["prefill"]["replicas"] * service_ms
        assert serving["utilization"]["peak"] >= prefill["peak"] >= busy / 1e3 - 1e-3
