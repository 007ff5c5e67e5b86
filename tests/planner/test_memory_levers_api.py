"""The memory levers in a request's plan (plan.attention, plan.loss, plan.compile, plan.fp8_params): they reach the
estimate, the response echoes them, and contradictory or unsupported ones are a 422 naming the field."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

BODY = {
    "model": {"preset": "llama-3.1-8b"},
    "task": "full_finetune",
    "seq_len": 8192,
    "hardware": {"gpu": "h100-80g-sxm", "gpus_per_node": 8},
}
PLAN = {"dp": 8, "zero_stage": 3, "recompute": "none", "micro_batch": 1}


def _memory(client: TestClient, **plan) -> dict:
    response = client.post("/estimate", json=BODY | {"plan": PLAN | plan})
    assert response.status_code == 200, response.text
    return response.json()


def test_attention_and_loss_reach_the_estimate(client: TestClient) -> None:
    standard = _memory(client)
    eager = _memory(client, attention="eager")
    sdpa = _memory(client, attention="sdpa")
    fused = _memory(client, loss="fused")
    chunked = _memory(client, loss="chunked")
    act = lambda r: r["memory"]["per_gpu_gib"]["activations"]  # noqa: E731
    assert act(sdpa) == act(standard) < act(eager)  # sdpa runs flash or memory-efficient kernels: no scores kept
    assert act(fused) < act(chunked) < act(standard)
    assert (fused["plan"]["loss"], chunked["plan"]["loss"], standard["plan"]["loss"]) == (
        "fused",
        "chunked",
        "standard",
    )
    assert eager["plan"]["flash_attention"] is False


def test_selective_recompute_with_eager_attention_holds_one_layers_scores(client: TestClient) -> None:
    """Selective recompute recomputes the attention core, but without flash attention that recompute materialises
    the scores again in each layer's backward (transformers `eager_attention_forward`: softmax in fp32, cast back
    to 16 bits): the peak holds one layer's scores. Eager and flash gave the same total (74.94 GiB)."""
    flash = _memory(client, recompute="selective")["memory"]["per_gpu_gib"]
    eager = _memory(client, recompute="selective", attention="eager")["memory"]["per_gpu_gib"]
    # one layer's scores: 32 heads x 8192^2 for one sequence, 6 bytes each (fp32 softmax + its bf16 copy); the
    # activations carry the allocator's 5 % slack on top, and nothing else may change
    scores_gib = 32 * 8192**2 * 6 / 2**30
    assert scores_gib <= eager["activations"] - flash["activations"] <= scores_gib * 1.06
    assert eager["total"] > flash["total"]
    full_flash = _memory(client, recompute="full")["memory"]["per_gpu_gib"]
    full_eager = _memory(client, recompute="full", attention="eager")["memory"]["per_gpu_gib"]
    # the same one layer's scores as full recompute's backward holds (within 1 %: full recompute's working layer
    # also holds the layer's other outputs, which selective keeps saved)
    assert abs(
        (eager["activations"] - flash["activations"]) - (full_eager["activations"] - full_flash["activations"])
    ) < (0.01 * scores_gib)


def test_compile_is_compiled(client: TestClient) -> None:
    assert _memory(client, compile=True)["memory"] == _memory(client, compiled=True)["memory"]
    assert _memory(client, compile=True)["plan"]["compiled"] is True


def test_compile_says_what_it_models(client: TestClient) -> None:
    """compile moves the activations (fused pointwise ops recomputed) and not the speed: an assumption says so,
    where none mentioned it."""
    compiled, eager = _memory(client, compile=True), _memory(client)
    assert compiled["memory"]["per_gpu_gib"]["activations"] < eager["memory"]["per_gpu_gib"]["activations"]
    assert compiled["performance"]["tokens_per_s"] == eager["performance"]["tokens_per_s"]
    said = [a for a in compiled["assumptions"] if a.startswith("torch.compile (compile)")]
    assert len(said) == 1 and "speed-up is not modelled" in said[0] and "passed to the launch" in said[0]
    assert not any("torch.compile" in a for a in eager["assumptions"])


def test_contradicting_levers_are_refused(client: TestClient) -> None:
    for plan in ({"attention": "eager", "flash_attention": True}, {"loss": "standard", "chunked_loss": True}):
        response = client.post("/estimate", json=BODY | {"plan": PLAN | plan})
        assert response.status_code == 422, response.text
        assert "contradicts" in response.text


def test_fp8_params_need_fp8_training(client: TestClient) -> None:
    response = client.post("/estimate", json=BODY | {"plan": PLAN | {"fp8_params": True}})
    assert response.status_code == 422, response.text
    assert response.json()["errors"][0]["field"] == "plan.fp8_params"
    fp8 = client.post("/estimate", json=BODY | {"precision": "fp8", "plan": PLAN | {"fp8_params": True}})
    assert fp8.status_code == 200, fp8.text
    assert fp8.json()["plan"]["fp8_params"] is True


def test_fp8_params_on_a_gpu_without_fp8_names_the_gpu(client: TestClient) -> None:
    """An A100 has no FP8 math (NVIDIA A100 datasheet: TF32, BF16/FP16, INT8 Tensor Cores), so an fp8 request
    runs as bf16 there; the refusal said "needs precision fp8; got precision bf16" of a request that said fp8."""
    body = BODY | {"precision": "fp8", "hardware": {"sku": "a100-80g-sxm-8x", "nodes": 1}}
    response = client.post("/estimate", json=body | {"plan": PLAN | {"fp8_params": True}})
    assert response.status_code == 422, response.text
    (error,) = response.json()["errors"]
    assert error["field"] == "plan.fp8_params"
    assert "has no fp8: runs as bf16" in error["message"] and "A100" in error["message"]
    assert "got precision bf16" not in error["message"]
    assert client.post("/estimate", json=body | {"plan": PLAN}).status_code == 200


