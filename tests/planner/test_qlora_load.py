"""QLoRA under DeepSpeed ZeRO-3 loads the whole 4-bit model in host RAM on every rank of the node before the engine
shards it (app/planner/stacks.py `host_load`: transformers' `_load_state_dict_into_meta_model` keeps each quantised
weight on the CPU of every rank). The host RAM gate counts that load in every entry point: /recommend rejects the
SKU with `host_ram` and the load's figures, /estimate says `fits` false with a `host_load_*` warning, and POST
/quotes refuses such a plan. Before, 405B QLoRA was ranked first on one 8 × A100 80G server with 225 GiB of offload
on 949 GiB, while loading needs 8 × 201 GiB."""

from __future__ import annotations

import argparse

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.estimator.hardware import get_gpu
from app.estimator.memory import estimate_memory
from app.estimator.presets import get_preset
from app.estimator.specs import GIB, Cluster, Plan, Workload
from app.planner.cli import add_recommend_command, format_table, request_from_args
from app.planner.search import as_held
from app.planner.service import run_recommend
from app.planner.stacks import stack_for
from app.text import messages
from tests.factories import recommend as _recommend

A100_SERVER = "a100-80g-sxm-8x"  # 8 × A100 80G SXM, 1,024 GiB of host RAM (949 GiB after the reserve)
PCIE_CARDS = "a100-40g-pcie-card"  # 4 × A100 40G PCIe rented by the card; the catalog lists no host RAM
ZERO3 = {"dp": 8, "zero_stage": 3, "offload": "optimizer_and_params", "recompute": "full"}
CUSTOMER = {"name": "Li Wei", "company": "", "email": "li.wei@example.com"}


def _estimate(client: TestClient, preset: str, plan: dict, sku: str = A100_SERVER) -> dict:
    body = {"model": {"preset": preset}, "task": "qlora", "tokens": 1e8, "hardware": {"sku": sku}, "plan": plan}
    response = client.post("/estimate", json=body)
    assert response.status_code == 200, response.text
    return response.json()


def test_405b_qlora_on_one_a100_server_is_rejected_for_the_load(client: TestClient) -> None:
    result = _recommend(client, model={"preset": "llama-3.1-405b"}, task="qlora", tokens=1e8)
    for option in result["options"] + result["near_misses"]:
        assert option["sku"]["id"] != A100_SERVER
        memory = option["memory"]
        assert max(memory["host_ram_gib"], memory["host_load_gib"]) <= (memory["host_ram_limit_gib"] or 0)
    rejected = {r["sku"]: r for r in result["rejected"]}[A100_SERVER]
    params = rejected["params"]
    assert rejected["code"] == "host_ram"
    assert params["copies"] == 8
    assert params["load_gib"] == pytest.approx(8 * params["model_gib"], rel=1e-3)
    assert params["load_gib"] > params["host_ram_limit_gib"]
    assert params["host_ram_gib"] == 1024
    assert f"{params['load_gib']:,.0f} GiB" in rejected["reason"] and "1,024 GiB" in rejected["reason"]
    assert "loading the model" in rejected["reason"]
    assert "加载模型" in messages.rejection("host_ram", params | {"where": "8 × A100"}, "zh")


def test_the_estimate_of_405b_qlora_zero3_does_not_fit_for_the_load(client: TestClient) -> None:
    result = _estimate(client, "llama-3.1-405b", ZERO3)
    memory = result["memory"]
    assert memory["fits"] is False
    assert memory["host_ram_gib"] < memory["host_ram_limit_gib"] < memory["host_load_gib"]
    warning = {w["code"]: w for w in result["warnings"]}["host_load_exceeded"]
    assert warning["params"]["copies"] == 8
    assert f"{warning['params']['load_gib']:,.0f} GiB" in warning["message"]
    assert "Loading the model" in warning["message"]
    assert "加载模型" in messages.warning("host_load_exceeded", warning["params"], "zh")


