"""Which target binds a serving deployment at its peak, in the JSON API (review F3): `serving.binding` names the
target nearest its limit (the SLO's percentile at the peak ÷ its target, the utilization, or the KV cache's
sequences), as the web result page words it; and a saturated near miss cites no TTFT (review F7: its `slo_peak`
read `ttft_ms: 40040`, the simulated run's length, beside `saturated: true`)."""

from __future__ import annotations

from fastapi.testclient import TestClient

from app.text import messages

LLAMA_70B_FP8 = {
    "model": {"preset": "llama-3.1-70b"},
    "task": "serving",
    "precision": "fp8",
    "serving": {"input_tokens": 2000, "output_tokens": 500, "requests_per_s": 20, "engine": "vllm",
                "slo": {"ttft_ms": 2000, "tpot_ms": 50}},
}  # fmt: skip


def test_tpot_binds_the_70b_fp8_deployment_at_its_peak(client: TestClient) -> None:
    response = client.post("/recommend", json=LLAMA_70B_FP8)
    assert response.status_code == 200, response.text
    options = response.json()["options"]
    assert options
    for option in options:
        s = option["serving"]
        peak = s["latency"]["peak"]
        shares = {"ttft": peak["ttft_ms"]["p90"] / 2000, "tpot": peak["tpot_ms"]["p90"] / 50}
        shares["throughput"] = s["utilization"]["peak"]
        binding = s["binding"]
        assert binding["target"] in (*shares, "memory"), binding
        if binding["target"] != "memory":  # the largest of the shares the answer's own figures give, exactly
            assert binding["target"] == max(shares, key=shares.__getitem__), (binding, shares)
            assert binding["share"] == shares[binding["target"]], (binding, shares)
        assert binding["share"] >= max(shares.values())
    # the review's figures: the p90 TPOT at the peak 41.3 of 50 ms (83 %), the p90 TTFT 286 of 2,000 ms (14 %);
    # tolerance ±0.01 on the share (the simulation's seeded arrivals)
    first = options[0]["serving"]
    assert first["binding"]["target"] == "tpot" and abs(first["binding"]["share"] - 0.826) <= 0.01, first["binding"]
    assert first["latency"]["peak"]["ttft_ms"]["p90"] / 2000 < 0.2


def test_estimate_under_a_load_names_its_binding_target(client: TestClient) -> None:
    """/estimate's serving answer comes from the same mapper: one H100 server at 4 requests/s (its peak 6)."""
    serving = LLAMA_70B_FP8["serving"] | {"requests_per_s": 4}
    body = LLAMA_70B_FP8 | {"serving": serving, "hardware": {"gpu": "h100-80g-sxm", "gpus_per_node": 8}}
    response = client.post("/estimate", json=body)
    assert response.status_code == 200, response.text
    s = response.json()["serving"]
    assert not s["latency"]["peak"]["saturated"]
    peak = s["latency"]["peak"]
    shares = {"ttft": peak["ttft_ms"]["p90"] / 2000, "tpot": peak["tpot_ms"]["p90"] / 50}
    shares["throughput"] = s["utilization"]["peak"]
    binding = s["binding"]
    assert binding is not None and binding["share"] >= max(shares.values()), (binding, shares)
    if binding["target"] != "memory":
        assert binding["share"] == shares[binding["target"]], (binding, shares)


def test_a_concurrency_request_has_no_binding(client: TestClient) -> None:
    body = LLAMA_70B_FP8 | {"serving": {"input_tokens": 2000, "output_tokens": 500, "concurrency": 16}}
    response = client.post("/estimate", json=body | {"hardware": {"gpu": "h100-80g-sxm", "gpus_per_node": 8}})
    assert response.status_code == 200, response.text
    assert response.json()["serving"]["binding"] is None


SATURATED_8B = {
    "model": {"preset": "llama-3.1-8b"},
    "task": "serving",
    "serving": {"input_tokens": 1000, "output_tokens": 200, "requests_per_s": 1000000, "slo": {"ttft_ms": 500}},
}


def test_a_saturated_near_miss_cites_no_ttft(client: TestClient) -> None:
    response = client.post("/recommend", json=SATURATED_8B)
    assert response.status_code == 200, response.text
    saturated = [
        (near, params)
        for near in response.json()["near_misses"]
        for miss in near["misses"]
        if miss["code"] == "slo_peak" and (params := miss["params"]).get("saturated")
    ]
    assert saturated
    for near, params in saturated:
        assert params["ttft_ms"] is None, params  # unbounded, as the option's own latency.peak shows it
        assert near["serving"]["latency"]["peak"]["ttft_ms"]["p90"] is None
        assert "TTFT has no bound" in near["miss_reason"] and "missing TTFT ≤ 500 ms" in near["miss_reason"]
        assert near["serving"]["binding"]["target"] == "saturated"
        zh = messages.misses([("slo_peak", params)], "zh")  # the pages' Chinese of the same params
        assert zh is not None and zh.endswith("排队无限增长（p90 TTFT 没有上限），达不到 TTFT ≤ 500 毫秒"), zh
