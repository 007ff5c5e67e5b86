"""A disaggregated serving quote carries its traffic (docs/api.md "Quotes"): the pools are simulated at the peak with
the planner's own pool configs (app/quotes/pool_load.py, after app/planner/serving_disagg.py), a pool that does not
carry it is a 422 `slo_not_met` on `plan.pools.<pool>.replicas` naming the replicas that do, and the quote freezes
`plan.serving` with the pools' figures. The plan's `summary` is the server's, on serving and training quotes alike.
Before, 1 + 1 replicas were quoted for traffic /recommend sized at several of each, `plan.serving` was null and the
client's summary was kept verbatim."""

from __future__ import annotations

import re
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.quotes.models import Quote
from app.text import messages
from tests.api.test_disaggregated_quotes import CUSTOMER, disaggregated_option

ONE_EACH = {"prefill": {"tp": 4, "replicas": 1, "gpus": 4}, "decode": {"tp": 4, "replicas": 1, "gpus": 4}}
TRAINING = {
    "model": {"preset": "llama-3.1-70b"},
    "task": "full_finetune",
    "tokens": 2e9,
    "constraints": {"term": "monthly"},
}


def _body(option: dict[str, Any], **plan: Any) -> dict[str, Any]:
    body = option["quote"] | {"customer": CUSTOMER}
    return body | {"plan": body["plan"] | plan}


def test_pools_below_the_traffic_are_refused_naming_the_replicas_that_carry_it(client: TestClient, db: Session) -> None:
    option = disaggregated_option(client)
    pools = option["serving"]["pools"]
    assert pools["prefill"]["replicas"] > 1  # the traffic needs more than one prefill replica
    response = client.post("/quotes", json=_body(option, pools=ONE_EACH) | {"quantity": 2})
    assert response.status_code == 422, response.text
    errors = {error["field"]: error for error in response.json()["errors"]}
    assert "plan.pools.prefill.replicas" in errors, response.text
    for name, error in errors.items():
        assert name in ("plan.pools.prefill.replicas", "plan.pools.decode.replicas")
        pool = name.split(".")[2]
        assert error["type"] == "slo_not_met"
        params = error["params"]
        assert params["pool"] == pool and params["replicas"] == 1
        # the fewest replicas of TP 4 that carry the peak; the option fills its servers, so it runs at least as many
        assert 1 < params["needed"] <= pools[pool]["replicas"]
        assert f"plan.pools.{pool}.replicas {params['needed']}" in error["message"]
    assert db.scalar(select(func.count()).select_from(Quote)) == 0


def test_the_pool_refusal_is_worded_in_chinese(client: TestClient) -> None:
    option = disaggregated_option(client)
    response = client.post(
        "/quotes", json=_body(option, pools=ONE_EACH) | {"quantity": 2}, headers={"Accept-Language": "zh-CN"}
    )
    assert response.status_code == 422, response.text
    params = response.json()["errors"][0]["params"]
    assert "prefill 池" in messages.quote_check("slo_not_met", params, "zh") or "decode 池" in messages.quote_check(
        "slo_not_met", params, "zh"
    )


def test_the_option_as_is_freezes_the_pools_figures_and_the_servers_summary(client: TestClient) -> None:
    option = disaggregated_option(client)
    response = client.post("/quotes", json=_body(option, summary="1 replica on a single GPU"))
    assert response.status_code == 201, response.text
    plan = response.json()["plan"]
    assert plan["summary"] == option["plan"]["summary"]  # the planner's words, the client's dropped
    serving = plan["serving"]
    assert serving["meets_slo"] is True
    pools = option["serving"]["pools"]
    for name in ("prefill", "decode"):
        frozen = serving["pools"][name]
        assert (frozen["tp"], frozen["replicas"]) == (pools[name]["tp"], pools[name]["replicas"])
        assert frozen["utilization"]["peak"] == pytest.approx(pools[name]["utilization"]["peak"], rel=1e-3)


def test_a_training_quote_keeps_the_servers_summary_not_the_clients(client: TestClient) -> None:
    option = client.post("/recommend", json=TRAINING).json()["options"][0]
    body = option["quote"] | {"customer": CUSTOMER}
    body["plan"] = body["plan"] | {"summary": "tensor parallel 1, runs on a single GPU in 1 hour"}
    response = client.post("/quotes", json=body)
    assert response.status_code == 201, response.text
    assert response.json()["plan"]["summary"] == option["plan"]["summary"]


