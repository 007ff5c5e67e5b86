"""API keys end to end over real HTTP, on SQLite and PostgreSQL: `python -m app serve --workers 2` with the
anonymous limit at ANONYMOUS_LIMIT a minute. A keyed client goes past it (its key's own limit counts, across
both worker processes); wrong, revoked, expired and out-of-scope keys are refused alike; quote search
filters, pages and keeps organisations apart."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy import create_engine, text

from tests.apikeys.conftest import RECOMMEND
from tests.quotes.helpers import a100_body
from tests.ratewindow import away_from_window_edge
from tests.servers import ROOT, LiveServerFactory

ANONYMOUS_LIMIT = 6  # this module's anonymous POSTs to /quotes stay under it: 4 wrong keys and 1 quote
SECRET = "e2e-" + "s" * 60
PASSWORD = "a long enough secret"


@dataclass
class Server:
    base: str
    database_url: str
    admin: dict[str, str]  # the admin API token's header

    def issue(self, **fields: Any) -> dict[str, Any]:
        body = {"name": "CRM", "organisation": "Acme", "scopes": ["recommend", "quotes:write", "quotes:read"]}
        response = httpx.post(f"{self.base}/admin/api/keys", json={**body, **fields}, headers=self.admin)
        assert response.status_code == 201, response.text
        return response.json()


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def server(request: pytest.FixtureRequest, live_server_factory: LiveServerFactory) -> Iterator[Server]:
    setup = [
        (["create-admin", "ops@example.com", "--password-stdin"], PASSWORD + "\n"),
        (["create-token", "ops@example.com"], ""),
    ]
    limits = {"RATE_LIMIT_PER_MINUTE": str(ANONYMOUS_LIMIT), "RATE_LIMIT_PATHS": "/recommend,/quotes"}
    with live_server_factory(  # the admin API issuing keys is not limited here
        "apikeys_e2e", backend=request.param, setup=setup, workers=2, limits=limits, env={"API_KEY_SECRET": SECRET}
    ) as live:
        token = live.outputs[-1].strip().splitlines()[-1]
        yield Server(live.base, live.database_url, {"Authorization": f"Bearer {token}"})


def _bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def test_a_keyed_client_goes_past_the_anonymous_limit(server: Server) -> None:
    keyed = server.issue(rate_limit_per_minute=ANONYMOUS_LIMIT * 3)
    away_from_window_edge(25)
    with httpx.Client(base_url=server.base, timeout=30) as client:  # one address for both: the same CRM host
        anonymous = [client.post("/recommend", json=RECOMMEND).status_code for _ in range(ANONYMOUS_LIMIT + 1)]
        assert anonymous == [200] * ANONYMOUS_LIMIT + [429]
        with_key = [
            client.post("/recommend", json=RECOMMEND, headers=_bearer(keyed["key"])).status_code
            for _ in range(ANONYMOUS_LIMIT * 3 + 1)
        ]
        assert with_key == [200] * (ANONYMOUS_LIMIT * 3) + [429]
        refused = client.post("/recommend", json=RECOMMEND, headers=_bearer(keyed["key"]))
        assert refused.headers["RateLimit-Limit"] == str(ANONYMOUS_LIMIT * 3)
        assert "API key" in refused.json()["detail"] and keyed["key"] not in refused.text
        # Another key from the same address has a counter of its own.
        other = server.issue(rate_limit_per_minute=2)
        assert client.post("/recommend", json=RECOMMEND, headers=_bearer(other["key"])).status_code == 200


def test_wrong_revoked_expired_and_out_of_scope_keys(server: Server) -> None:
    live = server.issue(scopes=["recommend"])
    revoked = server.issue(scopes=["recommend"])
    expired = server.issue(scopes=["recommend"], expires_at=(datetime.now(UTC) + timedelta(days=1)).isoformat())
    with httpx.Client(base_url=server.base, timeout=30) as client:
        assert client.post("/recommend", json=RECOMMEND, headers=_bearer(revoked["key"])).status_code == 200
        assert client.post("/recommend", json=RECOMMEND, headers=_bearer(expired["key"])).status_code == 200
        revoking = client.post(f"/admin/api/keys/{revoked['id']}/revoke", headers=server.admin)
        assert revoking.status_code == 200 and "key" not in revoking.json()
        engine = create_engine(server.database_url)
        with engine.begin() as connection:  # the clock moved on a day: its expiry has passed
            connection.execute(
                text("UPDATE api_keys SET expires_at = :past WHERE id = :id"),
                {"past": datetime.now(UTC) - timedelta(seconds=1), "id": expired["id"]},
            )
        engine.dispose()
        # POST /quotes, whose anonymous counter the burst on /recommend leaves alone: a key that is not live
        # counts against the address, as an anonymous request does.
        answers = {
            name: client.post("/quotes", json=a100_body(), headers=_bearer(key))
            for name, key in {
                "wrong": live["key"][:-2] + "xx",
                "unknown": "gsk_" + "Z" * 43,
                "revoked": revoked["key"],
                "expired": expired["key"],
            }.items()
        }
        for name, answer in answers.items():
            assert answer.status_code == 401, name
            assert answer.headers["content-type"] == "application/problem+json", name
        # Byte for byte the same answer: nothing tells a revoked or expired key from one that never existed.
        assert len({answer.content for answer in answers.values()}) == 1
        scope = client.post("/quotes", json=a100_body(), headers=_bearer(live["key"]))
        assert scope.status_code == 403 and scope.headers["content-type"] == "application/problem+json"
        assert client.get("/quotes", headers=_bearer(live["key"])).status_code == 403


def _quote(client: httpx.Client, key: str, email: str, company: str) -> str:
    body = a100_body(customer={"name": "Buyer", "company": company, "email": email})
    response = client.post("/quotes", json=body, headers=_bearer(key))
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def test_search_pages_and_organisations(server: Server) -> None:
    acme = server.issue(organisation="Acme Search")["key"]
    globex = server.issue(organisation="Globex Search")["key"]
    with httpx.Client(base_url=server.base, timeout=30) as client:
        ids = [
            _quote(client, acme, f"buyer{n}@acme.example", "Acme Robotics" if n % 2 else "Initech") for n in range(5)
        ]
        theirs = _quote(client, globex, "buyer1@acme.example", "Acme Robotics")
        assert client.post("/quotes", json=a100_body()).status_code == 201  # anonymous: no organisation
        seen: list[str] = []
        cursor = None
        while True:
            params = {"limit": 2, **({"cursor": cursor} if cursor else {})}
            page = client.get("/quotes", params=params, headers=_bearer(acme)).json()
            seen += [item["id"] for item in page["items"]]
            cursor = page["next_cursor"]
            if cursor is None:
                break
        assert seen == ids[::-1]
        robotics = client.get("/quotes", params={"company": "robotics"}, headers=_bearer(acme)).json()
        assert [item["id"] for item in robotics["items"]] == [ids[3], ids[1]]
        by_email = client.get("/quotes", params={"customer_email": "BUYER1@acme.example"}, headers=_bearer(acme))
        assert [item["id"] for item in by_email.json()["items"]] == [ids[1]]
        assert [item["id"] for item in client.get("/quotes", headers=_bearer(globex)).json()["items"]] == [theirs]
        # A quote of another organisation is not found by any filter, and the admin sees both organisations'.
        assert (
            client.get("/quotes", params={"customer_email": "buyer1@acme.example"}, headers=_bearer(globex)).json()[
                "items"
            ][0]["id"]
            == theirs
        )
        everyone = client.get("/quotes", params={"limit": 200}, headers=server.admin).json()["items"]
        assert {*ids, theirs} <= {item["id"] for item in everyone}


def _python_example() -> str:
    text = (ROOT / "docs" / "integrations.md").read_text(encoding="utf-8")
    section = text.split("\n## The same in Python\n", 1)[1].split("\n## ", 1)[0]  # the MCP section has its own
    (block,) = re.findall(r"^```python\n(.*?)^```", section, re.MULTILINE | re.DOTALL)
    return block


def test_the_python_example_of_the_docs_runs(server: Server) -> None:
    key = server.issue(organisation="Docs Example")["key"]
    env = {**os.environ, "GPU_SIZER_URL": server.base, "GPU_SIZER_KEY": key}
    result = subprocess.run(
        [sys.executable, "-c", _python_example()], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert lines[0].startswith("a100-40g-pcie-card ") and re.fullmatch(r"Q-\d{4}-\d{6} \d+\.\d{2} .+", lines[1])
    assert lines[2] == "1 issued quotes for li.wei@example.com"
