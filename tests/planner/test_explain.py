"""Explanations state the catalog's own facts: the link and fabric of the SKU, its host RAM; a
slowdown is said as ×, a share as a share."""

from __future__ import annotations

import dataclasses
import re

import pytest
from fastapi.testclient import TestClient

from app.estimator.specs import MemoryBreakdown, Plan
from app.planner.explain import describe_plan, explain, link_words
from app.planner.offers import Configuration
from app.text.words import plan_summary
from tests.factories import dense_model, offer, recommend as _recommend, workload


def test_tensor_parallel_on_the_pcie_sku_never_says_nvlink(client: TestClient) -> None:
    # Before: "Tensor parallel 4 stays inside one server, on its NVLink" for the "PCIe 4.0, no NVLink" SKU.
    # Llama 3.1 70B LoRA on the card's 4-GPU server at TP 2 x PP 2 (Qwen2.5 32B, the case before, fits TP 1 x PP 2
    # since the megatron stack's Transformer Engine layers keep less: memory.saved)
    result = _recommend(
        client,
        model={"preset": "llama-3.1-70b"},
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


# --- one catalog for the plan's words and the explanation (app/text/words.py PLAN_WORDS, EXPLAIN_WORDS) -------

GIB = 2**30
PLANS = [
    Plan(),
    Plan(dp=8, zero_stage=3, offload="optimizer", recompute="full", micro_batch=2),
    Plan(dp=4, cp=2, micro_batch=1),
    Plan(dp=8, tp=2, ep=8, micro_batch=1),
    Plan(dp=4, ep=4, zero_stage=1, micro_batch=1),
    Plan(dp=16, zero_stage=3, dp_shard=8, offload="optimizer_and_params", micro_batch=1),
    Plan(dp=2, tp=4, pp=2, cp=2, recompute="selective", micro_batch=4),
]


@pytest.mark.parametrize("plan", PLANS, ids=lambda p: f"dp{p.dp}tp{p.tp}pp{p.pp}cp{p.cp}ep{p.ep}s{p.dp_shard}")
def test_a_stored_plan_reads_as_the_planners_summary_in_english_and_has_chinese_for_each_part(plan: Plan) -> None:
    """A quote's stored plan (its fields, without `summary`) is worded by the same catalog as the API's summary.
    Before: the quote's wording ignored cp, ep and hybrid sharding ("data parallel over 1 GPUs" for dp 1, cp 2)."""
    fields = dataclasses.asdict(plan)
    assert plan_summary(fields, "en") == describe_plan(plan)
    chinese = plan_summary(fields, "zh")
    assert not re.search(r"[A-Za-z]{3,}", chinese.replace("ZeRO", "")), chinese
    for degree, word in ((plan.cp, "上下文并行"), (plan.ep, "专家并行"), (plan.tp, "张量并行")):
        assert (f"{word} {degree}" in chinese) == (degree > 1), chinese
    assert ("混合分片" in chinese) == plan.hybrid


def _memory(total_gib: float, host_ram_gib: float = 0.0) -> MemoryBreakdown:
    return MemoryBreakdown(
        total=total_gib * GIB,
        weights=0.0,
        gradients=0.0,
        optimizer=0.0,
        activations=0.0,
        kv_cache=0.0,
        other=0.0,
        capacity=79.1 * GIB,
        host_ram=host_ram_gib * GIB,
        host_ram_limit=(host_ram_gib + 100) * GIB if host_ram_gib else None,
    )


CASES = {
    "one gpu": (offer(), Configuration(1, 1), Plan(), _memory(40.0)),
    "one server, nvlink": (offer(), Configuration(8, 1), Plan(dp=4, tp=2), _memory(60.0)),
    "pcie, offload": (
        offer(gpu="a100-40g-pcie"),
        Configuration(4, 1),
        Plan(dp=1, tp=4, zero_stage=3, offload="optimizer"),
        _memory(30.0, host_ram_gib=500.0),
    ),
    "two servers, a fabric": (
        offer(inter_node_fabric="ib-ndr-400"),
        Configuration(8, 2),
        Plan(dp=2, tp=8),
        _memory(70.0),
    ),
    "two servers, no fabric named": (offer(), Configuration(8, 2), Plan(dp=16, zero_stage=3), _memory(70.0)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_explanation_renders_in_chinese_from_the_same_catalog(case: str) -> None:
    """Every sentence of the API's `explanation` has its Chinese (EXPLAIN_WORDS, both languages the same keys and
    fields: tests/test_messages.py); the Chinese keeps only names (GPU, link, fabric) and units in Latin letters."""
    offer_, config, plan, memory = CASES[case]
    model, job = dense_model(), workload("full_finetune")
    english = explain(model, job, offer_, config, plan, memory)
    chinese = explain(model, job, offer_, config, plan, memory, lang="zh")
    assert english.startswith("6.7B full fine-tuning "), english
    names = [offer_.gpu.name, link_words(offer_), "InfiniBand NDR 400 Gb/s", "GiB", "TiB", "ZeRO", "PCIe", "all-reduce"]
    rest = chinese
    for name in names:
        rest = rest.replace(name, " ")
    assert not re.search(r"[A-Za-z]{3,}", rest), (chinese, rest)
    assert "全参数微调" in chinese
