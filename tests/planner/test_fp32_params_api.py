"""plan.fp32_params in a request (fp32 parameters under torch.autocast, memory.states FP32_PARAM_BYTES): /estimate
sizes it and echoes it, a workload autocast does not run is a 422 naming the field (worded in English and Chinese),
and /recommend refuses it as levers_unsupported: no stack this service launches runs it (app/planner/levers.py)."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

BODY = {
    "model": {"preset": "llama-2-7b"},
    "task": "full_finetune",
    "seq_len": 4096,
    "hardware": {"gpu": "a100-80g-sxm", "gpus_per_node": 8},
}
PLAN = {"dp": 8, "zero_stage": 3, "recompute": "full", "micro_batch": 4}


def test_estimate_sizes_and_echoes_fp32_params(client: TestClient) -> None:
    plain = client.post("/estimate", json=BODY | {"plan": PLAN})
    fp32 = client.post("/estimate", json=BODY | {"plan": PLAN | {"fp32_params": True}})
    assert plain.status_code == 200 and fp32.status_code == 200, fp32.text
    assert plain.json()["plan"]["fp32_params"] is False and fp32.json()["plan"]["fp32_params"] is True
    gib = lambda r, part: r.json()["memory"]["per_gpu_gib"][part]  # noqa: E731
    # Llama 2 7B over 8 GPUs: fp32 shards and gathered units (memory.states `_fp32_gathered`), no master copy
    assert gib(fp32, "weights") > gib(plain, "weights") and gib(fp32, "optimizer") < gib(plain, "optimizer")
    assert gib(fp32, "activations") > gib(plain, "activations")  # the fp32 checkpoints


@pytest.mark.parametrize(
    "change",
    [{"task": "qlora"}, {"task": "inference"}, {"precision": "fp32"}],
    ids=["qlora", "inference", "fp32"],
)
def test_estimate_refuses_fp32_params_where_autocast_does_not_run(client: TestClient, change: dict) -> None:
    response = client.post("/estimate", json=BODY | change | {"plan": PLAN | {"fp32_params": True}})
    assert response.status_code == 422, response.text
    (error,) = response.json()["errors"]
    assert error["field"] == "plan.fp32_params" and error["type"] == "fp32_params_task", error
    assert "fp32_params keeps the parameters in fp32" in error["message"]


def test_the_refusal_is_worded_in_chinese() -> None:
    from app.estimator.error_words import render

    text = render("fp32_params_task", {"precision": "fp32", "task": "lora"}, "zh")
    assert text.startswith("fp32_params 在 torch.autocast") and "fp32" in text and "lora" in text


def test_estimate_refuses_a_value_that_is_not_a_boolean(client: TestClient) -> None:
    response = client.post("/estimate", json=BODY | {"plan": PLAN | {"fp32_params": "sometimes"}})
    assert response.status_code == 422, response.text
    assert any(e["field"].endswith("fp32_params") for e in response.json()["errors"]), response.text


def test_recommend_refuses_fp32_params_as_no_stack_runs_it(client: TestClient) -> None:
    body = {"model": {"preset": "llama-3.2-1b"}, "task": "full_finetune", "tokens": 1e8}
    response = client.post("/recommend", json=body | {"plan": {"fp32_params": True}})
    assert response.status_code == 422, response.text
    (error,) = response.json()["errors"]
    assert error["field"].startswith("plan"), error
    assert "fp32_params: none" in error["message"], error
