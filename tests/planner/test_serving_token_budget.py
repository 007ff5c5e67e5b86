"""A serving option's launch states the scheduler step's token budget its latencies were simulated with: the engines'
defaults differ by GPU (vLLM's OpenAI server takes 2,048 tokens a step under 70 GiB and on the A100, 8,192 above:
vllm-project/vllm vllm/engine/arg_utils.py `get_batch_defaults`, vllm#17885; SGLang's chunked_prefill_size by GPU
memory in python/sglang/srt/server_args.py), so a launch that left it out ran an A100 replica with a quarter of the
prefill chunk the estimate sized its TTFT on."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

FLAGS = {"vllm": "--max-num-batched-tokens", "sglang": "--chunked-prefill-size", "trt-llm": "--max_num_tokens"}


@pytest.mark.parametrize("serving_engine", ["vllm", "sglang", "trt-llm"])
def test_the_launch_states_the_token_budget_the_estimate_simulated(client: TestClient, serving_engine: str) -> None:
    body = {
        "model": {"preset": "llama-3.1-8b"},
        "task": "serving",
        "serving": {"input_tokens": 8000, "output_tokens": 300, "requests_per_s": 2, "engine": serving_engine},
        "constraints": {"gpu_types": ["a100-80g-sxm"]},
    }
    response = client.post("/recommend", json=body)
    assert response.status_code == 200, response.text
    options = response.json()["options"]
    assert options
    for option in options:
        budget = option["serving"]["token_budget"]
        assert budget >= 2048
        assert f"{FLAGS[serving_engine]} {budget}" in option["launch"]["command"]


def test_sglang_dp_attention_passes_the_budget_times_its_ranks(client: TestClient) -> None:
    """SGLang divides --chunked-prefill-size by --dp-size under DP attention (python/sglang/srt/server_args.py, "DP
    attention is enabled. The chunked prefill size is adjusted to ..."); the simulation runs the budget on each rank,
    so the launch passes it times the ranks. It passed 8,192, which each of 32 ranks ran as 256 tokens a step."""
    body = {
        "model": {"preset": "deepseek-v3"},
        "task": "serving",
        "precision": "fp8",
        "weights": "fp8",
        "serving": {"engine": "sglang", "input_tokens": 3000, "output_tokens": 1500, "requests_per_s": 30},
    }
    response = client.post("/recommend", json=body)
    assert response.status_code == 200, response.text
    options = [o for o in response.json()["options"] if "--enable-dp-attention" in o["launch"]["command"]]
    assert options
    for option in options:
        ranks = option["serving"]["gpus_per_replica"]
        assert f"--dp-size {ranks} " in option["launch"]["command"] + " "
        assert f"--chunked-prefill-size {option['serving']['token_budget'] * ranks}" in option["launch"]["command"]
