"""A workload is quoted with the plan it runs (docs/api.md "Quotes"): a workload without a plan stating its layout
(dp/tp/pp/cp, or a disaggregated deployment's pools) is a 422 `plan_required` on `plan`. Before, such a quote skipped
every feasibility check: a 405B serving quote on one 8 × H100 server printed "1 replicas × 1 GPUs", and a 405B full
fine-tune of 1T tokens on one A100 40G card was billed one month with "no token count" printed."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.quotes.models import Quote
from app.text import messages

CUSTOMER = {"name": "a", "company": "b", "email": "a@b.com"}
SERVING_405B = {"model": {"preset": "llama-3.1-405b"}, "task": "serving"}
TRAINING_405B = {"model": {"preset": "llama-3.1-405b"}, "task": "full_finetune", "tokens": 1e12}


@pytest.mark.parametrize(
    ("sku", "workload", "plan"),
    [
        ("h100-80g-sxm-8x", SERVING_405B, None),
        ("a100-40g-pcie-card", TRAINING_405B, None),
        ("a100-40g-pcie-card", TRAINING_405B, {"zero_stage": 3, "recompute": "full"}),  # levers, no layout
    ],
)
def test_a_workload_without_its_plan_is_refused_on_plan(
    client: TestClient, db: Session, sku: str, workload: dict[str, Any], plan: dict[str, Any] | None
) -> None:
    body = {"sku_id": sku, "quantity": 1, "term": "monthly", "workload": workload, "customer": CUSTOMER}
    response = client.post("/quotes", json=body | ({"plan": plan} if plan else {}))
    assert response.status_code == 422, response.text
    errors = response.json()["errors"]
    assert [(e["field"], e["type"]) for e in errors] == [("plan", "plan_required")]
    assert db.scalar(select(func.count()).select_from(Quote)) == 0  # nothing issued


def test_the_refusal_is_worded_in_english_and_chinese() -> None:
    params = {"sku": "h100-80g-sxm-8x", "quantity": 1}
    assert "/recommend" in messages.quote_check("plan_required", params)
    assert "方案" in messages.quote_check("plan_required", params, "zh")


def test_with_its_plan_the_405b_serving_quote_is_checked(client: TestClient) -> None:
    # 405B in bf16 is about 810 GB of weights: one replica of TP 8 on 8 × 80 GB does not hold it
    body = {"sku_id": "h100-80g-sxm-8x", "quantity": 1, "term": "monthly", "workload": SERVING_405B}
    response = client.post("/quotes", json=body | {"plan": {"tp": 8, "dp": 1}, "customer": CUSTOMER})
    assert response.status_code == 422, response.text
    assert "does not fit h100-80g-sxm-8x" in response.json()["detail"], response.text


def test_hardware_alone_is_still_quoted(client: TestClient) -> None:
    body = {"sku_id": "a100-40g-pcie-card", "quantity": 1, "term": "monthly", "customer": CUSTOMER}
    response = client.post("/quotes", json=body)
    assert response.status_code == 201, response.text
    assert response.json()["workload"] is None and response.json()["plan"] is None
