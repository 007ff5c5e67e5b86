"""Booleans are JSON booleans and numbers are not booleans, across the request bodies: pydantic's lax mode read
`"requests_per_s": true` as 1 request a second and `"compile": "yes"` as torch.compile on, and answered 200."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

SERVING = {"input_tokens": 1024, "output_tokens": 256}
LORA = {"model": {"preset": "llama-3.1-8b"}, "task": "lora", "tokens": 1e8}
ESTIMATE = {**LORA, "hardware": {"sku": "a100-80g-sxm-8x", "nodes": 1}}


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        (
            "/recommend",
            {**LORA, "task": "serving", "serving": {**SERVING, "requests_per_s": True}},
            "serving.requests_per_s",
        ),
        ("/recommend", {**LORA, "tokens": True}, "tokens"),
        ("/recommend", {**LORA, "seq_len": False}, "seq_len"),
        ("/recommend", {**LORA, "constraints": {"require_infiniband": "true"}}, "constraints.require_infiniband"),
        ("/recommend", {**LORA, "constraints": {"max_nodes": True}}, "constraints.max_nodes"),
        ("/estimate", {**ESTIMATE, "plan": {"compile": "yes"}}, "plan.compile"),
        ("/estimate", {**ESTIMATE, "plan": {"compiled": 1}}, "plan.compiled"),
        ("/estimate", {**ESTIMATE, "plan": {"micro_batch": True}}, "plan.micro_batch"),
        ("/estimate", {**ESTIMATE, "hardware": {"sku": "a100-80g-sxm-8x", "nodes": True}}, "hardware.nodes"),
    ],
)
def test_a_boolean_is_strict_and_no_number(client: TestClient, path: str, body: dict[str, Any], field: str) -> None:
    response = client.post(path, json=body)
    assert response.status_code == 422, response.text
    assert field in {error["field"] for error in response.json()["errors"]}


def test_plain_values_still_convert_where_json_cannot_say_otherwise(client: TestClient) -> None:
    # 1e8 is a JSON float naming a whole number of tokens; an amount is a string, kept exact as a Decimal
    body = {**LORA, "seq_len": 4096, "constraints": {"max_monthly_budget": "120000", "require_infiniband": False}}
    assert client.post("/recommend", json=body).status_code == 200
    estimate = {**ESTIMATE, "plan": {"dp": 8, "compile": True, "micro_batch": 1}}
    response = client.post("/estimate", json=estimate)
    assert response.status_code == 200, response.text
