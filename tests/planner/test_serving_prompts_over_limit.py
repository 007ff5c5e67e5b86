"""Prompt lengths drawn past what one request may hold: with input_tokens_p95 the simulation draws lognormal lengths
and counts a prompt longer than max_model_len (or one sequence's KV cache) at that length, where the engine refuses
it. Qwen3-30B-A3B (40,960-token context) at a mean of 32,000 and a p95 of 90,000 sends about a quarter of its
prompts past the context; the answer said nothing. It now warns with the share (the lognormal's tail through the
stated mean and p95: app/estimator/serving_sim.py `lognormal_sigma`)."""

from __future__ import annotations

import math
from statistics import NormalDist

import pytest
from fastapi.testclient import TestClient

from app.estimator.serving_sim import Lengths, lognormal_sigma


def test_the_share_above_a_limit_is_the_lognormal_tail() -> None:
    sigma = lognormal_sigma(32000, 90000)
    mu = math.log(32000) - sigma * sigma / 2
    expected = 1 - NormalDist().cdf((math.log(39960) - mu) / sigma)
    assert Lengths(32000, 90000).share_above(39960) == pytest.approx(expected)
    assert Lengths(32000, 90000).share_above(90000) == pytest.approx(0.05, abs=1e-9)
    assert Lengths(1000).share_above(2000) == 0.0 and Lengths(3000).share_above(2000) == 1.0


def test_a_recommendation_warns_of_the_prompts_its_engine_refuses(client: TestClient) -> None:
    body = {
        "model": {"preset": "qwen3-30b-a3b"},
        "task": "serving",
        "serving": {"input_tokens": 32000, "input_tokens_p95": 90000, "output_tokens": 1000, "requests_per_s": 1},
    }
    response = client.post("/recommend", json=body)
    assert response.status_code == 200, response.text
    options = response.json()["options"]
    assert options
    for option in options:
        refused = [w for w in option["warnings"] if w["code"] == "prompts_over_limit"]
        assert len(refused) == 1, option["warnings"]
        assert 0.1 < refused[0]["params"]["share"] < 0.5
    body["serving"] = {"input_tokens": 2000, "input_tokens_p95": 4000, "output_tokens": 200, "requests_per_s": 1}
    quiet = client.post("/recommend", json=body).json()["options"]
    assert quiet and not any(w["code"] == "prompts_over_limit" for o in quiet for w in o["warnings"])
