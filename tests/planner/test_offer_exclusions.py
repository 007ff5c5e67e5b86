"""A SKU the request's constraints leave out (a GPU type or region not asked for, no fabric where one is required) is
rejected with the same code for training and for serving (app/planner/offers.py `excluded`): serving used to skip a
GPU-type or region mismatch without a word, and to ignore require_infiniband, which training rejects with a code."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.factories import recommend

TRAINING = {"model": {"preset": "llama-2-7b"}, "task": "lora", "tokens": 100_000_000}
SERVING = {
    "model": {"preset": "llama-3.1-8b"},
    "task": "serving",
    "serving": {"input_tokens": 2000, "output_tokens": 300, "concurrency": 8},
}
CONSTRAINTS: dict[str, tuple[dict[str, Any], str]] = {
    "gpu type": ({"gpu_types": ["h100-80g-sxm"]}, "gpu_type"),
    "region": ({"regions": ["singapore"]}, "region"),
    "fabric": ({"require_infiniband": True}, "no_fabric"),
}


def _excluded(client: TestClient, body: dict[str, Any], constraints: dict[str, Any], code: str) -> dict[str, Any]:
    answer = recommend(client, {**body, "constraints": constraints})
    return {r["sku"]: r["params"] for r in answer["rejected"] if r["code"] == code}


@pytest.mark.parametrize("name", sorted(CONSTRAINTS))
def test_training_and_serving_reject_the_same_skus_with_the_same_code(client: TestClient, name: str) -> None:
    constraints, code = CONSTRAINTS[name]
    training = _excluded(client, TRAINING, constraints, code)
    assert training, f"the seeded catalog has a SKU that {name} leaves out"
    assert _excluded(client, SERVING, constraints, code) == training


def test_a_serving_sku_left_out_is_worded_in_the_answer(client: TestClient) -> None:
    answer = recommend(client, {**SERVING, "constraints": {"gpu_types": ["h100-80g-sxm"]}})
    left_out = [r for r in answer["rejected"] if r["code"] == "gpu_type"]
    assert left_out and all("h100-80g-sxm" in r["reason"] for r in left_out), left_out
    assert all(option["sku"]["gpu"] == "h100-80g-sxm" for option in answer["options"]), answer["options"]
