"""Every serving near miss's quote body describes what it launches, so POST /quotes takes it (201) at the near
miss's own cost: the `fp8_weights_bf16_math` one with FP8 weights and 16-bit math, the `bf16_for_fp8` one in 16 bits."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.text import messages

CUSTOMER = {"name": "Li Wei", "email": "li.wei@example.com"}
FP8_8B = {
    "model": {"preset": "llama-3.1-8b"},
    "task": "serving",
    "precision": "fp8",
    "serving": {"input_tokens": 1000, "output_tokens": 250, "requests_per_s": 2, "slo": {"ttft_ms": 2000}},
}


FP8_8B_TRT = FP8_8B | {"serving": FP8_8B["serving"] | {"engine": "trt-llm"}}


# DeepSeek-V3 + MTP on the seeded catalog is served by TP 16 over two H100 servers, so no `pp_speculative` near miss
# shows there; a SKU without an RDMA fabric shows one (tests/planner/test_serving_pp_speculative_quote.py).
@pytest.mark.parametrize(
    ("request_body", "code"),
    [(FP8_8B, "fp8_weights_bf16_math"), (FP8_8B_TRT, "bf16_for_fp8")],
)
def test_every_near_miss_quote_body_is_quoted_at_its_cost(
    client: TestClient, request_body: dict[str, Any], code: str
) -> None:
    response = client.post("/recommend", json=request_body)
    assert response.status_code == 200, response.text
    misses = [miss for miss in response.json()["near_misses"] if miss.get("meets_slo") is not False]
    assert code in {m["code"] for miss in misses for m in miss["misses"]}, response.text[:3000]
    for miss in misses:
        quoted = client.post("/quotes", json=miss["quote"] | {"customer": CUSTOMER})
        assert quoted.status_code == 201, quoted.text
        assert quoted.json()["total"] == miss["cost"]["job_total"]


# TPOT 60 ms: the A100 near miss stays a near miss under TensorRT-LLM's in-place all-reduce cost (serving/step.py)
INT4_FP8_KV_TRT = {
    "model": {"preset": "llama-3.1-70b"},
    "task": "serving",
    "weights": "int4",
    "kv_cache_precision": "fp8",
    "serving": {"engine": "trt-llm", "input_tokens": 2000, "output_tokens": 500, "requests_per_s": 5,
                "slo": {"ttft_ms": 2000, "tpot_ms": 60}},
}  # fmt: skip


@pytest.mark.parametrize(
    ("lang", "said", "not_said"),
    [
        ("en", ["bf16 KV cache", "int4 weights are kept"], "in bf16, not the FP8 asked"),
        ("zh", ["KV 缓存以 bf16", "权重仍为 int4"], "以 bf16 而非所要求的 FP8 运行"),
    ],
)
def test_a_bf16_near_miss_where_only_the_kv_cache_changed_says_so(
    client: TestClient, lang: str, said: list[str], not_said: str
) -> None:
    """int4 AWQ weights with an FP8 KV cache on TensorRT-LLM: an A100 keeps the int4 weights, only the KV cache
    is bf16 (TensorRT-LLM's FP8 KV cache needs SM89+)."""
    response = client.post("/recommend", json=INT4_FP8_KV_TRT)
    assert response.status_code == 200, response.text
    shown = [miss for miss in response.json()["near_misses"] if miss["misses"][0]["code"] == "bf16_for_fp8"]
    assert shown, response.text[:3000]
    for miss in shown:
        reason = messages.misses([(m["code"], m["params"]) for m in miss["misses"]], lang)
        assert reason is not None
        assert all(words in reason for words in said), reason
        assert not_said not in reason, reason
        assert lang != "en" or reason == miss["miss_reason"]
        assert miss["quote"]["workload"]["weights"] == "int4"


def test_a_bf16_near_miss_where_only_the_math_changed_says_so(client: TestClient) -> None:
    """FP8 math asked with int4 weights under TensorRT-LLM (no FP8 kernels on an A100): the near miss keeps the int4
    weights and runs bf16 math; its reason says that, not "in bf16", and its quote keeps the int4 weights."""
    body = INT4_FP8_KV_TRT | {"precision": "fp8"}
    response = client.post("/recommend", json=body)
    assert response.status_code == 200, response.text
    shown = [miss for miss in response.json()["near_misses"] if miss["misses"][0]["code"] == "bf16_for_fp8"]
    assert shown, response.text[:3000]
    for miss in shown:
        assert miss["miss_reason"].startswith("with bf16 math, not the FP8 math asked"), miss["miss_reason"]
        assert "int4 weights are kept" in miss["miss_reason"]
        assert miss["quote"]["workload"]["weights"] == "int4" and miss["quote"]["workload"]["precision"] == "bf16"
        zh = messages.misses([(m["code"], m["params"]) for m in miss["misses"]], "zh")
        assert zh is not None and "以 bf16 而非所要求的 FP8 计算" in zh and "权重仍为 int4" in zh
