"""A model named by its Hugging Face id: config.json read from a local stand-in for the Hub
(tests/hub_server.py), kept in the database, and every way the Hub can fail named on `model.hf_id`.

The stand-in serves the shipped presets' configs under their Hub ids; the parameter counts asserted
are the presets' published counts (app/estimator/data/presets.json, each with its config.json source).
"""

from __future__ import annotations

import json
import re
import ssl
from contextlib import AbstractContextManager
from typing import Any

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.common.settings import Settings
from app.common.tls import client_context
from app.estimator.presets import get_preset, preset_config
from app.hub.models import HubConfig
from app.text import messages
from tests.conftest import client_for
from tests.hub_server import GATED_TOKEN, Answer, StandInHub
from tests.servers import free_port

QWEN = get_preset("qwen2.5-7b")  # hf_repo Qwen/Qwen2.5-7B: 7,615,616,512 parameters (its config.json)
LORA = {"task": "lora", "seq_len": 2048, "tokens": 1e8}


def _estimate(hf_id: str) -> dict[str, Any]:
    return {"model": {"hf_id": hf_id}, **LORA, "hardware": {"gpu": "a100-40g-pcie"}}


def _client(settings: Settings, db: Session, **changes: Any) -> AbstractContextManager[TestClient]:
    """A client of an app built with changed settings (a token, a timeout, another endpoint)."""
    return client_for(settings.model_copy(update=changes), db)


def _hub_error(response: Any, status: int) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert response.headers["content-type"] == "application/problem+json"
    assert [e["field"] for e in body["errors"]] == ["model.hf_id"]
    return str(body["errors"][0]["message"])


def test_recommend_sizes_a_model_named_by_its_hub_id(client: TestClient, hub: StandInHub) -> None:
    response = client.post("/recommend", json={"model": {"hf_id": QWEN.hf_repo}, **LORA})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["model"]["params"] == QWEN.published_params
    assert body["model"]["name"] == QWEN.hf_repo
    assert body["options"]
    assert hub.hits == [f"/{QWEN.hf_repo}/resolve/main/config.json"]
    quote_body = body["options"][0]["quote"]
    assert quote_body["workload"]["model"]["hf_id"] == QWEN.hf_repo
    assert quote_body["workload"]["model"]["hf_config"] == preset_config("qwen2.5-7b")  # the quote keeps it


def test_second_request_reads_the_database_not_the_hub(client: TestClient, hub: StandInHub, db: Session) -> None:
    first = client.post("/estimate", json=_estimate(QWEN.hf_repo))
    second = client.post("/estimate", json=_estimate(QWEN.hf_repo))
    assert first.status_code == second.status_code == 200, second.text
    assert first.json()["memory"] == second.json()["memory"]
    assert len(hub.hits) == 1
    row = db.scalars(select(HubConfig)).one()
    assert (row.hf_key, row.revision) == (QWEN.hf_repo.casefold(), "main")
    assert json.loads(row.config_json) == preset_config("qwen2.5-7b")


