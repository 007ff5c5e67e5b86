"""The printed quote states only what the estimator computed: with tokens but no time (a model the estimator could
not size, kept unchecked) it says the time was not estimated, never "no token count"; a plan that states no parallel
degrees is not worded as a layout ("one GPU, no parallelism"). Before, both were printed (review R3)."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy.orm import Session
from sqlalchemy.orm.attributes import flag_modified

from app.quotes.models import Quote
from tests.quotes.helpers import h100_body


def _printed_with(client: TestClient, db: Session, plan: dict[str, Any]) -> str:
    response = client.post("/quotes", json=h100_body())
    assert response.status_code == 201, response.text
    quote = db.query(Quote).filter_by(public_id=response.json()["id"]).one()
    quote.snapshot = quote.snapshot | {"plan": plan}  # as kept for a workload the estimator could not size
    flag_modified(quote, "snapshot")
    db.flush()
    return client.get(response.json()["links"]["print"] + "?lang=en").text


def test_tokens_without_a_time_are_not_called_no_token_count(client: TestClient, db: Session) -> None:
    page = _printed_with(client, db, {"tp": 8, "pp": 2, "dp": 1, "zero_stage": 1})
    assert "Training tokens" in page
    assert "no token count" not in page
    assert "not estimated: the estimator cannot size this model on the SKU quoted" in page


def test_a_plan_without_degrees_is_not_worded_as_one_gpu(client: TestClient, db: Session) -> None:
    page = _printed_with(client, db, {"zero_stage": 3})
    assert "one GPU, no parallelism" not in page
