"""A checkpoint's quantization_config as the weight format serving sizes (app/estimator/checkpoints.py). Each config
is the repository's own config.json block (huggingface.co/<repo>/blob/main/config.json)."""

from __future__ import annotations

import pytest

from app.estimator.checkpoints import Checkpoint, checkpoint_from_config
from app.estimator.presets import get_preset, preset_config
from app.estimator.serving import weights_bytes
from app.estimator.specs import GIB

CASES = [
    # deepseek-ai/DeepSeek-V3, Qwen/Qwen3-8B-FP8: FP8 E4M3, one float32 scale per 128 x 128 block
    (
        {"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8", "weight_block_size": [128, 128]},
        ("fp8", 16384, "block FP8 (128 x 128 scales)"),
    ),
    # meta-llama/Llama-3.1-405B-Instruct-FP8: fbgemm FP8, a scale per output channel
    ({"activation_scale_ub": 1200.0, "quant_method": "fbgemm_fp8"}, ("fp8", None, "FP8 (fbgemm, a scale per channel)")),
    # hugging-quants/Meta-Llama-3.1-8B-Instruct-AWQ-INT4
    (
        {"bits": 4, "group_size": 128, "quant_method": "awq", "version": "gemm", "zero_point": True},
        ("int4", 128, "4-bit AWQ (group 128)"),
    ),
    # an 8-bit GPTQ checkpoint quantised per output channel (group_size -1)
    (
        {"bits": 8, "group_size": -1, "quant_method": "gptq", "desc_act": True, "sym": True},
        ("int8", None, "8-bit GPTQ"),
    ),
    # RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8-dynamic (llm-compressor): FP8 weights, a scale per channel
    (
        {
            "quant_method": "compressed-tensors",
            "format": "float-quantized",
            "config_groups": {
                "group_0": {
                    "targets": ["Linear"],
                    "weights": {"num_bits": 8, "type": "float", "strategy": "channel", "symmetric": True},
                    "input_activations": {"num_bits": 8, "type": "float", "strategy": "token", "dynamic": True},
                }
            },
        },
        ("fp8", None, "compressed-tensors FP8 (channel scales)"),
    ),
    # RedHatAI/Meta-Llama-3.1-8B-Instruct-quantized.w4a16 (llm-compressor GPTQ, pack-quantized)
    (
        {
            "quant_method": "compressed-tensors",
            "format": "pack-quantized",
            "config_groups": {
                "group_0": {
                    "targets": ["Linear"],
                    "weights": {"num_bits": 4, "type": "int", "strategy": "group", "group_size": 128},
                }
            },
        },
        ("int4", 128, "compressed-tensors 4-bit integer (group)"),
    ),
    # unsloth/*-bnb-4bit: transformers BitsAndBytesConfig, NF4 in blocks of 64
    (
        {"quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_quant_type": "nf4"},
        ("int4", 64, "bitsandbytes NF4 (4-bit)"),
    ),
    ({"quant_method": "modelopt", "quant_algo": "FP8"}, ("fp8", None, "Model Optimizer FP8")),
]


@pytest.mark.parametrize(("quant", "expected"), CASES)
def test_each_quantisation_library_is_read_as_its_weight_format(quant: dict, expected: tuple) -> None:
    found = checkpoint_from_config({"model_type": "llama", "quantization_config": quant})
    assert found.quantised and found.readable
    assert (found.weights, found.group_size, found.scheme) == expected


@pytest.mark.parametrize(
    "quant",
    [
        {"quant_method": "modelopt", "quant_algo": "NVFP4"},  # nvidia/*-FP4 checkpoints: 4-bit floats
        {"quant_method": "mxfp4"},  # openai/gpt-oss-*: MXFP4 experts
        {  # compressed-tensors NVFP4 (num_bits 4, type float)
            "quant_method": "compressed-tensors",
            "config_groups": {"group_0": {"weights": {"num_bits": 4, "type": "float", "group_size": 16}}},
        },
        {"quant_method": "gptq", "bits": 3, "group_size": 128},
    ],
)
def test_a_format_serving_does_not_size_is_kept_unread_not_guessed(quant: dict) -> None:
    found = checkpoint_from_config({"quantization_config": quant})
    assert found.quantised and not found.readable and found.weights is None
    assert found.method == quant["quant_method"]


def test_an_unquantised_checkpoint_keeps_its_dtype() -> None:
    assert checkpoint_from_config({"torch_dtype": "bfloat16"}) == Checkpoint(dtype="bf16")
    assert checkpoint_from_config(None) == Checkpoint()
    assert not checkpoint_from_config(preset_config("llama-3.1-70b")).quantised


def test_the_deepseek_v3_preset_ships_block_fp8_and_is_sized_near_its_repository() -> None:
    """deepseek-ai/DeepSeek-V3's safetensors hold 671B main-model parameters in FP8 (embedding, head and norms in
    bf16) plus the 14B multi-token-prediction module, 685B in all (model card): about 625 GiB for the main model,
    half its bf16 size (1,250 GiB); the block scales add 4 bytes per 16,384 weights."""
    preset = get_preset("deepseek-v3")
    shipped = checkpoint_from_config(preset_config("deepseek-v3"))
    assert (shipped.weights, shipped.group_size) == ("fp8", 128 * 128)
    fp8 = weights_bytes(preset.model, "fp8", shipped.group_size) / GIB
    bf16 = weights_bytes(preset.model, "bf16") / GIB
    assert 615 < fp8 < 640 and fp8 < 0.52 * bf16
