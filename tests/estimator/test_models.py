"""Model descriptions: explicit architectures, bare parameter counts and pasted HF configs."""

from dataclasses import replace

import pytest

from app.estimator.models import (
    SUPPORTED_HF_TYPES,
    mla_attention_params,
    model_from_hf_config,
    model_from_params,
    validate_model,
)
from app.estimator.params import count_params
from app.estimator.presets import get_preset
from app.estimator.specs import EstimatorError, ModelSpec
from app.text import messages
from tests.hf_configs import LLAMA_2_7B, QWEN15_MOE

LLAMA2_7B = get_preset("llama-2-7b").model


def _field_of(model: ModelSpec, params: float | None = None) -> str | None:
    with pytest.raises(EstimatorError) as error:
        validate_model(model, params)
    return error.value.field


def test_a_valid_architecture_has_no_warnings() -> None:
    assert validate_model(LLAMA2_7B) == []
    assert validate_model(LLAMA2_7B, params=6_738_415_616) == []


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"layers": 0}, "model.layers"),
        ({"hidden": -4096}, "model.hidden"),
        ({"heads": 30}, "model.heads"),  # 4096 % 30 != 0 and no head_dim
        ({"kv_heads": 5}, "model.kv_heads"),  # does not divide 32
        ({"kv_heads": 64}, "model.kv_heads"),
        ({"vocab": 10**9}, "model.vocab"),
    ],
)
def test_bad_architectures_name_the_field(change: dict, field: str) -> None:
    assert _field_of(replace(LLAMA2_7B, **change)) == field


def test_head_dim_lifts_the_divisibility_rule() -> None:
    assert validate_model(replace(LLAMA2_7B, heads=30, kv_heads=10, head_dim=128)) == []


def test_moe_top_k_must_not_exceed_experts() -> None:
    mixtral = get_preset("mixtral-8x7b").model
    assert _field_of(replace(mixtral, experts_per_token=9)) == "model.experts_per_token"


def test_absurd_sizes_are_refused() -> None:
    huge = ModelSpec(name="huge", layers=4000, hidden=2**17, heads=1024, kv_heads=8, ffn=2**19, vocab=32000)
    assert count_params(huge).total > 1e13
    assert _field_of(huge) == "model"


def test_stated_params_far_off_are_refused_and_say_the_exact_count() -> None:
    with pytest.raises(EstimatorError) as error:
        validate_model(LLAMA2_7B, params=7.5e9)
    assert "6,738,415,616" in str(error.value)


def test_stated_params_slightly_off_give_a_warning_with_the_difference() -> None:
    warnings = validate_model(LLAMA2_7B, params=7.0e9)
    assert [w.code for w in warnings] == ["params_mismatch"]
    assert warnings[0].params["difference"] == 261_584_384
    assert "+261,584,384" in messages.warning(warnings[0].code, warnings[0].params)  # the API's message


@pytest.mark.parametrize("n_params", [1.5e8, 1.3e9, 7e9, 13e9, 34e9, 70e9, 175e9, 405e9, 1e12])
def test_model_from_params_is_close_and_marked_approximate(n_params: float) -> None:
    model = model_from_params(n_params)
    assert model.approximate
    assert validate_model(model) == []
    assert count_params(model).total == pytest.approx(n_params, rel=0.05)


@pytest.mark.parametrize("bad", [0, -1, 1e16, float("nan"), float("inf")])
def test_model_from_params_refuses_bad_sizes(bad: float) -> None:
    with pytest.raises(EstimatorError) as error:
        model_from_params(bad)
    assert error.value.field == "model.params"


def test_hf_config_llama_round_trip() -> None:
    assert count_params(model_from_hf_config(LLAMA_2_7B)).total == 6_738_415_616


def test_hf_config_unknown_model_type_lists_supported() -> None:
    with pytest.raises(EstimatorError) as error:
        model_from_hf_config({"model_type": "mamba"})
    assert error.value.field == "model.hf_config.model_type"
    assert "llama" in str(error.value) and "deepseek_v3" in str(error.value)


