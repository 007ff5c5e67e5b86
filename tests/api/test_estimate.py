"""POST /estimate and GET /models over HTTP: the response contract, plan choice, clear 422s."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from app.text import messages

H100_NODE = {"gpu": "h100-80g-sxm", "gpus_per_node": 8}


def _estimate(client: TestClient, **body) -> dict:
    response = client.post("/estimate", json=body)
    assert response.status_code == 200, response.text
    return response.json()


def test_explicit_plan_gives_memory_breakdown_and_speed(client: TestClient) -> None:
    result = _estimate(
        client,
        model={"preset": "llama-2-7b"},
        task="full_finetune",
        tokens=1e9,
        hardware={"gpu": "a100-80g-sxm", "gpus_per_node": 8},
        plan={"dp": 8, "zero_stage": 3, "micro_batch": 2},
    )
    memory = result["memory"]["per_gpu_gib"]
    parts = ("weights", "gradients", "optimizer", "activations", "kv_cache", "other")
    assert memory["total"] == pytest.approx(sum(memory[p] for p in parts), abs=0.05)
    # ZeRO-3 over 8 (ZeRO paper §3, K = 12): gradients 2Ψ/8 and optimizer 12Ψ/8 bytes; the weights
    # are 2Ψ/8 plus the gathered working buffers of the layers in flight.
    psi = 6_738_415_616
    assert memory["gradients"] == pytest.approx(2 * psi / 8 / 2**30, abs=0.01)
    assert memory["optimizer"] == pytest.approx(12 * psi / 8 / 2**30, abs=0.01)
    assert memory["weights"] > 2 * psi / 8 / 2**30
    assert result["memory"]["fits"] is True
    perf = result["performance"]
    assert perf["tokens_per_s"] == pytest.approx(perf["tokens_per_s_per_gpu"] * 8)
    assert perf["gpu_hours"] == pytest.approx(perf["time_to_train_hours"] * 8)
    assert 0 < perf["mfu"] < 1
    assert result["plan"]["global_batch"] == 128  # the default /recommend sizes plans at (search.default_global_batch)


def test_fsdp_names_are_zero_aliases(client: TestClient) -> None:
    fsdp = _estimate(
        client, model={"preset": "llama-2-7b"}, hardware=H100_NODE, plan={"dp": 8, "zero_stage": "FULL_SHARD"}
    )
    assert fsdp["plan"]["zero_stage"] == 3


def test_without_a_plan_the_best_feasible_one_is_chosen(client: TestClient) -> None:
    result = _estimate(
        client, model={"preset": "llama-2-70b"}, task="full_finetune", hardware={"sku": "h100-80g-sxm-8x", "nodes": 2}
    )
    assert result["memory"]["fits"] is True
    assert result["plan"]["dp"] * result["plan"]["tp"] * result["plan"]["pp"] == 16
    assert result["plan"]["summary"]


def test_inference_reports_kv_cache_and_decode_speed(client: TestClient) -> None:
    result = _estimate(
        client,
        model={"preset": "llama-2-7b"},
        task="inference",
        seq_len=4096,
        micro_batch=8,
        hardware={"gpu": "h100-80g-sxm"},
    )
    # KV cache: 2 · 32 layers · 32 kv heads · 128 · 4096 tokens · 8 sequences · 2 bytes = 16 GiB
    assert result["memory"]["per_gpu_gib"]["kv_cache"] == pytest.approx(16.0, abs=0.01)
    assert result["performance"]["decode_tokens_per_s"] > 0
    assert result["performance"]["time_per_output_token_ms"] > 0


def test_model_too_big_for_the_hardware_says_what_would_fit(client: TestClient) -> None:
    response = client.post(
        "/estimate",
        json={"model": {"preset": "llama-2-70b"}, "task": "full_finetune", "hardware": {"gpu": "a100-40g-pcie"}},
    )
    assert response.status_code == 422
    assert "does not fit" in response.json()["detail"]


@pytest.mark.parametrize(
    ("body", "field", "words"),
    [
        ({"plan": {"dp": 2, "tp": 3}}, "plan.tp", "does not divide the 32 attention heads"),
        ({"plan": {"pp": 64}}, "plan.pp", "exceeds the 32 layers"),
        ({"task": "lora", "lora": {"rank": 10000}}, "lora.rank", "hidden size"),
        ({"model": {"params": 1e16}}, "model.params", "less than or equal"),
        ({"model": {"params": -7e9}}, "model.params", "greater than 0"),
        ({"model": {"preset": "nope"}}, "model.preset", "known: llama-2-7b"),
        ({"hardware": {"gpu": "h100"}}, "hardware.gpu", "Did you mean h100-80g-sxm"),
        ({"seq_len": 0}, "seq_len", "greater than or equal to 1"),
        ({"model": {"hf_config": {"model_type": "llama", "hidden_size": 4096}}}, "model.hf_config", "missing"),
        ({"model": {"hf_config": {"model_type": "bert"}}}, "model.hf_config.model_type", "supported"),
    ],
)
def test_bad_input_is_422_saying_what_is_allowed(client: TestClient, body: dict, field: str, words: str) -> None:
    request = {"model": {"preset": "llama-2-7b"}, "hardware": H100_NODE} | body
    response = client.post("/estimate", json=request)
    assert response.status_code == 422, response.text
    problem = response.json()
    assert field in {e["field"] for e in problem["errors"]}
    assert words in problem["detail"]


@pytest.mark.parametrize("raw", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_non_finite_numbers_are_422_not_500(client: TestClient, raw: str) -> None:
    body = '{"model": {"params": ' + raw + '}, "hardware": {"gpu": "h100-80g-sxm"}}'
    response = client.post("/estimate", content=body, headers={"content-type": "application/json"})
    assert response.status_code == 422
    assert "model.params" in {e["field"] for e in response.json()["errors"]}


@pytest.mark.parametrize("task", ["full_finetune", "serving"])
def test_an_unknown_sku_is_a_422_on_hardware_sku_naming_the_active_ones(client: TestClient, task: str) -> None:
    """Review R7-5: a SKU in the body the catalog does not hold is a value not allowed (422 on `hardware.sku`, with the
    active SKUs, as POST /quotes refuses `sku_id`), not a missing resource (404 is for path parameters)."""
    body = {"model": {"preset": "llama-2-7b"}, "task": task, "hardware": {"sku": "nope-sku", "nodes": 1}}
    response = client.post("/estimate", json=body)
    assert response.status_code == 422, response.text
    [error] = response.json()["errors"]
    active = [sku["id"] for sku in client.get("/catalog/skus").json()]
    assert (error["field"], error["type"]) == ("hardware.sku", "sku_unknown")
    assert error["params"] == {"sku_id": "nope-sku", "active": active}
    assert error["message"] == messages.quote_check("sku_unknown", error["params"])
    assert "h100-80g-sxm-8x" in error["message"]
    chinese = client.post("/estimate", json=body, headers={"accept-language": "zh"}).json()["errors"][0]
    assert chinese["message"] == messages.quote_check("sku_unknown", error["params"], "zh")


def test_models_lists_presets_with_sources(client: TestClient) -> None:
    models = client.get("/models").json()
    assert len(models) >= 25
    assert {"dense", "moe"} <= {m["kind"] for m in models}
    llama = next(m for m in models if m["id"] == "llama-2-7b")
    assert llama["params"] == 6_738_415_616
    assert llama["source"].startswith("http")


def test_scaling_view_matches_the_articles_claims(client: TestClient) -> None:
    """The company's article: 8-GPU data parallel on NVLink is 6-7.5× in practice; 10 GbE between nodes is
    only tolerable for pure data parallelism. Case: Llama-2-7B full fine-tune, plain DDP, one
    1,024-token sequence per GPU on 8×A100 80G SXM (tests/estimator/test_perf_article.py).

    With fp32 Adam states plain DDP holds 16 B/param (ZeRO paper §3.1), 100 GiB for 6.74e9 parameters: no point fits an
    80 GB card, and the table shows no speed (review R3). 8-bit Adam (2 B of state per parameter, Dettmers et al. 2022
    §2) leaves 10 B/param and fits, with the same 16-bit gradient all-reduce the article's scaling is about."""
    body = {
        "model": {"preset": "llama-2-7b"},
        "task": "full_finetune",
        "seq_len": 1024,
        "gpu": "a100-80g-sxm",
        "plan": {"zero_stage": 0, "micro_batch": 1},
    }
    adamw = client.post("/estimate/scaling", json=body).json()
    assert not any(r["fits"] or r["speedup"] for r in adamw["rows"])
    response = client.post("/estimate/scaling", json=body | {"optimizer": "adamw_8bit"})
    assert response.status_code == 200, response.text
    rows = response.json()["rows"]
    assert all(r["fits"] for r in rows)
    nvlink8 = next(r for r in rows if r["scope"] == "node" and r["link"] == "nvlink3" and r["gpus"] == 8)
    pcie8 = next(r for r in rows if r["scope"] == "node" and r["link"] == "pcie4" and r["gpus"] == 8)
    assert 6.0 <= nvlink8["speedup"] <= 7.5
    assert pcie8["speedup"] < nvlink8["speedup"]
    eth = [r for r in rows if r["link"] == "eth-10"]
    ndr = [r for r in rows if r["link"] == "ib-ndr-400"]
    assert eth and ndr
    assert max(r["efficiency"] for r in eth) < min(r["efficiency"] for r in ndr)


