"""A stated plan with a memory lever is held with the gradient buffer of the stack that runs it with that lever: Llama
3.1 8B full fine-tuning, data parallel over 8 H100 with ZeRO-1 and activation offload, is Megatron-LM's alone
(--cpu-offloading with the distributed optimizer, no pipeline, no recompute: app/planner/levers.py), which keeps an fp32
main-gradient buffer (megatron/training/theoretical_memory_usage.py: 6 + 12/d bytes per parameter). The account was
taken from the lever-free plan's preferred stack (the Trainer, 16-bit gradients), which runs no activation offload, so
/estimate called the plan one no stack runs (`no_stack`)."""

from __future__ import annotations

from fastapi.testclient import TestClient

from app.estimator.presets import get_preset
from app.estimator.specs import Plan, Workload
from app.planner.stacks import as_run, stack_for
from tests.planner.test_no_stack_levers import BODY


def test_activation_offload_is_held_as_megatron_holds_it() -> None:
    model = get_preset("llama-3.1-8b").model
    workload = Workload(task="full_finetune", seq_len=4096, global_batch=64)
    plan = Plan(dp=8, zero_stage=1, activation_offload=True)
    (held,) = as_run(workload, plan, model)
    assert held.fp32_main_grads is True
    assert stack_for(workload, held, model) == "megatron"
    # without the lever the Trainer's account stays first
    assert as_run(workload, Plan(dp=8, zero_stage=1), model)[0].fp32_main_grads is False


def test_estimate_of_it_names_a_stack(client: TestClient) -> None:
    plan = {"dp": 8, "zero_stage": 1, "micro_batch": 1, "activation_offload": True}
    response = client.post("/estimate", json=BODY | {"plan": plan})
    assert response.status_code == 200, response.text
    assert "no_stack" not in {w["code"] for w in response.json()["warnings"]}


def test_the_lever_free_shortcut_agrees_with_the_levers_a_plan_carries() -> None:
    from dataclasses import replace

    from app.planner.levers import DEFAULT_LEVERS, levers_of
    from app.planner.stacks import _lever_free

    base = Plan(dp=8, zero_stage=1)
    moved = {
        "activation_offload": True,
        "compiled": True,
        "fp8_params": True,
        "chunked_loss": True,
        "fused_loss": True,
        "compiled_loss": True,
        "no_upcast_loss": True,
        "flash_attention": False,
        "attention": "sdpa",
    }
    assert _lever_free(base) and levers_of(base) == DEFAULT_LEVERS
    for field, value in moved.items():
        plan = replace(base, **{field: value})
        assert _lever_free(plan) is (levers_of(plan) == DEFAULT_LEVERS) is False, field
