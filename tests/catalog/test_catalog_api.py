"""The public catalog over HTTP, on both databases, with the seed prices (app/catalog/seed_data.py)."""

from __future__ import annotations

from fastapi.testclient import TestClient


def _by_id(client: TestClient) -> dict[str, dict]:
    response = client.get("/catalog/skus")
    assert response.status_code == 200
    return {sku["id"]: sku for sku in response.json()}


def test_lists_the_three_seeded_skus(client: TestClient) -> None:
    assert set(_by_id(client)) == {"a100-40g-pcie-card", "a100-80g-sxm-8x", "h100-80g-sxm-8x"}


def test_a100_card_prices_per_term_as_decimal_strings(client: TestClient) -> None:
    price = _by_id(client)["a100-40g-pcie-card"]["price"]
    assert price["currency"] == "CNY"
    assert price["unit"] == "card"
    assert price["monthly_list"] == "2800.00"
    assert price["terms"]["monthly"]["monthly_effective"] == "2800.00"
    assert price["terms"]["annual"]["monthly_effective"] == "2240.00"
    assert price["terms"]["annual"]["discount_percent"] == "20"
    assert price["indicative"] is False


def test_eight_gpu_servers_are_indicative_midpoints_with_15_percent_annual(client: TestClient) -> None:
    skus = _by_id(client)
    a100, h100 = skus["a100-80g-sxm-8x"]["price"], skus["h100-80g-sxm-8x"]["price"]
    assert (a100["monthly_list"], a100["terms"]["annual"]["monthly_effective"]) == ("30000.00", "25500.00")
    assert (h100["monthly_list"], h100["terms"]["annual"]["monthly_effective"]) == ("100000.00", "85000.00")
    assert a100["indicative"] and h100["indicative"]
    assert a100["unit"] == h100["unit"] == "node"


def test_sku_hardware_facts(client: TestClient) -> None:
    h100 = _by_id(client)["h100-80g-sxm-8x"]
    assert h100["gpu"]["id"] == "h100-80g-sxm"
    assert h100["gpus_per_node"] == 8
    assert h100["infiniband_addon"] is True
    assert h100["host_ram_gib"] == 2048
    assert h100["regions"] == ["singapore", "los-angeles"]
    card = _by_id(client)["a100-40g-pcie-card"]
    assert card["card_counts"] == [1, 2, 4]
    assert card["intra_node_link"] == "pcie4"


def test_retired_skus_are_not_listed(client: TestClient, db) -> None:
    from app.catalog.repository import get_sku_by_slug

    get_sku_by_slug(db, "a100-80g-sxm-8x").status = "retired"
    db.flush()
    assert "a100-80g-sxm-8x" not in _by_id(client)


def test_health_and_readiness(client: TestClient) -> None:
    assert client.get("/healthz").json() == {"status": "ok"}
    ready = client.get("/readyz")
    assert ready.status_code == 200
    assert ready.json()["database"] == "ok"


def test_unknown_path_is_a_problem_document(client: TestClient) -> None:
    response = client.get("/nowhere")
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("application/problem+json")
    assert response.json()["status"] == 404
