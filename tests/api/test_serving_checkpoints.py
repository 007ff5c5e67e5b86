"""Checkpoints as shipped, over HTTP: a quantised checkpoint is sized and launched in its own format, the launch
names the chat model of a preset that ships both, and accepts requests up to the model's context (SQLite and
PostgreSQL, seeded catalog)."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from app.estimator.specs import Plan, Workload
from app.planner.launch import megatron_args
from app.planner.schemas import ModelIn
from app.planner.workload import resolve_model
from tests.factories import recommend
from tests.hub_server import StandInHub

# DeepSeek-V3 at 10 requests/s of 2,000 prompt and 500 output tokens (the serving review's s12 request).
DEEPSEEK_TRAFFIC = {
    "input_tokens": 2000,
    "output_tokens": 500,
    "requests_per_s": 10,
    "slo": {"ttft_ms": 2000, "tpot_ms": 100},
}
# Qwen/Qwen3-8B-FP8 config.json (huggingface.co/Qwen/Qwen3-8B-FP8/blob/main/config.json): the Qwen3-8B architecture
# with block-FP8 weights, one scale per 128 x 128 block.
QWEN3_8B_FP8 = {
    "architectures": ["Qwen3ForCausalLM"],
    "model_type": "qwen3",
    "hidden_size": 4096,
    "intermediate_size": 12288,
    "num_hidden_layers": 36,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "vocab_size": 151936,
    "max_position_embeddings": 40960,
    "rope_theta": 1000000,
    "rms_norm_eps": 1e-06,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
    "quantization_config": {
        "activation_scheme": "dynamic",
        "fmt": "e4m3",
        "quant_method": "fp8",
        "weight_block_size": [128, 128],
    },
}


def _recommend(client: TestClient, **body) -> dict:
    return recommend(client, task="serving", **body)


def _h100(result: dict, *, misses: bool = False) -> list[dict]:
    found = result["options"] + (result["near_misses"] if misses else [])
    return [o for o in found if o["sku"]["gpu"] == "h100-80g-sxm"]


def test_deepseek_v3_is_sized_on_its_fp8_checkpoint_by_default(client: TestClient) -> None:
    """deepseek-ai/DeepSeek-V3 ships block-FP8 weights (config.json quantization_config fp8, weight_block_size
    [128, 128]) and `vllm serve deepseek-ai/DeepSeek-V3` loads them as such. Sized in bf16 the review's s12 request
    took 9 H100 servers (3 x TP 8 x PP 3); on the FP8 weights the same traffic takes about 4 (2 x TP 8 x PP 2,
    the review's s12_fp8; 6 since vLLM's all-reduce is charged its in-place cost, 49 us a call: ALLREDUCE_IN_PLACE_S).
    The default must be the FP8 answer, with no --quantization flag (vLLM reads the config)."""
    default = _recommend(client, model={"preset": "deepseek-v3"}, serving=DEEPSEEK_TRAFFIC)
    stated = _recommend(client, model={"preset": "deepseek-v3"}, weights="fp8", serving=DEEPSEEK_TRAFFIC)
    bf16 = _recommend(client, model={"preset": "deepseek-v3"}, weights="bf16", serving=DEEPSEEK_TRAFFIC)
    h100 = _h100(default)
    assert h100, default["options"]
    top = h100[0]
    assert top["nodes"] <= 6, top["explanation"]
    assert [o["nodes"] for o in default["options"]] == [o["nodes"] for o in stated["options"]]
    bf16_h100 = _h100(bf16, misses=True)
    assert bf16_h100 and bf16_h100[0]["nodes"] >= 2 * top["nodes"], bf16_h100[0]["explanation"]
    weights_gib = top["serving"]["memory_per_gpu_gib"]["weights"]
    assert weights_gib < 0.6 * bf16_h100[0]["serving"]["memory_per_gpu_gib"]["weights"] * (
        bf16_h100[0]["plan"]["tp"] * bf16_h100[0]["plan"]["pp"] / (top["plan"]["tp"] * top["plan"]["pp"])
    )
    launch = top["launch"]
    assert launch["command"].startswith("vllm serve deepseek-ai/DeepSeek-V3 ")
    assert "--quantization" not in launch["command"]
    notes = " ".join(launch["notes"])
    assert "block FP8" in notes and "quantises" not in notes and "quantise " not in notes


def test_the_trtllm_launch_serves_the_fp8_checkpoint_without_requantising(client: TestClient) -> None:
    """TensorRT-LLM reads a block-FP8 quantization_config itself (tensorrt_llm/_torch/model_config.py
    load_hf_quant_config: FP8_BLOCK_SCALES) and its docs serve deepseek-ai/DeepSeek-V3 as is: no Model Optimizer
    step, the repository on the command line."""
    result = _recommend(client, model={"preset": "deepseek-v3"}, serving={**DEEPSEEK_TRAFFIC, "engine": "trt-llm"})
    launch = _h100(result, misses=True)[0]["launch"]
    assert "trtllm-serve deepseek-ai/DeepSeek-V3 " in launch["command"]
    notes = " ".join(launch["notes"])
    assert "hf_ptq.py" not in notes and "Model Optimizer" not in launch["command"]


def test_a_pasted_fp8_checkpoint_is_served_as_shipped(client: TestClient) -> None:
    result = _recommend(
        client,
        model={"hf_id": "Qwen/Qwen3-8B-FP8", "hf_config": QWEN3_8B_FP8},
        serving={"input_tokens": 1000, "output_tokens": 250, "requests_per_s": 5},
    )
    top = result["options"][0]
    assert top["launch"]["command"].startswith("vllm serve Qwen/Qwen3-8B-FP8 ")
    assert "--quantization" not in top["launch"]["command"]
    # 8.2B parameters, the linear ones in FP8, the embedding and head in bf16: about 8.8 GiB, not 15.3
    weights = top["serving"]["memory_per_gpu_gib"]["weights"] * top["plan"]["tp"]
    assert 8.0 < weights < 9.5


def test_an_unsized_quantisation_is_refused_on_weights_unless_stated(client: TestClient) -> None:
    nvfp4 = {**QWEN3_8B_FP8, "quantization_config": {"quant_method": "modelopt", "quant_algo": "NVFP4"}}
    body = {"model": {"hf_config": nvfp4}, "serving": {"input_tokens": 1000, "output_tokens": 250, "concurrency": 8}}
    response = client.post("/recommend", json={"task": "serving", **body})
    assert response.status_code == 422, response.text
    assert response.json()["errors"][0]["field"] == "weights"
    assert "NVFP4" in response.json()["errors"][0]["message"]
    assert client.post("/recommend", json={"task": "serving", "weights": "bf16", **body}).status_code == 200


def test_a_chat_deployment_serves_the_instruct_model(client: TestClient) -> None:
    """The review's s10: `vllm serve meta-llama/Llama-3.1-8B` for a chat service. A preset that ships both
    launches its instruct model unless model.variant asks for the base one."""
    serving = {"input_tokens": 1000, "output_tokens": 250, "requests_per_s": 50, "slo": {"ttft_ms": 500}}
    chat = _recommend(client, model={"preset": "llama-3.1-8b"}, serving=serving)["options"][0]["launch"]
    assert chat["command"].startswith("vllm serve meta-llama/Llama-3.1-8B-Instruct ")
    assert any("serves the instruct model meta-llama/Llama-3.1-8B-Instruct" in note for note in chat["notes"])
    base = _recommend(client, model={"preset": "llama-3.1-8b", "variant": "base"}, serving=serving)
    assert base["options"][0]["launch"]["command"].startswith("vllm serve meta-llama/Llama-3.1-8B ")


@pytest.mark.parametrize(
    ("model", "field"),
    [
        ({"preset": "gpt2", "variant": "instruct"}, "model.variant"),
        ({"hf_id": "Qwen/Qwen3-8B-FP8", "hf_config": QWEN3_8B_FP8, "variant": "base"}, "model"),
    ],
)
def test_a_variant_the_model_does_not_have_is_a_422(client: TestClient, model: dict, field: str) -> None:
    response = client.post("/recommend", json={"task": "serving", "model": model})
    assert response.status_code == 422, response.text
    assert response.json()["errors"][0]["field"] == field


def test_max_model_len_is_the_models_context_not_the_mean_request(client: TestClient) -> None:
    """The review's O13: `--max-model-len 1250` for 1,000 + 250 refuses any longer prompt. The launch accepts the
    model's context (Llama 3.1: 131,072) where a replica's KV cache holds it, else what the cache holds; a stated
    serving.max_request_tokens is the flag."""
    serving = {"input_tokens": 1000, "output_tokens": 250, "requests_per_s": 50}
    for engine, flag in (("vllm", "--max-model-len"), ("sglang", "--context-length"), ("trt-llm", "--max_seq_len")):
        launch = _recommend(client, model={"preset": "llama-3.1-8b"}, serving={**serving, "engine": engine})["options"][
            0
        ]["launch"]
        length = launch["max_model_len"]
        assert f"{flag} {length} " in launch["command"] + " "
        assert length > 8192 and (length == 131072 or any("KV cache holds" in n for n in launch["notes"]))
    stated = _recommend(client, model={"preset": "llama-3.1-8b"}, serving={**serving, "max_request_tokens": 16384})[
        "options"
    ][0]["launch"]
    assert "--max-model-len 16384 " in stated["command"] and stated["max_model_len"] == 16384


def test_a_stated_request_length_beyond_the_context_is_a_422_on_its_field(client: TestClient) -> None:
    body = {"input_tokens": 1000, "output_tokens": 250, "requests_per_s": 5, "max_request_tokens": 200_000}
    response = client.post("/recommend", json={"task": "serving", "model": {"preset": "llama-3.1-8b"}, "serving": body})
    assert response.status_code == 422, response.text
    assert response.json()["errors"][0]["field"] == "serving.max_request_tokens"


def test_the_serve_page_sizes_the_checkpoint_as_shipped_by_default(client: TestClient) -> None:
    """The /serve form's weight format defaults to the checkpoint's own, so the page answers as the API does."""
    query = "preset=deepseek-v3&requests_per_s=10&input_tokens=2000&output_tokens=500&ttft_ms=2000&tpot_ms=100"
    page = client.get(f"/serve/results?{query}", headers={"accept": "text/html"})
    assert page.status_code == 200, page.text[:2000]
    assert "vllm serve deepseek-ai/DeepSeek-V3 --tensor-parallel-size" in page.text
    assert "checkpoint of deepseek-ai" not in page.text and "--quantization fp8" not in page.text


def test_the_chinese_serve_page_words_the_launch_in_chinese(client: TestClient) -> None:
    query = "preset=llama-3.1-8b&requests_per_s=10&input_tokens=1024&output_tokens=256&ttft_ms=2000&tpot_ms=60"
    page = client.get(f"/serve/results?{query}&lang=zh", headers={"accept": "text/html"})
    assert page.status_code == 200
    assert "前置负载均衡" in page.text and "模型的上下文长度" in page.text and "加载 instruct 模型" in page.text
    assert "behind a load balancer" not in page.text


def test_a_hub_config_brings_its_quantization_config(client: TestClient, hub: StandInHub) -> None:
    """A model named by its Hub id is sized on the config.json the Hub serves, quantization_config included (the
    stand-in serves DeepSeek-V3's, block FP8): the same FP8 answer as the preset, its repository launched as is."""
    by_id = _recommend(client, model={"hf_id": "deepseek-ai/DeepSeek-V3"}, serving=DEEPSEEK_TRAFFIC)
    by_preset = _recommend(client, model={"preset": "deepseek-v3"}, serving=DEEPSEEK_TRAFFIC)
    assert [o["nodes"] for o in _h100(by_id)] == [o["nodes"] for o in _h100(by_preset)]
    launch = _h100(by_id)[0]["launch"]
    assert (
        launch["command"].startswith("vllm serve deepseek-ai/DeepSeek-V3 ")
        and "--quantization" not in launch["command"]
    )
    assert hub.hits == ["/deepseek-ai/DeepSeek-V3/resolve/main/config.json"]


def test_a_stated_request_length_below_the_mean_request_is_a_422_on_its_field(client: TestClient) -> None:
    body = {"input_tokens": 1000, "output_tokens": 250, "requests_per_s": 5, "max_request_tokens": 1000}
    response = client.post("/recommend", json={"task": "serving", "model": {"preset": "llama-3.1-8b"}, "serving": body})
    assert response.status_code == 422, response.text
    assert response.json()["errors"][0]["field"] == "serving.max_request_tokens"


def test_a_training_launch_names_the_variant_asked_for() -> None:
    """Fine-tuning the chat model: model.variant instruct puts its repository in the training launch (Megatron's
    tokenizer); without it the launch keeps the preset's own (pretrained) repository."""
    workload = Workload(task="full_finetune", seq_len=2048)
    for variant, repo in ((None, "meta-llama/Llama-3.1-8B"), ("instruct", "meta-llama/Llama-3.1-8B-Instruct")):
        model, _ = resolve_model(ModelIn(preset="llama-3.1-8b", variant=variant))
        assert model.hf_repo == repo
        assert f"--tokenizer-model {repo}" in megatron_args(model, workload, Plan(tp=2), 128, None)


def test_training_an_fp8_checkpoint_warns_that_it_needs_a_16_bit_copy(client: TestClient) -> None:
    """The review's O8: DeepSeek-V3 LoRA is sized on bf16 weights while the repository holds FP8 ones, and the
    launch never said to dequantise them first. The answer now carries that warning, worded in both languages."""
    response = client.post("/recommend", json={"model": {"preset": "deepseek-v3"}, "task": "lora", "tokens": 1e8})
    assert response.status_code == 200, response.text
    found = [w for w in response.json()["options"][0]["warnings"] if w["code"] == "quantised_checkpoint"]
    assert found and "fp8_cast_bf16.py" in found[0]["message"]
    assert found[0]["params"] == {
        "repo": "deepseek-ai/DeepSeek-V3",
        "scheme": "block FP8 (128 x 128 scales)",
        "scheme_note": {"code": "scheme_fp8_block", "params": {"rows": 128, "cols": 128}},  # the format, as a code
    }
    plain = client.post("/recommend", json={"model": {"preset": "llama-3.1-8b"}, "task": "lora", "tokens": 1e8})
    assert not [w for w in plain.json()["options"][0]["warnings"] if w["code"] == "quantised_checkpoint"]


def test_the_model_list_names_each_presets_variants_and_shipped_weights(client: TestClient) -> None:
    models = {m["id"]: m for m in client.get("/models").json()}
    assert models["deepseek-v3"]["checkpoint"] == {
        "quant_method": "fp8",
        "weights": "fp8",
        "scheme": "block FP8 (128 x 128 scales)",
    }
    assert models["deepseek-v3"]["variants"] == {
        "base": "deepseek-ai/DeepSeek-V3-Base",
        "instruct": "deepseek-ai/DeepSeek-V3",
    }
    assert models["llama-3.1-8b"]["checkpoint"]["quant_method"] is None
    assert models["llama-3.1-8b"]["variants"]["instruct"] == "meta-llama/Llama-3.1-8B-Instruct"
    assert models["gpt2"]["variants"] == {}
    # review R9: Mistral ships Mixtral-8x22B-Instruct-v0.1 beside the base model (its config.json states vocab_size
    # 32,768 where the base states 32,000, kept in variant_config), so a chat deployment serves it
    assert models["mixtral-8x22b"]["variants"]["instruct"] == "mistralai/Mixtral-8x22B-Instruct-v0.1"


@pytest.mark.parametrize(
    ("engine_name", "program"),
    [("vllm", "vllm serve "), ("sglang", "--model-path "), ("trt-llm", "trtllm-serve ")],
)
def test_a_pasted_config_without_a_repository_launches_a_placeholder_for_the_checkpoint(
    client: TestClient, engine_name: str, program: str
) -> None:
    """A pasted config.json names no repository: its model_type ("qwen3") is an architecture, and `vllm serve qwen3`
    cannot start. The command names a placeholder for the customer's checkpoint and a note says to fill it in."""
    config = {k: v for k, v in QWEN3_8B_FP8.items() if k != "quantization_config"}
    result = _recommend(
        client,
        model={"hf_config": config},
        serving={"engine": engine_name, "input_tokens": 1000, "output_tokens": 250, "requests_per_s": 5},
    )
    launch = result["options"][0]["launch"]
    assert f"{program}<path or repository of your checkpoint> " in launch["command"], launch["command"]
    assert " qwen3 " not in launch["command"] + " "
    codes = [text["code"] for text in launch["texts"]["notes"]]
    assert "checkpoint_unknown" in codes, codes


def test_fp8_asked_shows_the_cheaper_bf16_card_a_gpu_without_fp8_kernels_serves_as_a_quotable_near_miss(
    client: TestClient,
) -> None:
    """TensorRT-LLM has no FP8 kernels on an A100 (kernel_support `fp8_math`; unlike vLLM and SGLang it has no FP8
    weight-only path, tests/api/test_serving_fp8_weight_only.py), so the seeded A100 card is rejected for the FP8
    asked and the only option is an H100 server; one A100 40 GB card in bf16 meets the same targets for a
    fraction of it. Before, the answer showed only the refusal. Now that card is a near miss whose first reason is
    `bf16_for_fp8`, priced, launched in bf16 and quoted on the bf16 it was sized on."""
    body = {
        "model": {"preset": "llama-3.1-8b"},
        "task": "serving",
        "precision": "fp8",
        "serving": {"engine": "trt-llm", "input_tokens": 512, "output_tokens": 128, "requests_per_s": 1,
                    "slo": {"tpot_ms": 50}},
    }  # fmt: skip
    response = client.post("/recommend", json=body)
    assert response.status_code == 200, response.text
    answer = response.json()
    assert "a100-40g-pcie-card" in [r["sku"] for r in answer["rejected"] if r["code"] == "kernels"]
    cheapest = min(float(o["cost"]["monthly_effective"]) for o in answer["options"])
    (card,) = [m for m in answer["near_misses"] if m["misses"][0]["code"] == "bf16_for_fp8"]
    assert card["sku"]["id"] == "a100-40g-pcie-card" and float(card["cost"]["monthly_effective"]) < cheapest
    assert "in bf16, not the FP8 asked" in card["miss_reason"] and "fp8" not in card["launch"]["command"]
    assert card["quote"]["workload"]["precision"] == "bf16" and card["quote"]["workload"]["weights"] == "bf16"
    quoted = client.post("/quotes", json=card["quote"] | {"customer": {"name": "Li Wei", "email": "li@example.com"}})
    assert quoted.status_code == 201, quoted.text
