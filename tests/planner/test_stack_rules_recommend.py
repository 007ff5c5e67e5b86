"""/recommend never offers a plan its stack cannot run as sized: torchtitan tp/pp without FSDP (fp32 there),
DeepSpeed pipeline under the HF Trainer, Megatron for data-parallel LoRA (or its LoRA launch as Megatron-LM
flags), a stack that lacks the requested optimizer. The requests are the ones that showed each."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.estimator.specs import LoraSpec, Plan, Workload
from app.planner.stacks import MATRIX, model_parallel, runs


def _options(client: TestClient, body: dict[str, Any]) -> list[dict[str, Any]]:
    response = client.post("/recommend", json={**body, "constraints": {"limit": 20}})
    assert response.status_code == 200, response.text
    result = response.json()
    assert result["options"]
    return result["options"] + result["near_misses"]


def _plan(p: dict[str, Any]) -> Plan:
    return Plan(
        dp=p["dp"], tp=p["tp"], pp=p["pp"], cp=p["cp"], ep=p["ep"], zero_stage=p["zero_stage"],
        offload=p["offload"], recompute=p["recompute"], micro_batch=p["micro_batch"], dp_shard=p.get("dp_shard"),
    )  # fmt: skip


def _workload(body: dict[str, Any]) -> Workload:
    lora = LoraSpec() if "lora" in body["task"] else None
    return Workload(task=body["task"], optimizer=body.get("optimizer", "adamw"), lora=lora)


def test_fsdp_offers_no_tensor_or_pipeline_plan_without_sharding(client: TestClient) -> None:
    body = {"model": {"preset": "llama-3.1-8b"}, "task": "full_finetune", "tokens": 1e9}
    options = _options(client, body)
    for option in options:
        plan = _plan(option["plan"])
        if option["stack"] == "fsdp" and (plan.tp > 1 or plan.pp > 1):
            assert (plan.dp > 1 and plan.zero_stage >= 2) or plan.cp > 1, option["plan"]
            titan = option["launch"]["fsdp"]["torchtitan"]["parallelism"]
            assert titan["data_parallel_shard_degree"] > 1 or titan["context_parallel_degree"] > 1
        assert runs(option["stack"], _workload(body), plan), option["plan"]


def test_deepspeed_offers_no_pipeline(client: TestClient) -> None:
    body = {"model": {"preset": "falcon-7b"}, "task": "full_finetune", "tokens": 1e9}
    for option in _options(client, body):
        if option["stack"] == "deepspeed":
            assert option["plan"]["pp"] == 1, option["plan"]
            launch = option["launch"]["deepspeed"]
            assert "pipeline_module" not in launch and "pipeline" not in launch["ds_config"]


def test_data_parallel_lora_goes_to_deepspeed_and_megatron_lora_is_a_bridge_recipe(client: TestClient) -> None:
    body = {"model": {"preset": "llama-3.1-8b"}, "task": "lora", "tokens": 5e7}
    options = _options(client, body)
    assert options[0]["stack"] == "deepspeed"
    for option in options:
        plan = _plan(option["plan"])
        assert runs(option["stack"], _workload(body), plan), option["plan"]
        if not model_parallel(plan):
            assert option["stack"] != "megatron" and plan.recompute in ("none", "full"), option["plan"]
        if option["stack"] == "megatron":
            launch = option["launch"]["megatron"]
            assert "run_recipe.py --recipe llama31_8b_peft_config --mode lora" in launch["command"]
            assert "finetune.py" not in launch["command"] and "args" not in launch


@pytest.mark.parametrize("optimizer", ["sgd", "adafactor"])
def test_every_option_runs_the_requested_optimizer(client: TestClient, optimizer: str) -> None:
    body = {"model": {"preset": "llama-3.1-8b"}, "task": "full_finetune", "tokens": 1e8, "optimizer": optimizer}
    for option in _options(client, body):
        assert option["stack"] != "fsdp", option["plan"]  # torchtitan builds Adam and AdamW only
        assert optimizer in MATRIX[option["stack"]].optimizers
        assert runs(option["stack"], _workload(body), _plan(option["plan"])), option["plan"]
