"""POST /quotes and GET /quotes/{id}: server-side prices, exact figures, validation, 404s, idempotency."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.catalog.repository import get_sku_by_slug
from app.quotes.models import Quote
from app.text import messages
from tests.quotes.helpers import a100_body, check_money_shapes, h100_body

PROBLEM = "application/problem+json"


def _count(db: Session) -> int:
    return db.scalar(select(func.count()).select_from(Quote))


def test_h100_annual_quote_with_infiniband_on_consultation(client: TestClient) -> None:
    response = client.post("/quotes", json=h100_body())
    assert response.status_code == 201
    quote = check_money_shapes(response.content)
    assert response.headers["location"] == f"/quotes/{quote['id']}"
    assert quote["status"] == "issued"
    assert quote["currency"] == "CNY"
    assert (quote["unit_list_price"], quote["unit_effective_price"], quote["discount_percent"]) == (
        "100000.00",
        "85000.00",
        "15",
    )
    assert (quote["subtotal"], quote["discount_total"], quote["total"]) == ("2400000.00", "360000.00", "2040000.00")
    rental, infiniband = quote["lines"]
    assert rental == {
        "position": 1,
        "kind": "rental",
        "code": "h100-80g-sxm-8x",
        "description": "8x H100 80G SXM NVSwitch server",
        "unit": "node",
        "quantity": 2,
        "months": 12,
        "unit_price": "100000.00",
        "discount_percent": "15",
        "discount": "360000.00",
        "amount": "2040000.00",
        "note": "Annual term: 15% off the monthly list price",
    }
    assert infiniband == {
        "position": 2,
        "kind": "addon",
        "code": "infiniband-400g",
        "description": "InfiniBand NDR 400G, per node",
        "unit": "node",
        "quantity": 2,
        "months": 12,
        "unit_price": None,
        "discount_percent": "0",
        "discount": None,
        "amount": None,
        "note": "Priced on consultation; not included in the total",
    }
    assert quote["indicative"] is True
    assert quote["notes"][:2] == [
        "Indicative price: the catalog gives this price for reference; the final price is confirmed on consultation.",
        "InfiniBand NDR 400G, per node: priced on consultation, not included in the total.",
    ]  # then the term's warnings: a 117.6 h job on 12 billed months (review R4-6, tests/quotes/test_term_notes.py)
    assert [n["code"] for n in quote["note_codes"][2:]] == ["term_longer_than_job", "other_term_cheaper"]
    assert quote["customer"] == {"name": "Li Wei", "company": "深圳算力科技", "email": "li.wei@example.com"}
    sent = {"tp": 8, "pp": 2, "dp": 1, "zero_stage": 1}
    assert {key: quote["plan"][key] for key in sent} == sent  # kept as sent, with the estimate recomputed on the SKU
    assert set(quote["plan"]) - set(sent) >= {"time_to_train_hours", "gpu_hours", "memory_per_gpu_gib", "fits"}
    assert quote["workload"]["tokens"] == 2_000_000_000
    assert quote["sku"]["id"] == "h100-80g-sxm-8x" and quote["sku"]["gpus_per_node"] == 8
    assert quote["links"] == {
        "self": f"/quotes/{quote['id']}",
        "print": f"/quotes/{quote['id']}/print",
        "pdf": f"/quotes/{quote['id']}.pdf",
        "accept": f"/quotes/{quote['id']}/accept",
    }
    assert client.get(quote["links"]["self"]).json() == quote


def test_card_quote_monthly_without_discount(client: TestClient) -> None:
    quote = check_money_shapes(client.post("/quotes", json=a100_body()).content)
    assert (quote["unit"], quote["quantity"], quote["months"]) == ("card", 2, 3)
    assert (quote["subtotal"], quote["discount_total"], quote["total"]) == ("16800.00", "0.00", "16800.00")
    assert quote["indicative"] is False and quote["notes"] == []
    assert [line["amount"] for line in quote["lines"]] == ["16800.00"]


def test_annual_card_term_defaults_to_twelve_months(client: TestClient) -> None:
    body = a100_body(term="annual", quantity=4)
    del body["months"]
    quote = client.post("/quotes", json=body).json()
    assert (quote["months"], quote["unit_effective_price"], quote["total"]) == (12, "2240.00", "107520.00")
    assert quote["discount_total"] == "26880.00"  # 4 cards × 12 months × 560.00


def test_prices_sent_by_the_client_are_ignored(client: TestClient) -> None:
    body = a100_body(price="1.00", unit_price=0.01, total="0.01", currency="USD", lines=[{"amount": "1.00"}])
    quote = client.post("/quotes", json=body).json()
    assert (quote["currency"], quote["total"], quote["lines"][0]["unit_price"]) == ("CNY", "16800.00", "2800.00")


def test_one_job_over_several_servers_of_a_sku_without_a_fabric_is_refused(client: TestClient, db: Session) -> None:
    """The catalog joins no two a100-80g-sxm-8x servers (no inter-node fabric; the planner offers it one server
    per job). Before: a plan over two was quoted, 612,000.00, with a note that their network suits data parallelism
    only."""
    sku = get_sku_by_slug(db, "a100-80g-sxm-8x")
    assert sku is not None and sku.inter_node_fabric is None
    body = h100_body(sku_id=sku.slug, addons=[], quantity=2)
    before = _count(db)
    response = client.post("/quotes", json=body)
    assert response.status_code == 422, response.text
    (error,) = response.json()["errors"]
    assert (error["field"], error["type"]) == ("quantity", "quantity_one_server")
    assert error["params"] == {"sku": sku.slug, "quantity": 2, "gpus_per_node": sku.gpus_per_node}
    assert error["message"].startswith(f"{sku.slug} is rented one server at a time ({sku.gpus_per_node} GPUs)")
    assert "quote quantity 1" in error["message"]
    assert "每次只租一台服务器" in messages.quote_check(error["type"], error["params"], "zh")
    assert _count(db) == before


def test_several_servers_of_a_sku_without_a_fabric_rent_as_separate_servers(client: TestClient, db: Session) -> None:
    """Without a plan that joins them (serving replicas, separate jobs), several servers of a SKU no fabric joins
    are rented as separate servers, and the quote says what joins them."""
    body = {key: value for key, value in h100_body(sku_id="a100-80g-sxm-8x", addons=[], quantity=2).items()}
    body = {key: value for key, value in body.items() if key not in ("plan", "workload")}
    response = client.post("/quotes", json=body)
    assert response.status_code == 201, response.text
    assert any(note.startswith("2 separate servers of a100-80g-sxm-8x") for note in response.json()["notes"])


def test_several_servers_without_the_fabric_add_on_and_no_plan_say_what_joins_them(client: TestClient) -> None:
    """Two 8 x H100 servers quoted without a plan and without the InfiniBand add-on: issued, as servers for
    separate jobs, and the quote says they are not joined by the fabric (a plan that joins them is refused:
    tests/planner/test_fabric_quote.py)."""
    body = {key: value for key, value in h100_body(addons=[]).items() if key not in ("plan", "workload")}
    response = client.post("/quotes", json=body)
    assert response.status_code == 201, response.text
    assert response.json()["notes"][-1] == (
        "2 servers of h100-80g-sxm-8x without infiniband-400g: they are not joined by its ib-ndr-400 fabric (only "
        "by its network: 10 Gbps international; InfiniBand 400G optional), so they suit separate jobs, not one job "
        "across the servers."
    )
    joined = client.post("/quotes", json={**body, "addons": ["infiniband-400g"]})
    assert joined.status_code == 201 and "not joined" not in " ".join(joined.json()["notes"])


@pytest.mark.parametrize(
    ("changes", "field", "fragment"),
    [
        ({"sku_id": "b200-nope"}, "sku_id", "'b200-nope' is not in the catalog; active SKUs: a100-40g-pcie-card"),
        ({"quantity": 3}, "quantity", "rented by the card within one server: 1, 2, 4 cards"),
        ({"quantity": 0}, "quantity", "greater than or equal to 1"),
        ({"quantity": 2.0}, "quantity", "valid integer"),
        ({"quantity": "2"}, "quantity", "valid integer"),
        ({"term": "weekly"}, "term", "'monthly' or 'annual'"),
        (
            {"term": "annual", "months": 18},
            "months",
            "an annual term takes whole years (12, 24, …), got 18; quote months 24",
        ),
        ({"months": 61}, "months", "less than or equal to 60"),
        (
            {"addons": ["infiniband-400g"]},
            "addons",
            "infiniband-400g not offered with a100-40g-pcie-card; allowed: none",
        ),
        ({"customer": {"name": "Ada", "email": "not-an-email"}}, "customer.email", "email"),
        ({"customer": {"name": "", "email": "a@example.org"}}, "customer.name", "at least 1 character"),
        ({"adons": []}, "adons", "Extra inputs are not permitted"),
    ],
)
def test_bad_input_is_a_422_naming_the_field(
    client: TestClient, db: Session, changes: dict, field: str, fragment: str
) -> None:
    before = _count(db)
    response = client.post("/quotes", json=a100_body(**changes))
    assert response.status_code == 422, response.text
    assert response.headers["content-type"] == PROBLEM
    problem = response.json()
    assert [e["field"] for e in problem["errors"]] == [field]
    assert fragment in problem["errors"][0]["message"]
    assert _count(db) == before


def test_duplicate_and_unknown_addons(client: TestClient) -> None:
    twice = client.post("/quotes", json=h100_body(addons=["infiniband-400g", "infiniband-400g"]))
    assert (twice.status_code, twice.json()["errors"][0]["field"]) == (422, "addons")
    unknown = client.post("/quotes", json=h100_body(addons=["roce-200g"]))
    assert unknown.json()["detail"] == "addons: roce-200g not offered with h100-80g-sxm-8x; allowed: infiniband-400g"


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (a100_body(sku_id="b200-nope"), "sku_unknown"),
        (a100_body(addons=["infiniband-400g"]), "addons_none_offered"),
        (h100_body(addons=["roce-200g"]), "addons_unknown"),
        (h100_body(addons=["infiniband-400g", "infiniband-400g"]), "addons_repeated"),
        (h100_body(region="mars"), "region_not_offered"),
    ],
)
def test_a_refusal_is_a_code_with_its_figures_worded_in_both_languages(
    client: TestClient, body: dict, code: str
) -> None:
    """What the SKU rents and the request names is refused with a code of the quote checks' catalog (before: a bare
    value_error with English only), so the Chinese quote form words it; its English is the catalog's."""
    response = client.post("/quotes", json=body)
    assert response.status_code == 422, response.text
    error = response.json()["errors"][0]
    assert error["type"] == code
    assert error["message"] == messages.quote_check(code, error["params"])
    chinese = messages.quote_check(code, error["params"], "zh")
    identifiers = [v for value in error["params"].values() for v in (value if isinstance(value, list) else [value])]
    for identifier in sorted(map(str, [*identifiers, "SKU"]), key=len, reverse=True):  # ids, names: catalog data
        chinese = chinese.replace(identifier, " ")
    assert not re.search(r"[A-Za-z]{2,}", chinese), chinese


