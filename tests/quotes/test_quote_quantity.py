"""A quote's quantity is whole servers (or one of a card SKU's card counts): the 422 for a quantity that does
not rent the plan's GPUs names the whole number of units that does, or, where the SKU cannot rent exactly the
plan's GPUs, a SKU of the same GPU that can and the fewest units of this one that carry it; worded from a code
and its figures in app/text/messages.py (QUOTE_CHECKS), in English and Chinese. Before: "quote quantity 0.5"."""

from __future__ import annotations

import string
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.catalog.repository import get_sku_by_slug
from app.text import messages
from tests.quotes.helpers import h100_body

CUSTOMER = {"name": "Li Wei", "company": "", "email": "li.wei@example.com"}
WORKLOAD = {"model": {"preset": "llama-3.1-8b"}, "task": "lora", "tokens": 1e8}


def _error(client: TestClient, **body: Any) -> dict[str, Any]:
    response = client.post("/quotes", json={"term": "monthly", "customer": CUSTOMER, **body})
    assert response.status_code == 422, response.text
    return next(e for e in response.json()["errors"] if e["field"] == "quantity")


def test_a_plan_that_does_not_fill_a_server_names_the_whole_server_that_carries_it(client: TestClient) -> None:
    # Before: "quote quantity 0.5" (a 4-GPU plan on an 8-GPU server).
    error = _error(client, sku_id="a100-80g-sxm-8x", quantity=2, plan={"dp": 4}, workload=WORKLOAD)
    assert "0.5" not in error["message"]
    assert error["type"] == "quantity_replan"  # the seed catalog rents no 4 A100 80GB SXM on their own
    params = error["params"]
    assert (params["gpus"], params["rented"], params["fits_quantity"], params["fits_gpus"], params["idle"]) == (
        4,
        16,
        1,
        8,
        4,
    )
    assert "quantity 1 (8 GPUs) carries the plan with 4 GPUs idle: re-plan for 8 GPUs" in error["message"]


def test_a_plan_beyond_what_a_card_sku_rents_says_so(client: TestClient) -> None:
    error = _error(client, sku_id="a100-40g-pcie-card", quantity=4, plan={"dp": 8}, workload=WORKLOAD)
    assert error["type"] == "quantity_unrentable" and error["params"]["most_gpus"] == 4


def test_a_plan_of_whole_servers_names_the_servers(client: TestClient) -> None:
    error = _error(client, sku_id="h100-80g-sxm-8x", quantity=1, plan={"dp": 16}, workload=WORKLOAD)
    assert error["type"] == "quantity_servers" and error["params"]["servers"] == 2
    assert error["message"].endswith("quote quantity 2")


def test_a_plan_no_sku_rents_exactly_names_the_fewest_servers_that_carry_it(client: TestClient) -> None:
    error = _error(client, sku_id="h100-80g-sxm-8x", quantity=1, plan={"dp": 12}, workload=WORKLOAD)
    assert error["type"] == "quantity_replan"
    assert (error["params"]["fits_quantity"], error["params"]["fits_gpus"], error["params"]["idle"]) == (2, 16, 4)
    assert "quantity 2 (16 GPUs) carries the plan with 4 GPUs idle" in error["message"]


def test_a_card_sku_names_the_cards(client: TestClient) -> None:
    error = _error(client, sku_id="a100-40g-pcie-card", quantity=1, plan={"dp": 2}, workload=WORKLOAD)
    assert error["type"] == "quantity_cards" and error["message"].endswith("quote quantity 2")


def _fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def test_both_languages_word_the_same_codes_with_the_same_fields() -> None:
    en, zh = messages.QUOTE_CHECKS["en"], messages.QUOTE_CHECKS["zh"]
    assert set(en) == set(zh)
    assert {k: _fields(v) for k, v in en.items()} == {k: _fields(v) for k, v in zh.items()}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_refusal_reads_in_each_language_from_its_code(client: TestClient, lang: str) -> None:
    error = _error(client, sku_id="h100-80g-sxm-8x", quantity=1, plan={"dp": 16}, workload=WORKLOAD)
    text = messages.quote_check(error["type"], error["params"], lang)
    assert ("quote quantity 2" if lang == "en" else "请报价数量 2") in text


@pytest.mark.parametrize("quantity", [3, 8])
@pytest.mark.parametrize("with_plan", [True, False])
def test_a_card_count_the_sku_does_not_rent_is_refused_with_its_code(
    client: TestClient, db: Session, quantity: int, with_plan: bool
) -> None:
    """Before: with a plan of that many GPUs, a bare {"detail": "a100-40g-pcie-card is rented with [1, 2, 4]
    cards, not 3"}, no errors[] (field and code) as every other quote 422 carries."""
    sku = get_sku_by_slug(db, "a100-40g-pcie-card")
    assert sku is not None and quantity not in sku.card_counts
    plan = {"plan": {"dp": quantity}, "workload": WORKLOAD} if with_plan else {}
    error = _error(client, sku_id=sku.slug, quantity=quantity, **plan)
    assert error["type"] == "quantity_card_counts"
    assert error["params"] == {"sku": sku.slug, "quantity": quantity, "card_counts": sorted(sku.card_counts)}
    counts = ", ".join(map(str, sorted(sku.card_counts)))
    assert f"{sku.slug} is rented by the card within one server: {counts} cards, not {quantity}" in error["message"]
    zh = "、".join(map(str, sorted(sku.card_counts)))
    assert f"可租 {zh} 张卡，不能租 {quantity} 张" in messages.quote_check(error["type"], error["params"], "zh")


