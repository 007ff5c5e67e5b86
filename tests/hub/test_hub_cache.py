"""The Hub config cache is bounded whatever clients send (tests/hub_server.py stands in for the Hub):
ids are case-folded, only sizeable configs are kept and only up to HF_CONFIG_MAX_BYTES each, the table
stays under HF_CACHE_MAX_BYTES with the least recently used rows evicted, refusals are remembered for
HF_MISS_TTL_S, a client may ask the Hub for HF_NEW_IDS_PER_MINUTE new ids, and a config with numbers
no model has is refused (and a stored one read as a miss) instead of a 500."""

from __future__ import annotations

import json
import uuid
from contextlib import AbstractContextManager
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from app.common.settings import Settings
from app.db.engine import CLIENT
from app.estimator.presets import get_preset, preset_config
from app.hub.models import HubConfig
from tests.conftest import client_for
from tests.hub_server import Answer, StandInHub

QWEN = get_preset("qwen2.5-7b")
CONFIG = preset_config("qwen2.5-7b")
LORA = {"task": "lora", "seq_len": 2048, "tokens": 1e8, "hardware": {"gpu": "a100-40g-pcie"}}


def _estimate(hf_id: str) -> dict[str, Any]:
    return {"model": {"hf_id": hf_id}, **LORA}


def _client(settings: Settings, db: Session, **changes: Any) -> AbstractContextManager[TestClient]:
    return client_for(settings.model_copy(update=changes), db)


def _rows(db: Session) -> list[HubConfig]:
    return list(db.scalars(select(HubConfig).order_by(HubConfig.id)))


def _table_bytes(db: Session) -> int:
    """What the rows hold, measured from the stored text (not from the size column the code writes)."""
    rows = _rows(db)
    return sum(len((r.config_json or r.miss or "").encode()) + len(r.hf_key.encode()) for r in rows)


def test_case_variants_of_one_id_share_one_row_and_one_hub_request(
    client: TestClient, hub: StandInHub, db: Session
) -> None:
    spellings = [QWEN.hf_repo, QWEN.hf_repo.lower(), QWEN.hf_repo.upper(), "qWeN/qWeN2.5-7b"]
    for spelling in spellings:
        response = client.post("/estimate", json=_estimate(spelling))
        assert response.status_code == 200, response.text
    assert hub.hits == [f"/{QWEN.hf_repo}/resolve/main/config.json"]
    (row,) = _rows(db)
    assert row.hf_key == QWEN.hf_repo.casefold()
    assert json.loads(row.config_json or "") == CONFIG


def test_a_refused_config_is_not_kept_but_its_refusal_is_remembered(
    client: TestClient, hub: StandInHub, db: Session
) -> None:
    bert = {"model_type": "bert", "hidden_size": 768, "num_hidden_layers": 12, "padding": "p" * 900_000}
    hub.answer("attacker/bert", Answer(body=json.dumps(bert).encode()))
    for spelling in ("attacker/bert", "Attacker/BERT", "ATTACKER/bert"):
        response = client.post("/estimate", json=_estimate(spelling))
        assert response.status_code == 422, response.text
        error = response.json()["errors"][0]
        assert error["type"] == "hub_not_sizeable"
        assert error["params"]["hf_id"] == spelling  # worded for the id as asked
    assert len(hub.hits) == 1  # the miss answered the other two
    (row,) = _rows(db)
    assert row.config_json is None and row.miss is not None
    assert _table_bytes(db) < 1000  # not the 900 kB config


def test_an_unknown_id_is_asked_once_per_ttl(app_settings: Settings, hub: StandInHub, db: Session) -> None:
    with _client(app_settings, db, hf_miss_ttl_s=600) as client:
        for _ in range(5):
            assert client.post("/estimate", json=_estimate("nosuch/model-1")).status_code == 422
        assert len(hub.hits) == 1
        db.execute(update(HubConfig).values(expires_at=datetime.now(UTC) - timedelta(seconds=1)))
        assert client.post("/estimate", json=_estimate("nosuch/model-1")).status_code == 422
        assert len(hub.hits) == 2  # expired: asked again
    with _client(app_settings, db, hf_endpoint="http://127.0.0.1:9") as offline:  # transient errors: not kept
        assert offline.post("/estimate", json=_estimate("other/model")).status_code == 503
    assert [r.hf_key for r in _rows(db)] == ["nosuch/model-1"]


def test_a_sizeable_config_over_the_row_limit_answers_but_is_not_kept(
    app_settings: Settings, hub: StandInHub, db: Session
) -> None:
    padded = {**CONFIG, "padding": "x" * 200_000}
    hub.answer("big/padded", Answer(body=json.dumps(padded).encode()))
    with _client(app_settings, db, hf_config_max_bytes=64 * 1024) as client:
        assert client.post("/estimate", json=_estimate("big/padded")).status_code == 200
    assert _rows(db) == []


