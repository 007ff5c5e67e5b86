"""Prices in several currencies are converted into the request's before ranking, Pareto and budgets
(app.planner.market): the seeded catalog with one SKU repriced in USD, on SQLite and PostgreSQL.

The scenario of issue 18: an H100 server at USD 20,000 a month and an A100 server at CNY 30,000.
At USD 1 = CNY 7.10 the H100 costs CNY 142,000, so the A100 is the cheaper one; compared as bare
numbers (20,000 < 30,000) it would not be.
"""

from __future__ import annotations

import argparse
from decimal import Decimal

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.common.errors import InvalidInput
from app.planner.cli import add_recommend_command, format_table, request_from_args
from app.planner.service import run_recommend
from app.reference.service import set_exchange_rate
from tests.factories import new_price, recommend

SERVERS = ["a100-80g-sxm", "h100-80g-sxm"]  # the seeded a100-80g-sxm-8x (CNY 30,000) and h100-80g-sxm-8x
LORA_7B = {"model": {"preset": "llama-2-7b"}, "task": "lora", "tokens": 1e8}  # fits one server of either


@pytest.fixture()
def h100_in_usd(db: Session) -> None:
    new_price(db, "h100-80g-sxm-8x", 2_000_000, currency="USD")


def _recommend(client: TestClient, **constraints: object) -> dict:
    body = LORA_7B | {"constraints": {"gpu_types": SERVERS, "max_nodes": 1, "limit": 10} | constraints}
    return recommend(client, body)


def _by_sku(options: list[dict]) -> dict[str, dict]:
    return {o["sku"]["id"]: o for o in options}


def test_usd_20000_ranks_above_cny_30000_once_converted(client: TestClient, db: Session, h100_in_usd: None) -> None:
    set_exchange_rate(db, base="USD", quote="CNY", rate=Decimal("7.10"), set_by="test")
    result = _recommend(client, objective="cheapest")
    assert [o["sku"]["id"] for o in result["options"]] == ["a100-80g-sxm-8x", "h100-80g-sxm-8x"]
    assert result["currency"] == "CNY"
    h100 = _by_sku(result["options"])["h100-80g-sxm-8x"]
    # the quote bills the SKU's own currency; the comparison is in the request's
    assert (h100["cost"]["currency"], h100["cost"]["monthly_list"]) == ("USD", "20000.00")
    converted = h100["cost"]["converted"]
    assert (converted["currency"], converted["rate"], converted["monthly_list"]) == ("CNY", "7.1", "142000.00")
    assert _by_sku(result["options"])["a100-80g-sxm-8x"]["cost"]["converted"] is None
    assert [(p["sku"], p["cost"]) for p in result["pareto"]][0] == ("a100-80g-sxm-8x", "30000.00")


def test_budget_applies_to_the_converted_price(client: TestClient, db: Session, h100_in_usd: None) -> None:
    set_exchange_rate(db, base="USD", quote="CNY", rate=Decimal("7.10"), set_by="test")
    result = _recommend(client, max_monthly_budget="100000.00")
    assert [o["sku"]["id"] for o in result["options"]] == ["a100-80g-sxm-8x"]
    miss = _by_sku(result["near_misses"])["h100-80g-sxm-8x"]
    assert miss["miss_reason"] == "fits, but costs 20000.00 USD (142000.00 CNY) a month (budget 100000.00 CNY)"


def test_a_budget_in_usd_converts_the_cny_prices(client: TestClient, db: Session, h100_in_usd: None) -> None:
    set_exchange_rate(db, base="USD", quote="CNY", rate=Decimal("7.10"), set_by="test")
    result = _recommend(client, currency="usd", max_monthly_budget="10000.00")
    assert result["currency"] == "USD"
    a100 = _by_sku(result["options"])["a100-80g-sxm-8x"]
    assert a100["cost"]["converted"]["monthly_list"] == "4225.35"  # 30,000 / 7.10, to the cent
    assert [o["sku"]["id"] for o in result["near_misses"]] == ["h100-80g-sxm-8x"]


def test_without_an_exchange_rate_the_offer_is_rejected_not_misranked(client: TestClient, h100_in_usd: None) -> None:
    result = _recommend(client, objective="cheapest")
    assert [o["sku"]["id"] for o in result["options"]] == ["a100-80g-sxm-8x"]
    rejected = {r["sku"]: r for r in result["rejected"]}
    assert rejected["h100-80g-sxm-8x"]["code"] == "exchange_rate"
    assert "no exchange rate from USD to CNY" in rejected["h100-80g-sxm-8x"]["reason"]


