"""Every serving near miss's quote body describes what it launches, so POST /quotes takes it (201) at the near
miss's own cost: the `pp_speculative` one without speculation, the `bf16_for_fp8` one in 16 bits."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

CUSTOMER = {"name": "Li Wei", "email": "li.wei@example.com"}
DS3_MTP = {
    "model": {"preset": "deepseek-v3"},
    "task": "serving",
    "serving": {"input_tokens": 2000, "output_tokens": 500, "requests_per_s": 10,
                "slo": {"ttft_ms": 2000, "tpot_ms": 100},
                "speculative": {"method": "mtp", "num_speculative_tokens": 1, "acceptance_rate": 0.8}},
}  # fmt: skip
FP8_8B = {
    "model": {"preset": "llama-3.1-8b"},
    "task": "serving",
    "precision": "fp8",
    "serving": {"input_tokens": 1000, "output_tokens": 250, "requests_per_s": 2, "slo": {"ttft_ms": 2000}},
}


@pytest.mark.parametrize(("request_body", "code"), [(DS3_MTP, "pp_speculative"), (FP8_8B, "bf16_for_fp8")])
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
    speculative = [m for m in misses if any(x["code"] == "pp_speculative" for x in m["misses"])]
    assert all("speculative" not in m["quote"]["workload"]["serving"] for m in speculative)
