"""POST /quotes recomputes the plan's estimate on the SKU and quantity it rents, with the workload sent, and
freezes that (app/quotes/plan_check.py `estimate_figures`); a figure the client sends is dropped
(docs/api.md "Quotes"). Before, the quote printed `plan.time_to_train_hours` as the client sent it.

As a sales engineer would: five varied /recommend requests, each top option's `quote` body posted as is,
quote back to the option's own total, quantity, term, months and time."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.text.words import duration

CUSTOMER = {"name": "Li Wei", "company": "", "email": "li.wei@example.com"}

SCENARIOS: dict[str, dict[str, Any]] = {
    "dense 8B LoRA": {"model": {"preset": "llama-3.1-8b"}, "task": "lora", "tokens": 2e8},
    "70B full fine-tune": {
        "model": {"preset": "llama-3.1-70b"},
        "task": "full_finetune",
        "tokens": 2e9,
        "constraints": {"term": "monthly"},
    },
    "Mixtral MoE": {"model": {"preset": "mixtral-8x7b"}, "task": "full_finetune", "tokens": 1e9},
    "128k context": {"model": {"preset": "llama-3.1-8b"}, "task": "full_finetune", "tokens": 5e8, "seq_len": 131072},
    "deadline": {
        "model": {"preset": "llama-3.1-8b"},
        "task": "lora",
        "tokens": 5e7,
        "constraints": {"deadline_days": 7, "term": "annual"},
    },
}


def _top(client: TestClient, body: dict[str, Any]) -> dict[str, Any]:
    response = client.post("/recommend", json=body)
    assert response.status_code == 200, response.text
    options = response.json()["options"]
    assert options, response.json()["rejected"]
    return options[0]


def _issue(client: TestClient, body: dict[str, Any]) -> dict[str, Any]:
    response = client.post("/quotes", json={**body, "customer": CUSTOMER})
    assert response.status_code == 201, response.text
    return response.json()


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_the_top_option_quotes_back_to_its_own_figures(client: TestClient, name: str) -> None:
    option = _top(client, SCENARIOS[name])
    body, cost, perf = option["quote"], option["cost"], option["performance"]
    quote = _issue(client, body)
    assert Decimal(quote["total"]) == Decimal(cost["job_total"])
    assert (quote["sku"]["id"], quote["quantity"], quote["term"], quote["months"]) == (
        option["sku"]["id"],
        cost["units"],
        cost["term"],
        cost["months"],
    )
    gpus_per_unit = 1 if quote["unit"] == "card" else quote["sku"]["gpus_per_node"]
    assert quote["quantity"] * gpus_per_unit == option["total_gpus"]
    assert quote["plan"]["time_to_train_hours"] == f"{perf['time_to_train_hours']:.2f}"
    assert quote["plan"]["gpu_hours"] == f"{perf['gpu_hours']:.1f}"
    assert quote["plan"]["time_to_train_hours_range"] == [f"{h:.2f}" for h in perf["time_to_train_hours_range"]]
    assert quote["plan"]["memory_per_gpu_gib"] == f"{option['memory']['per_gpu_gib']['total']:.2f}"
    assert quote["plan"]["fits"] is True


def test_a_time_the_client_sends_is_replaced_by_the_estimate_on_the_quoted_sku(client: TestClient) -> None:
    # Before: the quote kept and printed 1.0 h (and the range) as sent.
    option = _top(client, SCENARIOS["dense 8B LoRA"])
    sent = {**option["quote"]["plan"], "time_to_train_hours": 1.0, "time_to_train_hours_range": [0.5, 1.5]}
    quote = _issue(client, {**option["quote"], "plan": sent})
    hours = option["performance"]["time_to_train_hours"]
    assert quote["plan"]["time_to_train_hours"] == f"{hours:.2f}" != "1.00"
    assert quote["plan"]["time_to_train_hours_range"] == [
        f"{h:.2f}" for h in option["performance"]["time_to_train_hours_range"]
    ]
    page = client.get(quote["links"]["print"]).text
    assert f"about {duration(hours, 'en')}" in page and "about 1 h<" not in page and hours > 2


def test_without_tokens_no_time_is_printed_even_if_sent(client: TestClient) -> None:
    # Before: a workload without tokens still printed the client's 4.9 h.
    body = {
        "sku_id": "a100-40g-pcie-card",
        "quantity": 1,
        "term": "monthly",
        "workload": {"model": {"preset": "llama-2-7b"}, "task": "lora"},
        "plan": {"dp": 1, "micro_batch": 2, "recompute": "full", "time_to_train_hours": 4.9},
    }
    quote = _issue(client, body)
    assert "time_to_train_hours" not in quote["plan"] and quote["plan"]["fits"] is True
    assert "about 4 h 54 min" not in client.get(quote["links"]["print"]).text


def test_a_plan_without_a_workload_keeps_no_client_time(client: TestClient) -> None:
    body = {"sku_id": "h100-80g-sxm-8x", "quantity": 1, "term": "monthly", "plan": {"tp": 8, "time_to_train_hours": 3}}
    # the summary is the server's, worded from the plan's fields (app.quotes.plan_summary)
    assert _issue(client, body)["plan"] == {"tp": 8, "summary": "tensor parallel 8"}


def test_a_plan_no_stack_runs_is_not_quoted(client: TestClient) -> None:
    # QLoRA is data parallel only in every stack (docs/stacks.md): a tp 2 plan fitted memory and was quoted before
    body = {
        "sku_id": "a100-80g-sxm-8x",
        "quantity": 1,
        "term": "monthly",
        "workload": {"model": {"preset": "llama-3.1-8b"}, "task": "qlora", "tokens": 1e8},
        "plan": {"dp": 4, "tp": 2, "micro_batch": 1},
        "customer": CUSTOMER,
    }
    refused = client.post("/quotes", json=body)
    assert refused.status_code == 422, refused.text
    assert "No training stack runs qlora" in refused.text
    estimate = client.post(
        "/estimate",
        json={**body["workload"], "hardware": {"sku": "a100-80g-sxm-8x", "nodes": 1}, "plan": body["plan"]},
    )
    assert estimate.status_code == 200, estimate.text
    assert "no_stack" in {w["code"] for w in estimate.json()["warnings"]}


def test_a_plan_on_a_server_whose_host_ram_is_unknown_says_so_first(client: TestClient) -> None:
    """LoRA with ZeRO-3 and the optimizer offloaded to host RAM on one A100 40G card, whose server's host RAM
    the catalog does not list: was refused as "No training stack runs…", not for what keeps it from being
    checked at all, the host RAM the offload needs."""
    body = {
        "sku_id": "a100-40g-pcie-card",
        "quantity": 1,
        "term": "monthly",
        "workload": {"model": {"preset": "llama-3.1-8b"}, "task": "lora", "tokens": 1e8},
        "plan": {"dp": 1, "zero_stage": 3, "offload": "optimizer"},
        "customer": CUSTOMER,
    }
    response = client.post("/quotes", json=body)
    assert response.status_code == 422, response.text
    (error,) = response.json()["errors"]
    assert error["field"] == "plan"
    assert error["message"].startswith("cannot be checked on a100-40g-pcie-card: Offload needs ")
    assert "host RAM is not known" in error["message"] and "No training stack" not in error["message"]
    assert error["type"] == "plan_host_ram_unknown" and error["params"]["host_gib"] > 0


def _plan_error(client: TestClient, body: dict) -> dict:
    response = client.post("/quotes", json={**body, "customer": CUSTOMER})
    assert response.status_code == 422, response.text
    (error,) = response.json()["errors"]
    assert error["field"] == "plan"
    return error


def test_a_plan_the_sku_cannot_run_is_refused_with_a_code_and_its_figures(client: TestClient) -> None:
    """The quantity and months refusals carry a code and their figures for a sales tool; a plan over the card's
    memory, or one no stack runs, was a bare value_error with the figures in its text only."""
    body = {"model": {"preset": "llama-3.1-70b"}, "task": "full_finetune", "tokens": 1e9}
    option = client.post("/recommend", json=body).json()["options"][0]
    quote = option["quote"]
    plan = quote["plan"]
    whole = plan["global_batch"] // plan["dp"]  # the whole batch in one micro-batch, nothing recomputed
    error = _plan_error(client, {**quote, "plan": {**plan, "micro_batch": whole, "recompute": "none"}})
    assert error["type"] == "plan_gpu_memory"
    params = error["params"]
    assert params["sku"] == quote["sku_id"] and params["needed_gib"] > params["limit_gib"]
    assert params["limit_gib"] == pytest.approx(0.95 * params["capacity_gib"], rel=1e-6)
    assert f"{params['needed_gib']:.1f} GiB" in error["message"]