def test_70b_qlora_on_one_48gb_card_fits_torchtune_style_not_through_peft(client: TestClient) -> None:
    # Through transformers + PEFT (prepare_model_for_kbit_training: fp32 activations; unfused loss) Llama 3.x 70B
    # QLoRA does not fit 48 GB at any length: unslothai/unsloth README, "Llama 3.3 (70B) max. context length",
    # Hugging Face + FA2 on 48 GB: OOM. With 16-bit activations and a chunked loss (torchtune's recipe), the
    # defaults (rank 16 on all linear layers, 2048 tokens) fit an RTX A6000, with the QLoRA paper's accounting
    # (BF16 adapters, 32-bit paged optimizer states that give way to activations; Dettmers et al. 2023).
    body = {"model": {"preset": "llama-3.1-70b"}, "task": "qlora", "hardware": {"gpu": "rtxa6000-48g"}}
    refused = client.post("/estimate", json=body)
    assert refused.status_code == 422 and "does not fit" in refused.json()["detail"]
    plan = {"micro_batch": 1, "recompute": "full", "chunked_loss": True}
    result = _estimate(client, **body, kbit_upcast=False, plan=plan)
    assert result["memory"]["fits"] is True
    assert result["memory"]["per_gpu_gib"]["total"] < 44.7
    assert any("Paged optimizer" in line for line in result["assumptions"])


