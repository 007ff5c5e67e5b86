"""task "serving" under load over HTTP: simulated latency percentiles at the offered load and its peak, the SLO's
percentile judged at the peak, length distributions, and the 422s of their fields."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from app.text import messages

RAG = {
    "model": {"preset": "llama-3.1-70b"},
    "task": "serving",
    "serving": {"input_tokens": 8000, "output_tokens": 300, "requests_per_s": 5, "slo": {"ttft_ms": 2000}},
    "constraints": {"gpu_types": ["h100-80g-sxm"]},
}


def _post(client: TestClient, path: str, body: dict) -> dict:
    response = client.post(path, json=body)
    assert response.status_code == 200, response.text
    return response.json()


def _with(body: dict, **serving) -> dict:
    return {**body, "serving": {**body["serving"], **serving}}


def test_options_carry_simulated_percentiles_and_meet_the_slo_at_the_peak(client: TestClient) -> None:
    result = _post(client, "/recommend", RAG)
    assert result["options"], result["rejected"]
    for option in result["options"]:
        serving = option["serving"]
        latency = serving["latency"]
        assert set(latency) == {"average", "peak"}
        for load in latency.values():
            for metric in ("ttft_ms", "tpot_ms", "e2e_ms"):
                assert load[metric]["p50"] <= load[metric]["p90"] <= load[metric]["p99"]
        assert serving["ttft_ms"] == pytest.approx(latency["average"]["ttft_ms"]["p50"])
        assert serving["tpot_ms"] == pytest.approx(latency["average"]["tpot_ms"]["p50"])
        assert serving["meets_slo"] is True and latency["peak"]["ttft_ms"]["p90"] <= 2000
        assert not latency["peak"]["saturated"]
        assert serving["isolated_ttft_ms"] <= latency["average"]["ttft_ms"]["p50"]
        assert 0 < serving["utilization"]["average"] < serving["utilization"]["peak"] < 1
        assert serving["utilization"]["peak"] == pytest.approx(1.5 * serving["utilization"]["average"], rel=0.01)


def test_a_stricter_percentile_needs_more_replicas(client: TestClient) -> None:
    """The same TTFT target held for 99 % of requests instead of half of them takes more H100 replicas."""
    replicas = {}
    for percentile in ("p50", "p99"):
        body = _with(RAG, slo={"ttft_ms": 2000, "percentile": percentile})
        option = _post(client, "/recommend", body)["options"][0]
        replicas[percentile] = option["serving"]["replicas"] * option["serving"]["gpus_per_replica"]
        assert option["serving"]["latency"]["peak"]["ttft_ms"][percentile] <= 2000
    assert replicas["p99"] > replicas["p50"]


def test_estimate_with_a_load_judges_the_peak(client: TestClient) -> None:
    """/estimate of 14 TP 4 replicas on A100s (7 servers) at 5 requests/s: the p90 TTFT at the 1.5× peak misses
    2 s, and the replicas the simulation needs are more than 14."""
    body = {
        "model": {"preset": "llama-3.1-70b"}, "task": "serving",
        "hardware": {"gpu": "a100-80g-sxm", "gpus_per_node": 8, "nodes": 7},
        "plan": {"tp": 4, "dp": 14},
        "serving": {"input_tokens": 8000, "output_tokens": 300, "requests_per_s": 5, "slo": {"ttft_ms": 2000}},
    }  # fmt: skip
    serving = _post(client, "/estimate", body)["serving"]
    assert serving["meets_slo"] is False
    peak = serving["latency"]["peak"]  # saturated: the TTFT is unbounded (null), beyond any target
    assert peak["ttft_ms"]["p90"] is None if peak["saturated"] else peak["ttft_ms"]["p90"] > 2000
    assert serving["replicas_needed"] > 14
    concurrency = _post(client, "/estimate", {**body, "serving": {"input_tokens": 8000, "output_tokens": 300,
                                                                   "concurrency": 4}})["serving"]  # fmt: skip
    assert concurrency["latency"] is None and concurrency["isolated_ttft_ms"] > 0


def test_length_distributions_widen_the_tail(client: TestClient) -> None:
    """Prompts of mean 8,000 and p95 20,000 tokens on the same three H100 TP 8 replicas: the peak's p99 TTFT
    grows against prompts all 8,000 long (long prompts hold the queue longer)."""
    body = {
        "model": {"preset": "llama-3.1-70b"}, "task": "serving",
        "hardware": {"gpu": "h100-80g-sxm", "gpus_per_node": 8, "nodes": 3}, "plan": {"tp": 8, "dp": 3},
        "serving": {"input_tokens": 8000, "output_tokens": 300, "requests_per_s": 5, "max_model_len": 64000},
    }  # fmt: skip
    plain = _post(client, "/estimate", body)["serving"]["latency"]["peak"]["ttft_ms"]
    spread = _post(client, "/estimate", _with(body, input_tokens_p95=20000))["serving"]["latency"]["peak"]["ttft_ms"]
    assert spread["p99"] > 1.2 * plain["p99"]


@pytest.mark.parametrize(
    ("serving", "field"),
    [
        ({"slo": {"ttft_ms": 2000, "percentile": "p95"}}, "percentile"),
        ({"input_tokens_p95": 4000}, "input_tokens_p95"),
        ({"output_tokens_p95": 200}, "output_tokens_p95"),
    ],
)
def test_bad_percentiles_and_distributions_are_422_naming_the_field(
    client: TestClient, serving: dict, field: str
) -> None:
    response = client.post("/recommend", json=_with(RAG, **serving))
    assert response.status_code == 422, response.text
    assert field in response.text


@pytest.mark.parametrize("serving", [{"input_tokens_p95": 4000}, {"output_tokens_p95": 200}])
def test_a_p95_below_the_mean_is_a_422_on_that_field(client: TestClient, serving: dict) -> None:
    response = client.post("/recommend", json=_with(RAG, **serving))
    assert response.status_code == 422, response.text
    (name,) = serving
    (error,) = response.json()["errors"]
    assert error["field"] == f"serving.{name}"
    assert "at least" in error["message"] and not error["message"].startswith("Value error")


@pytest.mark.parametrize("path", ["/estimate", "/recommend"])
def test_a_tail_heavier_than_a_lognormal_is_simulated_at_the_widest_one_and_says_so(
    client: TestClient, path: str
) -> None:
    """Review R8: a p95 above 3.87 × the mean (RAG and agent traffic: 5-10 ×) was a 422, so measured figures could
    not be stated at all. Now the lengths follow the widest lognormal with that mean (σ = z95, p95 = 3.87 × it: the
    bound of app/estimator/serving_sim.py MAX_P95_RATIO) and a note says the tail is under-modelled."""
    body = {
        "model": {"preset": "llama-3.1-8b"}, "task": "serving",
        "serving": {"input_tokens": 1000, "output_tokens": 100, "input_tokens_p95": 8000, "requests_per_s": 2},
    }  # fmt: skip
    if path == "/estimate":
        body["hardware"] = {"gpu": "h100-80g-sxm"}
    heavy = _post(client, path, body)
    widest = _post(client, path, _with(body, input_tokens_p95=3868))  # int(1000 × 3.868): the widest lognormal
    capped = "serving_tail_capped"
    if path == "/estimate":
        (note,) = [n for n in heavy["assumption_codes"] if n["code"] == capped]
        assert capped not in [n["code"] for n in widest["assumption_codes"]]
        assert heavy["serving"]["latency"] == widest["serving"]["latency"]  # the same simulated distribution
    else:
        (note,) = [n for n in heavy["assumption_codes"] if n["code"] == capped]
        assert heavy["options"][0]["serving"]["latency"] == widest["options"][0]["serving"]["latency"]
    assert note["params"] == {"name": "input_tokens", "p95": 8000, "mean": 1000, "ratio": 8.0, "most": 3.87,
                              "modelled": 3868}  # fmt: skip
    assert messages.note("serving_tail_capped", note["params"], "zh").startswith("serving.input_tokens_p95 8000 是均值")


PIPELINE = {
    "model": {"preset": "llama-3.1-405b"},
    "task": "serving",
    "hardware": {"sku": "h100-80g-sxm-8x", "nodes": 2},
    "plan": {"tp": 8, "pp": 2, "dp": 1},
    "serving": {"input_tokens": 1000, "output_tokens": 300, "requests_per_s": 0.01},
}
ONE_STAGE = {
    "model": {"preset": "llama-3.1-70b"},
    "task": "serving",
    "hardware": {"sku": "h100-80g-sxm-8x", "nodes": 1},
    "plan": {"tp": 8, "pp": 1, "dp": 1},
    "serving": {"input_tokens": 1000, "output_tokens": 300, "requests_per_s": 0.01},
}


@pytest.mark.parametrize("body", [ONE_STAGE, PIPELINE], ids=["pp1", "pp2"])
@pytest.mark.parametrize("rate", [0.01, 2.0])
def test_no_request_under_load_beats_an_idle_replica(client: TestClient, body: dict, rate: float) -> None:
    """Constant lengths: every request's prompt passes through every pipeline stage, so no percentile of the
    time to first token, at the offered load or its peak, is below the idle replica's (1e-6 ms: float noise)."""
    serving = _post(client, "/estimate", _with(body, requests_per_s=rate))["serving"]
    isolated = serving["isolated_ttft_ms"] + serving["request_overhead_ms"]  # one request's TTFT
    assert serving["ttft_ms"] >= isolated - 1e-6
    for load in serving["latency"].values():
        for level in ("p50", "p90", "p99"):
            assert load["ttft_ms"][level] >= isolated - 1e-6, (level, load["ttft_ms"], isolated)


