"""/estimate's `no_plan_fits` says what would fit, from the leanest plan the search met, in English and Chinese.

Before, every such refusal ended "Add GPUs or nodes." in English only (the Chinese page too), and where the fused loss
was tried and did not fit either, it named the standard loss's leanest plan: Llama 3.1 8B LoRA at 131,072 tokens on
one A100 40GB "Needs 270.3 GiB per GPU" (the full-vocabulary logits the fused loss never holds), where the fused
loss's leanest needs 79.4 GiB, its activations alone over the card: more GPUs of the same count would not be the
advice, a shorter sequence, context parallelism over more GPUs or a larger card would. The figures are the estimator's
own (app/estimator/memory), read here only as greater or smaller than one another and the card."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from app.text import messages

A100_40 = {"gpu": "a100-40g-pcie", "nodes": 1}


def _refusal(client: TestClient, body: dict[str, Any]) -> dict[str, Any]:
    response = client.post("/estimate", json=body)
    assert response.status_code == 422, response.text
    (error,) = response.json()["errors"]
    assert (error["field"], error["type"]) == ("hardware", "no_plan_fits")
    assert "Add GPUs or nodes" not in error["message"]
    assert error["message"] == messages.estimator_text("no_plan_fits", error["params"])
    zh = messages.estimator_text("no_plan_fits", error["params"], "zh")
    assert "没有可行的方案" in zh and "does not fit" not in zh
    return error


def test_activations_over_the_card_even_with_the_fused_loss_name_a_shorter_sequence(client: TestClient) -> None:
    body = {
        "model": {"preset": "llama-3.1-8b"},
        "task": "lora",
        "tokens": 1e8,
        "seq_len": 131072,
        "hardware": A100_40 | {"gpus_per_node": 1},
    }
    error = _refusal(client, body)
    params = error["params"]
    assert params["would_fit"] == "activations" and params["fused_tried"] is True
    assert params["needed_gib"] < 100  # the fused loss's leanest (79.4 GiB), not the standard loss's 270.3
    assert params["activations_gib"] > params["limit_gib"]
    assert "a shorter sequence than 131,072 tokens" in error["message"] and "context parallel" in error["message"]
    assert "131,072 tokens 的序列" in messages.estimator_text("no_plan_fits", params, "zh")


def test_a_model_far_too_large_names_the_gpus_that_would_hold_it(client: TestClient) -> None:
    body = {"model": {"preset": "llama-3.1-405b"}, "task": "pretrain", "tokens": 1e9, "hardware": A100_40}
    error = _refusal(client, body)
    params = error["params"]
    assert params["would_fit"] == "more_gpus" and params["gpus"] == 8
    assert params["fit_gpus"] > 100  # ZeRO-3's sharded states over 37 GiB cards: about 184 of them
    assert f"About {params['fit_gpus']:,} GPUs of this type" in error["message"]
    assert f"约 {params['fit_gpus']:,} 张这种 GPU" in messages.estimator_text("no_plan_fits", params, "zh")


def test_a_host_too_small_for_the_offload_names_the_host_ram(client: TestClient) -> None:
    body = {
        "model": {"preset": "llama-3.1-70b"},
        "task": "full_finetune",
        "tokens": 1e8,
        "hardware": {"gpu": "h100-80g-sxm", "nodes": 1, "gpus_per_node": 8, "host_ram_gib": 64},
    }
    params = _refusal(client, body)["params"]
    assert params["would_fit"] == "host_ram" and params["offload_tried"] is True
    assert params["host_gib"] > params["host_ram_limit_gib"]


def test_every_part_is_worded_in_both_languages_with_the_same_figures() -> None:
    from string import Formatter

    from app.estimator.error_words import NO_PLAN_PARTS

    def fields(text: str) -> set[str]:
        return {name for _, name, _, _ in Formatter().parse(text) if name}

    assert NO_PLAN_PARTS["en"].keys() == NO_PLAN_PARTS["zh"].keys()
    for key, text in NO_PLAN_PARTS["en"].items():
        assert fields(text) == fields(NO_PLAN_PARTS["zh"][key]), key
