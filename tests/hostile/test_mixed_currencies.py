"""Mixed currencies on a running server (`serve --workers 2`), SQLite and PostgreSQL: an admin reprices
the H100 server in USD through the API, and POST /recommend ranks and budgets it at its CNY value once
`set-exchange-rate` has given one (before that it is rejected, never ranked as USD 20,000 < CNY 30,000).
The rate is set by another process: both workers must see it on their next request."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.servers import LiveServerFactory, app_cli, scratch_database

PASSWORD = "a long enough secret"
BODY = {
    "model": {"preset": "llama-2-7b"},
    "task": "lora",
    "tokens": 1e8,
    "constraints": {"gpu_types": ["a100-80g-sxm", "h100-80g-sxm"], "max_nodes": 1, "objective": "cheapest"},
}


@pytest.fixture()
def database(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """A seeded database of its own and an admin's API token."""
    with scratch_database(backend, tmp_path_factory, "currencies") as url:
        env = {"DATABASE_URL": url}
        app_cli(["migrate"], env)
        app_cli(["seed"], env)
        app_cli(["create-admin", "ops@example.com", "--password-stdin"], env, PASSWORD + "\n")
        token = app_cli(["create-token", "ops@example.com", "--name", "prices"], env).stdout.split()[-1]
        yield url, token


def _ranked(client: httpx.Client) -> dict:
    response = client.post("/recommend", json=BODY)
    assert response.status_code == 200, response.text
    return response.json()


def test_a_usd_price_is_ranked_at_its_converted_value(
    database: tuple[str, str], live_server_factory: LiveServerFactory
) -> None:
    url, token = database
    with (
        live_server_factory(database_url=url, prepare="none", workers=2) as live,
        httpx.Client(base_url=live.base, timeout=60) as client,
    ):
        auth = {"Authorization": f"Bearer {token}"}
        version = client.get("/admin/api/skus/h100-80g-sxm-8x", headers=auth).json()["version"]
        repriced = client.post(
            "/admin/api/skus/h100-80g-sxm-8x/prices",
            json={"amount": "20000.00", "currency": "USD", "version": version},
            headers=auth,
        )
        assert repriced.status_code == 201, repriced.text
        for _ in range(4):  # both workers
            result = _ranked(client)
            assert [o["sku"]["id"] for o in result["options"]] == ["a100-80g-sxm-8x"]
            assert {r["sku"]: r["code"] for r in result["rejected"]}["h100-80g-sxm-8x"] == "exchange_rate"

        app_cli(["set-exchange-rate", "USD", "CNY", "7.10"], {"DATABASE_URL": url})
        for _ in range(4):
            result = _ranked(client)
            assert [o["sku"]["id"] for o in result["options"]] == ["a100-80g-sxm-8x", "h100-80g-sxm-8x"]
            h100 = result["options"][1]["cost"]
            assert (h100["currency"], h100["monthly_list"], h100["converted"]["monthly_list"]) == (
                "USD",
                "20000.00",
                "142000.00",
            )
        budget = BODY | {"constraints": BODY["constraints"] | {"max_monthly_budget": "100000.00"}}
        within = client.post("/recommend", json=budget).json()
        assert [o["sku"]["id"] for o in within["options"]] == ["a100-80g-sxm-8x"]
        assert [o["sku"]["id"] for o in within["near_misses"]] == ["h100-80g-sxm-8x"]