@pytest.mark.parametrize("body", [ONE_STAGE, RAG], ids=["70b-tp8", "rag-search"])
def test_a_near_zero_rate_gives_the_idle_replica_figures(client: TestClient, body: dict) -> None:
    """At 1e-12 requests/s every request finds the replica idle: each percentile is the idle replica's time to
    first token (to 1e-6: float noise), as it is at 0.001 requests/s."""
    path = "/estimate" if "plan" in body else "/recommend"
    result = _post(client, path, _with(body, requests_per_s=1e-12))
    serving = result["serving"] if path == "/estimate" else result["options"][0]["serving"]
    isolated = serving["isolated_ttft_ms"] + serving["request_overhead_ms"]  # one request's TTFT
    assert serving["ttft_ms"] == pytest.approx(isolated, rel=1e-6)
    for load in serving["latency"].values():
        for level in ("p50", "p90", "p99"):
            assert load["ttft_ms"][level] == pytest.approx(isolated, rel=1e-6)


RAG_BOTH_TARGETS = {
    "model": {"preset": "llama-3.1-70b"},
    "task": "serving",
    "serving": {
        "input_tokens": 8000,
        "output_tokens": 300,
        "requests_per_s": 5,
        # 2,100 ms: vLLM's server adds 51 ms to every TTFT (REQUEST_OVERHEAD_S), so at 2,000 the A100 deployment
        # needs 17 servers, past max_nodes; at 2,100 the closed forms ask 17 and the simulation meets it with 16. TPOT
        # 65 ms (50 before vLLM's all-reduce was charged its in-place cost, ALLREDUCE_IN_PLACE_S: 16 servers read a
        # p90 TPOT of 64.7 ms since). TTFT 2,700 ms since a replica waits for one of the 13 sequence slots its launch
        # admits (--max-num-seqs, held about 19 s each): 16 servers read a p90 TTFT of 2,660 ms at the peak
        "slo": {"ttft_ms": 2700, "tpot_ms": 65, "percentile": "p90"},
    },
}


