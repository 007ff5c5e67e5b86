"""The feasibility gate (GPU memory within a headroom, host RAM within a reserve) in POST /recommend
and POST /estimate: an infeasible plan is neither an option nor a near miss, it is a rejection
with a reason code and both numbers."""

from __future__ import annotations

from decimal import Decimal

import pytest
from fastapi.testclient import TestClient

from app.estimator.hardware import get_gpu
from app.estimator.memory import estimate_memory, host_ram_reserve_gib
from app.estimator.presets import get_preset
from app.estimator.specs import GIB, Cluster, LoraSpec, Plan, Workload
from app.planner.offers import Constraints, Offer
from app.planner.recommend import recommend
from app.text import messages
from tests.factories import recommend as _recommend


def _assert_gated(option: dict) -> None:
    memory = option["memory"]
    assert memory["fits"] is True
    assert memory["per_gpu_gib"]["total"] <= memory["limit_gib"] + 0.01
    assert memory["limit_gib"] <= 0.95 * memory["capacity_gib"] + 0.01
    if memory["host_ram_gib"]:
        assert memory["host_ram_gib"] <= memory["host_ram_limit_gib"]


def test_host_reserve_follows_the_documented_tiers() -> None:
    # GKE: 25 % of 4 + 20 % of 4 + 10 % of 8 + 6 % of 112 + 2 % of (1024 - 128) GiB = 27.24 GiB,
    # plus 6 GiB per GPU process and its data loaders.
    assert host_ram_reserve_gib(1024, 8) == pytest.approx(27.24 + 48)
    assert host_ram_reserve_gib(8, 1) == pytest.approx(1.8 + 6)


def test_405b_full_finetune_on_one_a100_server_is_rejected_for_host_ram(client: TestClient) -> None:
    # Before the gate, rank 1 was one 8 × A100 server offloading 6,804 GiB onto 1,024 GiB of RAM; DeepSpeed's
    # parameter offload (the stack that runs it) holds 7,560: 20 bytes a parameter with its 16-bit gradient buffer
    # (app/estimator/memory/states.py, the comment above `_deepspeed_offload`).
    result = _recommend(client, model={"preset": "llama-3.1-405b"}, task="full_finetune", tokens=1e9)
    rejected = {r["sku"]: r for r in result["rejected"]}
    a100 = rejected["a100-80g-sxm-8x"]
    assert a100["code"] == "host_ram"
    assert "7,560 GiB" in a100["reason"] and "1,024 GiB" in a100["reason"]
    for option in result["options"] + result["near_misses"]:
        assert option["sku"]["id"] != "a100-80g-sxm-8x"
        _assert_gated(option)


def test_70b_full_finetune_over_host_ram_after_the_reserve_is_rejected(client: TestClient) -> None:
    # 1,156 GiB of offloaded states on 1,024 GiB (949 GiB after the reserve) is no option, nor a near miss
    result = _recommend(
        client,
        model={"preset": "llama-2-70b"},
        task="full_finetune",
        tokens=1e9,
        constraints={"limit": 50, "deadline_days": 1},
    )
    names = {o["sku"]["id"] for o in result["options"] + result["near_misses"]}
    assert "a100-80g-sxm-8x" not in names
    assert {r["sku"]: r["code"] for r in result["rejected"]}["a100-80g-sxm-8x"] == "host_ram"
    for option in result["options"] + result["near_misses"]:
        _assert_gated(option)


def test_headroom_is_a_constraint_and_tightens_the_gate(client: TestClient) -> None:
    loose = _recommend(client, model={"preset": "llama-2-7b"}, task="lora", tokens=1e8, constraints={"limit": 50})
    tight = _recommend(
        client,
        model={"preset": "llama-2-7b"},
        task="lora",
        tokens=1e8,
        constraints={"limit": 50, "memory_headroom": 0.3},
    )
    for option in loose["options"]:
        _assert_gated(option)
    for option in tight["options"]:
        memory = option["memory"]
        assert memory["limit_gib"] == pytest.approx(0.7 * memory["capacity_gib"], abs=0.01)
        assert memory["per_gpu_gib"]["total"] <= memory["limit_gib"] + 0.01
    response = client.post(
        "/recommend", json={"model": {"preset": "llama-2-7b"}, "constraints": {"memory_headroom": 2}}
    )
    assert response.status_code == 422
    assert "constraints.memory_headroom" in {e["field"] for e in response.json()["errors"]}


def test_estimate_fits_is_the_same_gate(client: TestClient) -> None:
    body = {
        "model": {"preset": "llama-2-70b"},
        "task": "full_finetune",
        "hardware": {"sku": "a100-80g-sxm-8x"},
        "plan": {"dp": 8, "zero_stage": 3, "offload": "optimizer_and_params", "recompute": "full"},
    }
    response = client.post("/estimate", json=body)
    assert response.status_code == 200, response.text
    memory = response.json()["memory"]
    assert memory["host_ram_gib"] > memory["host_ram_limit_gib"]
    assert memory["host_ram_limit_gib"] < 1024
    assert memory["fits"] is False
    assert "host_ram_exceeded" in {w["code"] for w in response.json()["warnings"]}


def test_a_plan_inside_the_card_but_inside_the_headroom_does_not_fit() -> None:
    # A plan using 97 % of the usable memory: within the card, outside the default 5 % headroom.
    gpu = get_gpu("a100-40g-pcie")
    model = get_preset("llama-2-7b").model
    workload = Workload(task="lora", seq_len=2048)
    plan = Plan(micro_batch=1)
    total = estimate_memory(model, workload, plan, Cluster(gpu=gpu, memory_headroom=0.0)).breakdown.total
    headroom = 1 - (total / GIB) / gpu.usable_memory_gib + 0.01  # just more than what the plan leaves free
    tight = estimate_memory(model, workload, plan, Cluster(gpu=gpu, memory_headroom=headroom)).breakdown
    loose = estimate_memory(model, workload, plan, Cluster(gpu=gpu, memory_headroom=0.0)).breakdown
    assert loose.fits and not tight.fits


def test_a_sku_whose_card_count_cannot_split_the_batch_says_so() -> None:
    """Before: three A100 PCIe cards were rejected as 'no parallel plan fits' for 7B LoRA, which fits one
    card: the default global batch of 128 sequences splits over no dp × micro-batch on 3 GPUs (and 3
    divides neither the 32 heads nor the 32 layers)."""
    three = Offer(
        sku_id="a100-40g-pcie-3",
        name="3 × A100 PCIe",
        gpu=get_gpu("a100-40g-pcie"),
        regions=("shenzhen",),
        rental_unit="card",
        gpus_per_node=8,
        card_counts=(3,),
        intra_node_link="pcie4",
        inter_node_fabric=None,
        host_ram_gib=512,
        currency="CNY",
        unit_monthly_list=Decimal("2800.00"),
    )
    workload = Workload(task="lora", lora=LoraSpec(rank=16), tokens=1e8)
    result = recommend(get_preset("llama-2-7b").model, workload, [three], Constraints())
    [rejected] = result.rejected
    assert (rejected.code, rejected.params["global_batch"], rejected.params["gpus"]) == ("batch_split", 128, 3)
    assert messages.rejection(rejected.code, rejected.params).startswith(
        "the global batch of 128 sequences does not split over 3 × NVIDIA A100 40GB PCIe"
    )