def test_serving_ranks_and_budgets_the_converted_price(client: TestClient, db: Session, h100_in_usd: None) -> None:
    set_exchange_rate(db, base="USD", quote="CNY", rate=Decimal("7.10"), set_by="test")
    body = {
        "model": {"preset": "llama-2-7b"},
        "task": "serving",
        "serving": {"input_tokens": 512, "output_tokens": 128, "concurrency": 4},
        "constraints": {"gpu_types": SERVERS, "max_nodes": 1, "max_monthly_budget": "100000.00"},
    }
    response = client.post("/recommend", json=body)
    assert response.status_code == 200, response.text
    result = response.json()
    assert "h100-80g-sxm-8x" not in [o["sku"]["id"] for o in result["options"]]
    assert "h100-80g-sxm-8x" in [o["sku"]["id"] for o in result["near_misses"]]


def test_an_unknown_currency_is_a_422_naming_the_field(client: TestClient) -> None:
    response = client.post("/recommend", json=LORA_7B | {"constraints": {"currency": "XYZ"}})
    assert response.status_code == 422
    assert "constraints.currency" in response.text


def test_the_command_line_compares_in_the_currency_it_is_given(db: Session, h100_in_usd: None) -> None:
    set_exchange_rate(db, base="USD", quote="CNY", rate=Decimal("7.10"), set_by="test")
    parser = argparse.ArgumentParser()
    add_recommend_command(parser.add_subparsers())
    args = parser.parse_args(
        ["recommend", "--preset", "llama-2-7b", "--task", "lora", "--tokens", "1e8", "--objective", "cheapest"]
        + ["--gpu", "a100-80g-sxm", "--gpu", "h100-80g-sxm", "--max-nodes", "1", "--currency", "USD"]
    )
    table = format_table(run_recommend(db, request_from_args(args)))
    assert "30000.00 CNY (4225.35 USD)" in table
    assert table.index("a100-80g-sxm-8x") < table.index("h100-80g-sxm-8x")


def test_the_command_line_table_shows_warnings_and_hours_under_a_day(db: Session) -> None:
    # the table had no warnings column (term_longer_than_job showed only with --json) and read "0.0" days
    parser = argparse.ArgumentParser()
    add_recommend_command(parser.add_subparsers())
    args = parser.parse_args(
        ["recommend", "--preset", "llama-3.1-8b", "--task", "lora", "--tokens", "5e7", "--term", "annual"]
    )
    table = format_table(run_recommend(db, request_from_args(args)))
    header, first = table.splitlines()[:2]
    assert "warnings" in header and "term_longer_than_job" in first
    assert " h " in first + " " and "0.0 days" not in table


@pytest.mark.parametrize("task", ["lora", "serving"])
def test_a_currency_no_price_converts_into_is_422_naming_those_that_do(client: TestClient, task: str) -> None:
    """Review R12: `"currency": "XXX"` answered 200 with nothing but every SKU rejected with an operator's command.
    With no exchange rate set, the seeded catalog compares in CNY alone."""
    body = {"model": {"preset": "llama-3.1-8b"}, "task": task, "constraints": {"currency": "XXX"}}
    response = client.post("/recommend", json=body)
    assert response.status_code == 422, response.text
    (error,) = response.json()["errors"]
    assert (error["field"], error["type"]) == ("constraints.currency", "unknown_currency")
    assert error["params"] == {"unknown": ["XXX"], "allowed": ["CNY"]}
    assert "XXX" in error["message"] and "CNY" in error["message"]


def test_a_currency_a_rate_converts_into_is_compared_in(client: TestClient, db: Session) -> None:
    set_exchange_rate(db, base="USD", quote="CNY", rate=Decimal("7.10"), set_by="test")
    assert recommend(client, LORA_7B | {"constraints": {"currency": "USD"}})["currency"] == "USD"


def test_the_comparable_currencies_are_worked_out_only_for_a_currency_refused(
    db: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before, load_market worked out every currency some price converts into on each /recommend (a rate for each
    currency the rates name, from each listed one), though only a refused currency's 422 names them: now the market
    converts each offer's price and no more, and the refusal works them out from the rates it keeps."""
    from app.planner.market import load_market
    from app.planner.service import check_currency
    from app.reference.service import ExchangeRates

    set_exchange_rate(db, base="USD", quote="CNY", rate=Decimal("7.10"), set_by="test")
    calls: list[tuple[str, str]] = []
    rate = ExchangeRates.rate

    def counted(self: ExchangeRates, source: str, target: str) -> Decimal | None:
        calls.append((source, target))
        return rate(self, source, target)

    monkeypatch.setattr(ExchangeRates, "rate", counted)
    market = load_market(db, "USD")
    assert len(calls) == len(market.offers)  # one conversion an offer: its price into the request's currency
    check_currency("USD", market)
    assert len(calls) == len(market.offers)  # a currency prices convert into: nothing more to work out
    refused = load_market(db, "XXX")
    with pytest.raises(InvalidInput) as caught:
        check_currency("XXX", refused)
    assert caught.value.errors[0]["params"] == {"unknown": ["XXX"], "allowed": ["CNY", "USD"]}
