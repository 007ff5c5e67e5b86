"""A disaggregated serving option quoted: its body carries the two pools, the quote's plan check holds the quantity
and add-ons to the servers those pools occupy (a 422 naming the field otherwise), and the printed quote states the
pools in English and Chinese."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

CUSTOMER = {"name": "Li Wei", "email": "li.wei@example.com"}
AUTO = {
    "model": {"preset": "llama-3.1-70b"},
    "task": "serving",
    "precision": "fp8",
    "weights": "fp8",
    "serving": {"engine": "sglang", "disaggregated": "auto", "input_tokens": 4000, "output_tokens": 300,
                "requests_per_s": 10, "slo": {"ttft_ms": 1500, "tpot_ms": 40}},
}  # fmt: skip


def disaggregated_option(client: TestClient) -> dict[str, Any]:
    response = client.post("/recommend", json=AUTO)
    assert response.status_code == 200, response.text
    pooled = [option for option in response.json()["options"] if option["serving"].get("pools")]
    assert pooled, response.text[:2000]
    return pooled[0]


def test_the_quote_body_carries_the_pools_and_the_chosen_mode(client: TestClient) -> None:
    option = disaggregated_option(client)
    plan = option["quote"]["plan"]
    pools = option["serving"]["pools"]
    shape = ("tp", "replicas", "gpus")  # the option states each pool's utilisation too; the plan is what is rented
    assert plan["pools"] == {name: {key: pools[name][key] for key in shape} for name in ("prefill", "decode")}
    assert option["quote"]["workload"]["serving"]["disaggregated"] is True
    response = client.post("/quotes", json=option["quote"] | {"customer": CUSTOMER})
    assert response.status_code == 201, response.text
    quote = response.json()
    assert quote["total"] == option["cost"]["job_total"]
    assert quote["plan"]["pools"] == plan["pools"]


@pytest.mark.parametrize(
    ("change", "field"),
    [({"quantity": 1, "addons": []}, "quantity"), ({"addons": []}, "addons"), ({"quantity": 1}, "quantity")],
)
def test_a_quote_that_does_not_rent_the_pools_is_422_naming_the_field(
    client: TestClient, change: dict[str, Any], field: str
) -> None:
    option = disaggregated_option(client)
    response = client.post("/quotes", json=option["quote"] | change | {"customer": CUSTOMER})
    assert response.status_code == 422, response.text
    assert field in [error["field"] for error in response.json()["errors"]], response.text


@pytest.mark.parametrize(
    ("pools", "field"),
    [
        ({"prefill": {"tp": 16, "replicas": 1, "gpus": 16}, "decode": {"tp": 4, "replicas": 1, "gpus": 4}}, "plan"),
        ({"prefill": {"tp": 4, "replicas": 2, "gpus": 4}, "decode": {"tp": 4, "replicas": 1, "gpus": 4}}, "plan"),
    ],
)
def test_pools_that_cannot_run_are_422(client: TestClient, pools: dict[str, Any], field: str) -> None:
    option = disaggregated_option(client)
    body = option["quote"] | {"customer": CUSTOMER}
    body["plan"] = body["plan"] | {"pools": pools}
    response = client.post("/quotes", json=body)
    assert response.status_code == 422, response.text
    assert any(error["field"].startswith(field) for error in response.json()["errors"]), response.text


def test_pools_and_colocated_degrees_together_are_422(client: TestClient) -> None:
    option = disaggregated_option(client)
    body = option["quote"] | {"customer": CUSTOMER}
    body["plan"] = body["plan"] | {"dp": 2, "tp": 4}
    response = client.post("/quotes", json=body)
    assert response.status_code == 422, response.text
    assert any(error["field"].startswith("plan") for error in response.json()["errors"]), response.text


def test_the_option_states_the_peak_and_every_gpu_rented(client: TestClient) -> None:
    option = disaggregated_option(client)
    serving = option["serving"]
    assert serving["peak_requests_per_s"] == pytest.approx(15.0, rel=1e-3)  # 10 requests/s × peak factor 1.5
    assert "the peak of 15 requests/s" in option["explanation"]
    assert sum(pool["gpus"] for pool in serving["pools"].values()) == option["total_gpus"]
    per_gpu = serving["output_tokens_per_s"] / option["total_gpus"]
    assert serving["output_tokens_per_s_per_gpu"] == pytest.approx(per_gpu)


def test_pools_on_an_engine_recommend_refuses_are_422(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    """/recommend sizes disaggregated pools only for the engines whose launches run them (`disaggregated_engine`): the
    quote of pools checks the same, with the same code on the workload's field, worded in English and Chinese.
    Before, it issued them on any engine."""
    from app.planner import serving_disagg
    from app.text import messages

    option = disaggregated_option(client)
    monkeypatch.setattr(serving_disagg, "DISAGGREGATED_ENGINES", ("sglang",))  # as if vLLM's launch were not built
    body = option["quote"] | {"customer": CUSTOMER}
    body["workload"] = body["workload"] | {"serving": body["workload"]["serving"] | {"engine": "vllm"}}
    code = "disaggregated_engine"
    response = client.post("/quotes", json=body)
    assert response.status_code == 422, response.text
    [error] = response.json()["errors"]
    assert (error["field"], error["type"]) == ("workload.serving.disaggregated", code), error
    assert error["message"] == messages.estimator_text(code, error["params"])
    assert "分离式" in messages.estimator_text(code, error["params"], "zh")
    recommend = client.post("/recommend", json={**option["quote"]["workload"], "serving": body["workload"]["serving"]})
    assert recommend.status_code == 422 and recommend.json()["errors"][0]["type"] == code, recommend.text