def test_a_plan_beyond_one_server_of_a_sku_without_a_fabric_is_not_told_to_quote_two(client: TestClient) -> None:
    """a100-80g-sxm-8x rents one server (no fabric joins two): 16 GPUs read "quote quantity 2", itself refused."""
    error = _error(client, sku_id="a100-80g-sxm-8x", quantity=1, plan={"dp": 16}, workload=WORKLOAD)
    assert error["type"] == "quantity_unrentable"
    assert (error["params"]["most_gpus"], error["params"]["gpus"]) == (8, 16)
    error = _error(client, sku_id="a100-80g-sxm-8x", quantity=2, plan={"dp": 16}, workload=WORKLOAD)
    assert error["type"] == "quantity_one_server"


def test_a_global_batch_that_does_not_split_over_the_plans_ranks_is_refused(client: TestClient) -> None:
    """DeepSpeed's `_batch_assertion` (train_batch = micro-batch × accumulation × world) and Megatron-LM refuse a
    ragged step at launch; /recommend never offers one (rejection batch_split). Before: issued (201)."""
    options = client.post("/recommend", json={**WORKLOAD, "task": "full_finetune", "tokens": 2e9}).json()["options"]
    body = next(o["quote"] for o in options if o["quote"]["plan"]["dp"] * o["quote"]["plan"]["micro_batch"] > 1)
    step = body["plan"]["dp"] * body["plan"]["micro_batch"]
    body["plan"]["global_batch"] = 10 * step + 1
    response = client.post("/quotes", json={**body, "customer": CUSTOMER})
    assert response.status_code == 422, response.text
    error = response.json()["errors"][0]
    assert (error["field"], error["type"]) == ("plan.global_batch", "batch_split")
    assert f"{10 * step + 1} sequences" in error["message"] and f"{10 * step} or {11 * step}" in error["message"]
    assert f"{10 * step} 或 {11 * step}" in messages.quote_check("batch_split", error["params"], "zh")
    body["plan"]["global_batch"] = 10 * step
    assert client.post("/quotes", json={**body, "customer": CUSTOMER}).status_code == 201


def test_an_options_quote_is_for_the_region_it_was_found_in(client: TestClient) -> None:
    """With regions asked for, the option's quote carried no region and the printed quote listed every region the
    SKU is offered in."""
    found = client.post("/recommend", json={**WORKLOAD, "constraints": {"regions": ["los-angeles"]}}).json()
    option = found["options"][0]
    assert option["sku"]["region"] == option["quote"]["region"] == "los-angeles"
    created = client.post("/quotes", json={**option["quote"], "customer": CUSTOMER})
    assert created.status_code == 201, created.text
    printed = client.get(created.json()["links"]["print"])
    assert printed.status_code == 200
    assert "<dt>Regions</dt><dd>Los Angeles</dd>" in printed.text  # in the page's region words
    elsewhere = client.post("/quotes", json={**option["quote"], "region": "mars", "customer": CUSTOMER})
    assert elsewhere.status_code == 422
    (error,) = elsewhere.json()["errors"]
    assert error["field"] == "region" and "not 'mars'" in error["message"]


POOLS = {"prefill": {"tp": 2, "replicas": 2, "gpus": 4}, "decode": {"tp": 4, "replicas": 1, "gpus": 4}}


@pytest.mark.parametrize(
    ("changes", "field", "code"),
    [
        ({"sku_id": "a100-40g-pcie-card", "addons": [], "plan": {"pools": POOLS}}, "plan.pools", "pools_cards"),
        (
            {"plan": {"pools": {**POOLS, "decode": {"tp": 16, "replicas": 1, "gpus": 16}}}},
            "plan.pools.decode.tp",
            "pool_tp_spans",
        ),
        ({"plan": {"pools": POOLS}}, "plan.pools", "pools_not_serving"),  # a training workload
    ],
)
def test_a_disaggregated_plan_the_sku_cannot_run_is_refused_with_a_code(
    client: TestClient, changes: dict[str, Any], field: str, code: str
) -> None:
    """Before: a bare value_error, its English only; now a code of the quote checks' catalog, worded in Chinese too."""
    response = client.post("/quotes", json=h100_body(**changes))
    assert response.status_code == 422, response.text
    error = response.json()["errors"][0]
    assert (error["field"], error["type"]) == (field, code)
    assert error["message"] == messages.quote_check(code, error["params"])
    assert messages.quote_check(code, error["params"], "zh") != error["message"]
