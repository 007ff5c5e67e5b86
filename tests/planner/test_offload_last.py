"""No offload where the states fit: an option that offloads its model states to host RAM ranks after every option
that keeps them on the GPUs while that costs at most OFFLOAD_PREMIUM × what it bills at the slow end of its time
range (balanced and fastest;
app/planner/recommend.py `rank`, "Offload last"). Driven through POST /recommend with the issue's request."""

from __future__ import annotations

from decimal import Decimal

import pytest
from fastapi.testclient import TestClient

from app.planner.ranking import OFFLOAD_PREMIUM
from tests.factories import recommend

# The request: Llama 3.1 405B continued pre-training on 10B tokens ranked ZeRO-3 with every state offloaded
# first (64-128 H100s, MFU 0.36, 850 GiB of host RAM a server), where Megatron-LM tensor parallel 8 × pipeline 14
# holds the states on 14 servers; an engineer expects TP 8 × PP >= 8 without offload.
LLAMA_405B_CPT = {"model": {"preset": "llama-3.1-405b"}, "task": "continued_pretrain", "tokens": 1e10}


@pytest.mark.parametrize("objective", ["balanced", "fastest"])
def test_405b_continued_pretraining_holds_its_states_on_the_gpus(client: TestClient, objective: str) -> None:
    result = recommend(client, {**LLAMA_405B_CPT, "constraints": {"objective": objective}})
    first = result["options"][0]
    plan = first["plan"]
    assert plan["offload"] == "none", plan["summary"]
    assert (plan["tp"], plan["pp"] >= 8) == (8, True), plan["summary"]
    offloading = [o["rank"] for o in result["options"] if o["plan"]["offload"] != "none"]
    holding = [o["rank"] for o in result["options"] if o["plan"]["offload"] == "none"]
    assert not offloading or max(holding) < min(offloading)


def test_cheapest_still_orders_by_price(client: TestClient) -> None:
    result = recommend(client, {**LLAMA_405B_CPT, "constraints": {"objective": "cheapest"}})
    costs = [Decimal(o["cost"]["job_total"]) for o in result["options"]]
    assert costs == sorted(costs) and result["options"][0]["plan"]["offload"] != "none"


def test_offload_still_leads_where_holding_the_states_costs_over_the_premium(client: TestClient) -> None:
    # 405B on 1B tokens: 4 offloading servers (CNY 400,000) against 14 holding the states (1,400,000, 3.5 ×)
    result = recommend(client, {**LLAMA_405B_CPT, "task": "full_finetune", "tokens": 1e9})
    first = result["options"][0]
    held = min(Decimal(o["cost"]["job_total"]) for o in result["options"] if o["plan"]["offload"] == "none")
    assert first["plan"]["offload"] != "none"
    assert held > OFFLOAD_PREMIUM * Decimal(first["cost"]["job_total"])
    assert "billing_within_range" not in [w["code"] for w in first["warnings"]]


def test_offload_still_leads_where_nothing_holds_the_states(client: TestClient) -> None:
    # one H100 server cannot hold 70B's training states (16 bytes a parameter, 140 GiB a GPU): an offloading plan
    # is all there is, and it is ranked
    body = {**LLAMA_405B_CPT, "model": {"preset": "llama-3.1-70b"}}
    result = recommend(client, {**body, "constraints": {"max_nodes": 1, "gpu_types": ["h100-80g-sxm"]}})
    options = result["options"]
    assert options and all(o["plan"]["offload"] != "none" for o in options)


def test_an_offloading_option_within_the_deadline_is_shown_after_the_held_ones(client: TestClient) -> None:
    # Llama 3.1 70B full fine-tuning on 5B tokens within 7 days: 2 servers offloading the optimizer (CNY 200,000,
    # 140 h) are on the Pareto list; they rank after the 4-10 servers that hold the states, and the room the balanced
    # rule leaves (16 servers buy no usable time over 8) shows them instead of cutting them at `limit`
    body = {
        "model": {"preset": "llama-3.1-70b"},
        "task": "full_finetune",
        "tokens": 5e9,
        "seq_len": 4096,
        "constraints": {"deadline_days": 7},
    }
    result = recommend(client, body)
    options = result["options"]
    offloading = [o for o in options if o["plan"]["offload"] != "none"]
    holding = [o["rank"] for o in options if o["plan"]["offload"] == "none"]
    assert offloading and len(options) <= 5
    assert max(holding) < min(o["rank"] for o in offloading)
    two = [o for o in offloading if o["nodes"] == 2]
    assert two and Decimal(two[0]["cost"]["job_total"]) < Decimal(options[0]["cost"]["job_total"])
    assert two[0]["performance"]["time_to_train_hours"] <= 7 * 24
    assert any((p["total_gpus"], p["cost"]) == (16, two[0]["cost"]["job_total"]) for p in result["pareto"])
