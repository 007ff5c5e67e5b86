"""Rate limits on quotes, their acceptance, their PDFs and the scaling estimate, over a real server: the
third request of a client within a minute is a 429 with Retry-After (RATE_LIMIT_PER_MINUTE=2 here)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest

from app.ratelimit.service import WINDOW_S
from tests.quotes.helpers import h100_body
from tests.servers import LiveServerFactory

SCALING = {"model": {"preset": "llama-2-7b"}, "gpu": "h100-80g-sxm"}


@pytest.fixture(scope="module")
def limited_server(live_server_factory: LiveServerFactory) -> Iterator[str]:
    with live_server_factory("limits", limits={"RATE_LIMIT_PER_MINUTE": "2"}) as server:
        yield server.base


@pytest.fixture()
def http(limited_server: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=limited_server, timeout=60) as client:
        yield client


def _one_window() -> None:
    """Counters reset each minute: start a burst far enough from the reset that it lands in one window."""
    into = time.time() % WINDOW_S
    if into > WINDOW_S - 30:
        time.sleep(WINDOW_S - into + 0.5)


def _third_is_refused(responses: list[httpx.Response]) -> None:
    assert [r.status_code < 400 for r in responses[:2]] == [True, True], [r.text for r in responses[:2]]
    assert responses[2].status_code == 429
    assert int(responses[2].headers["Retry-After"]) >= 1


def test_quotes_accepts_pdfs_and_scaling_are_limited(http: httpx.Client) -> None:
    _one_window()
    quotes = [http.post("/quotes", json=h100_body()) for _ in range(3)]
    _third_is_refused(quotes)
    first, second = quotes[0].json(), quotes[1].json()
    # every quote's accept shares one counter per client: two quotes, three accepts
    _one_window()
    accepts = [http.post(f"/quotes/{first['id']}/accept"), http.post(f"/quotes/{second['id']}/accept")]
    accepts.append(http.post(f"/quotes/{first['id']}/accept"))
    _third_is_refused(accepts)
    _one_window()
    pdfs = [http.get(f"/quotes/{first['id']}.pdf"), http.get(f"/quotes/{second['id']}/pdf")]
    pdfs.append(http.get(f"/quotes/{second['id']}.pdf"))
    _third_is_refused(pdfs)
    _one_window()
    _third_is_refused([http.post("/estimate/scaling", json=SCALING) for _ in range(3)])
    assert http.get(f"/quotes/{first['id']}").status_code == 200  # reading a quote is not limited


def test_the_api_description_lists_429_where_limited(http: httpx.Client) -> None:
    paths = http.get("/openapi.json").json()["paths"]
    assert "429" in paths["/quotes"]["post"]["responses"]
    assert "429" in paths["/quotes/{public_id}/accept"]["post"]["responses"]
    assert "429" in paths["/quotes/{public_id}.pdf"]["get"]["responses"]
    assert "429" in paths["/estimate/scaling"]["post"]["responses"]
    assert "429" not in paths["/quotes/{public_id}"]["get"]["responses"]
