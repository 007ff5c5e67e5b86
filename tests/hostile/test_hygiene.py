"""Request hygiene over a real server: NUL characters, non-finite numbers and deep JSON are a 422 naming
the field on every route, never a 500 or a row half-written."""

from __future__ import annotations

import json

import httpx
import pytest

from tests.quotes.helpers import h100_body

JSON = {"content-type": "application/json"}


def _nested(depth: int) -> object:
    value: object = "x"
    for _ in range(depth):
        value = {"k": value}
    return value


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (h100_body(customer={"name": "Li\x00Wei", "company": "", "email": "li@example.com"}), "customer.name"),
        (h100_body(customer={"name": "Li", "company": "\x00", "email": "li@example.com"}), "customer.company"),
        (h100_body(sku_id="h100-80g-sxm-8x\x00"), "sku_id"),
        (h100_body(workload={"model": "a\x00"}), "workload.model"),
    ],
)
def test_nul_characters_are_a_422_naming_the_field(http: httpx.Client, body: dict, field: str) -> None:
    response = http.post("/quotes", json=body)
    assert response.status_code == 422, response.text
    assert response.json()["errors"][0]["field"] == field


def test_nul_in_a_query_string_or_a_form_is_a_422(http: httpx.Client) -> None:
    page = http.get("/results?preset=llama-2-7b%00&task=lora", headers={"accept": "text/html"})
    assert page.status_code == 422
    assert "text/html" in page.headers["content-type"]
    api = http.get("/catalog/skus?currency=CNY%00")
    assert api.status_code == 422
    assert api.json()["errors"][0]["field"] == "query.currency"  # as a query parameter's other refusals
    form = http.post(
        "/admin/login",
        content=b"username=admin%00&password=x",
        headers={"content-type": "application/x-www-form-urlencoded"},
    )
    assert form.status_code == 422


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_non_finite_numbers_are_a_422_in_free_form_parts(http: httpx.Client, literal: str) -> None:
    text = json.dumps(h100_body(workload={"tokens": 1})).replace('"tokens": 1', f'"tokens": {literal}')
    response = http.post("/quotes", content=text, headers=JSON)
    assert response.status_code == 422, response.text
    assert response.json()["errors"][0]["field"] in ("workload.tokens", "body")


@pytest.mark.parametrize("depth", [33, 500, 5000])
def test_deep_json_is_a_422_not_a_500(http: httpx.Client, depth: int) -> None:
    text = json.dumps(h100_body(workload=_nested(depth))) if depth < 900 else None
    if text is None:  # deeper than Python's json.dumps recursion allows: written by hand
        text = json.dumps(h100_body(workload="@")).replace('"@"', '{"k": ' * depth + "1" + "}" * depth)
    response = http.post("/quotes", content=text, headers=JSON)
    assert response.status_code == 422, response.text[:300]
    assert "nested deeper than 32" in response.json()["detail"]
    estimate = http.post("/estimate", content=text.replace('"sku_id"', '"x_sku_id"'), headers=JSON)
    assert estimate.status_code == 422


def test_shallow_bodies_still_pass(http: httpx.Client) -> None:
    response = http.post("/quotes", json=h100_body())
    assert response.status_code == 201, response.text
