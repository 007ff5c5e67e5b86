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


LLAMA = {
    "model_type": "llama",
    "num_hidden_layers": 32,
    "hidden_size": 4096,
    "num_attention_heads": 32,
    "vocab_size": 32000,
    "intermediate_size": 11008,
}
HUGE_INT = "1" + "0" * 400  # no float holds it
LARGE_INT = "1" + "0" * 300  # a float holds it (1e300), but a product of two overflows
# (key in the config, JSON text of its value, the field the 422 names)
OVERFLOWING = [
    ("rope_theta", HUGE_INT, "model.hf_config.rope_theta"),
    ("rope_theta", LARGE_INT, "model.hf_config.rope_theta"),
    ("rms_norm_eps", HUGE_INT, "model.hf_config.rms_norm_eps"),
    ("max_position_embeddings", HUGE_INT, "model.hf_config.max_position_embeddings"),
    ("max_position_embeddings", LARGE_INT, "model.hf_config.max_position_embeddings"),
    ("rope_scaling", '{"rope_type": "yarn", "factor": 1e308}', "model.hf_config.rope_scaling.factor"),
    ("rope_scaling", '{"type": "yarn", "factor": 4, "beta_fast": ' + HUGE_INT + "}", "beta_fast"),
    (
        "rope_scaling",
        '{"rope_type": "yarn", "factor": 4, "original_max_position_embeddings": ' + LARGE_INT + "}",
        "model.hf_config.rope_scaling.original_max_position_embeddings",
    ),
]
SERVING = {"input_tokens": 1024, "output_tokens": 256, "concurrency": 8}


def _text(body: dict, key: str, value: str) -> str:
    return json.dumps(body).replace(f'"{key}": "@"', f'"{key}": {value}')


@pytest.mark.parametrize(("key", "value", "field"), OVERFLOWING, ids=lambda v: str(v)[:24])
@pytest.mark.parametrize("task", ["lora", "serving"])
def test_an_overflowing_config_number_is_a_422_naming_it(
    http: httpx.Client, key: str, value: str, field: str, task: str
) -> None:
    body = {**_body({**LLAMA, key: "@"}), "task": task, **({"serving": SERVING} if task == "serving" else {})}
    response = http.post("/estimate", content=_text(body, key, value), headers={"content-type": "application/json"})
    assert response.status_code == 422, response.text[:300]
    assert field in response.json()["errors"][0]["field"]


@pytest.mark.parametrize(("key", "value", "field"), OVERFLOWING, ids=lambda v: str(v)[:24])
def test_an_overflowing_config_number_in_a_results_link_answers(
    http: httpx.Client, key: str, value: str, field: str
) -> None:
    config = _text({**LLAMA, key: "@"}, key, value)
    query = urlencode({"source": "config", "hf_config": config, "task": "lora", "lang": "en"})
    response = http.get(f"/results?{query}", headers={"accept": "text/html"})
    assert response.status_code == 422, response.text[:300]
    assert field.rsplit(".", 1)[-1] in response.text
