"""One request in flight: the steady-state TTFT is at least the idle replica's prefill plus the server's fixed cost
(serving.isolated_ttft_ms + request_overhead_ms), the same prefill priced the same way (review F6: Llama 3.1 70B
bf16 at TP 8 on H100, 128-token prompts, read TTFT 13.4 ms beside an isolated 16.96 ms on TensorRT-LLM and 70.2 ms
beside 22.76 + 51 ms on vLLM: the steady state priced the prompt's chunk with the request's own decode beside it, 129
GEMM rows, whose two rows of 128-row tiles fill twice the SMs, serving_gemm). Tolerance: 1e-6 relative (the same
floats, summed in another order)."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient


@pytest.mark.parametrize("server", ["trt-llm", "vllm", "sglang"])
@pytest.mark.parametrize("prompt", [16, 128, 2000])
def test_one_request_in_flight_is_no_faster_than_an_idle_replica(client: TestClient, server: str, prompt: int) -> None:
    body = {
        "model": {"preset": "llama-3.1-70b"},
        "precision": "bf16",
        "task": "serving",
        "plan": {"tp": 8},
        "hardware": {"sku": "h100-80g-sxm-8x", "nodes": 1},
        "serving": {"input_tokens": prompt, "output_tokens": 100, "concurrency": 1, "engine": server},
    }
    response = client.post("/estimate", json=body)
    assert response.status_code == 200, response.text
    served = response.json()["serving"]
    idle = served["isolated_ttft_ms"] + (served["request_overhead_ms"] or 0.0)
    assert served["ttft_ms"] >= idle * (1 - 1e-6)