def test_the_prefill_pools_target_reads_as_the_other_figures(client: TestClient) -> None:
    """The prefill pool's target is the TTFT less the KV transfer (app.estimator.serving_disagg.prefill_config): before,
    its message read "TTFT ≤ 192.698 ms" and its params carried every float digit; now a tenth of a ms, as a TPOT."""
    option = disaggregated_option(client)
    body = _body(option, pools=ONE_EACH) | {"quantity": 2}
    serving = body["workload"]["serving"]
    body["workload"] = body["workload"] | {"serving": serving | {"slo": serving["slo"] | {"ttft_ms": 200}}}
    for lang in ("en", "zh"):
        response = client.post("/quotes", json=body, headers={"Accept-Language": lang})
        assert response.status_code == 422, response.text
        errors = {error["field"]: error for error in response.json()["errors"]}
        prefill = errors["plan.pools.prefill.replicas"]
        target = prefill["params"]["slo_ttft_ms"]
        assert 190 < target < 200 and target == round(target, 1), target
        unit = "ms" if lang == "en" else "毫秒"  # no English unit in a Chinese sentence (review R3-6)
        assert f"TTFT ≤ {target:g} {unit}" in prefill["message"], prefill["message"]
        assert re.search(rf"TTFT ≤ \d+(\.\d)? {unit}", prefill["message"]), prefill["message"]


def test_pools_for_a_workload_without_its_traffic_are_refused_as_unchecked(client: TestClient, db: Session) -> None:
    """/recommend sizes pools only for an offered load (`disaggregated_load`); before, the same pools quoted for a
    workload without `requests_per_s` were issued unchecked, with no `plan.serving` frozen. Now a 422 naming the
    field to state, worded in both languages."""
    option = disaggregated_option(client)
    body = _body(option)
    serving = {k: v for k, v in body["workload"]["serving"].items() if k != "requests_per_s"}
    body["workload"] = body["workload"] | {"serving": serving}
    response = client.post("/quotes", json=body)
    assert response.status_code == 422, response.text
    [error] = response.json()["errors"]
    assert (error["field"], error["type"]) == ("workload.serving.requests_per_s", "pools_no_load")
    assert error["message"] == messages.quote_check("pools_no_load", error["params"])
    assert "requests_per_s" in error["message"]
    zh = messages.quote_check("pools_no_load", error["params"], "zh")
    assert zh != error["message"] and "资源池" in zh
    assert db.scalar(select(func.count()).select_from(Quote)) == 0


def test_the_refusal_follows_the_requests_language(client: TestClient) -> None:
    """A refusal's `message` and `detail` are worded from its code and figures in the request's language
    (Accept-Language, as the pages and the quote's documents choose theirs: app.text.i18n.negotiate); English without
    one. Before, a Chinese request got the English message, and only messages.quote_check(…, "zh") worded it."""
    option = disaggregated_option(client)
    body = _body(option, pools=ONE_EACH) | {"quantity": 2}
    chinese = client.post("/quotes", json=body, headers={"Accept-Language": "zh-CN,zh;q=0.9"})
    english = client.post("/quotes", json=body)
    assert chinese.status_code == english.status_code == 422, chinese.text
    assert "Accept-Language" in chinese.headers.get("vary", ""), chinese.headers
    zh, en = chinese.json()["errors"][0], english.json()["errors"][0]
    assert (zh["field"], zh["type"], zh["params"]) == (en["field"], en["type"], en["params"])
    assert zh["message"] == messages.quote_check(zh["type"], zh["params"], "zh") != en["message"]
    assert en["message"] == messages.quote_check(en["type"], en["params"])
    worded = "; ".join(f"{e['field']}: {e['message']}" for e in chinese.json()["errors"])
    assert chinese.json()["detail"] == worded and "池" in worded
    pooled = _body(option)
    pooled["workload"] = pooled["workload"] | {"model": {"preset": "llama-3.1-405b"}, "precision": "bf16"}
    unfit = client.post("/quotes", json=pooled, headers={"Accept-Language": "zh"}).json()["errors"][0]
    assert unfit["type"] == "plan_not_fit" and unfit["message"].startswith("h100-80g-sxm-8x 放不下："), unfit
