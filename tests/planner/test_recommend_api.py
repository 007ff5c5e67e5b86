"""POST /recommend on the seeded catalog, on SQLite and PostgreSQL: the article's scenarios
(the company's article and its seed catalog), the response contract, and catalog changes taking effect at once."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.catalog.repository import get_sku_by_slug
from tests.factories import new_price, recommend as _recommend, units_available

GPT3_175B = {
    "name": "gpt3-175b",
    "layers": 96,
    "hidden": 12288,
    "heads": 96,
    "ffn": 49152,
    "vocab": 50257,
    "mlp": "gelu",
}  # Brown et al. 2020, Table 2.1


def test_7b_lora_fits_one_a100_40g_card_and_it_is_the_cheapest(client: TestClient) -> None:
    for objective in ("cheapest", "balanced"):
        result = _recommend(
            client, model={"preset": "llama-2-7b"}, task="lora", tokens=1e8, constraints={"objective": objective}
        )
        top = result["options"][0]
        assert (top["sku"]["id"], top["total_gpus"]) == ("a100-40g-pcie-card", 1)
        assert top["cost"]["monthly_list"] == "2800.00"
        assert top["plan"]["dp"] == top["plan"]["tp"] == top["plan"]["pp"] == 1
        assert "no parallelism needed" in top["explanation"]


def test_annual_term_bills_twelve_discounted_months(client: TestClient) -> None:
    result = _recommend(
        client,
        model={"preset": "llama-2-7b"},
        task="lora",
        tokens=1e8,
        constraints={"objective": "cheapest", "term": "annual"},
    )
    cost = result["options"][0]["cost"]
    assert (cost["monthly_effective"], cost["months"], cost["job_total"]) == ("2240.00", 12, "26880.00")


def test_7b_full_finetune_needs_several_gpus_with_sharding(client: TestClient) -> None:
    result = _recommend(client, model={"preset": "llama-2-7b"}, task="full_finetune", tokens=1e9)
    for option in result["options"]:
        assert option["total_gpus"] > 1
        assert option["memory"]["fits"]
    top = result["options"][0]
    assert top["plan"]["zero_stage"] >= 1 or top["plan"]["tp"] * top["plan"]["pp"] > 1


def test_70b_full_finetune_fits_no_single_server_without_offload(client: TestClient) -> None:
    result = _recommend(
        client, model={"preset": "llama-2-70b"}, task="full_finetune", tokens=1e9, constraints={"limit": 50}
    )
    single = [o for o in result["options"] if o["nodes"] == 1]
    assert single, "one 8-GPU server with offload should still be offered"
    assert all(o["plan"]["offload"] != "none" for o in single)
    assert any(o["nodes"] > 1 and o["plan"]["offload"] == "none" for o in result["options"])
    rejected = {r["sku"]: r["reason"] for r in result["rejected"]}
    assert "does not fit" in rejected["a100-40g-pcie-card"]


def test_70b_qlora_fits_two_cards_on_a_host_whose_ram_is_known(client: TestClient) -> None:
    # ZeRO-3 over 2 × A100 40G fits the cards, but each rank loads the whole 4-bit model on the host first
    # (app/planner/stacks.py host_load): the card-rented SKU lists no host RAM, so it is offered on the condition
    # that the host has it (host_ram_unconfirmed), and two such cards on a host of 256 GiB fit
    result = _recommend(
        client, model={"preset": "llama-2-70b"}, task="qlora", tokens=1e8, constraints={"objective": "cheapest"}
    )
    top = result["options"][0]
    assert top["sku"]["id"] == "a100-40g-pcie-card"
    assert "host_ram_unconfirmed" in {w["code"] for w in top["warnings"]}
    body = {
        "model": {"preset": "llama-2-70b"},
        "task": "qlora",
        "hardware": {"gpu": "a100-40g-pcie", "gpus_per_node": 2, "host_ram_gib": 256},
        "plan": {"dp": 2, "zero_stage": 3, "recompute": "full"},
    }
    response = client.post("/estimate", json=body)
    assert response.status_code == 200, response.text
    memory = response.json()["memory"]
    assert memory["fits"] is True and 0 < memory["host_load_gib"] <= memory["host_ram_limit_gib"]


def test_175b_pretraining_in_90_days_needs_multi_node_h100_3d(client: TestClient) -> None:
    result = _recommend(
        client, model=GPT3_175B, task="pretrain", tokens=3e11, seq_len=2048, constraints={"deadline_days": 90}
    )
    assert result["options"], result["near_misses"]
    for option in result["options"]:
        assert option["sku"]["id"] == "h100-80g-sxm-8x"
        assert option["nodes"] > 1
        assert option["performance"]["time_to_train_hours"] <= 90 * 24
    top = result["options"][0]["plan"]
    assert top["tp"] > 1 and top["pp"] > 1 and top["dp"] > 1
    assert any(re.match(r"fits, but needs \d+\.\d days", m["miss_reason"]) for m in result["near_misses"])


def test_pretraining_on_the_10gbe_a100_servers_is_flagged(client: TestClient) -> None:
    result = _recommend(
        client,
        model={"preset": "llama-2-7b"},
        task="pretrain",
        tokens=1e12,
        constraints={"gpu_types": ["a100-80g-sxm"]},
    )
    option = result["options"][0]
    assert option["sku"]["id"] == "a100-80g-sxm-8x" and option["nodes"] == 1
    warning = next(w for w in option["warnings"] if w["code"] == "single_server_only")
    # worded from the catalog's own network, not a fixed "10 GbE" (the PCIe card SKU lists "100 Mbps BGP")
    network = client.get("/catalog/skus").json()
    network = next(
        s for s in (network["items"] if isinstance(network, dict) else network) if s["id"] == "a100-80g-sxm-8x"
    )
    assert warning["params"] == {"sku": "a100-80g-sxm-8x", "network": network["network"]}
    assert network["network"] in warning["message"] and "10 GbE" not in warning["message"]


def test_options_carry_money_as_strings_and_launch_configs(client: TestClient) -> None:
    result = _recommend(client, model={"preset": "llama-2-7b"}, task="full_finetune", tokens=1e9)
    option = result["options"][0]
    for key in ("monthly_list", "monthly_effective", "job_total"):
        assert re.fullmatch(r"\d+\.\d{2}", option["cost"][key])
    assert set(option["launch"]) == {option["stack"]}
    launch = option["launch"][option["stack"]]
    plan = option["plan"]
    assert launch["world_size"] == option["total_gpus"] and launch["data_parallel_size"] == plan["dp"]
    assert result["assumptions"]
    assert result["pareto"]


def test_retired_sku_is_never_recommended(client: TestClient, db: Session) -> None:
    get_sku_by_slug(db, "a100-40g-pcie-card").status = "retired"
    db.flush()
    result = _recommend(client, model={"preset": "llama-2-7b"}, task="lora", tokens=1e8, constraints={"limit": 50})
    assert all(o["sku"]["id"] != "a100-40g-pcie-card" for o in result["options"])


def test_price_change_applies_to_the_next_request(client: TestClient, db: Session) -> None:
    new_price(db, "a100-40g-pcie-card", 250_000)
    result = _recommend(
        client, model={"preset": "llama-2-7b"}, task="lora", tokens=1e8, constraints={"objective": "cheapest"}
    )
    assert Decimal(result["options"][0]["cost"]["monthly_list"]) == Decimal("2500.00")


def test_budget_turns_options_into_near_misses(client: TestClient) -> None:
    result = _recommend(
        client,
        model={"preset": "llama-2-7b"},
        task="full_finetune",
        tokens=1e9,
        constraints={"max_monthly_budget": "20000"},
    )
    assert all(Decimal(o["cost"]["monthly_effective"]) <= 20000 for o in result["options"])
    assert any("budget 20000" in m["miss_reason"] for m in result["near_misses"])


def test_region_and_gpu_filters_reject_with_reasons(client: TestClient) -> None:
    result = _recommend(client, model={"preset": "llama-2-7b"}, task="lora", constraints={"regions": ["singapore"]})
    assert {o["sku"]["id"] for o in result["options"]} == {"h100-80g-sxm-8x"}
    reasons = {r["sku"]: r["reason"] for r in result["rejected"]}
    assert "not in singapore" in reasons["a100-40g-pcie-card"]


def test_bad_constraints_are_422_naming_the_field(client: TestClient) -> None:
    for body, field in [
        ({"model": {"preset": "llama-2-7b"}, "constraints": {"objective": "best"}}, "constraints.objective"),
        ({"model": {"preset": "llama-2-7b"}, "constraints": {"max_nodes": 0}}, "constraints.max_nodes"),
        (
            {"model": {"preset": "llama-2-7b"}, "constraints": {"max_monthly_budget": "-5"}},
            "constraints.max_monthly_budget",
        ),
        ({"model": {"params": 1e16}}, "model.params"),
    ]:
        response = client.post("/recommend", json=body)
        assert response.status_code == 422, body
        assert response.headers["content-type"].startswith("application/problem+json")
        assert field in {e["field"] for e in response.json()["errors"]}


def test_sku_with_no_units_is_a_capacity_near_miss_not_an_option(client: TestClient, db: Session) -> None:
    units_available(db, "a100-40g-pcie-card", "shenzhen", 0)
    result = _recommend(
        client, model={"preset": "llama-2-7b"}, task="lora", tokens=1e8, constraints={"objective": "cheapest"}
    )
    assert "a100-40g-pcie-card" not in {o["sku"]["id"] for o in result["options"]}
    others = {o["availability"]["status"] for o in result["options"]}
    assert others == {"not tracked"}
    miss = next(m for m in result["near_misses"] if m["sku"]["id"] == "a100-40g-pcie-card")
    assert miss["availability"] == {"region": "shenzhen", "free_units": 0, "from": None, "status": "unavailable"}
    assert [m["code"] for m in miss["misses"]] == ["capacity"]
    assert miss["misses"][0]["params"]["free_from"] is None and "does not have" in miss["miss_reason"]


def test_annual_total_is_a_year_at_the_annual_discount_whatever_the_term(client: TestClient) -> None:
    result = _recommend(client, model={"preset": "llama-2-7b"}, task="lora", constraints={"objective": "cheapest"})
    cost = result["options"][0]["cost"]
    assert (cost["term"], cost["monthly_effective"], cost["annual_total"]) == ("monthly", "2800.00", "26880.00")


def test_deadline_near_misses_come_closest_to_the_deadline_first(client: TestClient) -> None:
    # 70B pre-training on 1e12 tokens in 60 days: nothing meets it. The near misses used to come cheapest first
    # (356, 297, 187, 827, 154 days) and left out the fastest configuration, the one the deadline could move to.
    body = {"model": {"preset": "llama-3.1-70b"}, "task": "pretrain", "tokens": 1e12}
    result = _recommend(client, **body, constraints={"deadline_days": 60})
    assert not result["options"]
    days = [m["performance"]["time_to_train_hours"] / 24 for m in result["near_misses"]]
    assert days and days == sorted(days)
    fastest = _recommend(client, **body, constraints={"objective": "fastest", "limit": 1})["options"][0]
    assert days[0] == pytest.approx(fastest["performance"]["time_to_train_hours"] / 24)


def test_an_option_billing_more_months_than_a_quote_rents_is_a_near_miss(client: TestClient) -> None:
    # 70B pre-training on 2e12 tokens on two servers: 69 and 124 billed months were ranked, and their own quote
    # bodies got a bare 422 (months at most 60) from POST /quotes
    body = {"model": {"preset": "llama-3.1-70b"}, "task": "pretrain", "seq_len": 4096, "global_batch": 512}
    result = _recommend(client, **body, tokens=2e12, constraints={"max_nodes": 2})
    assert all(o["cost"]["months"] <= 60 for o in result["options"])
    long = [m for m in result["near_misses"] if m["cost"]["months"] > 60]
    assert long and all("more than the 60 a quote rents" in m["miss_reason"] for m in long)


def test_budget_only_near_misses_come_cheapest_first_even_with_a_deadline(client: TestClient) -> None:
    # 70B LoRA on 3e8 tokens, 5 days, 12,000 a month: every configuration meets the deadline and misses the budget;
    # they came fastest (dearest) first, 128 H100 at 1,600,000 a month leading, the 30,000 server cut off
    body = {"model": {"preset": "llama-3.1-70b"}, "task": "lora", "tokens": 3e8}
    result = _recommend(client, **body, constraints={"max_monthly_budget": "12000", "deadline_days": 5})
    misses = result["near_misses"]
    assert misses and all({m["code"] for m in o["misses"]} == {"budget"} for o in misses)
    costs = [Decimal(o["cost"]["monthly_effective"]) for o in misses]
    assert costs == sorted(costs)
    cheapest = _recommend(client, **body, constraints={"max_monthly_budget": "12000"})["near_misses"][0]
    assert costs[0] == Decimal(cheapest["cost"]["monthly_effective"])


def test_a_deadline_near_miss_reads_as_missing_it(client: TestClient) -> None:
    # 70B full fine-tune on 1e9 tokens in a day: the nearest miss needs 1.452 days, and read "needs 1 days
    # (deadline 1)", a plan meeting its deadline
    body = {"model": {"preset": "llama-3.1-70b"}, "task": "full_finetune", "tokens": 1e9}
    misses = _recommend(client, **body, constraints={"deadline_days": 1})["near_misses"]
    late = [m for m in misses if any(reason["code"] == "deadline" for reason in m["misses"])]
    assert late
    for miss in late:
        params = next(reason["params"] for reason in miss["misses"] if reason["code"] == "deadline")
        shown = re.search(r"needs (\d+\.\d) days \(deadline 1\)", miss["miss_reason"])
        assert shown is not None, miss["miss_reason"]
        assert params["days"] <= float(shown.group(1)) < params["days"] + 0.1
        assert float(shown.group(1)) > 1


def test_an_unknown_gpu_type_is_422_listing_the_catalogs(client: TestClient, db: Session) -> None:
    from app.catalog.repository import list_gpu_types

    for task in ("pretrain", "serving"):
        body = {
            "model": {"preset": "llama-3.1-8b"},
            "task": task,
            "constraints": {"gpu_types": ["h100-80g-sxm", "h300"]},
        }
        response = client.post("/recommend", json=body)
        assert response.status_code == 422, response.text
        (error,) = response.json()["errors"]
        assert error["field"] == "constraints.gpu_types"
        allowed = [gpu.slug for gpu in list_gpu_types(db)]
        assert allowed and error["params"] == {"unknown": ["h300"], "allowed": allowed}
        assert all(gpu in error["message"] for gpu in ["h300", *allowed])


def test_an_unknown_region_is_422_listing_the_catalogs(client: TestClient, db: Session) -> None:
    """A misspelt region rejected every SKU and answered 200 with no options, near misses or rejections."""
    from app.catalog.repository import list_skus

    allowed = sorted({region for sku in list_skus(db) for region in sku.regions})
    assert allowed
    for task in ("lora", "serving"):
        body = {"model": {"preset": "llama-3.1-8b"}, "task": task, "constraints": {"regions": [allowed[0], "mars"]}}
        response = client.post("/recommend", json=body)
        assert response.status_code == 422, response.text
        (error,) = response.json()["errors"]
        assert error["field"] == "constraints.regions"
        assert error["type"] == "unknown_region"
        assert error["params"] == {"unknown": ["mars"], "allowed": allowed}
        assert all(region in error["message"] for region in ["mars", *allowed])
    known = {"model": {"preset": "llama-3.1-8b"}, "task": "lora", "constraints": {"regions": [allowed[0]]}}
    assert client.post("/recommend", json=known).status_code == 200


def test_an_unknown_region_or_gpu_type_is_refused_in_chinese(client: TestClient) -> None:
    """Review R7-8: the wizard worded these refusals in Chinese, the API answered `Accept-Language: zh` in English."""
    from app.text import messages

    for constraints in ({"regions": ["mars"]}, {"gpu_types": ["h300"]}):
        body = {"model": {"preset": "llama-3.1-8b"}, "task": "lora", "constraints": constraints}
        response = client.post("/recommend", json=body, headers={"accept-language": "zh"})
        assert response.status_code == 422, response.text
        (error,) = response.json()["errors"]
        assert error["message"] == messages.unknown(error["type"], error["params"], "zh"), error
        assert response.json()["detail"] == f"{error['field']}: {error['message']}"


def test_experts_sharded_by_zero3_are_not_called_resident(client: TestClient) -> None:
    """ZeRO-3 / FSDP over several ranks shards the experts and gathers them block by block: "every MoE expert is
    resident on each GPU" was said of such plans too (Mixtral LoRA, ZeRO-3 on 4 cards)."""
    found = _recommend(client, model={"preset": "mixtral-8x7b"}, task="lora", tokens=1e8, constraints={"limit": 20})
    options = found["options"] + found["near_misses"]
    sharded = [o for o in options if o["plan"]["zero_stage"] == 3 and o["plan"]["dp"] > 1]
    assert sharded
    for option in sharded:
        assert "moe_experts_resident" not in {w["code"] for w in option["warnings"]}
    whole = [o for o in options if o["plan"]["zero_stage"] < 3 and o["plan"]["ep"] == 1]
    for option in whole:
        assert "moe_experts_resident" in {w["code"] for w in option["warnings"]}
