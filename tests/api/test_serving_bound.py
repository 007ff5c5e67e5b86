"""`serving.bound` names what limits the step kind that takes most of a replica's time (review R2 R11: a replica
decoding 64 sequences of 1,000 / 500 tokens read "compute" from the few steps that carry a prefill chunk)."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient


def _bound(client: TestClient, input_tokens: int, output_tokens: int) -> str:
    body = {
        "model": {"preset": "llama-3.1-8b"},
        "task": "serving",
        "serving": {"input_tokens": input_tokens, "output_tokens": output_tokens, "concurrency": 64},
        "hardware": {"gpu": "h100-80g-sxm"},
        "plan": {"tp": 1, "dp": 1},
    }
    response = client.post("/estimate", json=body)
    assert response.status_code == 200, response.text
    return str(response.json()["serving"]["bound"])


@pytest.mark.parametrize(
    ("lengths", "bound"),
    [
        # 500 decode steps a request, each reading ~16 GB of weights and ~10 GB of KV at batch 64 (≈ 8 ms at
        # 3.35 TB/s) for ≈ 1 TFLOP (1-2 ms): the decode's memory read dominates the replica's time
        ((1000, 500), "memory"),
        # 8,000-token prompts and 50 output tokens: most of the time goes to steps carrying a prefill chunk
        ((8000, 50), "compute"),
    ],
)
def test_bound_is_that_of_the_dominant_step_kind(client: TestClient, lengths: tuple[int, int], bound: str) -> None:
    assert _bound(client, *lengths) == bound
