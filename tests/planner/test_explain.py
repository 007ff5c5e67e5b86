"""Explanations state the catalog's own facts: the link and fabric of the SKU, its host RAM; a
slowdown is said as ×, a share as a share."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

from app.estimator.specs import Plan
from app.planner.explain import describe_plan
from tests.factories import recommend as _recommend


def test_tensor_parallel_on_the_pcie_sku_never_says_nvlink(client: TestClient) -> None:
    # Before: "Tensor parallel 4 stays inside one server, on its NVLink" for the "PCIe 4.0, no NVLink" SKU.
    # Qwen2.5 32B: the 72B no longer fits the card's 4-GPU server once the unfused loss counts 12 bytes per logit
    result = _recommend(
        client,
        model={"preset": "qwen2.5-32b"},
        task="lora",
        tokens=1e8,
        constraints={"gpu_types": ["a100-40g-pcie"], "limit": 50},
    )
    tensor_parallel = [o for o in result["options"] if o["plan"]["tp"] > 1]
    assert tensor_parallel
    for option in tensor_parallel:
        text = option["explanation"]
        assert "PCIe 4.0, no NVLink" in text
        assert "on its NVLink" not in text


def test_multi_node_explanations_name_the_fabric_and_nvlink_sku_its_link(client: TestClient) -> None:
    result = _recommend(
        client, model={"preset": "llama-2-70b"}, task="full_finetune", tokens=1e9, constraints={"limit": 50}
    )
    multi = [o for o in result["options"] if o["nodes"] > 1]
    assert multi
    for option in multi:
        assert "NVLink + NVSwitch 900 GB/s inside each server" in option["explanation"]
        assert "InfiniBand NDR 400 Gb/s between them" in option["explanation"]


def test_offload_is_explained_with_the_servers_ram_and_its_slowdown_as_a_factor(client: TestClient) -> None:
    result = _recommend(
        client, model={"preset": "llama-2-70b"}, task="full_finetune", tokens=1e9, constraints={"limit": 50}
    )
    offloading = [o for o in result["options"] if o["plan"]["offload"] != "none"]
    assert offloading
    for option in offloading:
        assert re.search(r"within the [\d,]+ GiB left of its 2,048 GiB", option["explanation"]), option["explanation"]
        for warning in option["warnings"]:
            if warning["code"] == "offload_slowdown":
                share, factor = re.search(
                    r"takes (\d+)% of each step, making it ([\d.]+)× as long", warning["message"]
                ).groups()
                assert (
                    float(factor) == round(1 / (1 - int(share) / 100), 2)
                    or abs(float(factor) - 1 / (1 - int(share) / 100)) < 0.05
                )


def test_the_plan_summary_names_expert_and_context_parallel() -> None:
    """Before: a plan with ep 8 read 'tensor parallel 2 × data parallel 8, …': the experts' split was dropped."""
    summary = describe_plan(Plan(dp=8, tp=2, ep=8, micro_batch=1))
    assert summary.startswith("tensor parallel 2 × data parallel 8, expert parallel 8 (each rank holds 1/8")
    assert describe_plan(Plan(dp=4, cp=2, micro_batch=1)).startswith("context parallel 2 × data parallel 4")
    assert "expert parallel 4" in describe_plan(Plan(dp=4, ep=4, micro_batch=1))
