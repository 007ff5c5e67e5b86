"""POST /recommend with a job budget (`constraints.max_total_budget`) and the other term's price (`cost.alternatives`,
warning `other_term_cheaper`), on the seeded catalog (/work catalog: the company's article, app/catalog/seed_data.py).
Prices are the seed's: the A100 40G card 2,800.00 CNY a month (20 % off annual: 2,240.00), the 8x H100 server
100,000.00 a month."""

from __future__ import annotations

import argparse
from decimal import Decimal

from fastapi.testclient import TestClient

from app.planner.cli import add_recommend_command, request_from_args
from app.text import messages
from tests.factories import recommend

# 70B full fine-tune on 6e10 tokens within 90 days (servers joined by the add-on's 8 x 400 Gb/s): 2 H100 servers
# take ~3 months (3 × 200,000 = 600,000), 4 finish inside one month (400,000). A customer with 300,000 a month
# who can spend 500,000 on the job wants the 4.
SEVENTY_B = {"model": {"preset": "llama-3.1-70b"}, "task": "full_finetune", "tokens": 6e10, "seq_len": 8192}


def _nodes_and_total(option: dict) -> tuple[int, int, str]:
    return option["nodes"], option["cost"]["months"], option["cost"]["job_total"]


def test_a_job_budget_offers_the_one_month_plan_a_monthly_budget_calls_a_miss(client: TestClient) -> None:
    monthly_only = recommend(
        client, **SEVENTY_B, constraints={"deadline_days": 90, "max_monthly_budget": "300000.00", "limit": 2}
    )
    assert _nodes_and_total(monthly_only["options"][0]) == (2, 3, "600000.00")
    near = monthly_only["near_misses"][0]
    assert [m["code"] for m in near["misses"]] == ["budget"]
    # the month is over the budget, and the miss says what the whole job costs: less than the plan ranked first
    assert _nodes_and_total(near) == (4, 1, "400000.00")
    assert near["miss_reason"] == (
        "fits, but costs 400000.00 CNY a month (budget 300000.00 CNY); the whole job costs 400000.00 CNY (billed "
        "months: 1)"
    )

    both = recommend(
        client,
        **SEVENTY_B,
        constraints={
            "deadline_days": 90,
            "max_monthly_budget": "300000.00",
            "max_total_budget": "500000.00",
            "limit": 2,
        },
    )
    top = both["options"][0]
    assert _nodes_and_total(top) == (4, 1, "400000.00")
    assert all(Decimal(o["cost"]["job_total"]) <= 500000 for o in both["options"])
    # within the job budget, above the monthly one: offered, and said so with both figures
    over = next(w for w in top["warnings"] if w["code"] == "over_monthly_budget")
    assert (over["params"]["monthly"], over["params"]["budget"], over["params"]["total_budget"]) == (
        "400000.00",
        "300000.00",
        "500000.00",
    )
    # the three-month plan bills more than the job budget: a near miss naming the job total, not the month
    dear = next(m for m in both["near_misses"] if m["nodes"] == 2)
    assert [m["code"] for m in dear["misses"]] == ["total_budget"]
    assert dear["misses"][0]["params"]["job_total"] == "600000.00"
    assert dear["miss_reason"] == (
        "fits, but the whole job costs 600000.00 CNY (billed months: 3; job budget 500000.00 CNY)"
    )


def test_a_job_budget_alone_misses_what_bills_more(client: TestClient) -> None:
    result = recommend(
        client, **SEVENTY_B, constraints={"deadline_days": 90, "max_total_budget": "450000.00", "limit": 3}
    )
    assert result["options"] and all(Decimal(o["cost"]["job_total"]) <= 450000 for o in result["options"])
    assert result["near_misses"]
    for miss in result["near_misses"]:
        codes = {m["code"] for m in miss["misses"]}
        assert codes <= {"total_budget", "deadline"}
        if "total_budget" in codes:
            assert Decimal(miss["cost"]["job_total"]) > 450000
    assert not any(w["code"] == "over_monthly_budget" for o in result["options"] for w in o["warnings"])


