"""Right-sizing: balanced never leads with a cluster several times the price of one that does the
job in reasonable time; billing shows what is used against what is billed (docs/estimator.md "Ranking")."""

from __future__ import annotations

from decimal import Decimal

from fastapi.testclient import TestClient

from app.planner.ranking import BALANCED_COST_CAP, MEANINGFUL_HOURS, PARETO_MIN_SAVING, RIGHT_SIZE_RATIO
from tests.factories import recommend as _recommend


def _cost(option: dict) -> Decimal:
    return Decimal(option["cost"]["job_total"])


def test_with_a_deadline_the_cheapest_option_meeting_it_leads(client: TestClient) -> None:
    # Before: 8B LoRA on 50M tokens, 7-day deadline, ranked 4 cards (CNY 11,200) above 1 card (2,800, 2.8 h).
    result = _recommend(
        client, model={"preset": "llama-3.1-8b"}, task="lora", tokens=5e7, constraints={"deadline_days": 7}
    )
    options = result["options"]
    top = options[0]
    assert (top["sku"]["id"], top["total_gpus"], top["cost"]["job_total"]) == ("a100-40g-pcie-card", 1, "2800.00")
    costs = [(_cost(o), o["performance"]["time_to_train_hours"]) for o in options]
    assert costs == sorted(costs)


def test_without_a_deadline_no_top_three_option_costs_more_than_four_times_the_cheapest(client: TestClient) -> None:
    # Before: 72B LoRA ranked 64 H100 (CNY 800,000, 17 min) second.
    for body in (
        {"model": {"preset": "qwen2.5-72b"}, "task": "lora", "tokens": 1e8},
        {"model": {"preset": "llama-3.1-8b"}, "task": "lora", "tokens": 5e7},
        {"model": {"preset": "llama-2-70b"}, "task": "full_finetune", "tokens": 1e9},
        {"model": {"preset": "llama-3.1-405b"}, "task": "full_finetune", "tokens": 1e9},
    ):
        result = _recommend(client, **body, constraints={"limit": 50})
        options = result["options"]
        assert options, body
        cheapest = min(_cost(o) for o in options)
        assert all(_cost(o) <= BALANCED_COST_CAP * cheapest for o in options[:3]), body
        fastest = _recommend(client, **body, constraints={"limit": 50, "objective": "fastest"})["options"]
        assert min(_cost(o) for o in fastest) == cheapest, "balanced hides no cheaper option than fastest lists"


def test_billed_and_used_hours_and_the_term_warning(client: TestClient) -> None:
    # Before: the annual term billed 12 months for a 26-hour job without a word.
    result = _recommend(
        client,
        model={"preset": "llama-2-7b"},
        task="lora",
        tokens=1e9,
        constraints={"objective": "cheapest", "term": "annual"},
    )
    option = result["options"][0]
    cost = option["cost"]
    assert cost["billed_hours"] == 12 * 30 * 24
    assert cost["used_hours"] == option["performance"]["time_to_train_hours"]
    warning = {w["code"]: w["message"] for w in option["warnings"]}["term_longer_than_job"]
    assert "12 months (8,640 h)" in warning and f"{cost['used_hours']:,.1f} h" in warning


def test_a_job_using_most_of_its_billed_month_carries_no_term_warning(client: TestClient) -> None:
    result = _recommend(
        client,
        model={"preset": "llama-2-7b"},
        task="lora",
        tokens=1e10,
        constraints={"objective": "cheapest", "limit": 50},
    )
    for option in result["options"]:
        cost = option["cost"]
        warned = "term_longer_than_job" in {w["code"] for w in option["warnings"]}
        assert warned == (cost["billed_hours"] > 2 * cost["used_hours"])
    assert any(o["cost"]["billed_hours"] <= 2 * o["cost"]["used_hours"] for o in result["options"])


def test_pareto_stops_where_more_money_buys_no_meaningful_time(client: TestClient) -> None:
    result = _recommend(client, model={"preset": "llama-2-70b"}, task="full_finetune", tokens=1e9)
    front = result["pareto"]
    assert front
    costs = [Decimal(p["cost"]) for p in front]
    assert costs == sorted(costs)
    for before, after in zip(front, front[1:], strict=False):
        assert before["hours"] > MEANINGFUL_HOURS
        assert after["hours"] <= before["hours"] * (1 - PARETO_MIN_SAVING)


def test_balanced_right_sizes_a_job_that_fits_in_the_billed_term(client: TestClient) -> None:
    """Before: 405B on 1B tokens ranked 14 H100 servers (CNY 1,400,000, 17 h) above 4 servers
    (CNY 400,000, 111 h): both bill one month, and the 4 servers finish inside it."""
    options = _recommend(client, model={"preset": "llama-3.1-405b"}, task="full_finetune", tokens=1e9)["options"]
    top = options[0]
    assert (top["total_gpus"], top["cost"]["job_total"]) == (32, "400000.00")
    assert top["performance"]["time_to_train_hours"] <= top["cost"]["billed_hours"]
    for dearer in options[1:]:
        assert _cost(dearer) >= RIGHT_SIZE_RATIO * _cost(top)


