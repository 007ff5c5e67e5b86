"""`hardware {"gpu": X}` means the same for serving as for training (review R5): alone, one card; with `nodes`,
whole usual servers; and the serving response says which in its assumptions, as training's does."""

from __future__ import annotations

from fastapi.testclient import TestClient

SERVING = {
    "model": {"preset": "llama-3.1-8b"},
    "task": "serving",
    "serving": {"input_tokens": 1000, "output_tokens": 100, "concurrency": 8},
}


def _codes(client: TestClient, hardware: dict) -> tuple[dict, list[str]]:
    response = client.post("/estimate", json={**SERVING, "hardware": hardware})
    assert response.status_code == 200, response.text
    result = response.json()
    return result, [note["code"] for note in result["assumption_codes"]]


def test_a_gpu_alone_is_one_card_and_nodes_make_whole_servers_as_the_assumptions_say(client: TestClient) -> None:
    one, codes = _codes(client, {"gpu": "h100-80g-sxm"})
    assert one["plan"]["dp"] * one["plan"]["tp"] == 1 and "hardware_one_gpu" in codes
    assert any("one NVIDIA H100" in text and "hardware.nodes" in text for text in one["assumptions"])
    server, codes = _codes(client, {"gpu": "h100-80g-sxm", "nodes": 1})
    assert server["plan"]["dp"] * server["plan"]["tp"] == 8 and "hardware_usual_server" in codes


def test_training_reads_a_gpu_alone_as_one_card_too(client: TestClient) -> None:
    body = {"model": {"preset": "llama-3.1-8b"}, "task": "lora", "tokens": 1e7, "hardware": {"gpu": "h100-80g-sxm"}}
    response = client.post("/estimate", json=body)
    assert response.status_code == 200, response.text
    assert "hardware_one_gpu" in [note["code"] for note in response.json()["assumption_codes"]]
