"""serving.disaggregated with a model whose replica spans two servers (DeepSeek-V3, Llama-3.1-405B in bf16): never a
500. `true` answers 200 with each SKU rejected for a reason, `"auto"` falls back to the colocated options it finds."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

DS3 = {"input_tokens": 2000, "output_tokens": 500, "requests_per_s": 10}
MTP = {"method": "mtp", "num_speculative_tokens": 1, "acceptance_rate": 0.8}


def body(preset: str, serving: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"model": {"preset": preset}, "task": "serving", "serving": serving} | extra


@pytest.mark.parametrize(
    "request_body",
    [
        body("deepseek-v3", DS3 | {"engine": "sglang", "disaggregated": True}),
        body("deepseek-v3", DS3 | {"engine": "vllm", "disaggregated": True}),
        body("llama-3.1-405b", DS3 | {"engine": "sglang", "requests_per_s": 2, "disaggregated": True}, weights="bf16"),
    ],
)
def test_disaggregated_true_with_a_replica_over_two_servers_is_rejected_not_500(
    client: TestClient, request_body: dict[str, Any]
) -> None:
    response = client.post("/recommend", json=request_body)
    assert response.status_code == 200, response.text
    answer = response.json()
    assert answer["options"] == [] or all(o["serving"].get("pools") for o in answer["options"])
    assert answer["rejected"], response.text[:2000]
    assert all(r["reason"] for r in answer["rejected"])
    assert "disaggregated_spanning" in {r["code"] for r in answer["rejected"]}, response.text[:2000]


@pytest.mark.parametrize("method", ["mtp", "eagle3"])
def test_auto_with_speculation_on_a_spanning_model_falls_back_to_colocated(client: TestClient, method: str) -> None:
    speculative = MTP | {"method": method}
    serving = DS3 | {"engine": "sglang", "disaggregated": "auto", "speculative": speculative}
    response = client.post("/recommend", json=body("deepseek-v3", serving))
    assert response.status_code == 200, response.text


def test_a_vllm_disaggregated_launch_says_its_proxy_is_an_example_to_replace(client: TestClient) -> None:
    serving = {"input_tokens": 1000, "output_tokens": 250, "requests_per_s": 2, "disaggregated": True,
               "engine": "vllm", "slo": {"ttft_ms": 1000, "tpot_ms": 50}}  # fmt: skip
    response = client.post("/recommend", json=body("llama-3.1-8b", serving))
    assert response.status_code == 200, response.text
    launches = [option["launch"] for option in response.json()["options"]]
    assert launches, response.text[:2000]
    for launch in launches:
        assert "toy_proxy_server.py" in launch["commands"]["router"]
        assert "vllm_toy_proxy" in [text["code"] for text in launch["texts"]["notes"]], launch["texts"]
        assert any("production prefill/decode router" in note for note in launch["notes"]), launch["notes"]
        # review R2 R5: the proxy lives in vLLM's source tree only, not the wheel the servers install
        assert any("not in the vllm wheel" in note and "vllm-router" in note for note in launch["notes"])
