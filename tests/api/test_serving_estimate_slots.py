"""/estimate under a load reports the slots its simulation queues on, as /recommend reports its launch's
--max-num-seqs (review R10-4: /estimate read max_concurrency 70, the KV cache's, beside a TTFT tail that 20 slots set;
/recommend launched the same deployment with --max-num-seqs 20)."""

from __future__ import annotations

from fastapi.testclient import TestClient

SERVING = {
    "input_tokens": 2000,
    "output_tokens": 300,
    "requests_per_s": 5,
    "slo": {"ttft_ms": 500, "tpot_ms": 30, "percentile": "p90"},
}


def _launched_seqs(option: dict) -> int:
    args = option["launch"]["command"].split()
    return int(args[args.index("--max-num-seqs") + 1])


def test_estimate_reports_the_slots_its_launch_admits(client: TestClient) -> None:
    body = {"model": {"preset": "llama-3.1-8b"}, "task": "serving", "serving": SERVING}
    recommended = client.post("/recommend", json=body | {"constraints": {"limit": 5}})
    assert recommended.status_code == 200, recommended.text
    for option in recommended.json()["options"]:
        if option["serving"].get("pools"):
            continue
        seqs = _launched_seqs(option)
        assert option["serving"]["max_concurrency"] == seqs
        tp = option["plan"]["tp"]
        estimate = client.post(
            "/estimate",
            json=body
            | {
                "hardware": {"sku": option["sku"]["id"], "nodes": option["nodes"]},
                "plan": {"tp": tp, "dp": option["plan"]["dp"]},
            },
        )
        assert estimate.status_code == 200, estimate.text
        serving = estimate.json()["serving"]
        assert serving["max_concurrency"] == seqs, (option["sku"]["id"], serving["max_concurrency"], seqs)


def test_a_target_one_request_misses_is_named_not_read_as_a_queue(client: TestClient) -> None:
    """Review R11-2: Llama 3.1 8B on four A100 40G cards at TP 4, 2 requests/s of 1,000 + 500 tokens, TPOT ≤ 10 ms:
    one request alone decodes at about 10.9 ms a token, so no concurrency meets the target. The launch was capped to
    one slot and the answer read a queue growing without bound (p90 TTFT 1 h 35 min, utilization 11 at average,
    "add replicas"); without the SLO the same replica runs 256 sequences at a quarter of its capacity. A cap cannot
    help a target out of reach: the replica admits what its KV cache holds, and the miss names the TPOT."""
    hardware = {"sku": "a100-40g-pcie-card", "gpus_per_node": 4}
    serving = {"input_tokens": 1000, "output_tokens": 500, "requests_per_s": 2}
    body = {"model": {"preset": "llama-3.1-8b"}, "task": "serving", "hardware": hardware, "plan": {"tp": 4, "dp": 1}}
    free = client.post("/estimate", json=body | {"serving": serving})
    bound = client.post("/estimate", json=body | {"serving": serving | {"slo": {"ttft_ms": 500, "tpot_ms": 10}}})
    assert free.status_code == 200 and bound.status_code == 200, bound.text
    free_serving, bound_serving = free.json()["serving"], bound.json()["serving"]
    assert bound_serving["meets_slo"] is False
    assert bound_serving["max_concurrency"] == free_serving["max_concurrency"] > 1
    assert bound_serving["utilization"]["peak"] < 1
    codes = [warning["code"] for warning in bound.json()["warnings"]]
    assert "slo_missed_peak" in codes and "slo_missed_saturated" not in codes