def test_hf_config_missing_keys_are_named() -> None:
    with pytest.raises(EstimatorError) as error:
        model_from_hf_config({"model_type": "mistral", "hidden_size": 4096})
    message = str(error.value)
    for key in ("num_hidden_layers", "num_attention_heads", "vocab_size", "intermediate_size"):
        assert key in message


def test_hf_config_must_be_an_object() -> None:
    with pytest.raises(EstimatorError):
        model_from_hf_config(["llama"])  # type: ignore[arg-type]


def test_all_required_families_are_supported() -> None:
    required = {
        "llama",
        "mistral",
        "mixtral",
        "qwen2",
        "qwen2_moe",
        "qwen3",
        "qwen3_moe",
        "gemma",
        "gemma2",
        "phi3",
        "gpt2",
        "gpt_neox",
        "falcon",
        "deepseek_v2",
        "deepseek_v3",
    }
    assert required <= set(SUPPORTED_HF_TYPES)


def test_qwen2_moe_shared_expert_and_sparse_layers() -> None:
    # Qwen/Qwen1.5-MoE-A2.7B config.json; published 14,315,784,192 params (shared_expert_gate h per layer not modelled)
    config = {**QWEN15_MOE, "mlp_only_layers": [], "tie_word_embeddings": False}
    model = model_from_hf_config(config)
    assert model.moe_layers == 24 and model.shared_experts == 4
    assert count_params(model).total == pytest.approx(14_315_784_192, rel=1e-4)


def test_deepseek_mla_is_matched_in_parameters() -> None:
    preset = get_preset("deepseek-v3")
    # built from its config.json, not from a parameter count: no approximate_model warning; the preset's note
    # says what is approximated (MLA as an equal-parameter GQA layer)
    assert not preset.model.approximate and "MLA attention approximated" in preset.note
    assert count_params(preset.model).total == pytest.approx(671_026_419_200, rel=1e-4)


def test_mla_attention_count_is_exact_for_v3() -> None:
    config = {
        "hidden_size": 7168,
        "num_attention_heads": 128,
        "q_lora_rank": 1536,
        "kv_lora_rank": 512,
        "qk_nope_head_dim": 128,
        "qk_rope_head_dim": 64,
        "v_head_dim": 128,
    }
    q = 7168 * 1536 + 1536 + 1536 * 128 * 192
    kv = 7168 * 576 + 512 + 512 * 128 * 256
    assert mla_attention_params(config) == q + kv + 128 * 128 * 7168


def test_sparse_and_moe_layer_counts_are_arithmetic_and_match_the_definitions() -> None:
    # transformers' definitions: Qwen MoE layer i is sparse when i not in mlp_only_layers and (i + 1) % step == 0
    # (modeling_qwen2_moe.py); DeepSeek layer i is MoE when i >= first_k_dense_replace and i % moe_layer_freq == 0
    from app.estimator.models import _multiples_in, _sparse_layer_count

    for layers in range(1, 30):
        for step in range(1, 7):
            dense = [0, 3, 8, 40]
            expected = sum(1 for i in range(layers) if i not in dense and (i + 1) % step == 0)
            assert _sparse_layer_count({"decoder_sparse_step": step, "mlp_only_layers": dense}, layers) == expected
            for first in range(0, 8):
                assert _multiples_in(first, layers, step) == sum(1 for i in range(first, layers) if i % step == 0)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("num_hidden_layers", 10**12),
        ("num_hidden_layers", float("inf")),
        ("decoder_sparse_step", "0"),
        ("num_experts", -1),
        ("hidden_size", 4096.5),
        ("vocab_size", True),
        ("mlp_only_layers", [1, "x"]),
    ],
)
def test_hf_config_counts_are_checked_before_use(key: str, value: object) -> None:
    config = {
        "model_type": "qwen2_moe",
        "num_hidden_layers": 24,
        "hidden_size": 2048,
        "num_attention_heads": 16,
        "vocab_size": 151936,
        "num_experts": 60,
        "num_experts_per_tok": 4,
        "moe_intermediate_size": 1408,
    }
    with pytest.raises(EstimatorError) as error:
        model_from_hf_config({**config, key: value})
    assert error.value.field == f"model.hf_config.{key}"
    assert "must be an integer from" in str(error.value)