def test_a_serving_job_budget_is_one_term_of_the_deployment(client: TestClient) -> None:
    body = {
        "model": {"preset": "llama-3.1-8b"},
        "task": "serving",
        "serving": {"input_tokens": 1024, "output_tokens": 256, "requests_per_s": 1},
    }
    cheapest = recommend(client, **body, constraints={"objective": "cheapest"})["options"][0]
    total = Decimal(cheapest["cost"]["job_total"])
    result = recommend(client, **body, constraints={"term": "annual", "max_total_budget": str(total)})
    # an annual term bills twelve (discounted) months: above a budget of one monthly month
    assert not result["options"]
    assert result["near_misses"]
    assert all([m["code"] for m in o["misses"]] == ["total_budget"] for o in result["near_misses"])
    assert all(o["cost"]["months"] == 12 for o in result["near_misses"])
    # and a monthly alternative of the same twelve months on every option, dearer than the annual term
    for option in result["near_misses"]:
        (monthly,) = option["cost"]["alternatives"]
        assert (monthly["term"], monthly["months"]) == ("monthly", 12)
        assert Decimal(monthly["job_total"]) >= Decimal(option["cost"]["job_total"])


def test_bad_job_budgets_are_422_naming_the_field(client: TestClient) -> None:
    for value in ("-5", "0", "abc", "1.234", "1e14"):
        response = client.post(
            "/recommend", json={"model": {"preset": "llama-2-7b"}, "constraints": {"max_total_budget": value}}
        )
        assert response.status_code == 422, value
        assert "constraints.max_total_budget" in {e["field"] for e in response.json()["errors"]}


def test_the_monthly_term_is_named_where_the_annual_one_costs_the_job_more(client: TestClient) -> None:
    # 1.5B pre-training on 1e11 tokens, one A100 40G card for ~2,237 h: 12 annual months are 26,880.00, the job
    # bills 4 monthly months, 11,200.00
    body = {"model": {"preset": "qwen2.5-1.5b"}, "task": "pretrain", "tokens": 1e11}
    result = recommend(client, **body, constraints={"objective": "cheapest", "term": "annual"})
    one_card = next(o for o in result["options"] if o["total_gpus"] == 1)
    cost = one_card["cost"]
    assert (cost["months"], cost["job_total"]) == (12, "26880.00")
    assert cost["alternatives"] == [{"term": "monthly", "months": 4, "job_total": "11200.00"}]
    warning = next(w for w in one_card["warnings"] if w["code"] == "other_term_cheaper")
    assert (warning["params"]["other_total"], warning["params"]["job_total"]) == ("11200.00", "26880.00")
    zh = messages.warning(warning["code"], warning["params"], "zh")
    assert "月付" in zh and "11200.00" in zh and "26880.00" in zh


def test_a_short_lora_on_the_annual_term_names_the_monthly_total(client: TestClient) -> None:
    # 7B LoRA on 1e8 tokens: one card for hours; annual bills 12 × 2,240.00, monthly one month of 2,800.00
    body = {"model": {"preset": "llama-2-7b"}, "task": "lora", "tokens": 1e8}
    top = recommend(client, **body, constraints={"objective": "cheapest", "term": "annual"})["options"][0]
    assert top["cost"]["job_total"] == "26880.00"
    assert top["cost"]["alternatives"] == [{"term": "monthly", "months": 1, "job_total": "2800.00"}]
    assert "other_term_cheaper" in {w["code"] for w in top["warnings"]}
    # and the other way: on the monthly term the annual alternative bills more, so nothing warns
    monthly = recommend(client, **body, constraints={"objective": "cheapest"})["options"][0]
    assert monthly["cost"]["alternatives"] == [{"term": "annual", "months": 12, "job_total": "26880.00"}]
    assert "other_term_cheaper" not in {w["code"] for w in monthly["warnings"]}


def test_the_command_line_takes_a_job_budget() -> None:
    parser = argparse.ArgumentParser()
    add_recommend_command(parser.add_subparsers())
    args = parser.parse_args(["recommend", "--preset", "llama-2-7b", "--task", "lora", "--total-budget", "400000"])
    assert request_from_args(args).constraints.max_total_budget == Decimal("400000")
