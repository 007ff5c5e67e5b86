"""A serving near miss is the nearest shape that can hold the request, at the most replicas the constraints rent,
priced, naming what it misses: never a shape whose KV cache cannot hold one sequence while a larger degree on the
same servers holds it (review R2 R1), and never nothing at all for a SKU that misses only on max_nodes (R10)."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.factories import recommend

CONTEXT = 120_000 + 500


def _long_prompts(ttft_ms: int) -> dict[str, Any]:
    return {
        "model": {"preset": "llama-3.1-70b"},
        "task": "serving",
        "serving": {"input_tokens": 120_000, "output_tokens": 500, "requests_per_s": 0.5,
                    "slo": {"ttft_ms": ttft_ms, "tpot_ms": 60, "percentile": "p99"}},
    }  # fmt: skip


@pytest.mark.parametrize("ttft_ms", [30_000, 150_000])
def test_a_long_context_near_miss_is_a_shape_that_holds_the_sequence(client: TestClient, ttft_ms: int) -> None:
    """70B BF16 keeps 320 KiB of KV cache a token: 8 × 80 GB servers hold 120,500 tokens at TP 8 (about 1.36 M
    tokens a replica), so the H100 and A100 80G near misses cite a latency target at such a shape, not TP 2's
    "does not fit"."""
    answer = recommend(client, _long_prompts(ttft_ms))
    by_sku = {miss["sku"]["id"]: miss for miss in answer["near_misses"]}
    for sku in ("h100-80g-sxm-8x", "a100-80g-sxm-8x"):
        miss = by_sku[sku]
        assert miss["serving"]["kv_cache_tokens"] >= CONTEXT, miss["miss_reason"]
        codes = {m["code"] for m in miss["misses"]}
        assert "sequence_too_long" not in codes, miss["miss_reason"]
        assert codes & {"slo_one_request", "slo_peak", "max_nodes"}, miss["miss_reason"]


DEEPSEEK_BUSY = {
    "model": {"preset": "deepseek-v3"},
    "task": "serving",
    "serving": {"input_tokens": 4000, "output_tokens": 500, "requests_per_s": 20, "input_tokens_p95": 12000,
                "disaggregated": "auto", "slo": {"ttft_ms": 2000, "tpot_ms": 50}},
}  # fmt: skip


def test_a_sku_that_misses_only_on_max_nodes_is_a_priced_near_miss(client: TestClient) -> None:
    """DeepSeek-V3 at 20 requests/s needs about 11 TP 16 replicas (22 H100 servers) by the closed forms; max_nodes
    16 rents 8: the SKU is shown at 8, priced, and the miss names the limit (it was a bare rejection)."""
    answer = recommend(client, DEEPSEEK_BUSY)
    (miss,) = [m for m in answer["near_misses"] if m["sku"]["id"] == "h100-80g-sxm-8x"]
    limit = next(m for m in miss["misses"] if m["code"] == "max_nodes")
    assert limit["params"]["max_nodes"] == 16
    assert limit["params"]["most"] == miss["serving"]["replicas"] < limit["params"]["replicas"]
    assert miss["nodes"] == 16
    assert float(miss["cost"]["job_total"]) > 0
    assert "max_nodes 16" in miss["miss_reason"]