@pytest.mark.parametrize(
    ("model_type", "key"),
    [
        ("llama", "tie_word_embeddings"),
        ("llama", "attention_bias"),
        ("falcon", "bias"),
        ("falcon", "multi_query"),
        ("falcon", "new_decoder_architecture"),
    ],
)
def test_hf_config_flags_must_be_true_or_false(model_type: str, key: str) -> None:
    """Review R12: bool() of a string read "yes" and "false" alike as true."""
    config = {
        "model_type": model_type,
        "num_hidden_layers": 4,
        "hidden_size": 1024,
        "num_attention_heads": 8,
        "intermediate_size": 2816,
        "vocab_size": 32000,
    }
    for value in ("false", "yes", 1, 0.0):
        with pytest.raises(EstimatorError) as error:
            model_from_hf_config({**config, key: value})
        assert (error.value.field, error.value.code) == (f"model.hf_config.{key}", "hf_config_flag")
        assert (
            str(error.value)
            == f"hf_config.{key} must be true or false (a JSON boolean, not a string or number), got {value!r}."
        )


MIXTRAL_SMALL = {
    "model_type": "mixtral",
    "num_hidden_layers": 4,
    "hidden_size": 1024,
    "num_attention_heads": 8,
    "num_key_value_heads": 8,
    "intermediate_size": 2816,
    "vocab_size": 32000,
    "num_local_experts": 8,
    "num_experts_per_tok": 2,
    "max_position_embeddings": 4096,
}


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"rope_scaling": {"type": "yarn", "factor": -2}}, "model.hf_config.rope_scaling.factor"),
        ({"rope_scaling": {"rope_type": "linear", "factor": 0.5}}, "model.hf_config.rope_scaling.factor"),
        ({"max_position_embeddings": 0}, "model.hf_config.max_position_embeddings"),
        ({"num_local_experts": 0}, "model.hf_config.num_local_experts"),
        ({"num_experts_per_tok": 0}, "model.hf_config.num_experts_per_tok"),
    ],
)
def test_nonsense_a_config_states_is_refused_on_its_own_key(change: dict[str, object], field: str) -> None:
    """Review R10: a RoPE factor of -2 was reported on seq_len, a context of 0 accepted, and a Mixtral of 0 experts
    sized as a dense model. transformers validates a rope factor as >= 1 (modeling_rope_utils.py)."""
    assert model_from_hf_config(MIXTRAL_SMALL).experts == 8
    with pytest.raises(EstimatorError) as refused:
        model_from_hf_config({**MIXTRAL_SMALL, **change})
    assert refused.value.field == field


def test_a_model_over_the_size_limit_is_refused_with_two_different_figures() -> None:
    """Before: "1e+13 parameters; at most 1e+13 are supported": the limit printed equal to the value."""
    model = ModelSpec(name="huge", layers=146, hidden=65536, heads=512, kv_heads=512, ffn=4 * 65536, vocab=32000)
    total = count_params(model).total
    assert 1e13 < total < 1.01e13
    with pytest.raises(EstimatorError) as refused:
        validate_model(model)
    assert f"{total:,} parameters; at most 10,000,000,000,000 are supported" in str(refused.value)


def test_a_parameter_count_out_of_range_names_the_range_in_full() -> None:
    with pytest.raises(EstimatorError) as refused:
        model_from_params(1.0000001e13)
    assert "params=10,000,001,000,000 is outside the supported range 1,000,000 to 10,000,000,000,000" in str(
        refused.value
    )
