"""Pasted Hugging Face configs with absurd counts: a 422 naming the key, at once, over a real server
(through the API and through a plain GET link to the wizard's results page)."""

from __future__ import annotations

import json
from urllib.parse import urlencode

import httpx
import pytest

from tests.hf_configs import QWEN15_MOE

# DeepSeek-V2-Lite's config.json (huggingface.co/deepseek-ai/DeepSeek-V2-Lite)
DEEPSEEK = {
    "model_type": "deepseek_v2",
    "num_hidden_layers": 27,
    "hidden_size": 2048,
    "num_attention_heads": 16,
    "intermediate_size": 10944,
    "vocab_size": 102400,
    "kv_lora_rank": 512,
    "q_lora_rank": None,
    "qk_rope_head_dim": 64,
    "qk_nope_head_dim": 128,
    "v_head_dim": 128,
    "n_routed_experts": 64,
    "n_shared_experts": 2,
    "num_experts_per_tok": 6,
    "moe_intermediate_size": 1408,
    "first_k_dense_replace": 1,
    "moe_layer_freq": 1,
}

HOSTILE = [
    (QWEN15_MOE, "num_hidden_layers", 1_000_000_000_000),
    (QWEN15_MOE, "decoder_sparse_step", "0"),
    (QWEN15_MOE, "decoder_sparse_step", 0),
    (QWEN15_MOE, "num_hidden_layers", "1" * 5000),
    (QWEN15_MOE, "mlp_only_layers", 7),
    (DEEPSEEK, "num_hidden_layers", 10**15),
    (DEEPSEEK, "num_attention_heads", 10**12),
    (DEEPSEEK, "moe_layer_freq", 0),
    (DEEPSEEK, "kv_lora_rank", True),
]


def _body(config: dict) -> dict:
    return {"model": {"hf_config": config}, "task": "lora", "hardware": {"gpu": "h100-80g-sxm", "gpus_per_node": 8}}


@pytest.mark.parametrize(("base", "key", "value"), HOSTILE, ids=lambda v: str(v)[:20])
def test_an_absurd_count_is_a_422_naming_it(http: httpx.Client, base: dict, key: str, value: object) -> None:
    response = http.post("/estimate", json=_body({**base, key: value}))
    assert response.status_code == 422, response.text
    assert response.json()["errors"][0]["field"] == f"model.hf_config.{key}"


@pytest.mark.parametrize("literal", ["1e400", "-1e400", "1e12"])
def test_a_huge_number_literal_is_a_422(http: httpx.Client, literal: str) -> None:
    # 1e400 parses as infinity in Python's json; 1e12 as the float 1000000000000.0
    text = json.dumps(_body(QWEN15_MOE)).replace('"num_hidden_layers": 24', f'"num_hidden_layers": {literal}')
    response = http.post("/estimate", content=text, headers={"content-type": "application/json"})
    assert response.status_code == 422, response.text
    assert "num_hidden_layers" in response.json()["errors"][0]["field"]


def test_a_get_link_to_results_with_an_absurd_config_answers(http: httpx.Client) -> None:
    config = json.dumps({**QWEN15_MOE, "num_hidden_layers": 1_000_000_000_000})
    query = urlencode({"source": "config", "hf_config": config, "task": "lora", "lang": "en"})
    response = http.get(f"/results?{query}", headers={"accept": "text/html"})
    assert response.status_code in (200, 422)
    assert "num_hidden_layers" in response.text


def test_the_real_configs_still_estimate(http: httpx.Client) -> None:
    for config in (QWEN15_MOE, DEEPSEEK, {**QWEN15_MOE, "decoder_sparse_step": 2, "mlp_only_layers": [1, 3, 30]}):
        response = http.post("/estimate", json=_body(config))
        assert response.status_code == 200, response.text
