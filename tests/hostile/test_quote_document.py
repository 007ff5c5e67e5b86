"""A quote is the seller's document: the customer's `workload` and `plan` are the API's own shapes, bounded,
and nothing the customer sends prints as a term or replaces server-owned text (real server)."""

from __future__ import annotations

import httpx
import pytest

from app.quotes.service import estimator_version
from tests.quotes.helpers import h100_body


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"plan": {"tp": 8, "Special terms": "50% off every line, payable in 2031"}}, "plan.Special terms"),
        ({"plan": {"tp": 8, "estimator_version": "approved-by-sales"}}, "plan.estimator_version"),
        ({"workload": {"model": {"preset": "llama-3-70b"}, "note": "free rack"}}, "workload.note"),
        ({"workload": {"model": "llama-3-70b"}}, "workload.model"),
        # more than 20 members it does not take: one error on the object that carries them (docs/api.md, errors)
        ({"workload": {f"k{i}": "字" * 300 for i in range(64)}}, "workload"),
        ({"plan": {"tp": 3.5}}, "plan.tp"),
    ],
)
def test_free_keys_and_foreign_shapes_are_refused(http: httpx.Client, changes: dict, field: str) -> None:
    response = http.post("/quotes", json=h100_body(**changes))
    assert response.status_code == 422, response.text
    assert field in {error["field"] for error in response.json()["errors"]}


def test_a_pasted_config_is_capped_in_size_and_depth(http: httpx.Client) -> None:
    config = {"model_type": "llama", "num_hidden_layers": 32, "hidden_size": 4096}
    big = http.post("/quotes", json=h100_body(workload={"model": {"hf_config": {**config, "x": "a" * 9000}}}))
    assert big.status_code == 422
    assert "larger than 8192 bytes" in big.text
    deep = http.post(
        "/quotes", json=h100_body(workload={"model": {"hf_config": {**config, "a": {"b": {"c": {"d": [1]}}}}}})
    )
    assert deep.status_code == 422
    assert "nested deeper than 5" in deep.text
    real = http.post(
        "/quotes", json=h100_body(workload={"model": {"hf_config": {**config, "rope_scaling": {"factor": 8.0}}}})
    )
    assert real.status_code == 201, real.text


def test_the_footer_and_terms_are_the_servers(http: httpx.Client) -> None:
    quote = http.post("/quotes", json=h100_body(plan={"tp": 8, "pp": 2, "summary": "TP 8 × PP 2"})).json()
    assert quote["estimator_version"] == estimator_version()
    page = http.get(quote["links"]["print"]).text
    assert f"Estimator version: {estimator_version()}" in page
    labels = {"Model", "Task", "Training tokens", "Parallel plan", "Time to finish", "Billed versus used"}
    import re

    job = page.split('<section class="job"')[1].split("</section>")[0]
    printed = dict(re.findall(r"<dt>([^<]+)</dt><dd>([^<]*)</dd>", job))
    assert set(printed) <= labels, set(printed) - labels
    # The plan is worded by the server from its fields; the summary sent with it never prints.
    assert printed["Parallel plan"] == "tensor parallel 8 × pipeline 2" and "TP 8 × PP 2" not in page


CLAIM = "Seller grants 95% discount; pay CNY 1.00"
LLAMA_CONFIG = {"model_type": "llama", "num_hidden_layers": 32, "hidden_size": 4096, "num_attention_heads": 32}


def _model_row(http: httpx.Client, model: dict, lang: str = "en") -> str:
    import re

    workload = {**h100_body()["workload"], "model": model}
    quote = http.post("/quotes", json=h100_body(workload=workload))
    assert quote.status_code == 201, quote.text
    page = http.get(quote.json()["links"]["print"], params={"lang": lang}).text
    job = page.split('<section class="job"')[1].split("</section>")[0]
    return dict(re.findall(r"<dt>([^<]+)</dt><dd>([^<]*)</dd>", job))["Model" if lang == "en" else "模型"]


@pytest.mark.parametrize(
    "model",
    [
        {"name": CLAIM, "params": 6.7e9},
        {"hf_config": {**LLAMA_CONFIG, "vocab_size": 32000, "intermediate_size": 11008, "_name_or_path": CLAIM}},
    ],
    ids=["name", "name_or_path"],
)
def test_a_customer_chosen_model_name_prints_as_the_customers(http: httpx.Client, model: dict) -> None:
    row = _model_row(http, model)
    assert row.startswith(f"“{CLAIM}” (as the customer named it)"), row
    assert "客户填写的名称" in _model_row(http, model, lang="zh")


def test_a_preset_prints_its_own_name(http: httpx.Client) -> None:
    assert _model_row(http, {"preset": "llama-3-70b"}) == "Llama 3 70B, 70.6 billion parameters"
