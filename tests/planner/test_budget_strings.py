"""Budgets are money as the admin's prices are (review R4-10): a decimal string of at most two decimals; "1e5", a
JSON number, a sign or three decimals are a 422 naming the field, and a near miss words the budget as money
(100000.00, never 1E+5)."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

BODY: dict[str, Any] = {"model": {"preset": "llama-3.1-8b"}, "task": "lora", "tokens": 1e8}


@pytest.mark.parametrize("field", ["max_monthly_budget", "max_total_budget"])
@pytest.mark.parametrize("budget", ["1e5", 50000, 50000.5, "-5.00", "100.001", "1,000", "abc", "0"])
def test_a_budget_that_is_not_a_decimal_string_is_422_naming_it(client: TestClient, field: str, budget: Any) -> None:
    response = client.post("/recommend", json={**BODY, "constraints": {field: budget}})
    assert response.status_code == 422, response.text
    [error] = response.json()["errors"]
    assert error["field"] == f"constraints.{field}"
    words = ("decimal string", "greater than 0", "2 decimal places")
    assert any(w in error["message"] for w in words), error["message"]


def test_a_near_miss_words_the_budget_as_money(client: TestClient) -> None:
    body = {**BODY, "constraints": {"max_monthly_budget": "100", "gpu_types": ["h100-80g-sxm"]}}
    answer = client.post("/recommend", json=body)
    assert answer.status_code == 200, answer.text
    near = [n for n in answer.json()["near_misses"] if [m["code"] for m in n["misses"]] == ["budget"]]
    assert near and all(n["misses"][0]["params"]["budget"] == "100.00" for n in near)
    assert all("(budget 100.00 CNY)" in n["miss_reason"] for n in near), near[0]["miss_reason"]
    total = {**BODY, "constraints": {"max_total_budget": "100.5", "gpu_types": ["h100-80g-sxm"]}}
    near = client.post("/recommend", json=total).json()["near_misses"]
    job = [n for n in near if [m["code"] for m in n["misses"]] == ["total_budget"]]
    assert job and all("job budget 100.50 CNY" in n["miss_reason"] for n in job), job[0]["miss_reason"]


def test_two_decimals_are_taken(client: TestClient) -> None:
    body = {**BODY, "constraints": {"max_monthly_budget": " 300000.00 ", "max_total_budget": "400000.5"}}
    assert client.post("/recommend", json=body).status_code == 200
