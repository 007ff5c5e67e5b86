"""options[].quote is the POST /quotes body for the option: posted as is (plus a customer) it issues
a quote for the option's own total; a quote whose quantity disagrees with its plan, or whose plan does
not fit the SKU, is a 422 naming both numbers."""

from __future__ import annotations

from decimal import Decimal

import pytest
from fastapi.testclient import TestClient

from tests.factories import recommend as _recommend

CUSTOMER = {"name": "Li Wei", "company": "", "email": "li.wei@example.com"}


def _errors(response) -> dict[str, str]:
    assert response.status_code == 422, response.text
    return {e["field"]: e["message"] for e in response.json()["errors"]}


@pytest.mark.parametrize(
    "body",
    [
        {"model": {"preset": "llama-3.1-8b"}, "task": "lora", "tokens": 5e7, "constraints": {"deadline_days": 7}},
        {"model": {"preset": "llama-2-70b"}, "task": "full_finetune", "tokens": 1e9},
        {"model": {"preset": "llama-2-7b"}, "task": "lora", "tokens": 1e9, "constraints": {"term": "annual"}},
    ],
)
def test_each_option_quotes_back_to_its_own_total(client: TestClient, body: dict) -> None:
    result = _recommend(client, **body)
    assert result["options"]
    for option in result["options"][:3]:
        quote_body = option["quote"]
        assert quote_body["quantity"] == option["cost"]["units"]
        assert quote_body["months"] == option["cost"]["months"]
        response = client.post("/quotes", json={**quote_body, "customer": CUSTOMER})
        assert response.status_code == 201, response.text
        quote = response.json()
        assert Decimal(quote["total"]) == Decimal(option["cost"]["job_total"])
        assert quote["plan"]["summary"] == option["plan"]["summary"]
        assert quote["workload"]["model"] == quote_body["workload"]["model"]


def test_quantity_that_disagrees_with_the_plan_names_both_numbers(client: TestClient) -> None:
    # Before: quantity = the option's total_gpus (8) on an 8-GPU server quoted 8 servers (CNY 240,000).
    result = _recommend(
        client,
        model={"preset": "llama-2-7b"},
        task="full_finetune",
        tokens=1e9,
        constraints={"gpu_types": ["a100-80g-sxm"]},
    )
    option = result["options"][0]
    assert (option["total_gpus"], option["quote"]["quantity"]) == (8, 1)
    wrong = {**option["quote"], "quantity": option["total_gpus"], "customer": CUSTOMER}
    message = _errors(client.post("/quotes", json=wrong))["quantity"]
    assert "quantity 8 rents 64 GPUs" in message and "= 8 GPUs" in message and "quote quantity 1" in message


def test_a_plan_that_does_not_fit_the_sku_is_refused(client: TestClient) -> None:
    body = {
        "sku_id": "a100-80g-sxm-8x",
        "quantity": 1,
        "term": "monthly",
        "workload": {"model": {"preset": "llama-2-70b"}, "task": "full_finetune", "tokens": 1e9},
        "plan": {"dp": 8, "zero_stage": 3, "offload": "optimizer_and_params", "recompute": "full", "micro_batch": 1},
        "customer": CUSTOMER,
    }
    message = _errors(client.post("/quotes", json=body))["plan"]
    assert "host RAM" in message and "1,024 GiB" in message
    gpu = {**body, "plan": {"dp": 8, "zero_stage": 0, "micro_batch": 1}}
    message = _errors(client.post("/quotes", json=gpu))["plan"]
    assert "GiB per GPU" in message and "headroom" in message


def test_a_quote_without_a_workload_checks_only_the_quantity(client: TestClient) -> None:
    body = {
        "sku_id": "h100-80g-sxm-8x",
        "quantity": 2,
        "term": "monthly",
        "addons": ["infiniband-400g"],  # the fabric the plan's two pipeline stages are joined by
        "plan": {"tp": 8, "pp": 2, "dp": 1},
        "customer": CUSTOMER,
    }
    assert client.post("/quotes", json=body).status_code == 201
    message = _errors(client.post("/quotes", json={**body, "plan": {"tp": 8, "dp": 1}}))["quantity"]
    assert "quantity 2 rents 16 GPUs" in message and "= 8 GPUs" in message