def test_70b_qlora_zero3_still_fits_and_is_offered_on_one_a100_server(client: TestClient) -> None:
    memory = _estimate(client, "llama-3.1-70b", ZERO3)["memory"]
    model = get_preset("llama-3.1-70b").model
    workload = Workload(task="qlora", global_batch=8)
    held = as_held(model, workload, Plan(**ZERO3), _a100_cluster())
    each = estimate_memory(model, workload, held, _a100_cluster()).breakdown.host_load / 8 / GIB
    assert 30 < each < 45  # the 4-bit 70B: NF4 linears and the 16-bit embedding and head
    assert memory["host_load_gib"] == pytest.approx(8 * each, abs=0.1)
    assert memory["host_load_gib"] < memory["host_ram_limit_gib"]
    assert memory["fits"] is True
    # the A100 80G server alone: the cheaper card server (host RAM to confirm) would rank before it
    only = {"limit": 50, "gpu_types": ["a100-80g-sxm"]}
    result = _recommend(client, model={"preset": "llama-3.1-70b"}, task="qlora", tokens=1e8, constraints=only)
    offered = [o for o in result["options"] if o["sku"]["id"] == A100_SERVER]
    assert offered, result["rejected"]


def test_a_quote_of_405b_qlora_zero3_on_one_a100_server_is_refused(client: TestClient) -> None:
    body = {
        "sku_id": A100_SERVER,
        "quantity": 1,
        "term": "monthly",
        "workload": {"model": {"preset": "llama-3.1-405b"}, "task": "qlora", "tokens": 1e8},
        "plan": {**ZERO3, "micro_batch": 1},
        "customer": CUSTOMER,
    }
    refused = client.post("/quotes", json=body)
    assert refused.status_code == 422, refused.text
    assert "Loading the model needs" in refused.text and "1,024 GiB" in refused.text


def test_the_command_line_rejects_405b_qlora_on_one_a100_server_for_the_load(db: Session) -> None:
    parser = argparse.ArgumentParser()
    add_recommend_command(parser.add_subparsers())
    args = parser.parse_args(["recommend", "--preset", "llama-3.1-405b", "--task", "qlora", "--tokens", "1e8"])
    table = format_table(run_recommend(db, request_from_args(args)))
    ranked = [line for line in table.splitlines() if not line.startswith("rejected")]
    assert not any(A100_SERVER in line for line in ranked)
    assert f"rejected {A100_SERVER}: does not fit: loading the model" in table


def test_the_deepspeed_stack_is_named_for_the_plan_it_loads_so() -> None:
    model = get_preset("llama-3.1-405b").model
    workload = Workload(task="qlora", global_batch=8)
    held = as_held(model, workload, Plan(**ZERO3), _a100_cluster())
    assert held.host_load == "every_rank"
    assert stack_for(workload, held, model) == "deepspeed"
    replicated = as_held(model, workload, Plan(dp=8, zero_stage=2), _a100_cluster())
    assert replicated.host_load == "none"  # ZeRO-2 QLoRA loads onto each rank's GPU


def test_mixtral_qlora_zero3_on_a_server_of_unknown_ram_is_offered_with_the_ram_to_confirm(client: TestClient) -> None:
    # 4 × A100 40G PCIe, host RAM not in the catalog: ZeRO-3 over the 4 cards fits the GPUs, and each of the 4 ranks
    # loads the whole 4-bit Mixtral 8x22B onto the host first: offered on the condition the host has that RAM
    result = _recommend(
        client,
        model={"preset": "mixtral-8x22b"},
        task="qlora",
        tokens=1e8,
        constraints={"gpu_types": ["a100-40g-pcie"]},
    )
    assert PCIE_CARDS not in {r["sku"] for r in result["rejected"]}
    option = next(o for o in result["options"] if o["sku"]["id"] == PCIE_CARDS)
    memory = option["memory"]
    warning = {w["code"]: w for w in option["warnings"]}["host_ram_unconfirmed"]
    assert warning["params"]["loading"] is True
    assert warning["params"]["host_gib"] == pytest.approx(memory["host_load_gib"], abs=0.1)
    assert warning["params"]["needed_gib"] > memory["host_load_gib"]
    estimate = _estimate(client, "mixtral-8x22b", {"dp": 4, "zero_stage": 3, "recompute": "full"}, sku=PCIE_CARDS)
    assert estimate["memory"]["fits"] is False  # /estimate of the plan still says the host RAM is not known
    assert "host_load_unknown" in {w["code"] for w in estimate["warnings"]}


def _a100_cluster() -> Cluster:
    return Cluster(gpu=get_gpu("a100-80g-sxm"), gpus_per_node=8, host_ram_gib=1024)
