"""A slow Hugging Face Hub cannot stall the service: a real `python -m app serve --workers 2` on a
PostgreSQL database of its own, a stand-in Hub (tests/hub_server.py) that takes seconds per config.json,
and a burst of requests each naming a model the database has not kept yet.

While the Hub is being waited on, no request holds a database transaction open (the cache is read, the
transaction ended, the Hub asked, then the config kept in a short transaction of its own), and at most
HF_MAX_FETCHES requests per worker wait on the Hub: the rest answer 503 with Retry-After at once, so
/healthz and the routes that need no Hub keep answering.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from app.common.errors import ServiceUnavailable
from app.common.settings import Settings
from app.estimator.presets import preset_config
from app.hub.service import FIELD, _fetching
from tests.http.test_transactions import HealthProbe, burst, open_transactions, statuses
from tests.hub_server import Answer, StandInHub, stand_in_hub
from tests.servers import LiveServerFactory, app_cli, scratch_database

HUB_DELAY_S = 4.0  # each config.json takes this long: well inside HF_TIMEOUT_S, far beyond a quick answer
BURST = 12  # more than the 2 workers × 4 WORKER_THREADS of the server
LORA = {"task": "lora", "seq_len": 2048, "tokens": 1e8, "hardware": {"gpu": "a100-40g-pcie"}}
PRESET_ESTIMATE = {"model": {"preset": "qwen2.5-7b"}, **LORA}


def _slow_id(index: int) -> str:
    return f"stand-in/slow-{index}"


@pytest.fixture(scope="module")
def slow_hub() -> Iterator[StandInHub]:
    with stand_in_hub() as hub:
        config = json.dumps(preset_config("qwen2.5-7b")).encode()
        for index in range(BURST + 1):
            hub.answer(_slow_id(index), Answer(body=config, delay_s=HUB_DELAY_S))
        yield hub


@pytest.fixture(scope="module")
def pg_db(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with scratch_database("postgresql", tmp_path_factory, "hub_slow") as url:
        app_cli(["migrate"], {"DATABASE_URL": url})
        app_cli(["seed"], {"DATABASE_URL": url})
        yield url


def test_a_slow_hub_holds_no_transaction_and_leaves_threads_for_everyone(
    pg_db: str, slow_hub: StandInHub, live_server_factory: LiveServerFactory
) -> None:
    env = {
        "HF_ENDPOINT": slow_hub.url,
        "HF_TIMEOUT_S": "20",
        "WORKER_THREADS": "4",
        "HF_MAX_FETCHES": "2",
        "HF_NEW_IDS_PER_MINUTE": "0",
    }
    with (
        live_server_factory(database_url=pg_db, prepare="none", workers=2, env=env) as live,
        HealthProbe(live.base) as probe,
    ):
        base = live.base
        results: list[httpx.Response | str] = []

        def fire() -> None:
            results.extend(
                burst(
                    BURST,
                    lambda client, i: client.post("/estimate", json={"model": {"hf_id": _slow_id(i)}, **LORA}),
                    base,
                )
            )

        firing = threading.Thread(target=fire)
        firing.start()
        held: list[tuple[str, str]] = []
        while len(slow_hub.hits) < 2 * 2 and firing.is_alive():  # until the burst is waiting on the Hub
            time.sleep(0.05)
        for _ in range(5):
            held += open_transactions(pg_db)
            time.sleep(0.1)
        started = time.perf_counter()
        with ThreadPoolExecutor(max_workers=3) as pool:  # routes that need no Hub, meanwhile
            others = list(
                pool.map(lambda _: httpx.post(f"{base}/estimate", json=PRESET_ESTIMATE, timeout=30), range(3))
            )
        others_s = time.perf_counter() - started
        firing.join(timeout=60)

        assert held == [], "a request held a transaction open while it waited on the Hub"
        assert [r.status_code for r in others] == [200, 200, 200], [r.text for r in others]
        assert others_s < HUB_DELAY_S / 2, f"routes without the Hub waited {others_s:.1f} s for a thread"
        seen = statuses(results)
        assert len(seen) == BURST and set(seen) <= {200, 503}, seen
        assert 0 < seen.count(200) <= 2 * 2, seen  # at most HF_MAX_FETCHES per worker reached the Hub
        for response in results:
            assert isinstance(response, httpx.Response)
            if response.status_code == 503:
                assert int(response.headers["retry-after"]) > 0
                assert [e["type"] for e in response.json()["errors"]] == ["hub_busy"]
        assert probe.misses == 0 and max(probe.latencies) < 1.0, max(probe.latencies)

        # Each fetched config was kept: asked again, it answers at once without the Hub.
        fetched = [i for i, r in enumerate(results) if isinstance(r, httpx.Response) and r.status_code == 200]
        hits = len(slow_hub.hits)
        started = time.perf_counter()
        again = httpx.post(f"{base}/estimate", json={"model": {"hf_id": _slow_id(fetched[0])}, **LORA}, timeout=30)
        assert again.status_code == 200 and time.perf_counter() - started < 1.0
        assert len(slow_hub.hits) == hits


def test_one_fetch_per_id_and_at_most_hf_max_fetches_at_once() -> None:
    settings = Settings(hf_max_fetches=2, hf_timeout_s=7.5)
    with _fetching("a/one", settings=settings, field=FIELD):
        with pytest.raises(ServiceUnavailable) as same, _fetching("a/one", settings=settings, field=FIELD):
            pass  # the same id already on its way: not asked twice
        with (
            _fetching("a/two", settings=settings, field=FIELD),
            pytest.raises(ServiceUnavailable) as full,
            _fetching("a/three", settings=settings, field=FIELD),
        ):
            pass  # two fetches waiting: the third is refused
    for refused in (same.value, full.value):
        assert refused.headers == {"Retry-After": "8"}  # HF_TIMEOUT_S rounded up: the longest one can wait
        assert refused.errors is not None and refused.errors[0]["type"] == "hub_busy"
    with _fetching("a/three", settings=settings, field=FIELD):  # places are given back
        pass
