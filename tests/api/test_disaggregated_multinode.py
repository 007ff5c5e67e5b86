"""Disaggregated serving of a model whose replica spans two servers (DeepSeek-V3 on the H100 8x SKU): where no
prefill and decode pools within max_nodes meet the SLO, `true` answers with the `disaggregated_pools` rejection and
`"auto"` with the colocated options; the answer is never a 500 (review finding R1: a rejection code the answer's
schema did not list raised a validation error)."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

TRAFFIC = {"input_tokens": 2000, "output_tokens": 500, "requests_per_s": 10}
MTP = {"method": "mtp", "num_speculative_tokens": 1, "acceptance_rate": 0.8}


def _body(engine: str, disaggregated: bool | str, **serving: Any) -> dict[str, Any]:
    return {
        "model": {"preset": "deepseek-v3"},
        "task": "serving",
        "serving": TRAFFIC | {"engine": engine, "disaggregated": disaggregated} | serving,
    }


@pytest.mark.parametrize("serving_engine", ["sglang", "vllm"])  # not `engine`: the database fixture
def test_pools_that_no_server_count_meets_are_a_worded_rejection(client: TestClient, serving_engine: str) -> None:
    response = client.post("/recommend", json=_body(serving_engine, True))
    assert response.status_code == 200, response.text
    answer = response.json()
    codes = {rejection["code"] for rejection in answer["rejected"]}
    if not answer["options"]:
        assert "disaggregated_pools" in codes, answer["rejected"]
    for rejection in answer["rejected"]:
        assert rejection["reason"], rejection


def test_auto_with_speculation_falls_back_to_the_colocated_options(client: TestClient) -> None:
    response = client.post("/recommend", json=_body("sglang", "auto", speculative=MTP))
    assert response.status_code == 200, response.text
    options = response.json()["options"]
    assert options, response.text[:2000]
    assert all(not option["serving"].get("pools") for option in options)
