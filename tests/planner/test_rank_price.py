"""The pure functions that bill, rank and pick the Pareto front (app.planner.offers, app.planner.recommend),
called directly with hand-built options and asserted exactly (tests/planner/test_ranking.py checks the
same rules through POST /recommend)."""

from __future__ import annotations

from dataclasses import replace
from datetime import date
from decimal import Decimal
from types import SimpleNamespace
from typing import Any

import pytest

from app.estimator.hardware import get_gpu
from app.planner.availability import Availability
from app.planner.offers import Configuration, Cost, Offer, billed_months, price
from app.planner.option import Option
from app.planner.ranking import pareto, rank
from tests import factories

H100 = get_gpu("h100-80g-sxm")


def _offer(sku_id: str = "h100-card", *, rental_unit: str = "card", discount_bp: dict[str, int] | None = None) -> Offer:
    return factories.offer(
        sku_id,
        H100.id,
        unit=rental_unit,
        card_counts=(1, 2, 4, 8),
        intra_node_link="nvlink4",
        inter_node_fabric="ib-ndr-400",
        host_ram_gib=2048,
        discount_bp=discount_bp if discount_bp is not None else {"monthly": 0, "annual": 2000},
    )


def _option(sku_id: str, cost: str, hours: float | None, *, gpus: int = 1, tokens_per_s: float = 1.0) -> Option:
    total = Decimal(cost)
    return Option(
        offer=_offer(sku_id),
        config=Configuration(gpus, 1),
        region="shenzhen",
        evaluated=SimpleNamespace(  # type: ignore[arg-type]
            throughput=tokens_per_s,
            plan=SimpleNamespace(offload="none"),
            performance=SimpleNamespace(performance=SimpleNamespace(time_to_train_hours_range=None)),
        ),
        cost=Cost("CNY", "monthly", gpus, total, total, 1 if hours else None, total if hours else None, total * 12),
        hours=hours,
        warnings=[],
        launch={},
        availability=Availability("shenzhen", gpus, date(2027, 1, 4), None, None),
    )


def _ids(options: list[Option]) -> list[str]:
    return [o.offer.sku_id for o in options]


# ---- billing -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("hours", "term", "months"),
    [
        (1.0, "monthly", 1),  # a short job still bills one month
        (30 * 24.0, "monthly", 1),  # exactly one 30-day month
        (30 * 24.0 + 1, "monthly", 2),  # an hour over starts the next month
        (41 * 24.0, "monthly", 2),  # the docstring's 41-day job
        (41 * 24.0, "annual", 12),  # ... on the annual term: one whole year
        (13 * 30 * 24.0, "annual", 24),  # 13 months on the annual term: two years
    ],
)
def test_billed_months_are_whole_months_of_the_term(hours: float, term: Any, months: int) -> None:
    assert billed_months(hours, term) == months


def test_price_per_card_on_the_monthly_term() -> None:
    cost = price(_offer(), Configuration(2, 1), "monthly", 41 * 24.0)
    assert (cost.units, cost.monthly_list, cost.monthly_effective) == (2, Decimal("2000.00"), Decimal("2000.00"))
    assert (cost.months, cost.job_total) == (2, Decimal("4000.00"))
    assert cost.annual_total == Decimal("19200.00")  # 2000 less 20 % = 1600 a month, × 12
    assert (cost.used_hours, cost.billed_hours) == (41 * 24.0, 2 * 30 * 24.0)


def test_price_per_node_on_the_annual_term() -> None:
    cost = price(_offer(rental_unit="node"), Configuration(8, 2), "annual", 100.0)
    assert cost.units == 2  # two servers, whatever their cards
    assert (cost.monthly_list, cost.monthly_effective) == (Decimal("2000.00"), Decimal("1600.00"))
    assert (cost.months, cost.job_total, cost.annual_total) == (12, Decimal("19200.00"), Decimal("19200.00"))


def test_price_without_tokens_is_per_month_only() -> None:
    cost = price(_offer(), Configuration(1, 1), "monthly", None)
    assert (cost.months, cost.job_total, cost.billed_hours) == (None, None, None)
    assert cost.monthly_effective == Decimal("1000.00")


def test_price_rounds_half_up_to_the_currency_minor_unit() -> None:
    offer = replace(_offer(discount_bp={"monthly": 5000}), unit_monthly_list=Decimal("0.05"))
    cost = price(offer, Configuration(1, 1), "monthly", 1.0)
    # the discount, 0.025, rounds half up to 0.03 (banker's rounding would take 0.02 off): 0.02 to pay
    assert cost.monthly_effective == Decimal("0.02")
    assert cost.job_total == Decimal("0.02")


