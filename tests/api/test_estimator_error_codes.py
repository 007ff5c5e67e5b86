"""An estimator refusal is a code with its figures (app/estimator/error_words.py): the API's `errors[]` carries the
code as `type` and the figures as `params` beside the English message, which reads as before; the wizard and the
serving pages word it in the page's language."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from app.estimator.models import validate_model
from app.estimator.presets import get_preset, list_presets
from app.estimator.specs import EstimatorError, ModelSpec
from app.text import messages
from tests.web.test_serve_chinese import allowed_names, english_runs

HTML = {"accept": "text/html,application/xhtml+xml"}


def test_the_english_message_is_the_sentence_it_was() -> None:
    model = ModelSpec(name="x", layers=4, hidden=4096, heads=32, kv_heads=5, ffn=11008, vocab=32000)
    with pytest.raises(EstimatorError) as caught:
        validate_model(model)
    error = caught.value
    assert str(error) == "kv_heads (5) must divide heads (32) (1 = MQA, heads = MHA, else GQA)."
    assert (error.code, error.params, error.field) == (
        "model_kv_heads_divide",
        {"kv_heads": 5, "heads": 32},
        "model.kv_heads",
    )
    assert (
        messages.estimator_error(error, "zh")
        == "kv_heads（5）必须整除 heads（32）（1 为 MQA，等于 heads 为 MHA，其余为 GQA）。"
    )


def test_an_unknown_preset_lists_the_closest_in_either_language() -> None:
    with pytest.raises(EstimatorError) as caught:
        get_preset("llama-3.1-70")
    assert str(caught.value).startswith("Unknown model preset 'llama-3.1-70'; closest: llama-3.1-70b")
    assert messages.estimator_error(caught.value, "zh").startswith(
        "未知的模型预设 'llama-3.1-70'；最接近的：llama-3.1-70b"
    )


def test_the_api_carries_the_code_and_its_figures(client: TestClient) -> None:
    body = {"model": {"preset": "no-such-model"}, "task": "lora", "tokens": 1e8, "hardware": {"gpu": "h100-80g-sxm"}}
    answer = client.post("/estimate", json=body)
    assert answer.status_code == 422, answer.text
    (error,) = answer.json()["errors"]
    assert error["field"] == "model.preset"
    assert error["type"] in ("preset_unknown", "preset_unknown_close")
    assert error["params"]["preset"] == "no-such-model"  # review R13: was "'no-such-model'", repr quotes in the value
    assert error["message"] == messages.estimator_text(error["type"], error["params"])


def test_the_wizard_words_an_unknown_preset_in_chinese(client: TestClient) -> None:
    """Before: the estimator's English sentence sat in the Chinese wizard's error summary."""
    page = client.get(
        "/results?preset=no-such-model&task=lora&tokens_b=0.1&lang=zh", headers={**HTML, "accept-language": "zh"}
    )
    assert page.status_code == 422, page.text[:2000]
    assert "未知的模型预设" in page.text
    presets = [preset.id for preset in list_presets()]  # the ids it lists are identifiers, not sentences
    assert english_runs(page.text, [*allowed_names(client), *presets, "no-such-model"]) == []


@pytest.mark.parametrize("model", [{"preset": "llama-3-8b"}, {"hf_config": {"model_type": "llama"}}])
def test_a_parameter_count_beside_a_model_that_states_its_own_is_a_422(client: TestClient, model: dict) -> None:
    """Review R10: `{"preset": "llama-3-8b", "params": 5e5}` answered 200, the count silently dropped."""
    body = {"model": {**model, "params": 5e5}, "task": "lora", "tokens": 1e8}
    response = client.post("/recommend", json=body)
    assert response.status_code == 422, response.text
    assert "leave params out" in response.text


LLAMA_3_8B_CONFIG = {
    "model_type": "llama",
    "architectures": ["LlamaForCausalLM"],
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_attention_heads": 32,
    "num_hidden_layers": 32,
    "num_key_value_heads": 8,
    "vocab_size": 128256,
    "max_position_embeddings": 8192,
}


@pytest.mark.parametrize("value", ["yes", "false", 1, 0, [], {}])
def test_a_pasted_config_flag_that_is_not_true_or_false_is_a_422_naming_it(client: TestClient, value: object) -> None:
    """Review R12: `"tie_word_embeddings": "yes"` answered 200 with the embeddings tied ("false" too: bool() of a
    non-empty string); a count in the same place was already a 422."""
    body = {"model": {"hf_config": {**LLAMA_3_8B_CONFIG, "tie_word_embeddings": value}}, "task": "lora", "tokens": 1e7}
    response = client.post("/recommend", json=body)
    assert response.status_code == 422, response.text
    (error,) = response.json()["errors"]
    assert (error["field"], error["type"], error["params"]["key"]) == (
        "model.hf_config.tie_word_embeddings",
        "hf_config_flag",
        "tie_word_embeddings",
    )
    assert error["message"].startswith("hf_config.tie_word_embeddings must be true or false")
    zh = messages.estimator_text(error["type"], error["params"], "zh")
    assert zh.startswith("hf_config.tie_word_embeddings 必须为 true 或 false")


def test_a_pasted_config_flag_stated_true_false_or_null_is_read_as_such(client: TestClient) -> None:
    def params(**flags: object) -> int:
        body = {"model": {"hf_config": {**LLAMA_3_8B_CONFIG, **flags}}, "task": "lora", "tokens": 1e7}
        response = client.post("/recommend", json=body)
        assert response.status_code == 200, response.text
        return response.json()["model"]["params"]

    untied = params(tie_word_embeddings=False)
    assert untied == 8_030_261_248  # meta-llama/Meta-Llama-3-8B: 8.03 B, embeddings untied
    assert params(tie_word_embeddings=True) == untied - 128256 * 4096
    assert params(tie_word_embeddings=None) == untied  # not stated: Llama's default, untied
