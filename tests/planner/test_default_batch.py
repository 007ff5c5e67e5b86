"""The global batch the planner sizes a job at when the customer gives none: about 0.5M tokens per fine-tuning step
(Tülu 3's SFT batch, 128 sequences of up to 4,096 tokens), so long-context fine-tunes are not sized at 4M tokens a
step and a handful of optimizer steps."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from app.estimator.specs import Workload
from app.planner.search import default_global_batch


@pytest.mark.parametrize(
    ("task", "seq_len", "expected"),
    [
        ("lora", 2048, 128),  # Alpaca-length sequences: 128 of them
        ("full_finetune", 4096, 128),  # Tülu 3: 128 x 4,096
        ("lora", 8192, 64),
        ("qlora", 32768, 16),  # 16 x 32,768 = 524,288 tokens, the same step as 128 x 4,096
        ("full_finetune", 131072, 4),
        ("pretrain", 8192, 256),  # ~2M tokens (GPT-3's 0.5M-3.2M), unchanged
    ],
)
def test_the_default_step_keeps_its_tokens(task: str, seq_len: int, expected: int) -> None:
    assert default_global_batch(Workload(task=task, seq_len=seq_len)) == expected


def test_a_long_context_fine_tune_is_launched_with_a_step_of_half_a_million_tokens(client: TestClient) -> None:
    body = {"model": {"preset": "llama-3.1-8b"}, "task": "lora", "tokens": 5e7, "seq_len": 32768}
    response = client.post("/recommend", json=body)
    assert response.status_code == 200, response.text
    option = response.json()["options"][0]
    assert option["plan"]["global_batch"] == 16
    assert option["plan"]["global_batch"] * 32768 == 524288