# ---- ranking -----------------------------------------------------------------------------------


def _three() -> list[Option]:
    return [_option("a", "100", 50.0), _option("b", "80", 100.0), _option("c", "80", 90.0)]


def test_cheapest_orders_by_cost_then_time() -> None:
    ranked = rank(_three(), "cheapest")
    assert _ids(ranked) == ["c", "b", "a"]
    assert [o.rank for o in ranked] == [1, 2, 3]


def test_fastest_orders_by_time_then_cost() -> None:
    assert _ids(rank(_three(), "fastest")) == ["a", "c", "b"]


def test_balanced_orders_by_cost_times_time() -> None:
    # 100 × 50 = 5000 < 80 × 90 = 7200 < 80 × 100 = 8000
    assert _ids(rank(_three(), "balanced")) == ["a", "c", "b"]


def test_balanced_with_a_deadline_orders_by_cost() -> None:
    assert _ids(rank(_three(), "balanced", deadline=True)) == ["c", "b", "a"]


def test_balanced_leaves_out_options_over_four_times_the_cheapest() -> None:
    options = [_option("cheap", "100", 200.0), _option("dear", "401", 1.0), _option("edge", "400", 30.0)]
    assert _ids(rank(options, "balanced")) == ["edge", "cheap"]  # 400 × 30 = 12000 < 100 × 200 = 20000


def test_balanced_counts_no_time_below_a_day() -> None:
    # both finish within a day, so only the price counts: 50 × 24 < 100 × 24
    assert _ids(rank([_option("quick", "100", 5.0), _option("slow", "50", 20.0)], "balanced")) == ["slow", "quick"]


def test_ties_break_by_sku_then_gpu_count() -> None:
    options = [_option("b", "100", 10.0), _option("a", "100", 10.0, gpus=2), _option("a", "100", 10.0)]
    ranked = rank(options, "cheapest")
    assert [(o.offer.sku_id, o.config.gpus) for o in ranked] == [("a", 1), ("a", 2), ("b", 1)]


def test_without_tokens_time_is_seconds_per_million_tokens() -> None:
    slow, fast = _option("slow", "100", None, tokens_per_s=1000.0), _option("fast", "200", None, tokens_per_s=4000.0)
    assert (slow.sort_time, fast.sort_time) == (1000.0, 250.0)
    assert (slow.sort_cost, fast.sort_cost) == (Decimal("100"), Decimal("200"))  # the monthly price
    assert _ids(rank([slow, fast], "balanced")) == ["fast", "slow"]  # 200 × 250 < 100 × 1000


def test_rank_of_nothing_is_empty() -> None:
    assert rank([], "balanced") == []


# ---- Pareto front ------------------------------------------------------------------------------


def test_pareto_keeps_options_that_save_a_fifth_of_the_time_and_stops_within_a_day() -> None:
    options = [
        _option("p1", "100", 500.0),
        _option("p2", "150", 450.0),  # saves 10 %: not worth its price
        _option("p3", "200", 300.0),  # saves 40 %
        _option("p4", "300", 20.0),  # finishes within a day: the last point
        _option("p5", "400", 10.0),  # faster still, but money buys no meaningful time past p4
    ]
    assert _ids(pareto(options)) == ["p1", "p3", "p4"]


def test_pareto_drops_dominated_options() -> None:
    options = [_option("a", "100", 100.0), _option("b", "200", 150.0), _option("c", "300", 50.0)]
    assert _ids(pareto(options)) == ["a", "c"]  # b costs more than a and takes longer


def test_pareto_without_tokens_keeps_every_faster_option() -> None:
    options = [
        _option("a", "100", None, tokens_per_s=1000.0),
        _option("b", "110", None, tokens_per_s=1050.0),  # barely faster, still on the front
        _option("c", "300", None, tokens_per_s=900.0),  # dearer and slower
    ]
    assert _ids(pareto(options)) == ["a", "b"]


def test_the_annual_figure_is_what_an_annual_quote_of_the_same_units_totals() -> None:
    """An option's figures and a quote's line follow one rule (app.common.money.discounted_line): 17.5 % off the line's
    subtotal, 4 cards × 12 months at 2,799.99 = 134,399.52, less 23,519.916 rounded once to 23,519.92. (The quote
    once rounded the unit price first, 2,309.99175 to 2,309.99, for 110,879.52.)"""
    offer = replace(_offer(discount_bp={"monthly": 0, "annual": 1750}), unit_monthly_list=Decimal("2799.99"))
    annual = price(offer, Configuration(4, 1), "annual", 100.0)
    assert annual.job_total == Decimal("110879.60")
    assert price(offer, Configuration(4, 1), "monthly", 100.0).annual_total == annual.job_total
