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
