"""Every training launch names the releases its flags and LoRA targets were written for (`launch.<stack>.versions`),
and an MoE LoRA launch names target modules that exist in the transformers release it names (issue: no launch named
its versions; Mixtral's targets listed gate_proj/up_proj/down_proj, which Mixtral has not, next to w1/w2/w3, the v4
expert names that transformers v5 replaces by fused 3-D parameters). Driven through POST /recommend."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.estimator.presets import get_preset
from app.estimator.specs import LoraSpec, Plan, Workload
from app.planner.launch import launch_configs

MODULES_FILE = Path(__file__).parent / "data" / "transformers_lora_modules.txt"
# tests/planner/data/transformers_lora_modules.txt: the linear modules of each model_type at transformers 4.57.6
MODULES = {
    line.split()[0]: set(line.split()[1:])
    for line in MODULES_FILE.read_text().splitlines()
    if line.strip() and not line.startswith("#")
}
# the modules of each MoE family's experts at that release (modeling_mixtral.py MixtralBlockSparseTop2MLP,
# modeling_qwen3_moe.py / modeling_deepseek_v2.py experts ModuleList of *MLP)
EXPERT_MODULES = {"mixtral": {"w1", "w2", "w3"}, "qwen3_moe": {"gate_proj", "up_proj", "down_proj"}}
EXPERT_MODULES["deepseek_v2"] = EXPERT_MODULES["deepseek_v3"] = EXPERT_MODULES["qwen3_moe"]
ALL_TARGETS = ["q", "k", "v", "o", "gate", "up", "down"]


def _lora_options(client: TestClient, preset: str) -> list[dict]:
    body = {
        "model": {"preset": preset},
        "task": "lora",
        "tokens": 1e8,
        "seq_len": 4096,
        "lora": {"rank": 16, "targets": ALL_TARGETS},
    }
    response = client.post("/recommend", json=body)
    assert response.status_code == 200, response.text
    options = response.json()["options"]
    assert options, response.text
    return options


def _assert_targets_exist(family: str, launch: dict) -> None:
    assert launch["versions"]["transformers"].startswith("4.57.6 ")
    assert launch["versions"]["peft"].startswith("0.18.1 ")
    targets = set(launch["peft"]["target_modules"])
    assert targets <= MODULES[family], targets - MODULES[family]
    assert EXPERT_MODULES[family] <= targets  # the experts are adapted, not attention only


@pytest.mark.parametrize("preset", ["mixtral-8x7b", "deepseek-v2-lite"])
def test_moe_lora_targets_exist_in_the_transformers_release_the_launch_names(client: TestClient, preset: str) -> None:
    family = get_preset(preset).model.family
    assert family is not None
    stacks = []
    for option in _lora_options(client, preset):
        (stack, launch), *_ = option["launch"].items()
        stacks.append(stack)
        assert launch["versions"]
        if stack == "deepspeed":
            _assert_targets_exist(family, launch)
    assert "deepspeed" in stacks


@pytest.mark.parametrize("preset", ["mixtral-8x7b", "qwen3-30b-a3b", "deepseek-v2-lite", "deepseek-v3"])
def test_peft_launch_of_each_moe_family_targets_its_experts(preset: str) -> None:
    """The DeepSpeed + PEFT launch of each MoE family (the recommendation above picks Megatron-Bridge for some)."""
    model = get_preset(preset).model
    assert model.family is not None
    workload = Workload(task="lora", seq_len=4096, tokens=1e8, lora=LoraSpec(targets=tuple(ALL_TARGETS)))
    launch = launch_configs("deepspeed", model, workload, Plan(dp=8, zero_stage=3), 1, 8, 128)["deepspeed"]
    _assert_targets_exist(model.family, launch)


def test_every_training_stack_launch_names_its_releases() -> None:
    model = get_preset("llama-3.1-8b").model
    full = Workload(task="full_finetune", seq_len=4096, tokens=1e9)
    lora = Workload(task="lora", seq_len=4096, tokens=1e8, lora=LoraSpec())
    cases = [
        ("deepspeed", full, Plan(dp=8, zero_stage=3), {"deepspeed", "transformers"}),
        ("deepspeed", lora, Plan(dp=8, zero_stage=2), {"deepspeed", "transformers", "peft"}),
        ("fsdp", full, Plan(dp=8, zero_stage=3), {"torchtitan"}),
        # Llama 3.1 has a Megatron-Bridge SFT recipe; continued pretraining stays on Megatron-LM
        ("megatron", full, Plan(dp=4, tp=2, zero_stage=1), {"megatron-bridge"}),
        ("megatron", replace(full, task="continued_pretrain"), Plan(dp=4, tp=2, zero_stage=1), {"megatron-lm"}),
        ("megatron", lora, Plan(dp=4, tp=2, zero_stage=1), {"megatron-bridge"}),
    ]
    for stack, workload, plan, tools in cases:
        versions = launch_configs(stack, model, workload, plan, 1, 8, 128)[stack]["versions"]
        assert set(versions) == tools, (stack, workload.task)
        assert all("https://github.com/" in where for where in versions.values())


def test_a_recommended_training_launch_carries_versions(client: TestClient) -> None:
    response = client.post(
        "/recommend", json={"model": {"preset": "llama-3.1-8b"}, "task": "full_finetune", "tokens": 1e9}
    )
    assert response.status_code == 200, response.text
    for option in response.json()["options"]:
        for launch in option["launch"].values():
            assert launch["versions"]
