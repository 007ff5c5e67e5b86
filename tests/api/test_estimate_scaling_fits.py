"""POST /estimate/scaling says of each point whether one replica's plan fits in memory, by the gate POST /estimate
applies, and shows no throughput for a point that does not (review R3: Llama 3.1 70B full fine-tuning at 762 tok/s on
one H100, 405B pretraining at 55 tok/s on one A100 40GB)."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from app.text import messages

SEVENTY_B = {"model": {"preset": "llama-3.1-70b"}, "task": "full_finetune", "tokens": 2e9, "gpu": "h100-80g-sxm"}


def _scaling(client: TestClient, **body) -> dict:
    response = client.post("/estimate/scaling", json=body)
    assert response.status_code == 200, response.text
    return response.json()


def _estimate_fits(client: TestClient, row: dict, body: dict, plan: dict) -> bool:
    """/estimate's verdict on the point's cluster and plan (data parallel over the row's GPUs)."""
    hardware = {"gpu": body["gpu"], "gpus_per_node": row["gpus"] // row["nodes"], "nodes": row["nodes"]}
    request = {k: v for k, v in body.items() if k != "gpu"} | {"hardware": hardware, "plan": plan | {"dp": row["gpus"]}}
    response = client.post("/estimate", json=request)
    assert response.status_code == 200, response.text
    return bool(response.json()["memory"]["fits"])


@pytest.mark.parametrize(
    "body",
    [SEVENTY_B, {"model": {"preset": "llama-3.1-405b"}, "task": "pretrain", "tokens": 2e9, "gpu": "a100-40g-pcie"}],
)
def test_plain_data_parallelism_of_a_replica_too_large_shows_no_speed(client: TestClient, body: dict) -> None:
    # ZeRO paper §3.1 (Rajbhandari et al. 2020): mixed-precision Adam holds 16 B/param, 1.03 TiB for 70.55e9
    # parameters; plain data parallelism (ZeRO 0) replicates it on every GPU, so no row of the table can run it
    result = _scaling(client, **body)
    rows = result["rows"]
    assert rows and all(row["fits"] is False for row in rows)
    assert all(row["tokens_per_s"] is None and row["speedup"] is None for row in rows)
    assert all(row["efficiency"] is None for row in rows)
    assert rows[0]["per_gpu_gib"] > 16 * 70e9 / 2**30 > rows[0]["limit_gib"]
    (warning,) = [w for w in result["warnings"] if w["code"] == "scaling_none_fits"]
    assert warning["message"] == messages.warning("scaling_none_fits", warning["params"])
    assert "不" in messages.warning("scaling_none_fits", warning["params"], "zh")


def test_sharded_states_fit_from_some_gpu_count_and_the_warning_names_it(client: TestClient) -> None:
    """ZeRO-3 over N GPUs holds 16 B × 70.55e9 / N of states: one H100 cannot, enough of them can."""
    plan = {"zero_stage": 3, "recompute": "full"}
    result = _scaling(client, **SEVENTY_B, plan=plan)
    rows = result["rows"]
    fitting = [row for row in rows if row["fits"]]
    assert fitting and not rows[0]["fits"]
    assert all(row["tokens_per_s"] is not None and row["speedup"] is not None for row in fitting)
    assert all(row["tokens_per_s"] is None for row in rows if not row["fits"])
    fewest = min(row["gpus"] for row in fitting)
    (warning,) = [w for w in result["warnings"] if w["code"] == "scaling_rows_unfit"]
    assert warning["params"]["fit_gpus"] == fewest
    assert f"{fewest:,}" in warning["message"]
    assert f"{fewest:,}" in messages.warning("scaling_rows_unfit", warning["params"], "zh")
    # the same gate as POST /estimate on the point's cluster: the fewest that fit, and the row below them
    below = max((row["gpus"] for row in rows if row["gpus"] < fewest), default=0)
    first = next(row for row in fitting if row["gpus"] == fewest)
    assert _estimate_fits(client, first, SEVENTY_B, plan) is True
    if below:
        row = next(row for row in rows if row["gpus"] == below)
        assert _estimate_fits(client, row, SEVENTY_B, plan) is False


def test_a_replica_that_fits_everywhere_has_no_warning(client: TestClient) -> None:
    body = {"model": {"preset": "llama-3.1-8b"}, "task": "lora", "seq_len": 1024, "gpu": "h100-80g-sxm"}
    result = _scaling(client, **body)
    assert all(row["fits"] for row in result["rows"])
    assert all(row["tokens_per_s"] > 0 for row in result["rows"])
    assert not [w for w in result["warnings"] if w["code"].startswith("scaling_")]


def test_a_replica_larger_than_the_smallest_multi_node_row_is_refused_by_its_size(client: TestClient) -> None:
    """Review R6-7: tp 8 × pp 16 is a replica of 128 GPUs, and the table's multi-node rows start at 2 servers of 8
    (app/estimator/scaling.py NODE_COUNTS): it answered "plan uses 0 GPUs but the cluster has 16". The 422 names the
    plan and says how many GPUs one replica needs and what the table covers."""
    body = {"model": {"preset": "llama-3.1-405b"}, "task": "full_finetune", "seq_len": 8192, "gpu": "h100-80g-sxm"}
    response = client.post("/estimate/scaling", json=body | {"plan": {"tp": 8, "pp": 16}})
    assert response.status_code == 422, response.text
    (error,) = response.json()["errors"]
    assert error["field"] == "plan" and error["type"] == "scaling_replica"
    assert error["params"] | {"replica": 128, "smallest": 16, "largest": 128} == error["params"]
    assert "runs on 128 GPUs" in error["message"] and "from 16 GPUs (2 servers of 8) to 128" in error["message"]