def test_a_deployment_the_closed_forms_put_past_max_nodes_is_simulated_at_the_most_it_rents(
    client: TestClient,
) -> None:
    """A100 TP 8: the closed forms ask 17 servers (over the default max_nodes of 16), the simulation meets the SLO
    with 16, the cheapest deployment; it is found without raising max_nodes."""
    result = _post(client, "/recommend", RAG_BOTH_TARGETS)
    best = result["options"][0]
    assert best["sku"]["id"] == "a100-80g-sxm-8x", [o["sku"]["id"] for o in result["options"]]
    assert best["plan"]["tp"] == 8 and best["cost"]["units"] <= 16
    assert best["serving"]["meets_slo"] is True
    assert best["serving"]["latency"]["peak"]["ttft_ms"]["p90"] <= 2700
    assert best["serving"]["latency"]["peak"]["tpot_ms"]["p90"] <= 65
    raised = _post(client, "/recommend", {**RAG_BOTH_TARGETS, "constraints": {"max_nodes": 64}})["options"][0]
    assert (raised["sku"]["id"], raised["cost"]["units"]) == ("a100-80g-sxm-8x", best["cost"]["units"])


def test_max_nodes_is_the_reason_when_only_a_larger_deployment_meets_one_request(client: TestClient) -> None:
    """Llama-3.1-8B, 120,000-token prompts, TTFT p90 ≤ 15 s: on A100 servers TP 1 misses even one request at a
    time (51 s) but TP 8 does not; its queue needs more servers than max_nodes 16, which is what binds: the near
    miss is TP 8 on all 16 servers, priced, missing the p90 TTFT at the peak (review R2 R10: such a SKU was a bare
    rejection)."""
    body = {
        "model": {"preset": "llama-3.1-8b"},
        "task": "serving",
        "serving": {"input_tokens": 120000, "output_tokens": 500, "requests_per_s": 1,
                    "slo": {"ttft_ms": 15000, "percentile": "p90"}},
    }  # fmt: skip
    result = _post(client, "/recommend", body)
    assert "a100-80g-sxm-8x" not in [r["sku"] for r in result["rejected"]]
    (miss,) = [m for m in result["near_misses"] if m["sku"]["id"] == "a100-80g-sxm-8x"]
    assert (miss["nodes"], miss["serving"]["gpus_per_replica"]) == (16, 8)
    assert [m["code"] for m in miss["misses"]] == ["slo_peak"]
    assert "as many replicas as the SKU rents" in miss["miss_reason"]


