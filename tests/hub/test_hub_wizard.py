"""The wizard names a model by its Hugging Face id: the field in English and Chinese, the results, the
downloads and the quote, and the Hub's refusals shown beside the field (the stand-in Hub of
tests/hub_server.py serves the shipped presets' configs under their Hub ids)."""

from __future__ import annotations

import json
from urllib.parse import urlencode

from fastapi.testclient import TestClient

from app.estimator.presets import get_preset, preset_config
from tests.hub_server import StandInHub

HTML = {"accept": "text/html,application/xhtml+xml"}
QWEN = get_preset("qwen2.5-7b")


def _query(hf_id: str, **more: str) -> str:
    return urlencode({"source": "hub", "hf_id": hf_id, "task": "lora", "tokens_b": "0.1", **more})


def test_the_wizard_offers_the_hub_id_field_in_both_languages(client: TestClient) -> None:
    en = client.get("/?lang=en", headers=HTML).text
    assert 'value="hub"' in en and "A Hugging Face model id" in en
    assert '<label for="f-hf_id">Hugging Face model id</label>' in en
    assert 'placeholder="Qwen/Qwen2.5-7B-Instruct"' in en
    zh = client.get("/?lang=zh", headers=HTML).text
    assert '<label for="f-hf_id">Hugging Face 模型 ID</label>' in zh
    assert "将从 Hub 读取其 config.json" in zh


def test_results_for_a_hub_id_and_the_script_names_it_alone(client: TestClient, hub: StandInHub) -> None:
    page = client.get(f"/results?{_query(QWEN.hf_repo)}&lang=en", headers=HTML)
    assert page.status_code == 200, page.text[:2000]
    assert QWEN.hf_repo in page.text
    assert "&#34;model&#34;: {\n    &#34;hf_id&#34;: &#34;Qwen/Qwen2.5-7B&#34;\n  }" in page.text
    assert "num_hidden_layers" not in page.text  # the equivalent API body sends the id, not the config
    launch = client.get(f"/results/launch.json?{_query(QWEN.hf_repo)}&option=1")
    assert launch.status_code == 200
    assert json.loads(launch.text)["model"]["hf_id"] == QWEN.hf_repo
    assert "qwen-qwen2.5-7b-lora" in launch.headers["content-disposition"]
    assert len(hub.hits) == 1  # the results page fetched it; the download read the database


def test_a_quote_from_the_wizard_keeps_the_config(client: TestClient, hub: StandInHub) -> None:
    fields = {"source": "hub", "hf_id": QWEN.hf_repo, "task": "lora", "tokens_b": "0.1", "option": "1"}
    customer = {"name": "Ada", "company": "Example", "email": "ada@example.com", "months": "1", "lang": "en"}
    response = client.post("/quote", data={**fields, **customer}, headers=HTML, follow_redirects=False)
    assert response.status_code == 303, response.text[:2000]
    quote = client.get(response.headers["location"].split("/print")[0]).json()
    assert quote["workload"]["model"]["hf_id"] == QWEN.hf_repo
    assert quote["workload"]["model"]["hf_config"] == preset_config("qwen2.5-7b")
    printed = client.get(response.headers["location"], headers=HTML).text
    assert "Qwen/Qwen2.5-7B" in printed and "7.6 billion" in printed


def test_hub_refusals_sit_beside_the_field(client: TestClient, hub: StandInHub) -> None:
    page = client.get(f"/results?{_query('nobody/no-such-model')}&lang=en", headers=HTML)
    assert page.status_code == 422
    assert '<p class="field-error" id="err-hf_id">no model nobody/no-such-model on the Hugging Face Hub' in page.text
    assert 'href="#f-hf_id"' in page.text  # the summary links to the field
    zh = client.get(f"/results?{_query('nobody/no-such-model')}&lang=zh", headers=HTML)
    assert '<p class="field-error" id="err-hf_id">Hugging Face Hub 上没有模型 nobody/no-such-model' in zh.text
    empty = client.get("/results?source=hub&hf_id=&task=lora&lang=zh", headers=HTML, follow_redirects=True)
    assert empty.status_code == 422
    assert 'id="err-hf_id"' in empty.text
    malformed = client.get(f"/results?{_query('../etc')}&lang=en", headers=HTML)
    assert malformed.status_code == 422 and 'id="err-hf_id"' in malformed.text
    assert hub.hits == ["/nobody/no-such-model/resolve/main/config.json"]  # the zh page: the miss remembered
