"""`no_stack` names the memory lever no stack runs where the plan without it launches (review R11: Llama 3.1 8B full
fine-tuning, ZeRO-3 over 8 H100 with `loss chunked` was "No training stack … runs full_finetune as dp 8 × … ZeRO 3",
the very plan that launches without the lever). Which stack runs which lever: app/planner/levers.py's docstring."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from app.text import messages

BODY = {  # the review's request (R11)
    "model": {"preset": "llama-3.1-8b"},
    "task": "full_finetune",
    "tokens": 1e9,
    "seq_len": 4096,
    "hardware": {"sku": "h100-80g-sxm-8x", "nodes": 1},
}
PLAN = {"dp": 8, "zero_stage": 3, "micro_batch": 1}


def _no_stack(client: TestClient, plan: dict) -> dict | None:
    response = client.post("/estimate", json=BODY | {"plan": plan})
    assert response.status_code == 200, response.text
    return next((w for w in response.json()["warnings"] if w["code"] == "no_stack"), None)


def test_the_plan_without_levers_launches(client: TestClient) -> None:
    assert _no_stack(client, PLAN) is None


@pytest.mark.parametrize(
    ("levers", "named"),
    [
        # no stack's launch names a chunked cross-entropy, nor one on 16-bit logits without the fp32 upcast
        ({"loss": "chunked"}, ["loss chunked"]),
        ({"loss": "no_upcast"}, ["loss no_upcast"]),
        # only Megatron-LM offloads activations (--cpu-offloading), and it runs no ZeRO-3
        ({"activation_offload": True}, ["activation_offload"]),
    ],
)
def test_the_lever_no_stack_runs_is_named(client: TestClient, levers: dict, named: list[str]) -> None:
    warning = _no_stack(client, PLAN | levers)
    assert warning is not None
    assert warning["params"]["levers"] == named
    assert warning["message"] == messages.warning("no_stack", warning["params"])
    for name in named:
        assert warning["message"].count(name) == 2  # the lever that has no stack, and the plan without it
        assert name in messages.warning("no_stack", warning["params"], "zh")


def test_levers_each_run_alone_but_not_together_are_both_named(client: TestClient) -> None:
    # compile: the Trainer and torchtitan; activation offload: Megatron-LM only, which runs no torch.compile
    plan = {"dp": 8, "zero_stage": 1, "micro_batch": 1}
    assert _no_stack(client, plan | {"compile": True}) is None
    warning = _no_stack(client, plan | {"compile": True, "activation_offload": True})
    assert warning is not None
    # compile compiles the loss too where the request names none (PlanIn.spec: torchtitan's compile.components)
    assert warning["params"]["levers"] == ["loss compiled", "compile", "activation_offload"]


def test_a_shape_no_stack_runs_names_no_lever(client: TestClient) -> None:
    # optimizer offload with tensor parallelism: no stack runs it (data/stacks.json offload rows), levers or not
    warning = _no_stack(client, {"dp": 4, "tp": 2, "zero_stage": 1, "offload": "optimizer", "micro_batch": 1})
    assert warning is not None
    assert "levers" not in warning["params"]
    assert "without" not in warning["message"]


def test_a_lever_no_stack_runs_leaves_the_gradient_buffer_as_the_plan_runs_without_it(client: TestClient) -> None:
    """Review finding F5: Llama 3.1 70B pretraining at tp 4 × pp 4 × cp 2 × dp 2 with the distributed optimizer is
    Megatron-LM's plan (its fp32 main-gradient buffer: 4 B a parameter, 70.6B / 16 ranks = 4.41B parameters a rank,
    16.4 GiB); with `activation_offload` (Megatron's --cpu-offloading refuses pipeline parallelism: no stack runs it)
    the answer kept `no_stack` but fell to the lean 2-byte account, halving the gradients and reading half the total.
    The lever moves the activations only."""
    body = {
        "model": {"preset": "llama-3.1-70b"},
        "task": "pretrain",
        "precision": "bf16",
        "seq_len": 8192,
        "global_batch": 128,
        "tokens": 1e11,
        "hardware": {"gpu": "h100-80g-sxm", "nodes": 8},
    }
    plan = {"dp": 2, "tp": 4, "pp": 4, "cp": 2, "zero_stage": 1, "recompute": "none", "virtual_stages": 5}
    answers = []
    for offload in (False, True):
        response = client.post("/estimate", json=body | {"plan": plan | {"activation_offload": offload}})
        assert response.status_code == 200, response.text
        answers.append(response.json())
    without, offloaded = (answer["memory"]["per_gpu_gib"] for answer in answers)
    assert not any(w["code"] == "no_stack" for w in answers[0]["warnings"])
    assert any(w["code"] == "no_stack" for w in answers[1]["warnings"])
    assert offloaded["gradients"] == without["gradients"] > 16
    assert offloaded["weights"] == without["weights"] and offloaded["optimizer"] == without["optimizer"]
    assert offloaded["activations"] < without["activations"]