@pytest.mark.parametrize("serving_engine", ["sglang", "vllm", "trt-llm"])
def test_every_percentile_at_the_peak_is_at_least_the_average_one(client: TestClient, serving_engine: str) -> None:
    """The peak's simulation runs the same arrivals (scaled by the rate) and lengths as the offered load's, so no
    percentile of it is lower (low load, where the step phase once put the peak's p90 TTFT 4 % under)."""
    body = {
        "model": {"preset": "llama-3.1-8b"},
        "task": "serving",
        "serving": {"input_tokens": 200, "output_tokens": 800, "requests_per_s": 0.3, "engine": serving_engine,
                    "input_tokens_p95": 500, "slo": {"ttft_ms": 300, "tpot_ms": 40}},
    }  # fmt: skip
    result = _post(client, "/recommend", body)
    assert result["options"]
    for option in result["options"]:
        latency = option["serving"]["latency"]
        for metric in ("ttft_ms", "tpot_ms", "e2e_ms"):
            for level in ("p50", "p90", "p99"):
                assert latency["peak"][metric][level] >= latency["average"][metric][level], (option["sku"], metric)


RAG_8B = {
    "model": {"preset": "llama-3.1-8b"},
    "task": "serving",
    "hardware": {"gpu": "h100-80g-sxm", "gpus_per_node": 1},
    "serving": {"input_tokens": 8000, "output_tokens": 200, "requests_per_s": 4, "prefix_cache_hit_rate": 0.5},
}


def test_a_replica_short_of_kv_cache_reads_full_and_holds_no_more_than_it_can(client: TestClient) -> None:
    """The KV cache binds before compute here (8,000-token prompts, 54 sequences): the peak saturates, so its
    utilization is at least 1, and the concurrency is what the simulation runs, never beyond max_concurrency."""
    serving = _post(client, "/estimate", RAG_8B)["serving"]
    assert serving["latency"]["peak"]["saturated"] is True
    assert serving["utilization"]["peak"] >= 1.0, serving["utilization"]
    assert serving["utilization"]["average"] <= serving["utilization"]["peak"]
    assert 0 < serving["concurrency"] <= serving["max_concurrency"], serving
