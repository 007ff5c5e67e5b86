"""The prefix cache and speculative decoding over HTTP: each field validated (422 naming it and what it allows), MTP
only for a checkpoint that ships its layers, and the options they change."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

CHAT = {
    "model": {"preset": "llama-3.1-8b"},
    "task": "serving",
    "serving": {"input_tokens": 2000, "output_tokens": 300, "requests_per_s": 2, "slo": {"tpot_ms": 40}},
    "constraints": {"gpu_types": ["h100-80g-sxm"]},
}
EAGLE3 = {"method": "eagle3", "num_speculative_tokens": 3, "acceptance_rate": 0.7}


def _with(body: dict, **serving: object) -> dict:
    return {**body, "serving": {**body["serving"], **serving}}


@pytest.mark.parametrize(
    ("serving", "field"),
    [
        ({"prefix_cache_hit_rate": 1.2}, "serving.prefix_cache_hit_rate"),
        ({"prefix_cache_hit_rate": -0.1}, "serving.prefix_cache_hit_rate"),
        ({"speculative": {**EAGLE3, "method": "medusa"}}, "serving.speculative.method"),
        ({"speculative": {**EAGLE3, "num_speculative_tokens": 0}}, "serving.speculative.num_speculative_tokens"),
        ({"speculative": {**EAGLE3, "acceptance_rate": 1.5}}, "serving.speculative.acceptance_rate"),
        ({"speculative": {"method": "eagle3", "num_speculative_tokens": 3}}, "serving.speculative.acceptance_rate"),
        ({"speculative": {**EAGLE3, "method": "mtp"}}, "serving.speculative.method"),
        (
            {"speculative": {**EAGLE3, "method": "draft_model", "draft_model": "no-such"}},
            "serving.speculative.draft_model",
        ),
        ({"speculative": {**EAGLE3, "method": "draft_model"}}, "serving.speculative"),
        ({"prefix_cache_hit_rate": 0.5, "batching": "static"}, "serving.prefix_cache_hit_rate"),
    ],
)
def test_bad_levers_are_422_naming_the_field(client: TestClient, serving: dict, field: str) -> None:
    response = client.post("/recommend", json=_with(CHAT, **serving))
    assert response.status_code == 422, response.text
    assert field in [error["field"] for error in response.json()["errors"]], response.text


def test_mtp_is_run_on_a_checkpoint_that_ships_it(client: TestClient) -> None:
    body = {
        "model": {"preset": "deepseek-v3"},
        "task": "serving",
        # one 8 × H200 server (TP 8): no engine runs MTP across pipeline stages (serving_levers.py)
        "hardware": {"gpu": "h200-141g-sxm", "nodes": 1, "gpus_per_node": 8},
        "serving": {"input_tokens": 2000, "output_tokens": 500, "concurrency": 8,
                    "speculative": {"method": "mtp", "num_speculative_tokens": 1, "acceptance_rate": 0.85}},
    }  # fmt: skip
    response = client.post("/estimate", json=body)
    assert response.status_code == 200, response.text
    plain = client.post("/estimate", json={**body, "serving": {**body["serving"], "speculative": None}}).json()
    assert response.json()["serving"]["tpot_ms"] < plain["serving"]["tpot_ms"]


def test_the_levers_lower_the_cost_and_show_in_the_launch(client: TestClient) -> None:
    plain = client.post("/recommend", json=CHAT).json()["options"][0]
    body = _with(CHAT, prefix_cache_hit_rate=0.6, speculative=EAGLE3)
    levered = client.post("/recommend", json=body).json()["options"][0]
    assert levered["serving"]["tpot_ms"] < plain["serving"]["tpot_ms"]
    assert levered["serving"]["isolated_ttft_ms"] < plain["serving"]["isolated_ttft_ms"]
    assert "--enable-prefix-caching" in levered["launch"]["command"]
    assert "--speculative-config" in levered["launch"]["command"]


RAG_SGLANG = {
    "model": {"preset": "llama-3.1-70b"},
    "task": "serving",
    "precision": "fp8",
    "weights": "fp8",
    "serving": {"input_tokens": 8000, "output_tokens": 300, "requests_per_s": 5, "engine": "sglang",
                "slo": {"ttft_ms": 2000, "tpot_ms": 50}},
}  # fmt: skip


def test_disaggregated_options_carry_their_pools(client: TestClient) -> None:
    response = client.post("/recommend", json=_with(RAG_SGLANG, disaggregated=True))
    assert response.status_code == 200, response.text
    result = response.json()
    assert result["options"], result["rejected"]  # the seeded 8x H100 SKU has an InfiniBand fabric
    for option in result["options"]:
        pools = option["serving"]["pools"]
        assert set(pools) == {"prefill", "decode"} and option["serving"]["kv_transfer_ms"] > 0
        assert pools["prefill"]["gpus"] + pools["decode"]["gpus"] <= option["total_gpus"]
        assert "--disaggregation-mode prefill" in option["launch"]["command"]
        assert option["serving"]["meets_slo"] is True
    assert all(r["code"] in {"no_fabric", "disaggregated_pools", "kernels", "gpu_type"} for r in result["rejected"])


@pytest.mark.parametrize(
    ("path", "serving"),
    [
        ("/recommend", {"disaggregated": "maybe"}),
        ("/recommend", {"disaggregated": 1}),
        ("/recommend", {"disaggregated": 0}),
        ("/recommend", {"disaggregated": True, "batching": "static"}),
        ("/estimate", {"disaggregated": True}),
    ],
)
def test_disaggregated_where_not_sized_is_422_naming_it(client: TestClient, path: str, serving: dict) -> None:
    body = _with(RAG_SGLANG, **serving)
    if path == "/estimate":
        body["hardware"] = {"sku": "h100-80g-sxm-8x", "nodes": 2}
    response = client.post(path, json=body)
    assert response.status_code == 422, response.text
    assert "serving.disaggregated" in [error["field"] for error in response.json()["errors"]], response.text


DRAFT = {"method": "draft_model", "num_speculative_tokens": 3, "acceptance_rate": 0.7}


@pytest.mark.parametrize(
    ("draft", "allowed"),
    [
        ("deepseek-v3", "vocabulary"),  # another tokenizer, and 84× the target
        ("qwen2.5-0.5b", "vocabulary"),  # 151,936 tokens against Llama 3.1's 128,256
        ("llama-3.1-70b", "25%"),  # same tokenizer, 9× the target: no speed-up
        ("llama-3.2-3b", "25%"),  # 40% of the target: k draft forwards cost as much as the verification saves
    ],
)
def test_a_draft_the_engines_cannot_pair_or_that_cannot_speed_up_is_422(
    client: TestClient, draft: str, allowed: str
) -> None:
    for path, extra in (("/recommend", {}), ("/estimate", {"hardware": {"sku": "h100-80g-sxm-8x", "nodes": 1}})):
        body = {**_with(CHAT, speculative={**DRAFT, "draft_model": draft}), **extra}
        if path == "/estimate":
            del body["constraints"]
        response = client.post(path, json=body)
        assert response.status_code == 422, response.text
        errors = {error["field"]: error["message"] for error in response.json()["errors"]}
        assert allowed in errors.get("serving.speculative.draft_model", ""), response.text


@pytest.mark.parametrize(("variant", "repo"), [(None, "Llama-3.2-1B-Instruct"), ("base", "Llama-3.2-1B")])
def test_the_draft_follows_the_targets_variant(client: TestClient, variant: str | None, repo: str) -> None:
    model = {"preset": "llama-3.1-8b", **({"variant": variant} if variant else {})}
    body = {**_with(CHAT, speculative={**DRAFT, "draft_model": "llama-3.2-1b"}), "model": model}
    response = client.post("/recommend", json=body)
    assert response.status_code == 200, response.text
    command = response.json()["options"][0]["launch"]["command"]
    assert f'"model": "meta-llama/{repo}"' in command, command
