"""plan.expert_tp on the API and in the launches: Megatron-core's --expert-tensor-parallel-size (NVIDIA/Megatron-LM
megatron/training/arguments.py at d98e8a64: defaults to the tensor parallel size), sized by /estimate, set by the
megatron stack's launches, refused where it cannot run."""

from __future__ import annotations

from dataclasses import replace

from fastapi.testclient import TestClient

from app.estimator.presets import get_preset
from app.estimator.specs import Plan, Workload
from app.planner.launch import Job, bridge_overrides, megatron_args
from tests.planner.test_launch_schemas import _overrides, _parsed

QWEN3_MOE = get_preset("qwen3-30b-a3b").model
BODY = {"model": {"preset": "qwen3-30b-a3b"}, "task": "full_finetune", "seq_len": 8192}
EIGHT_H100 = {"gpu": "h100-80g-sxm", "nodes": 1}
SWIFT = {"tp": 4, "pp": 2, "ep": 4, "dp": 1, "zero_stage": 1, "recompute": "full", "micro_batch": 1}


def test_estimate_sizes_whole_experts_with_expert_tp_1(client: TestClient) -> None:
    """TP 2 x EP 2 x DP 4 on 8 H100s: expert_tp 1 keeps whole experts, twice the expert weights and gradients a rank
    holds at expert_tp 2 (its optimizer states over an expert-DP group twice as large stay the same)."""
    plan = {"tp": 2, "ep": 2, "dp": 4, "zero_stage": 1, "recompute": "full", "micro_batch": 1}
    split = client.post("/estimate", json=BODY | {"hardware": EIGHT_H100, "plan": plan})
    whole = client.post("/estimate", json=BODY | {"hardware": EIGHT_H100, "plan": plan | {"expert_tp": 1}})
    assert split.status_code == whole.status_code == 200, (split.text, whole.text)
    assert split.json()["plan"]["expert_tp"] is None and whole.json()["plan"]["expert_tp"] == 1
    memory = [r.json()["memory"]["per_gpu_gib"] for r in (split, whole)]
    assert memory[1]["weights"] > 1.5 * memory[0]["weights"]
    assert memory[1]["optimizer"] == memory[0]["optimizer"]


def test_an_expert_grid_that_does_not_divide_the_gpus_is_a_422_naming_expert_tp(client: TestClient) -> None:
    response = client.post("/estimate", json=BODY | {"hardware": EIGHT_H100, "plan": SWIFT | {"expert_tp": 2}})
    assert response.status_code == 422, response.text
    error = response.json()["errors"][0]
    assert error["field"] == "plan.expert_tp" and error["type"] == "expert_tp_grid"
    assert error["params"]["allowed"] == [1] and "allowed expert_tp: 1" in error["message"]


def test_a_stack_other_than_megatron_refuses_an_expert_tp_of_its_own(client: TestClient) -> None:
    """ZeRO-3 is not the megatron stack's (data/stacks.json): an expert_tp other than tp has no launch there."""
    plan = {"dp": 8, "ep": 2, "zero_stage": 3, "recompute": "full", "micro_batch": 1, "expert_tp": 2}
    response = client.post("/estimate", json=BODY | {"hardware": EIGHT_H100, "plan": plan})
    assert response.status_code == 422, response.text
    error = response.json()["errors"][0]
    assert error["field"] == "plan.expert_tp" and error["type"] == "expert_tp_stack"
    # the default (equal to tp) is no lever at all
    same = client.post("/estimate", json=BODY | {"hardware": EIGHT_H100, "plan": plan | {"expert_tp": 1}})
    assert same.status_code == 200, same.text


def test_recommend_and_serving_refuse_expert_tp(client: TestClient) -> None:
    body = BODY | {"plan": {"expert_tp": 1}, "constraints": {}}
    response = client.post("/recommend", json=body)
    assert response.status_code == 422, response.text
    assert response.json()["errors"][0]["field"] == "plan.expert_tp"
    serving = {"model": {"preset": "qwen3-30b-a3b"}, "task": "serving", "hardware": EIGHT_H100}
    response = client.post("/estimate", json=serving | {"plan": {"tp": 8, "expert_tp": 1}})
    assert response.status_code == 422, response.text
    assert response.json()["errors"][0]["field"] == "plan.expert_tp"


def test_megatron_launches_name_the_expert_tp_they_were_sized_with() -> None:
    workload = Workload(task="pretrain", seq_len=8192, global_batch=64, tokens=1e10)
    plan = Plan(tp=4, pp=2, ep=4, dp=1, sequence_parallel=True, zero_stage=1, recompute="full")
    assert "--expert-tensor-parallel-size" not in _parsed(megatron_args(QWEN3_MOE, workload, plan, 64, None))
    whole = replace(plan, expert_tp=1)
    assert _parsed(megatron_args(QWEN3_MOE, workload, whole, 64, None))["--expert-tensor-parallel-size"] == "1"
    job = Job(QWEN3_MOE, workload, whole, 1, 8, 64, None, None, None)
    assert _overrides(bridge_overrides(job))["model.expert_tensor_parallel_size"] == "1"
    job = Job(QWEN3_MOE, workload, plan, 1, 8, 64, None, None, None)
    assert _overrides(bridge_overrides(job))["model.expert_tensor_parallel_size"] == "4"


def test_scaling_sizes_a_plan_with_expert_tp_and_never_500s(client: TestClient) -> None:
    """/estimate/scaling moves the replica's GPUs: an expert_tp whose grid the replica cannot hold is a 422 naming
    it; one it holds is sized like /estimate."""
    body = {"model": {"preset": "qwen3-30b-a3b"}, "task": "full_finetune", "seq_len": 4096, "gpu": "h100-80g-sxm"}
    base = {"tp": 2, "zero_stage": 1, "recompute": "full", "micro_batch": 1}  # (ep inside dp: multi-node groups)
    for plan in (base, base | {"expert_tp": 1}, base | {"expert_tp": 4}):
        response = client.post("/estimate/scaling", json=body | {"plan": plan})
        assert response.status_code in (200, 422), response.text
        if response.status_code == 422:
            assert plan.get("expert_tp") == 4 and response.json()["errors"][0]["field"] == "plan.expert_tp"
