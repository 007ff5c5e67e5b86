"""ZeRO-3 with the optimizer and the parameters offloaded is sized as the stack that runs it holds it
(app/estimator/memory/states.py, the comment above `_deepspeed_offload`): a plan /estimate is given without a stack is
DeepSpeed's, the stack the support matrix prefers for data parallel (stacks.PREFERENCE), and `as_run` names it in
`Plan.tuning` ("trainer"), so the estimate counts DeepSpeed's bytes (deepspeed/runtime/zero/stage3.py at edaa7221:
one parameter's gradient partition on the GPU; the 16-bit gradient buffer and the 16-bit parameter partition on the
host), not FSDP's (one layer's 16-bit gradients on the GPU, neither 16-bit buffer on the host).

Llama 3.1 70B (70,553,706,496 parameters, the largest the 128,256 x 8,192 embedding and head) over one 8 x H100 server:
0.73 GiB of gradients a GPU (1.59 before, FSDP's layer), 1,314.2 GiB of host RAM (1,182.7 before)."""

from __future__ import annotations

import math

import pytest
from fastapi.testclient import TestClient

from app.estimator.presets import get_preset
from app.estimator.specs import GIB, Plan, Workload
from app.planner.stacks import as_run, stack_for

PARAMS = 70_553_706_496
LARGEST = 128_256 * 8_192
PLAN = Plan(dp=8, zero_stage=3, micro_batch=1, recompute="full", offload="optimizer_and_params")


def test_a_plain_params_offload_plan_runs_on_deepspeed() -> None:
    workload, model = Workload(task="full_finetune", seq_len=4096), get_preset("llama-3.1-70b").model
    assert stack_for(workload, PLAN, model) == "deepspeed"
    assert [plan.tuning for plan in as_run(workload, PLAN, model)] == ["trainer"]


def test_estimate_counts_deepspeeds_params_offload(client: TestClient) -> None:
    body = {
        "model": {"preset": "llama-3.1-70b"},
        "task": "full_finetune",
        "seq_len": 4096,
        "hardware": {"sku": "h100-80g-sxm-8x"},
        "plan": {"dp": 8, "zero_stage": 3, "offload": "optimizer_and_params", "recompute": "full"},
        "micro_batch": 1,
    }
    response = client.post("/estimate", json=body)
    assert response.status_code == 200, response.text
    memory = response.json()["memory"]
    assert memory["per_gpu_gib"]["gradients"] == pytest.approx(math.ceil(LARGEST / 8) * 6 / GIB, abs=0.005)  # 0.73
    assert memory["host_ram_gib"] == pytest.approx(PARAMS * 20 / GIB, abs=0.05)  # 1,314.2 GiB on the node
