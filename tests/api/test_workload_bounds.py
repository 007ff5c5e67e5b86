"""A workload the model or the batch cannot run is a 422 naming the field, worded from a code in English and Chinese
(app/estimator/error_words.py), not a 200 with a plan nobody can launch: a seq_len past the model's context, an
explicit architecture below the supported size, a global batch smaller than one micro-batch."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.estimator.presets import preset_config
from app.planner.schemas import WorkloadIn
from app.planner.workload import within_context
from app.text import messages

H100 = {"gpu": "h100-80g-sxm", "nodes": 1}
# Llama-3.1-8B's config.json: max_position_embeddings 131072, rope_type llama3 (a scaling already inside that length)
LLAMA_31_CONTEXT = 131_072


def _only_error(answer: Any) -> dict[str, Any]:
    assert answer.status_code == 422, answer.text[:500]
    assert answer.headers["content-type"].startswith("application/problem+json")
    (error,) = answer.json()["errors"]
    assert error["message"] == messages.estimator_text(error["type"], error["params"])
    return dict(error)


@pytest.mark.parametrize("path", ["/recommend", "/estimate"])
def test_a_seq_len_past_the_models_context_is_refused(client: TestClient, path: str) -> None:
    """Before: /recommend answered 200 with a context-parallel 16 plan for 1,048,576 tokens on Llama-3.1-8B."""
    body: dict[str, Any] = {"model": {"preset": "llama-3.1-8b"}, "task": "lora", "seq_len": 1_048_576, "tokens": 1e9}
    if path == "/estimate":
        body["hardware"] = H100
    error = _only_error(client.post(path, json=body))
    assert (error["field"], error["type"]) == ("seq_len", "seq_len_context")
    assert error["params"] == {"seq_len": 1_048_576, "limit": LLAMA_31_CONTEXT}
    assert "131,072" in error["message"]
    zh = messages.estimator_text(error["type"], error["params"], "zh")
    assert "超过模型的上下文 131,072 tokens" in zh


def test_the_context_is_the_configs_own_and_its_yarn_extends_it() -> None:
    """A context-extension run is stated as a config whose rope_scaling extends it: YaRN factor 4 over the
    original 131,072 positions sizes 524,288 (app/estimator/serving/memory.py context_limit, as vLLM reads it)."""
    at_limit = WorkloadIn(model={"preset": "llama-3.1-8b"}, task="lora", seq_len=LLAMA_31_CONTEXT)
    assert within_context(at_limit).seq_len == LLAMA_31_CONTEXT
    config = dict(preset_config("llama-3.1-8b"))
    config["rope_scaling"] = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 131_072}
    extended = WorkloadIn(model={"hf_config": config}, task="lora", seq_len=524_288)
    assert within_context(extended).seq_len == 524_288


def test_an_architecture_without_a_context_is_taken_as_asked() -> None:
    model = {"layers": 32, "hidden": 4096, "heads": 32, "ffn": 11008, "vocab": 32000}
    request = WorkloadIn(model=model, task="full_finetune", seq_len=1_048_576)
    assert within_context(request).seq_len == 1_048_576


def test_a_left_out_seq_len_is_sized_at_a_shorter_context() -> None:
    """GPT-2 has 1,024 learned positions (n_positions): the default 2,048 cannot run on it."""
    assert within_context(WorkloadIn(model={"preset": "gpt2"}, task="full_finetune")).seq_len == 1024
    assert within_context(WorkloadIn(model={"preset": "llama-2-7b"}, task="lora")).seq_len == 2048


@pytest.mark.parametrize("path", ["/recommend", "/estimate"])
def test_an_explicit_architecture_below_the_supported_size_is_refused(client: TestClient, path: str) -> None:
    """Before: 200 with params 12 and 2.4e9 tokens/s per GPU, while {"params": 1000} was refused."""
    body: dict[str, Any] = {
        "model": {"layers": 1, "hidden": 1, "heads": 1, "ffn": 1, "vocab": 1},
        "task": "full_finetune",
    }
    if path == "/estimate":
        body["hardware"] = H100
    error = _only_error(client.post(path, json=body))
    assert (error["field"], error["type"]) == ("model", "model_too_small")
    assert error["params"] == {"total": 12, "least": 1e6, "most": 1e13}
    assert error["message"] == (
        "The architecture has 12 parameters, outside the supported range 1,000,000 to 10,000,000,000,000."
    )
    assert messages.estimator_text(error["type"], error["params"], "zh") == (
        "该架构有 12 个参数，超出支持范围 1,000,000 至 10,000,000,000,000。"
    )


@pytest.mark.parametrize("path", ["/recommend", "/estimate"])
def test_a_global_batch_below_the_micro_batch_is_refused(client: TestClient, path: str) -> None:
    """Before: /recommend answered 200 with no option and every SKU rejected as batch_split."""
    body: dict[str, Any] = {"model": {"preset": "llama-3.1-8b"}, "task": "lora", "global_batch": 1, "micro_batch": 4}
    if path == "/estimate":
        body["hardware"] = H100
    error = _only_error(client.post(path, json=body))
    assert (error["field"], error["type"]) == ("global_batch", "global_batch_micro_batch")
    assert error["params"] == {"global_batch": 1, "micro_batch": 4}
    assert error["message"].startswith("global_batch 1 must be at least micro_batch (4)")
    assert messages.estimator_text(error["type"], error["params"], "zh").startswith(
        "global_batch 1 不能小于 micro_batch（4）"
    )