def test_plan_says_chunked_loss_and_activation_offload(client: TestClient) -> None:
    body = {"model": {"preset": "llama-3.1-8b"}, "seq_len": 8192, "hardware": {"gpu": "h100-80g-sxm"}}
    plain = {"micro_batch": 1, "recompute": "full"}
    base = _estimate(client, **body, plan=plain)["memory"]["per_gpu_gib"]
    chunked = _estimate(client, **body, plan={**plain, "chunked_loss": True})["memory"]["per_gpu_gib"]
    offload = _estimate(client, **body, plan={**plain, "activation_offload": True})["memory"]["per_gpu_gib"]
    # 8,192 tokens x 128,256 logits: 12 bytes each unfused (fp32 log-probs + two fp32 gradients), 4 chunked = 7.8 GiB
    assert base["activations"] - chunked["activations"] == pytest.approx(8192 * 128256 * 8 / 2**30, abs=0.01)
    # the layer-input checkpoints (32 x 8,192 x 4,096 x 2 bytes = 2 GiB) leave but two layers' worth on the GPU
    assert base["activations"] - offload["activations"] == pytest.approx(2 * 30 / 32, abs=0.01)


def test_a_micro_batch_that_cannot_divide_the_global_batch_is_named(client: TestClient) -> None:
    """micro_batch 1000 against the default 128 sequences was answered on global_batch ("give a global_batch that 8
    divides (e.g. 128)", which 128 already is)."""
    body = {
        "model": {"preset": "llama-3.1-8b"},
        "task": "full_finetune",
        "tokens": 1e9,
        "micro_batch": 1000,
        "hardware": {"sku": "a100-80g-sxm-8x", "nodes": 1},
    }
    response = client.post("/estimate", json=body)
    assert response.status_code == 422, response.text
    (error,) = response.json()["errors"]
    assert error["field"] == "micro_batch"
    assert (
        "micro_batch 1000 does not divide the global batch of 128" in error["message"]
        and "e.g. 128" in error["message"]
    )
    # a code with its figures (before: a bare value_error), worded in Chinese from the same catalog
    assert (error["type"], error["params"]) == (
        "micro_batch_split",
        {"micro_batch": 1000, "global_batch": 128, "fits": 128},
    )
    assert messages.batch_split(error["type"], error["params"], "zh").startswith("micro_batch 1000 不能整除 128 条序列")


