"""The planner's time budget per request (PLANNER_TIME_BUDGET_MS): checked before each SKU is started, so a large
catalog cannot hold a request for long; the response says when it stopped early and which SKUs it
did not search. The clock is a fake one that moves a second per reading, so no test depends on speed."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import count

import pytest
from fastapi.testclient import TestClient

from app.planner import budget
from app.planner.budget import set_time_budget

BODY = {"model": {"preset": "llama-2-7b"}, "task": "lora", "tokens": 1e8}


@pytest.fixture()
def one_second_per_reading(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    clock = count()
    monkeypatch.setattr(budget.time, "monotonic", lambda: float(next(clock)))
    yield
    set_time_budget(0)


def test_a_search_past_its_budget_stops_and_says_so(client: TestClient, one_second_per_reading: None) -> None:
    set_time_budget(1500)  # the first SKU is searched (1 s in), the next check (2 s) is past the budget
    answer = client.post("/recommend", json=BODY).json()
    skipped = [r["sku"] for r in answer["rejected"] if r["code"] == "time_budget"]
    all_skus = sorted(s["id"] for s in client.get("/catalog/skus").json())
    searched = {o["sku"]["id"] for o in answer["options"]}
    assert answer["stopped_early"] is True
    assert len(searched) == 1  # SKUs are started cheapest configuration first: the 1-card SKU
    assert skipped == sorted(set(all_skus) - searched)


def test_within_the_budget_every_sku_is_searched(client: TestClient) -> None:
    answer = client.post("/recommend", json=BODY).json()
    assert answer["stopped_early"] is False
    assert not [r for r in answer["rejected"] if r["code"] == "time_budget"]


SERVING = {
    "model": {"preset": "llama-2-7b"},
    "task": "serving",
    "serving": {"input_tokens": 512, "output_tokens": 128, "concurrency": 4},
}


def test_the_serving_search_keeps_the_same_budget(client: TestClient, one_second_per_reading: None) -> None:
    set_time_budget(1500)  # the same clock: the first SKU is searched, the SKUs after it are not
    answer = client.post("/recommend", json=SERVING).json()
    skipped = [r["sku"] for r in answer["rejected"] if r["code"] == "time_budget"]
    searched = {o["sku"]["id"] for o in answer["options"] + answer["near_misses"]}
    assert answer["stopped_early"] is True
    assert len(skipped) == len(client.get("/catalog/skus").json()) - 1
    assert searched and not searched & set(skipped)


def test_within_the_budget_the_serving_search_sees_every_sku(client: TestClient) -> None:
    answer = client.post("/recommend", json=SERVING).json()
    assert answer["stopped_early"] is False
    assert not [r for r in answer["rejected"] if r["code"] == "time_budget"]
