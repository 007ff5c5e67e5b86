"""A plan that leaves its GPUs nearly idle (MFU below 5 %, or exposed communication above 3 × its compute:
app/planner/efficiency.py) is not ranked; while nothing sensible exists it is a near miss that says why and what
would help, in English and Chinese. Driven through POST /recommend with the issue's requests."""

from __future__ import annotations

from fastapi.testclient import TestClient

from app.planner.efficiency import MAX_EXPOSED_COMM_RATIO, MIN_MFU
from app.text import messages
from tests.factories import recommend

# The issue's request: 8 H100 servers, ZeRO-3 with full offload, MFU 0.48 % over one 400 Gb/s port a server (172 s
# of exposed communication against 7.7 s of compute a step), ranked first for ¥800,000. Over the catalog's fabric
# (8 x 400 Gb/s a server, the add-on's data) still MFU 1.9 % (16.8 s against 7.7 s; 1.8 % at the Trainer's speed
# point, 0.98): still not ranked.
DEEPSEEK_FULL = {"model": {"preset": "deepseek-v3"}, "task": "full_finetune", "tokens": 1e9}
# DeepSeek-V3 LoRA on up to 64 servers, fastest first: one server at MFU 9.2 % is sensible; 2-16 servers over one
# 400 Gb/s port each ran at MFU 0.5-2.1 % and were ranked 2 to 5. Over the catalog's 8 x 400 Gb/s a server, 2-8
# servers reach MFU 6-10 % and are sensible too.
DEEPSEEK_LORA = {
    "model": {"preset": "deepseek-v3"},
    "task": "lora",
    "tokens": 1e8,
    "constraints": {"objective": "fastest", "max_nodes": 64},
}


def _sensible(option: dict) -> bool:
    performance = option["performance"]
    breakdown = performance["breakdown_s"]
    return performance["mfu"] >= MIN_MFU and breakdown["exposed_comm"] <= MAX_EXPOSED_COMM_RATIO * breakdown["compute"]


def test_the_issues_plan_at_half_a_percent_mfu_is_not_ranked(client: TestClient) -> None:
    for objective in ("balanced", "cheapest", "fastest"):
        result = recommend(client, {**DEEPSEEK_FULL, "constraints": {"objective": objective}})
        assert all(_sensible(o) for o in result["options"]), [o["performance"]["mfu"] for o in result["options"]]
        if result["options"]:
            continue
        # nothing sensible on the catalog: the plans are near misses that say why and what would help
        misses = result["near_misses"]
        assert misses
        first = misses[0]
        assert (first["nodes"], first["performance"]["mfu"] < 0.02) == (8, True)
        (code, params), *_ = [(m["code"], m["params"]) for m in first["misses"]]
        assert code == "inefficient"
        assert {"fewer_servers", "faster_fabric", "lora"} <= set(params["helps"])
        assert "MFU 1.8%" in first["miss_reason"] and "LoRA" in first["miss_reason"]
        assert "fewer servers" in first["miss_reason"] and "faster fabric" in first["miss_reason"]
        zh = messages.misses([(m["code"], m["params"]) for m in first["misses"]], "zh")
        assert zh is not None and "LoRA" in zh and "减少服务器数量" in zh and "MFU 1.8%" in zh


def test_idle_plans_are_not_ranked_nor_near_misses_while_a_sensible_plan_exists(client: TestClient) -> None:
    result = recommend(client, DEEPSEEK_LORA)
    options = result["options"]
    assert options and all(_sensible(o) for o in options)
    # one server: micro-batch 1, whose allocator pool fits the card (micro-batch 2 read 78.5 GiB reserved of 75.05 and
    # gives way at the same cost: search.py POOL_RELIEF_MAX_SLOWDOWN), above the idle floor (MFU 5 %)
    assert any(o["nodes"] == 1 and o["performance"]["mfu"] > 0.05 for o in options)
    assert all(m["code"] != "inefficient" for o in result["near_misses"] for m in o["misses"])


def test_sensible_plans_are_untouched(client: TestClient) -> None:
    """Llama-3.1-70B continued pretraining (MFU ~0.41 on 4 H100 servers): still ranked, nothing marked idle."""
    body = {
        "model": {"preset": "llama-3.1-70b"},
        "task": "full_finetune",
        "tokens": 5e10,
        "seq_len": 8192,
        "constraints": {"deadline_days": 30},
    }
    result = recommend(client, body)
    assert result["options"] and all(_sensible(o) for o in result["options"])
    assert result["options"][0]["nodes"] == 4