def test_the_table_stays_under_its_cap_evicting_the_least_recently_used(
    app_settings: Settings, hub: StandInHub, db: Session
) -> None:
    cap = 64 * 1024
    for index in range(40):  # 40 × ~6 kB configs: about 4 times the cap
        hub.answer(f"fill/m-{index}", Answer(body=json.dumps({**CONFIG, "padding": f"{index:x}" * 3000}).encode()))
    with _client(app_settings, db, hf_cache_max_bytes=cap) as client:
        for index in range(40):
            assert client.post("/estimate", json=_estimate(f"fill/m-{index}")).status_code == 200
            assert _table_bytes(db) <= cap
        kept = [r.hf_key for r in _rows(db)]
        assert "fill/m-39" in kept and "fill/m-0" not in kept  # the oldest went first
        assert len(kept) >= 8
        # A row read recently outlives rows stored after it: mark the oldest kept as used now.
        oldest = kept[0]
        db.execute(update(HubConfig).where(HubConfig.hf_key == oldest).values(used_at=datetime.now(UTC)))
        for index in range(40, 44):
            hub.answer(f"fill/m-{index}", Answer(body=json.dumps({**CONFIG, "padding": "y" * 6000}).encode()))
            assert client.post("/estimate", json=_estimate(f"fill/m-{index}")).status_code == 200
        after = [r.hf_key for r in _rows(db)]
        assert oldest in after and kept[1] not in after
        assert db.scalar(select(func.sum(HubConfig.size_bytes))) == _table_bytes(db) <= cap


def test_each_client_may_ask_the_hub_for_so_many_new_ids_a_minute(
    app_settings: Settings, hub: StandInHub, db: Session, backend: str
) -> None:
    if backend == "sqlite":
        # The test engine begins every SQLite connection itself (conftest's savepoint recipe), so the
        # counter's autocommitted upsert would roll back here; the limiter on SQLite: tests/http/test_limits.py.
        pytest.skip("the counter needs an autocommitting connection")
    # The counter is a row of its own (a fresh client address), counted outside the test's transaction;
    # misses are not remembered here so the test's transaction writes nothing that SQLite would lock.
    db.info[CLIENT] = f"client-{uuid.uuid4().hex}"
    with _client(app_settings, db, hf_new_ids_per_minute=3, hf_miss_ttl_s=0) as client:
        for index in range(3):
            assert client.post("/estimate", json=_estimate(f"nosuch/n-{index}")).status_code == 422
        refused = client.post("/estimate", json=_estimate("nosuch/n-9"))
        assert refused.status_code == 429, refused.text
        error = refused.json()["errors"][0]
        assert (error["type"], error["field"]) == ("hub_new_ids", "model.hf_id")
        assert 0 < int(refused.headers["Retry-After"]) <= 60
    assert len(hub.hits) == 3  # the fourth never reached the Hub
    db.info[CLIENT] = f"client-{uuid.uuid4().hex}"  # another address has its own budget
    with _client(app_settings, db, hf_new_ids_per_minute=3, hf_miss_ttl_s=0) as client:
        assert client.post("/estimate", json=_estimate("nosuch/n-9")).status_code == 422


def test_absurd_numbers_are_refused_not_a_500(client: TestClient, hub: StandInHub, db: Session) -> None:
    bad = {
        "huge/theta": {**CONFIG, "rope_theta": int("1" + "0" * 400)},
        "huge/positions": {**CONFIG, "max_position_embeddings": 10**30},
        "huge/factor": {**CONFIG, "rope_scaling": {"type": "yarn", "factor": 1e308}},
    }
    refused: dict[str, int] = {}
    for hf_id, config in bad.items():
        hub.answer(hf_id, Answer(body=json.dumps(config).encode()))
        for _ in range(2):
            response = client.post("/estimate", json=_estimate(hf_id))
            refused[hf_id] = response.status_code
            error = response.json()["errors"][0]
            # the JSON bounds refuse a number past a 64-bit float (502); the cache's own bounds the rest (422)
            assert (response.status_code, error["type"]) in {(422, "hub_number_absurd"), (502, "hub_json_bounds")}
            if response.status_code == 422:
                assert "is out of range" in error["message"], error
    assert refused["huge/positions"] == refused["huge/factor"] == 422  # inside a float's range: the cache's bounds
    assert all(r.config_json is None for r in _rows(db))
    assert len(hub.hits) == 3


def test_a_bad_stored_row_is_read_as_a_miss(client: TestClient, hub: StandInHub, db: Session) -> None:
    now = datetime.now(UTC)
    for text in (json.dumps({**CONFIG, "rope_theta": int("9" * 400)}), "{not json", "[1, 2]"):
        db.add(
            HubConfig(
                hf_key=QWEN.hf_repo.casefold(), revision="main", config_json=text, size_bytes=len(text), used_at=now
            )
        )
        db.flush()
        response = client.post("/estimate", json=_estimate(QWEN.hf_repo))
        assert response.status_code == 200, response.text
        (row,) = _rows(db)
        assert json.loads(row.config_json or "") == CONFIG  # read again from the Hub, stored clean
        db.delete(row)
        db.flush()
    assert len(hub.hits) == 3
