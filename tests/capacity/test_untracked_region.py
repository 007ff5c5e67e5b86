"""Review R7-1: a plan goes to the first allowed region with its units free, else one not tracked
(docs/api.md, app.planner.availability.placed), for serving deployments as for training plans: one place decides.
With singapore's three H100 servers all held by a quote and los-angeles not tracked, serving /recommend offered
nothing (a `capacity` near miss in singapore) while training placed the same SKU in los-angeles."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from tests.factories import recommend, sales_key, units_available

SKU = "h100-80g-sxm-8x"
SERVING = {
    "model": {"preset": "llama-3.1-70b"},
    "task": "serving",
    "serving": {
        "requests_per_s": 20,
        "input_tokens": 1000,
        "output_tokens": 300,
        "slo": {"ttft_ms": 500, "tpot_ms": 50, "percentile": "p99"},
    },
    "constraints": {"gpu_types": ["h100-80g-sxm"]},
}
TRAINING = {
    "model": {"preset": "llama-2-7b"},
    "task": "lora",
    "tokens": 1e8,
    "constraints": {"gpu_types": ["h100-80g-sxm"]},
}


@pytest.fixture(autouse=True)
def _singapore_held(client: TestClient, db: Session) -> None:
    """Singapore tracks 3 H100 servers and a sales tool's quote holds all 3; los-angeles is not tracked."""
    client.headers.update(sales_key(client, db))
    units_available(db, SKU, "singapore", 3)
    body = {"sku_id": SKU, "quantity": 3, "term": "monthly", "months": 12, "region": "singapore"}
    quote = client.post("/quotes", json={**body, "customer": {"name": "Ada", "email": "ada@example.org"}})
    assert quote.status_code == 201, quote.text


def _option(result: dict[str, Any]) -> dict[str, Any]:
    options = [o for o in result["options"] if o["sku"]["id"] == SKU]
    assert options, result["near_misses"]
    return options[0]


def test_training_places_the_plan_in_the_region_not_tracked(client: TestClient) -> None:
    option = _option(recommend(client, TRAINING))
    assert option["availability"]["region"] == "los-angeles"
    assert option["availability"]["status"] == "not tracked"


def test_serving_places_the_deployment_in_the_region_not_tracked(client: TestClient) -> None:
    option = _option(recommend(client, SERVING))
    assert option["availability"] == {
        "region": "los-angeles",
        "free_units": None,
        "from": None,
        "status": "not tracked",
    }
    assert option["sku"]["region"] == "los-angeles"
    assert option["quote"]["region"] == "los-angeles"
    assert "capacity" not in {m["code"] for m in option.get("misses", [])}


def test_serving_keeps_a_region_asked_for_short_as_a_capacity_near_miss(client: TestClient) -> None:
    body = {**SERVING, "constraints": {**SERVING["constraints"], "regions": ["singapore"]}}  # type: ignore[dict-item]
    result = recommend(client, body)
    assert SKU not in {o["sku"]["id"] for o in result["options"]}
    miss = next(m for m in result["near_misses"] if m["sku"]["id"] == SKU)
    assert miss["availability"]["region"] == "singapore"
    assert miss["misses"][-1]["code"] == "capacity"