def _buys_nothing(option: dict, cheaper: tuple[Decimal, float]) -> bool:
    """A `cheaper` (cost, hours) that finishes as soon, or within a day: `option`'s extra money buys no usable
    time."""
    cost, hours = cheaper
    as_soon = hours <= option["performance"]["time_to_train_hours"]
    return cost < _cost(option) and (as_soon or hours <= MEANINGFUL_HOURS)


def test_balanced_lists_no_option_that_buys_no_usable_time(client: TestClient) -> None:
    """Before: 8B LoRA on 50M tokens on the annual term listed 2 and 4 cards (CNY 53,760 and 107,520, 1.6 and
    0.8 h) after 1 card (CNY 26,880, 3.1 h): the one card finishes within the day and the term bills a year."""
    for constraints in ({"term": "annual"}, {"term": "annual", "deadline_days": 7}, {"deadline_days": 7}):
        body = {"model": {"preset": "llama-3.1-8b"}, "task": "lora", "tokens": 5e7, "constraints": constraints}
        options = _recommend(client, **body)["options"]
        assert [(o["rank"], o["sku"]["id"], o["total_gpus"]) for o in options] == [(1, "a100-40g-pcie-card", 1)]
    for body in (
        {"model": {"preset": "llama-3.1-8b"}, "task": "lora", "tokens": 5e9, "constraints": {"deadline_days": 7}},
        {"model": {"preset": "llama-2-70b"}, "task": "full_finetune", "tokens": 1e9, "constraints": {"limit": 50}},
    ):
        result = _recommend(client, **body)
        options = result["options"]
        assert len(options) > 1 and [o["rank"] for o in options] == list(range(1, len(options) + 1))
        references = [(_cost(o), o["performance"]["time_to_train_hours"]) for o in options]
        references += [(Decimal(p["cost"]), p["hours"]) for p in result["pareto"]]
        for option in options[1:]:
            assert not any(_buys_nothing(option, other) for other in references), option["plan"]["summary"]


def test_an_estimate_inside_the_deadline_whose_range_is_not_says_so(client: TestClient) -> None:
    """8B LoRA on 5B tokens, 7-day deadline: two cards take 6.3 days by the estimate, up to 8.5 by its range."""
    options = _recommend(
        client, model={"preset": "llama-3.1-8b"}, task="lora", tokens=5e9, constraints={"deadline_days": 7}
    )["options"]
    for option in options:
        hours = option["performance"]["time_to_train_hours"]
        slow = option["performance"]["time_to_train_hours_range"][1]
        warnings = {w["code"]: w["message"] for w in option["warnings"]}
        assert ("deadline_within_range" in warnings) == (hours <= 7 * 24 < slow)
    leader = options[0]
    message = {w["code"]: w["message"] for w in leader["warnings"]}["deadline_within_range"]
    hours, slow = leader["performance"]["time_to_train_hours"], leader["performance"]["time_to_train_hours_range"][1]
    assert f"{hours / 24:,.1f} days" in message and f"{slow / 24:,.1f} days" in message and "7-day" in message


def test_a_twin_whose_range_spills_into_another_month_does_not_right_size_and_says_so(client: TestClient) -> None:
    # 70B full fine-tune on 2e10 tokens (servers joined over one 400 Gb/s port): 16 H100 for about 695 h bills one
    # month at its estimate but two at the slow end of its range. It used to lead balanced with no word, the 32-GPU
    # option that finishes in about 200 h at twice the price ranked last as "oversized", and an 8-GPU option at the
    # same price and twice the time came second. Over the add-on's 8 x 400 Gb/s the same twin is 16 H100 on 2.5e10
    # tokens: about 611 h, up to 820 h.
    result = _recommend(
        client,
        model={"preset": "llama-3.1-70b"},
        task="full_finetune",
        tokens=2.5e10,
        constraints={"max_nodes": 16},
    )
    options = result["options"]
    for option in options:
        span = option["performance"]["time_to_train_hours_range"]
        months = option["cost"]["months"]
        warned = {w["code"]: w for w in option["warnings"]}
        if span[1] > months * 720:
            warning = warned["billing_within_range"]
            assert warning["params"]["slow_months"] > months
            assert Decimal(warning["params"]["slow_total"]) > Decimal(option["cost"]["job_total"])
        else:
            assert "billing_within_range" not in warned
    # no option shown after the leader costs as much as another shown and takes longer
    for i, option in enumerate(options[1:], start=1):
        for other in options[:i]:
            same = Decimal(other["cost"]["job_total"]) == Decimal(option["cost"]["job_total"])
            assert not (
                same and other["performance"]["time_to_train_hours"] < option["performance"]["time_to_train_hours"]
            )
    # the leader finishes inside what it bills even at its range's slow end; the twin that may not is still shown
    leader = options[0]
    assert leader["performance"]["time_to_train_hours_range"][1] <= leader["cost"]["months"] * 720
    assert any("billing_within_range" in {w["code"] for w in o["warnings"]} for o in options[1:])
