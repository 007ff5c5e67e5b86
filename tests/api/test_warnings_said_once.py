"""A fact is warned once: a pipeline with too few micro-batches was `pipeline_bubble` from the speed estimate and
`pipeline_few_microbatches` from the memory estimate (the same condition, m < 4 × pp: the 1F1B bubble, Narayanan et
al. 2021 §2.2), and a tensor-parallel group across servers `tp_across_nodes` from both, so /estimate listed it twice.
The speed estimate, where the bubble and the network cost, now says each once, with its figures."""

from __future__ import annotations

from collections import Counter
from typing import Any

from fastapi.testclient import TestClient

from app.text import messages

TRAINING = {"model": {"preset": "llama-3.1-70b"}, "task": "full_finetune", "tokens": 1e9}
FEW_MICRO_BATCHES = {"tp": 8, "pp": 2, "dp": 1, "global_batch": 2}  # 2 micro-batches of 1 for 2 stages
ACROSS_SERVERS = {"tp": 16, "pp": 1, "dp": 1, "global_batch": 16}  # TP 16 over two servers of 8


def _codes(warnings: list[dict[str, Any]]) -> Counter[str]:
    return Counter(warning["code"] for warning in warnings)


def test_estimate_warns_each_fact_once(client: TestClient) -> None:
    hardware = {"sku": "h100-80g-sxm-8x", "nodes": 2}
    for plan, code in ((FEW_MICRO_BATCHES, "pipeline_few_microbatches"), (ACROSS_SERVERS, "tp_across_nodes")):
        response = client.post("/estimate", json=TRAINING | {"hardware": hardware, "plan": plan})
        assert response.status_code == 200, response.text
        warnings = response.json()["warnings"]
        codes = _codes(warnings)
        assert codes[code] == 1, warnings
        assert max(codes.values()) == 1, warnings
        assert not {"pipeline_bubble", "pipeline_few_microbatches"} <= set(codes), warnings
    few = next(w for w in client.post("/estimate", json=TRAINING | {"hardware": hardware, "plan": FEW_MICRO_BATCHES})
               .json()["warnings"] if w["code"] == "pipeline_few_microbatches")  # fmt: skip
    assert few["params"] == {"micro_batches": 2, "pp": 2, "virtual_stages": 1, "bubble": 1 / 3, "wanted": 8}
    assert few["message"] == messages.warning("pipeline_few_microbatches", few["params"])
    assert "2 个微批" in messages.warning("pipeline_few_microbatches", few["params"], "zh")


def test_no_recommended_option_warns_the_bubble_twice(client: TestClient) -> None:
    body = {"model": {"preset": "llama-3.1-405b"}, "task": "full_finetune", "tokens": 1e10}
    response = client.post("/recommend", json=body)
    assert response.status_code == 200, response.text
    for option in response.json()["options"]:
        codes = _codes(option["warnings"])
        assert max(codes.values(), default=1) == 1, option["warnings"]
        assert not {"pipeline_bubble", "pipeline_few_microbatches"} <= set(codes), option["warnings"]


def test_an_offloaded_option_states_its_slowdown_once(client: TestClient) -> None:
    """Optimizer offload on a /recommend option was `offload_over_pcie` (the memory advice: "expect the step to slow
    down by tens of percent") beside the measured `offload_slowdown` ("takes 21 % of each step, making it 1.26× as
    long"): one fact twice. The measured one, with its figures, stays."""
    body = TRAINING | {"constraints": {"max_nodes": 2, "limit": 50}}
    response = client.post("/recommend", json=body)
    assert response.status_code == 200, response.text
    offloaded = [o for o in response.json()["options"] if o["plan"]["offload"] != "none"]
    measured = [o for o in offloaded if "offload_slowdown" in _codes(o["warnings"])]
    assert measured, [o["plan"] for o in response.json()["options"]]
    for option in measured:
        assert "offload_over_pcie" not in _codes(option["warnings"]), option["warnings"]
