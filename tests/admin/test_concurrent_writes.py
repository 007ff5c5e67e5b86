"""The admin under concurrency, over real HTTP (`python -m app serve --workers 2`) on SQLite and on
PostgreSQL. Admins creating the same new row at the same moment: one write is stored, every other
answers 409 (the row exists now; reload and send its version), never a 500 or a 503, and /healthz keeps
answering. Parallel wrong passwords: the throttle decides each in the transaction that records it."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from app.admin import service
from app.admin.pages import LOGIN_CSRF_COOKIE
from tests.conftest import BACKENDS
from tests.http.test_transactions import HealthProbe, burst, statuses
from tests.servers import LiveServerFactory

PASSWORD = "a long enough secret"
CARD = "a100-40g-pcie-card"
WRITERS = 8


@pytest.fixture(scope="module", params=BACKENDS)
def server(request: pytest.FixtureRequest, live_server_factory: LiveServerFactory) -> Iterator[tuple[str, str]]:
    """(base URL, API token) of a server on a migrated, seeded database of its own."""
    setup = [
        (["create-admin", "ops@example.com", "--password-stdin"], PASSWORD + "\n"),
        (["create-admin", "target@example.com", "--password-stdin"], PASSWORD + "\n"),
        (["create-token", "ops@example.com"], ""),
    ]
    # What is checked is one stored and the rest 409, not the lock budget (tests/http/test_lock_budget.py): on a
    # busy machine the writers queued behind the first insert's lock past the 2 s default and got 503.
    with live_server_factory(
        "admin_writes", backend=request.param, setup=setup, workers=2, env={"DB_LOCK_TIMEOUT_MS": "30000"}
    ) as server:
        yield server.base, server.outputs[-1].split()[-1]


def _one_stored_the_rest_409(responses: list[httpx.Response | str], created: int) -> None:
    seen = statuses(responses)
    detail = [r.text[:200] for r in responses if isinstance(r, httpx.Response) and r.status_code not in (created, 409)]
    assert sorted(seen, key=str) == sorted([created] + [409] * (WRITERS - 1), key=str), (seen, detail)


def test_same_new_sku_created_at_once(server: tuple[str, str]) -> None:
    base, token = server
    body = {
        "id": "h200-141g-sxm-8x",
        "name": "8x H200 141G SXM",
        "gpu": "h200-141g-sxm",
        "rental_unit": "node",
        "gpus_per_node": 8,
        "card_counts": [8],
        "intra_node_link": "nvlink4",
        "interconnect": "NVSwitch 900 GB/s",
        "regions": ["singapore"],
        "price": {"amount": "150000.00", "currency": "CNY"},
    }
    headers = {"Authorization": f"Bearer {token}"}
    with HealthProbe(base) as probe:
        responses = burst(WRITERS, lambda client, _i: client.post("/admin/api/skus", json=body, headers=headers), base)
    _one_stored_the_rest_409(responses, 201)
    assert probe.misses == 0


def test_same_new_availability_region_set_at_once(server: tuple[str, str]) -> None:
    base, token = server
    headers = {"Authorization": f"Bearer {token}"}
    sku = httpx.get(f"{base}/admin/api/skus/{CARD}", headers=headers).json()
    patch = {"version": sku["version"], "regions": [*sku["regions"], "new-region"]}
    assert httpx.patch(f"{base}/admin/api/skus/{CARD}", json=patch, headers=headers).status_code == 200
    url = f"/admin/api/skus/{CARD}/availability/new-region"
    with HealthProbe(base) as probe:
        responses = burst(
            WRITERS,
            lambda client, i: client.put(url, json={"units_available": i, "version": None}, headers=headers),
            base,
        )
    _one_stored_the_rest_409(responses, 200)
    assert probe.misses == 0


def test_same_new_addon_set_at_once(server: tuple[str, str]) -> None:
    base, token = server
    headers = {"Authorization": f"Bearer {token}"}
    url = f"/admin/api/skus/{CARD}/addons/extra-nvme"
    body = {"name": "Extra NVMe", "amount": "1200", "currency": "CNY", "per_unit": "node"}
    responses = burst(WRITERS, lambda client, _i: client.put(url, json=body, headers=headers), base)
    _one_stored_the_rest_409(responses, 200)


def test_same_version_priced_at_once(server: tuple[str, str]) -> None:
    """Review R3: WRITERS new prices based on one version of the SKU: one is written (201, the next version), every
    other is 409; before, all were 201, the version stayed and the last write silently won."""
    base, token = server
    headers = {"Authorization": f"Bearer {token}"}
    url = f"/admin/api/skus/{CARD}"
    before = httpx.get(f"{base}{url}", headers=headers).json()
    responses = burst(
        WRITERS,
        lambda client, i: client.post(
            f"{url}/prices",
            json={"amount": f"{2900 + i}.00", "currency": "CNY", "version": before["version"]},
            headers=headers,
        ),
        base,
    )
    _one_stored_the_rest_409(responses, 201)
    (won,) = [r for r in responses if isinstance(r, httpx.Response) and r.status_code == 201]
    after = httpx.get(f"{base}{url}", headers=headers).json()
    assert after["version"] == before["version"] + 1
    assert len(after["prices"]) == len(before["prices"]) + 1
    assert after["current_price"]["amount"] == won.json()["current_price"]["amount"]


def test_parallel_wrong_passwords_are_evaluated_at_most_the_limit(server: tuple[str, str]) -> None:
    """40 wrong passwords for one account at once: at most ACCOUNT_FAILURES are checked (401), the rest
    are refused unchecked (429 with Retry-After). Before: the check and the record sat in separate
    transactions and 8-9 of 40 were evaluated against a limit of 5."""
    base, _token = server
    form = {"email": "target@example.com", "password": "not the password", "csrf_token": "c" * 32}

    def sign_in(client: httpx.Client, _i: int) -> httpx.Response:
        client.cookies.set(LOGIN_CSRF_COOKIE, "c" * 32, path="/admin")
        return client.post("/admin/login", data=form)

    responses = burst(40, sign_in, base)
    seen = statuses(responses)
    assert set(seen) <= {401, 429}, [
        r.text[:300] for r in responses if isinstance(r, httpx.Response) and r.status_code >= 500
    ]
    assert 1 <= seen.count(401) <= service.ACCOUNT_FAILURES, seen
    assert all(
        int(r.headers["retry-after"]) > 0 for r in responses if isinstance(r, httpx.Response) and r.status_code == 429
    )
