"""A serving option's quote freezes the workload the deployment was sized on (review R15): serving's own figures,
not the training defaults (seq_len 2048, output_tokens 256 beside serving.output_tokens 400, optimizer adamw)."""

from __future__ import annotations

from fastapi.testclient import TestClient

TRAINING_DEFAULTS = {"seq_len", "output_tokens", "optimizer", "mixed_precision"}


SERVING = {"model": {"preset": "llama-3.1-8b"}, "task": "serving"}


def test_the_serving_quote_workload_carries_serving_figures_only(client: TestClient) -> None:
    serving = {"input_tokens": 2000, "output_tokens": 400, "requests_per_s": 10}
    answer = client.post("/recommend", json=SERVING | {"serving": serving})
    assert answer.status_code == 200, answer.text
    top = answer.json()["options"][0]
    workload = top["quote"]["workload"]
    assert not TRAINING_DEFAULTS & set(workload), workload
    assert workload["serving"]["output_tokens"] == 400 and workload["precision"] == "bf16"
    ready = top["quote"] | {"customer": {"name": "Li Wei", "email": "li.wei@example.com"}}
    issued = client.post("/quotes", json=ready)
    assert issued.status_code == 201, issued.text
    assert not TRAINING_DEFAULTS & set(issued.json()["workload"])  # the quote freezes the same figures
