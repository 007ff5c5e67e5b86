"""/recommend sizes a serving deployment at the fewest replicas that the simulation /estimate runs accepts at the
peak: the closed forms that steer the search read the simulated queue tail high, so their count is a starting
point, never a floor (review R2 R9: Llama-3.1-405B BF16 on vLLM at 1 request/s was sized 2 × TP 16 on four H100
servers, ¥400,000 a month, while /estimate of one TP 16 replica on two servers meets the SLO at that load; with
max_nodes 2 the SKU was rejected outright)."""

from __future__ import annotations

import math
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.factories import recommend

LLAMA_405B = {
    "model": {"preset": "llama-3.1-405b"},
    "task": "serving",
    "weights": "bf16",
    "serving": {"engine": "vllm", "input_tokens": 2000, "output_tokens": 300, "requests_per_s": 1,
                "slo": {"ttft_ms": 3000, "tpot_ms": 85}},
}  # fmt: skip
RAG_70B = {
    "model": {"preset": "llama-3.1-70b"},
    "task": "serving",
    "serving": {"input_tokens": 8000, "output_tokens": 300, "requests_per_s": 5, "slo": {"ttft_ms": 2000}},
}
CHAT_8B_SGLANG = {
    "model": {"preset": "llama-3.1-8b"},
    "task": "serving",
    "serving": {"engine": "sglang", "input_tokens": 1000, "output_tokens": 250, "requests_per_s": 40,
                "slo": {"ttft_ms": 500, "tpot_ms": 30}},
}  # fmt: skip


def test_405b_at_one_request_per_second_is_one_tp16_replica_on_two_servers(client: TestClient) -> None:
    option = recommend(client, LLAMA_405B)["options"][0]
    assert option["sku"]["id"] == "h100-80g-sxm-8x"
    assert (option["nodes"], option["serving"]["replicas"], option["serving"]["gpus_per_replica"]) == (2, 1, 16)
    assert option["serving"]["meets_slo"] is True


def test_max_nodes_2_keeps_the_405b_deployment_that_needs_two_servers(client: TestClient) -> None:
    answer = recommend(client, {**LLAMA_405B, "constraints": {"max_nodes": 2}})
    (option,) = [o for o in answer["options"] if o["sku"]["id"] == "h100-80g-sxm-8x"]
    assert (option["nodes"], option["serving"]["replicas"]) == (2, 1)
    assert not [r for r in answer["rejected"] if r["sku"] == "h100-80g-sxm-8x"]


def _estimate(client: TestClient, body: dict[str, Any], option: dict[str, Any], replicas: int) -> dict[str, Any]:
    serving = option["serving"]
    tp, pp = option["quote"]["plan"]["tp"], option["quote"]["plan"]["pp"]
    per_node = min(serving["gpus_per_replica"], option["gpus_per_node"])  # the SKU's servers, replicas alone
    hardware = {"sku": option["sku"]["id"], "gpus_per_node": per_node,
                "nodes": math.ceil(replicas * serving["gpus_per_replica"] / per_node)}  # fmt: skip
    plan = {"tp": tp, "pp": pp, "dp": replicas}
    response = client.post("/estimate", json={**body, "hardware": hardware, "plan": plan})
    assert response.status_code == 200, response.text
    return dict(response.json()["serving"])


@pytest.mark.parametrize("body", [LLAMA_405B, RAG_70B, CHAT_8B_SGLANG], ids=["405b", "70b-rag", "8b-sglang"])
def test_every_shown_count_is_the_fewest_the_estimate_accepts(client: TestClient, body: dict[str, Any]) -> None:
    """Each shown server option's replicas_needed meets the SLO in /estimate and one fewer does not (the load's
    count, review R8-3); its replicas, the servers it rents, are the fewest whole servers' that hold replicas_needed
    (the search steps by whole servers: replicas in between rent no less)."""
    options = [o for o in recommend(client, body)["options"] if o["quote"]["plan"]["pp"] == 1 and o["nodes"]]
    assert options
    for option in options[:3]:
        needed, deployed = option["serving"]["replicas_needed"], option["serving"]["replicas"]
        assert _estimate(client, body, option, needed)["meets_slo"] is True, option["explanation"]
        if needed > 1:
            assert _estimate(client, body, option, needed - 1)["meets_slo"] is False, option["explanation"]
        per_server = max(1, option["gpus_per_node"] // option["serving"]["gpus_per_replica"])
        assert needed <= deployed < needed + per_server, option["explanation"]
