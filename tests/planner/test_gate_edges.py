"""The gate at its edges: an offload onto a server whose host RAM the catalog does not list, several servers of a
SKU rented by the card, and a near miss shorter than a day.

Before: /estimate answered fits: true for 120 GiB of offloaded states on the by-the-card A100 server (host RAM
unknown) and POST /quotes issued the quote; /estimate planned tp × pp across two "nodes" of that SKU over 100 Mbps;
a 0.38 h job missing a 0.01-day deadline read "fits, but needs 0 days"."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

CUSTOMER = {"name": "Li Wei", "company": "", "email": "li.wei@example.com"}
WORKLOAD: dict[str, Any] = {"model": {"preset": "llama-3.1-8b"}, "task": "full_finetune", "tokens": 1e8}
OFFLOAD_PLAN = {"dp": 4, "tp": 1, "pp": 1, "cp": 1, "zero_stage": 3, "offload": "optimizer", "micro_batch": 1}


def test_offload_onto_unknown_host_ram_does_not_fit_and_is_not_quoted(client: TestClient) -> None:
    hardware = {"sku": "a100-40g-pcie-card", "nodes": 1, "gpus_per_node": 4}
    response = client.post("/estimate", json={**WORKLOAD, "hardware": hardware, "plan": OFFLOAD_PLAN})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["memory"]["fits"] is False
    warning = next(w for w in body["warnings"] if w["code"] == "host_ram_unknown")
    assert warning["params"]["offload_gib"] > 50
    quote = {
        "sku_id": "a100-40g-pcie-card",
        "quantity": 4,
        "term": "monthly",
        "months": 1,
        "plan": {**OFFLOAD_PLAN, "global_batch": 128},
        "workload": WORKLOAD,
        "customer": CUSTOMER,
    }
    refused = client.post("/quotes", json=quote)
    assert refused.status_code == 422, refused.text
    assert "host RAM" in refused.text and "not known" in refused.text


def test_a_sku_rented_by_the_card_has_no_multi_server_estimate(client: TestClient) -> None:
    response = client.post("/estimate", json={**WORKLOAD, "hardware": {"sku": "a100-40g-pcie-card", "nodes": 2}})
    assert response.status_code == 422, response.text
    assert "hardware.nodes" in {e["field"] for e in response.json()["errors"]}
    one = client.post("/estimate", json={**WORKLOAD, "hardware": {"sku": "a100-40g-pcie-card", "nodes": 1}})
    assert one.status_code == 200, one.text


def test_a_near_miss_shorter_than_a_day_reads_in_hours(client: TestClient) -> None:
    body = {"model": {"preset": "llama-3.1-8b"}, "task": "lora", "tokens": 1e8, "constraints": {"deadline_days": 0.01}}
    response = client.post("/recommend", json=body)
    assert response.status_code == 200, response.text
    misses = response.json()["near_misses"]
    assert misses
    short = [m for m in misses if m["performance"]["time_to_train_hours"] < 24]
    assert short and all("hours" in m["miss_reason"] and "0 days" not in m["miss_reason"] for m in short)
