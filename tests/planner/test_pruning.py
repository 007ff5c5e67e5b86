"""The pruned recommendation (configurations by cost floor, skipped when they cannot change an answer,
each hardware shape searched once; app.planner.pruning) answers exactly what the exhaustive one does:
every configuration of every SKU searched (the skip rule switched off).

The catalog is synthetic and pure: the same GPU types in several regions at different prices, rented
by the card and by the node, with and without a fabric, so that every rule of the skip has work."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal
from typing import Any

import pytest

from app.estimator.presets import get_preset
from app.estimator.specs import LoraSpec, Workload
from app.planner import pruning, search, speed_bounds
from app.planner.offers import Constraints, Offer
from app.planner.option import Recommendation
from app.planner.recommend import _cluster, recommend
from tests import factories


def _offer(
    sku: str, gpu: str, link: str, unit: str, price: str, *, fabric: str | None = None, ram: int = 1024
) -> Offer:
    return factories.offer(
        sku,
        gpu,
        unit=unit,
        monthly=price,
        card_counts=(1, 2, 4, 8) if unit == "card" else (8,),
        intra_node_link=link,
        inter_node_fabric=fabric,
        host_ram_gib=ram,
        discount_bp={"monthly": 0, "annual": 1500},
    )


OFFERS = [
    _offer("a100-40-card-a", "a100-40g-pcie", "pcie4", "card", "2600.00", ram=512),
    _offer("a100-40-card-b", "a100-40g-pcie", "pcie4", "card", "2860.00", ram=512),
    _offer("l40s-card", "l40s-48g", "pcie4", "card", "3000.00", ram=512),
    _offer("a100-sxm-ib", "a100-80g-sxm", "nvlink3", "node", "28000.00", fabric="ib-ndr-400"),
    _offer("a100-sxm-solo", "a100-80g-sxm", "nvlink3", "node", "26000.00"),
    _offer("h100-sxm-ib-a", "h100-80g-sxm", "nvlink4", "node", "95000.00", fabric="ib-ndr-400", ram=2048),
    _offer("h100-sxm-ib-b", "h100-80g-sxm", "nvlink4", "node", "99750.00", fabric="ib-ndr-400", ram=2048),
]
LORA = LoraSpec(rank=16)
REQUESTS: dict[str, tuple[str, Workload, Constraints]] = {
    "7b lora balanced": ("llama-2-7b", Workload(task="lora", lora=LORA, tokens=1e8), Constraints(max_nodes=8)),
    "13b full cheapest": (
        "llama-2-13b",
        Workload(task="full_finetune", tokens=1e9),
        Constraints(max_nodes=8, objective="cheapest"),
    ),
    "70b full fastest": (
        "llama-2-70b",
        Workload(task="full_finetune", tokens=1e9),
        Constraints(max_nodes=8, objective="fastest", limit=3),
    ),
    "70b full deadline": (
        "llama-2-70b",
        Workload(task="full_finetune", tokens=1e9),
        Constraints(max_nodes=8, deadline_days=3),
    ),
    "8b lora budget annual": (
        "llama-3.1-8b",
        Workload(task="lora", lora=LORA, tokens=5e8),
        Constraints(max_nodes=4, max_monthly_budget=Decimal("60000"), term="annual", limit=2),
    ),
    "13b full job budget": (
        "llama-2-13b",
        Workload(task="full_finetune", tokens=1e9),
        Constraints(max_nodes=8, max_total_budget=Decimal("40000"), max_monthly_budget=Decimal("30000"), limit=2),
    ),
    "7b pretrain no tokens": ("llama-2-7b", Workload(task="pretrain", seq_len=4096), Constraints(max_nodes=4)),
    "7b inference": ("llama-2-7b", Workload(task="inference", seq_len=2048), Constraints(max_nodes=4)),
    "70b pretrain long": (
        "llama-2-70b",
        Workload(task="pretrain", seq_len=4096, tokens=1e11),
        Constraints(max_nodes=8, limit=2),
    ),
}

# Requests where the rule must skip configurations (`fastest` wants the biggest clusters; with a deadline
# too few near misses are cheaper; without a token count the Pareto list runs to the fastest).
SKIPS = {"7b lora balanced", "13b full cheapest", "8b lora budget annual", "70b pretrain long"}


def _answer(result: Recommendation) -> dict[str, Any]:
    def row(option: Any) -> tuple[object, ...]:
        return (
            option.offer.sku_id,
            option.config,
            option.cost,
            option.hours,
            option.evaluated.plan,
            option.misses,
        )

    return {
        "options": [row(o) for o in result.options],
        "near_misses": [row(o) for o in result.near_misses],
        "pareto": [row(o) for o in result.pareto],
        "rejected": [(r.sku_id, r.code, r.params) for r in result.rejected],
        "ranks": [o.rank for o in result.options],
    }


@pytest.fixture(autouse=True)
def _no_process_cache() -> Any:
    search.set_cache_size(0)
    yield
    search.set_cache_size(1024)


@pytest.mark.parametrize("name", REQUESTS)
def test_pruned_answer_equals_the_exhaustive_one(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    model_id, workload, constraints = REQUESTS[name]
    model = get_preset(model_id).model
    pruned = recommend(model, workload, OFFERS, constraints)
    with monkeypatch.context() as patch:
        patch.setattr(pruning.Frontier, "excludes", lambda *_args: False)
        exhaustive = recommend(model, workload, OFFERS, constraints)
    assert _answer(pruned) == _answer(exhaustive)
    assert pruned.configurations <= exhaustive.configurations
    if name in SKIPS:
        assert pruned.configurations < exhaustive.configurations  # the rule did skip something


def test_one_hardware_shape_is_searched_once_whatever_sku_offers_it() -> None:
    """Two SKUs of the same card in two regions: every configuration of the second is a memo hit."""
    model, workload = get_preset("llama-2-7b").model, Workload(task="lora", lora=LORA, tokens=1e8)
    twins = [OFFERS[0], replace(OFFERS[0], sku_id="a100-40-card-twin", regions=("frankfurt",))]
    result = recommend(model, workload, twins, Constraints(objective="fastest", limit=8))
    assert result.configurations == 8
    assert result.stats.cached_configurations == 4


def test_the_throughput_bound_holds_for_every_option_found() -> None:
    """The skip rule leans on speed_bounds.throughput_bound: no option may beat it."""
    for model_id, workload, constraints in REQUESTS.values():
        model = get_preset(model_id).model
        result = recommend(model, workload, OFFERS, replace(constraints, limit=50, objective="fastest"))
        for option in result.options:
            cluster = _cluster(option.offer, option.config, Constraints())
            cluster_bound = speed_bounds.throughput_bound(model, workload, cluster)
            assert option.evaluated.throughput <= cluster_bound * (1 + 1e-9), (model_id, option.config)