def test_the_launch_sets_the_levers_the_estimate_counted() -> None:
    from app.estimator.presets import get_preset
    from app.estimator.specs import Plan, Workload
    from app.planner.launch import torchtitan_config
    from app.planner.launch.megatron_lm import _megatron_parallel_args
    from app.planner.launch.trainer import _trainer_arguments

    model = get_preset("llama-3.1-8b").model
    workload = Workload(task="full_finetune", precision="fp8", seq_len=8192)
    plan = Plan(dp=8, zero_stage=1, micro_batch=1)
    assert "--fp8-param-gather" not in _megatron_parallel_args(model, workload, plan, 64)
    assert "--fp8-param-gather" in _megatron_parallel_args(model, workload, Plan(dp=8, fp8_params=True), 64)
    # FP8 parameters come with the bf16 gradient buffer the estimate counts (memory.states `fp32_grad_buffer`)
    assert "--grad-reduce-in-bf16" in _megatron_parallel_args(model, workload, Plan(dp=8, fp8_params=True), 64)
    assert "--grad-reduce-in-bf16" not in _megatron_parallel_args(model, workload, plan, 64)
    trainer = _trainer_arguments(model, workload, Plan(fused_loss=True, compiled=True), 8)
    assert trainer["use_liger_kernel"] is True and trainer["torch_compile"] is True
    assert "use_liger_kernel" not in _trainer_arguments(model, workload, Plan(), 8)
    assert torchtitan_config(model, Workload(task="pretrain"), Plan(dp=8, zero_stage=3, compiled=True), 64)[
        "compile"
    ] == {"enable": True, "components": ["model"]}  # the loss only where the estimate counted it compiled


def test_fp8_params_shrink_the_layers_zero3_gathers(client: TestClient) -> None:
    """Under ZeRO-3 the working copy is the shard plus two gathered units; with fp8_params a layer's linears are
    all-gathered in FP8 (torchao `enable_fsdp_float8_all_gather`, Megatron-LM `--fp8-param-gather`) while the
    embedding and head stay 16-bit. fp8_params changed nothing under ZeRO-3."""
    body = {
        "model": {"preset": "llama-3.1-405b"},
        "task": "full_finetune",
        "precision": "fp8",
        "seq_len": 4096,
        "hardware": {"gpu": "h100-80g-sxm", "gpus_per_node": 8, "nodes": 8},
    }
    plan = {"dp": 64, "zero_stage": 3, "recompute": "full", "micro_batch": 1}

    def weights(**extra: bool) -> float:
        response = client.post("/estimate", json=body | {"plan": plan | extra})
        assert response.status_code == 200, response.text
        return response.json()["memory"]["per_gpu_gib"]["weights"]

    # Llama 3.1 405B (config.json: hidden 16384, intermediate 53248, 8 kv heads of 128, vocab 128256): a layer's
    # linears 16384·(2·16384 + 2·1024) + 3·16384·53248 = 3,187,671,040 and norms 2·16384; its 16-bit gather is
    # 6.375 GB, in FP8 3.188 GB, below the 16-bit embedding's 128256·16384·2 = 4.203 GB, which becomes the unit
    layer = 16384 * (2 * 16384 + 2 * 1024) + 3 * 16384 * 53248
    saved = 2 * ((layer + 2 * 16384) * 2 - 128256 * 16384 * 2) / 2**30
    assert weights() - weights(fp8_params=True) == pytest.approx(saved, abs=0.01)  # the response rounds to 0.01 GiB


def test_compiled_loss_reaches_the_estimate_and_the_launch(client: TestClient) -> None:
    from app.estimator.presets import get_preset
    from app.estimator.specs import Plan, Workload
    from app.planner.launch import torchtitan_config

    standard = _memory(client, compile=True, loss="standard")
    compiled = _memory(client, compile=True, loss="compiled")
    act = lambda r: r["memory"]["per_gpu_gib"]["activations"]  # noqa: E731
    # 8,192 tokens x 128,256 logits: 12 -> 4 bytes each, 7.8 GiB less
    assert act(standard) - act(compiled) == pytest.approx(8192 * 128256 * 8 / 2**30, rel=0.01)
    assert compiled["plan"]["loss"] == "compiled"
    # unstated, the loss is compiled where the model is (the stacks' default) and standard where it is not
    assert _memory(client, compile=True)["plan"]["loss"] == "compiled"
    assert _memory(client)["plan"]["loss"] == "standard"
    assert any(a.startswith("Loss compiled with the model") for a in compiled["assumptions"])
    refused = client.post("/estimate", json=BODY | {"plan": PLAN | {"loss": "compiled"}})
    assert refused.status_code == 422, refused.text
    assert refused.json()["errors"][0]["field"] == "plan.loss"
    model = get_preset("llama-3.1-8b").model
    workload = Workload(task="pretrain", seq_len=8192)
    loss = torchtitan_config(model, workload, Plan(dp=8, zero_stage=3, compiled=True, compiled_loss=True), 8)
    model_only = torchtitan_config(model, workload, Plan(dp=8, zero_stage=3, compiled=True), 8)
    assert loss["compile"]["components"] == ["model", "loss"] and model_only["compile"]["components"] == ["model"]
