"""A serving plan's ep refused by the rule it breaks (review R3-10): expert parallel serving runs with DP attention,
ep equal to tp on one stage, on MLA MoE models under SGLang or vLLM, without speculation. Before, every refusal said
"ep N is a training setting serving does not size … leave ep at 1", though ep = tp is a serving plan."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.estimator.error_words import ESTIMATOR_ERRORS as ERRORS

H100_2 = {"sku": "h100-80g-sxm-8x", "nodes": 2}


def _body(preset: str, plan: dict[str, int], **serving: Any) -> dict[str, Any]:
    workload = {"engine": "sglang", "input_tokens": 2000, "output_tokens": 500, "requests_per_s": 5} | serving
    return {"model": {"preset": preset}, "task": "serving", "serving": workload, "hardware": H100_2, "plan": plan}


CASES = {
    "ep_not_tp": (_body("deepseek-v3", {"tp": 16, "ep": 8}), "serving_ep_tp", "ep equal to tp"),
    "not_mla": (_body("mixtral-8x7b", {"tp": 8, "ep": 8}), "serving_ep_model", "MLA"),
    "trt_llm": (_body("deepseek-v3", {"tp": 16, "ep": 16}, engine="trt-llm"), "serving_ep_engine", "SGLang or vLLM"),
    "speculation": (
        _body("deepseek-v3", {"tp": 16, "ep": 16}, speculative={"method": "mtp"}),
        "serving_ep_speculative",
        "speculati",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_each_ep_refusal_names_its_rule(client: TestClient, case: str) -> None:
    body, code, words = CASES[case]
    response = client.post("/estimate", json=body)
    assert response.status_code == 422, response.text
    text = response.text
    assert "training setting" not in text and words in text, text


@pytest.mark.parametrize("code", ["serving_ep_tp", "serving_ep_model", "serving_ep_engine", "serving_ep_speculative"])
def test_each_ep_refusal_is_worded_in_both_languages(code: str) -> None:
    assert code in ERRORS["en"] and code in ERRORS["zh"]