def test_fetches_share_one_tls_context(client: TestClient, hub: StandInHub, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each config.json fetched made an httpx client that loaded the CA bundle again (about 30 ms of CPU); the
    fetches of a process share one context (app/common/tls.py)."""
    loaded: list[object] = []
    real = ssl.create_default_context
    monkeypatch.setattr(ssl, "create_default_context", lambda *a, **k: loaded.append(k) or real(*a, **k))
    client_context.cache_clear()
    for preset in ("qwen2.5-7b", "llama-3-8b"):
        assert client.post("/estimate", json=_estimate(get_preset(preset).hf_repo)).status_code == 200
    assert len(hub.hits) == 2
    assert len(loaded) == 1


def test_cached_config_serves_while_the_hub_is_unreachable(
    app_settings: Settings, db: Session, hub: StandInHub
) -> None:
    with _client(app_settings, db) as client:
        assert client.post("/estimate", json=_estimate(QWEN.hf_repo)).status_code == 200
    with _client(app_settings, db, hf_endpoint=f"http://127.0.0.1:{free_port()}") as offline:
        assert offline.post("/estimate", json=_estimate(QWEN.hf_repo)).status_code == 200
        message = _hub_error(offline.post("/estimate", json=_estimate("Qwen/Qwen2.5-3B")), 503)
    assert "unreachable" in message


def test_gated_model_needs_hf_token(app_settings: Settings, db: Session, hub: StandInHub) -> None:
    hub.answer(
        "meta-llama/Gated-7B", Answer(body=json.dumps(preset_config("llama-2-7b")).encode(), needs_token=GATED_TOKEN)
    )
    with _client(app_settings, db) as client:
        message = _hub_error(client.post("/estimate", json=_estimate("meta-llama/Gated-7B")), 422)
    assert "gated or private" in message and "HF_TOKEN" in message
    with _client(app_settings, db, hf_token=SecretStr(GATED_TOKEN)) as client:
        response = client.post("/estimate", json=_estimate("meta-llama/Gated-7B"))
    assert response.status_code == 200, response.text
    assert hub.headers_seen[-1]["Authorization"] == f"Bearer {GATED_TOKEN}"


def test_unknown_model_is_a_422_naming_the_field(client: TestClient, hub: StandInHub) -> None:
    response = client.post("/estimate", json=_estimate("nobody/no-such-model"))
    message = _hub_error(response, 422)
    assert message.startswith("no model nobody/no-such-model on the Hugging Face Hub")
    error = response.json()["errors"][0]
    assert (error["type"], error["params"]) == ("hub_not_found", {"hf_id": "nobody/no-such-model"})


def test_a_model_without_config_json(client: TestClient, hub: StandInHub) -> None:
    hub.answer("someone/gguf-only", Answer(404, b"{}", {"X-Error-Code": "EntryNotFound"}))
    assert "has no config.json" in _hub_error(client.post("/estimate", json=_estimate("someone/gguf-only")), 422)


def test_a_slow_hub_is_a_503_within_the_timeout(app_settings: Settings, db: Session, hub: StandInHub) -> None:
    hub.answer("slow/model", Answer(body=b"{}", delay_s=2.0))
    with _client(app_settings, db, hf_timeout_s=0.3) as client:
        response = client.post("/estimate", json=_estimate("slow/model"))
    assert "did not answer within 0.3 s" in _hub_error(response, 503)
    assert response.headers["Retry-After"] == "30"


def test_a_config_larger_than_a_request_body_is_refused(app_settings: Settings, db: Session, hub: StandInHub) -> None:
    config = {**preset_config("qwen2.5-7b"), "padding": "x" * 4096}
    hub.answer("big/model", Answer(body=json.dumps(config).encode()))
    with _client(app_settings, db, max_body_bytes=2048) as client:
        message = _hub_error(client.post("/estimate", json=_estimate("big/model")), 502)
    assert "larger than 2048 bytes" in message


def test_hub_errors_and_non_json_are_502(client: TestClient, hub: StandInHub) -> None:
    hub.answer("down/model", Answer(500, b"oops"))
    hub.answer("html/model", Answer(body=b"<html>login</html>"))
    hub.answer("deep/model", Answer(body=b'{"a":' * 40 + b"1" + b"}" * 40))
    assert "answered 500" in _hub_error(client.post("/estimate", json=_estimate("down/model")), 502)
    assert "is not JSON" in _hub_error(client.post("/estimate", json=_estimate("html/model")), 502)
    assert "nested deeper than 32" in _hub_error(client.post("/estimate", json=_estimate("deep/model")), 502)


def test_a_model_that_is_not_a_decoder_llm(client: TestClient, hub: StandInHub) -> None:
    bert = {"model_type": "bert", "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12}
    hub.answer("google-bert/bert-base-uncased", Answer(body=json.dumps(bert).encode()))
    message = _hub_error(client.post("/estimate", json=_estimate("google-bert/bert-base-uncased")), 422)
    assert message.startswith("google-bert/bert-base-uncased cannot be sized as a decoder language model")
    assert "'bert'" in message


def test_a_malformed_id_never_reaches_the_hub(client: TestClient, hub: StandInHub) -> None:
    for bad in ("../../etc/passwd", "a/b/c", "Qwen/..", "with space/x", "-lead/x"):
        response = client.post("/estimate", json=_estimate(bad))
        assert response.status_code == 422, bad
        assert response.json()["errors"][0]["field"] == "model.hf_id"
    assert hub.hits == []


def test_a_quote_keeps_the_config_it_was_priced_on(client: TestClient, hub: StandInHub) -> None:
    option = client.post("/recommend", json={"model": {"hf_id": QWEN.hf_repo}, **LORA}).json()["options"][0]
    body = {**option["quote"], "customer": {"name": "Ada", "company": "Example", "email": "ada@example.com"}}
    body["workload"]["model"] = {"hf_id": QWEN.hf_repo}  # a script sends the id alone
    created = client.post("/quotes", json=body)
    assert created.status_code == 201, created.text
    assert created.json()["workload"]["model"]["hf_config"] == preset_config("qwen2.5-7b")


def test_a_refused_config_is_worded_in_chinese_by_its_codes(client: TestClient, hub: StandInHub) -> None:
    """The estimator's refusal of a Hub config is kept as its code and figures (`reason`), and a number out of the
    cache's bounds is a code of its own, so Accept-Language: zh reads them in Chinese (both carried an English
    sentence in `params.reason`, which a Chinese page showed as it was)."""
    bert = {"model_type": "bert", "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12}
    hub.answer("google-bert/bert-base-uncased", Answer(body=json.dumps(bert).encode()))
    hub.answer(
        "huge/positions", Answer(body=json.dumps({**preset_config("qwen2.5-7b"), "rope_theta": 10**30}).encode())
    )
    for hf_id, code in [("google-bert/bert-base-uncased", "hub_not_sizeable"), ("huge/positions", "hub_number_absurd")]:
        for _ in range(2):  # the first answer, then the refusal remembered (the miss row) worded the same
            response = client.post("/estimate", json=_estimate(hf_id), headers={"Accept-Language": "zh"})
            assert response.status_code == 422, response.text
            (error,) = response.json()["errors"]
            assert error["type"] == code and error["message"] == messages.hub(code, error["params"], "zh")
            assert error["message"].startswith(f"{hf_id} 无法按解码器语言模型估算：")
            assert not re.search(r"cannot|Unknown|out of range|supported", error["message"]), error["message"]
    reason = response.json()["errors"][0]["params"]
    assert reason["where"] == "rope_theta" and reason["most_integer"] == 2**53
