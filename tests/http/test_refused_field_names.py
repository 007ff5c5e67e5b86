"""A refusal names the field as the request sent it (review R5-13): POST /estimate/scaling takes a top-level `gpu`,
and an unknown one is reported on `gpu` (not `hardware.gpu`, a field that request has no such thing as); a NUL in a
query parameter is reported on `query.<name>`, as every other query refusal is (`query.lang`), not on a bare name
that reads as a body field. SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.hf_configs import LLAMA_2_7B


def test_an_unknown_gpu_for_a_scaling_curve_is_refused_on_gpu(client: TestClient) -> None:
    body = {"model": {"preset": "llama-3-8b"}, "task": "lora", "tokens": 1e9, "gpu": "h100-80g-sxn"}
    response = client.post("/estimate/scaling", json=body)
    assert response.status_code == 422, response.text
    [error] = response.json()["errors"]
    assert (error["field"], error["type"]) == ("gpu", "gpu_unknown_close")
    assert "h100-80g-sxm" in error["params"]["close"]


def test_a_nul_in_a_query_parameter_is_named_as_the_other_query_refusals(client: TestClient) -> None:
    other = client.get("/quotes/x.pdf?lang=xx").json()["errors"][0]["field"]
    assert other == "query.lang"
    for query, field in (("customer_email=%00", "query.customer_email"), ("currency=CNY%00", "query.currency")):
        response = client.get(f"/quotes?{query}")
        assert response.status_code == 422, response.text
        assert response.json()["errors"][0]["field"] == field
    assert client.get("/catalog/skus?%00=1").json()["errors"][0]["field"] == "query"  # a name of NULs alone


# Pasted config.json files whose shape the estimator refuses: Llama 2 7B's keys (tests/hf_configs.py) and GPT-2's.
GPT2_CONFIG = {"model_type": "gpt2", "n_layer": 12, "n_embd": 766, "n_head": 12, "vocab_size": 50257}


@pytest.mark.parametrize(
    ("config", "field", "code"),
    [
        ({**LLAMA_2_7B, "hidden_size": 4095}, "model.hf_config.num_attention_heads", "model_heads_divide"),
        ({**LLAMA_2_7B, "num_key_value_heads": 5}, "model.hf_config.num_key_value_heads", "model_kv_heads_divide"),
        (GPT2_CONFIG, "model.hf_config.n_head", "model_heads_divide"),  # the family's own key, as sent
    ],
)
def test_a_pasted_configs_refused_shape_is_named_by_its_key(
    client: TestClient, config: dict[str, Any], field: str, code: str
) -> None:
    """Review R7-6: a pasted config.json whose heads do not divide its width was refused on `model.heads`, a field the
    request does not have; the refusal names the key of `model.hf_config` as sent, on every endpoint that sizes it (a
    quote keeps a model the estimator cannot size, unchecked: app.quotes.plan_check)."""
    workload = {"model": {"hf_config": config}, "task": "lora", "tokens": 1e8}
    answers = {
        "estimate": client.post("/estimate", json={**workload, "hardware": {"gpu": "h100-80g-sxm"}}),
        "recommend": client.post("/recommend", json=workload),
        "scaling": client.post("/estimate/scaling", json={**workload, "gpu": "h100-80g-sxm"}),
    }
    for name, answer in answers.items():
        assert answer.status_code == 422, (name, answer.text)
        [error] = answer.json()["errors"]
        assert (error["field"], error["type"]) == (field, code), (name, error)
