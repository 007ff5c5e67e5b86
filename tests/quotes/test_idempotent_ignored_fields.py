"""The idempotency fingerprint leaves out the plan fields the server ignores (docs/api.md "Quotes":
`plan.time_to_train_hours`, its range and `plan.summary` are accepted and ignored): a retry differing only there
replays the quote. Before, it was a 409 "already used with a different request body"."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.quotes.helpers import h100_body


@pytest.mark.parametrize(
    "ignored",
    [
        {"time_to_train_hours": 1.0},
        {"time_to_train_hours_range": [1.0, 2.0]},
        {"summary": "tensor parallel 1, runs on a single GPU in 1 hour"},
    ],
)
def test_a_retry_differing_only_in_an_ignored_field_replays(client: TestClient, ignored: dict[str, Any]) -> None:
    first = client.post("/quotes", json=h100_body(), headers={"Idempotency-Key": "ignored-1"})
    assert first.status_code == 201, first.text
    body = h100_body()
    body["plan"] = body["plan"] | ignored
    again = client.post("/quotes", json=body, headers={"Idempotency-Key": "ignored-1"})
    assert again.status_code == 200, again.text
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json()["id"] == first.json()["id"]


def test_a_retry_differing_in_a_kept_plan_field_is_still_a_conflict(client: TestClient) -> None:
    client.post("/quotes", json=h100_body(), headers={"Idempotency-Key": "ignored-2"})
    body = h100_body()
    body["plan"] = body["plan"] | {"zero_stage": 0}
    assert client.post("/quotes", json=body, headers={"Idempotency-Key": "ignored-2"}).status_code == 409