def test_too_many_virtual_stages_say_what_is_allowed(client: TestClient) -> None:
    """Review R9 (run m6_405b_meta): Meta's Llama 3.1 405B layout, TP 8 × PP 16 with 8 virtual stages (uneven first
    and last stages, arXiv 2407.21783 §3.3.2), was refused with "pp × virtual_stages exceeds the number of layers
    (126)" and nothing on what is allowed. The 422 names the product, the most virtual stages PP 16 takes (126 // 16 =
    7) and the uneven stages (Megatron-LM --decoder-first/last-pipeline-num-layers) it does not size."""
    plan = {"dp": 8, "tp": 8, "pp": 16, "zero_stage": 1, "micro_batch": 1, "virtual_stages": 8}
    body = {
        "model": {"preset": "llama-3.1-405b"},
        "task": "pretrain",
        "seq_len": 8192,
        "hardware": {"gpu": "h100-80g-sxm", "nodes": 128},
        "plan": plan,
        "global_batch": 2048,
    }
    response = client.post("/estimate", json=body)
    assert response.status_code == 422, response.text
    (error,) = response.json()["errors"]
    assert error["field"] == "plan.virtual_stages"
    assert "(16 × 8)" in error["message"] and "virtual_stages is at most 7" in error["message"]
    assert "--decoder-first-pipeline-num-layers" in error["message"]
    assert client.post("/estimate", json={**body, "plan": {**plan, "virtual_stages": 7}}).status_code == 200


def test_with_no_plan_holding_the_standard_loss_the_search_takes_the_fused_one(client: TestClient) -> None:
    """Review R7: Llama 3.1 8B LoRA at 32,768 tokens on one H100 was "does not fit with any plan" (79.5 GiB at the
    leanest) while the same request with plan.loss fused fits at 31.7 GiB: /estimate's search takes the fused loss
    (Liger, Megatron's fused cross-entropy) where no plan holds the standard loss's logits, and says so."""
    body = {
        "model": {"preset": "llama-3.1-8b"},
        "task": "lora",
        "seq_len": 32768,
        "global_batch": 8,
        "tokens": 1e8,
        "hardware": {"gpu": "h100-80g-sxm", "nodes": 1, "gpus_per_node": 1},
    }
    response = client.post("/estimate", json=body)
    assert response.status_code == 200, response.text
    answer = response.json()
    assert answer["plan"]["loss"] == "fused" and answer["memory"]["fits"] is True
    codes = [note["code"] for note in answer["assumption_codes"]]
    assert "fused_loss_to_fit" in codes and "activations_lean_loss" in codes and "activations" not in codes


def test_a_model_no_plan_fits_names_the_hardware_in_its_errors(client: TestClient) -> None:
    """The same refusal carried no `errors[]`, unlike every other 422."""
    body = {
        "model": {"preset": "llama-3.1-70b"},
        "task": "full_finetune",
        "tokens": 1e8,
        "hardware": {"gpu": "a100-40g-pcie", "nodes": 1, "gpus_per_node": 1},
    }
    response = client.post("/estimate", json=body)
    assert response.status_code == 422, response.text
    (error,) = response.json()["errors"]
    assert (error["field"], error["type"]) == ("hardware", "no_plan_fits")
    assert "does not fit" in error["message"]


def test_virtual_stages_without_a_pipeline_are_refused(client: TestClient) -> None:
    """Review finding F6: virtual_stages 3 at pp 1 was answered 200 and silently sized without interleaving, where
    Megatron-core refuses it (megatron/core/parallel_state.py initialize_model_parallel: "pipeline-model-parallel size
    should be greater than 1 with interleaved schedule"). A 422 on plan.virtual_stages, in English and Chinese."""
    body = {
        "model": {"preset": "llama-3.1-8b"},
        "task": "full_finetune",
        "seq_len": 4096,
        "global_batch": 64,
        "hardware": {"gpu": "h100-80g-sxm", "nodes": 1},
        "plan": {"dp": 8, "zero_stage": 1, "micro_batch": 1, "virtual_stages": 3},
    }
    response = client.post("/estimate", json=body)
    assert response.status_code == 422, response.text
    (error,) = response.json()["errors"]
    assert (error["field"], error["type"]) == ("plan.virtual_stages", "virtual_stages_pp")
    assert "needs pp > 1" in error["message"]
    zh = client.post("/estimate", json=body, headers={"Accept-Language": "zh"}).json()["errors"][0]["message"]
    assert "需要 pp > 1" in zh
    piped = {**body, "plan": {**body["plan"], "dp": 4, "pp": 2, "virtual_stages": 2}}
    assert client.post("/estimate", json=piped).status_code == 200
