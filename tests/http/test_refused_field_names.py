"""A refusal names the field as the request sent it (review R5-13): POST /estimate/scaling takes a top-level `gpu`,
and an unknown one is reported on `gpu` (not `hardware.gpu`, a field that request has no such thing as); a NUL in a
query parameter is reported on `query.<name>`, as every other query refusal is (`query.lang`), not on a bare name
that reads as a body field. SQLite and PostgreSQL."""

from __future__ import annotations

from fastapi.testclient import TestClient


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