@pytest.mark.parametrize(
    "path",
    [
        "/quotes/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",  # well-formed, unknown
        "/quotes/Q-2026-000001",  # a quote number is not an id
        "/quotes/1",
        "/quotes/%E6%B7%B1%E5%9C%B3",
        "/quotes/" + "x" * 300,
        "/quotes/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/print",
        "/quotes/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA.pdf",
        "/quotes/nope/pdf",
    ],
)
def test_unknown_or_malformed_ids_are_404_problems(client: TestClient, path: str) -> None:
    client.post("/quotes", json=a100_body())  # Q-…-000001 exists; guessing its number still gives nothing
    response = client.get(path)
    assert response.status_code == 404
    assert response.headers["content-type"] == PROBLEM
    assert response.json()["detail"] == "no quote with this id"
    assert client.post(path.removesuffix("/print").removesuffix(".pdf") + "/accept").status_code == 404


def test_idempotent_retry_returns_the_same_quote(client: TestClient, db: Session) -> None:
    before = _count(db)
    first = client.post("/quotes", json=h100_body(), headers={"Idempotency-Key": "order-7f3a"})
    again = client.post("/quotes", json=h100_body(), headers={"Idempotency-Key": "order-7f3a"})
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.headers["idempotent-replayed"] == "true"
    assert again.json() == first.json()
    assert _count(db) == before + 1


def test_same_key_with_another_body_is_a_409(client: TestClient, db: Session) -> None:
    client.post("/quotes", json=h100_body(), headers={"Idempotency-Key": "order-7f3a"})
    before = _count(db)
    response = client.post("/quotes", json=h100_body(quantity=3), headers={"Idempotency-Key": "order-7f3a"})
    assert response.status_code == 409
    assert response.headers["content-type"] == PROBLEM
    assert response.json()["detail"] == (
        "Idempotency-Key 'order-7f3a' was already used with a different request body; send the original body "
        "to get that quote again, or use a new key for a new quote"
    )
    assert _count(db) == before


def test_without_a_key_each_post_is_a_new_quote(client: TestClient) -> None:
    numbers = [client.post("/quotes", json=a100_body()).json()["number"] for _ in range(3)]
    sequences = [int(n.rsplit("-", 1)[1]) for n in numbers]
    assert sequences == list(range(sequences[0], sequences[0] + 3))


def test_a_bad_idempotency_key_is_a_422(client: TestClient) -> None:
    response = client.post("/quotes", json=a100_body(), headers={"Idempotency-Key": "x" * 256})
    assert response.status_code == 422
    assert response.json()["errors"][0]["field"] == "header.Idempotency-Key"
