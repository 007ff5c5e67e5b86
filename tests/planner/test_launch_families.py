"""Launch blocks and stack choice per model family (issue #14, Planner II).

Before: Megatron plans split 2 KV groups over tp 4 (Megatron-Core's TransformerConfig raises); DeepSeek's MLA
was launched as GQA with Llama LoRA targets; Gemma went to Megatron as SwiGLU and Qwen3 without --qk-layernorm;
torchtitan's TOML named no [model] name/flavor and fsdp ran families torchtitan does not implement; PEFT targets
were Llama names for every family.
"""

from __future__ import annotations

from typing import Any

import pytest

from app.estimator.hardware import get_gpu, load_gpus
from app.estimator.presets import get_preset
from app.estimator.specs import Cluster, LoraSpec, Plan, Workload
from app.planner.launch import launch_configs, peft_config
from app.planner.search import plan_shapes
from app.planner.stacks import builds, stack_for
from tests.planner.test_launch_schemas import TORCHTITAN_KEYS, _dotted, _parsed


def _cluster(gpus: int) -> Cluster:
    return Cluster(gpu=get_gpu(next(iter(load_gpus()))), gpus_per_node=gpus, nodes=1)


def _megatron(preset: str, workload: Workload, plan: Plan) -> dict[str, Any]:
    return launch_configs("megatron", get_preset(preset).model, workload, plan, 1, 8, 128)["megatron"]


FULL = Workload(task="full_finetune", seq_len=4096, tokens=1e9)
# Megatron-LM's pretrain_gpt.py flags: continued pretraining runs them for every family (a full fine-tune of a model
# with a Megatron-Bridge SFT recipe runs the recipe instead)
CPT = Workload(task="continued_pretrain", seq_len=4096, tokens=1e9)
LORA = Workload(task="lora", seq_len=4096, tokens=1e8, lora=LoraSpec())


@pytest.mark.parametrize(("preset", "bad_tp"), [("qwen2.5-3b", 4), ("gemma-2b", 2), ("qwen2.5-0.5b", 4)])
def test_no_plan_splits_kv_heads_megatron_cannot(preset: str, bad_tp: int) -> None:
    model = get_preset(preset).model
    assert not builds("megatron", model, "full_finetune", bad_tp)
    tps = {shape.tp for shape in plan_shapes(model, FULL, _cluster(8))}
    assert bad_tp not in tps and all(model.kv_heads % tp == 0 for tp in tps)
    assert stack_for(FULL, Plan(dp=2, tp=bad_tp, zero_stage=1, fp32_main_grads=True), model) is None


def test_megatron_builds_tp_dividing_the_query_groups() -> None:
    model = get_preset("qwen2.5-3b").model  # 16 heads, 2 KV groups
    assert stack_for(FULL, Plan(dp=4, tp=2, zero_stage=1, fp32_main_grads=True), model) == "megatron"


@pytest.mark.parametrize("preset", ["deepseek-v3", "deepseek-v2-lite"])
def test_deepseek_mla_flags_and_lora_targets(preset: str) -> None:
    plan = Plan(dp=2, tp=4, ep=2, zero_stage=1, sequence_parallel=True)
    config = _megatron(preset, FULL, plan)
    args = _parsed(config["args"])
    v3 = preset == "deepseek-v3"
    mla = {"--multi-latent-attention": None, "--kv-lora-rank": "512", "--qk-head-dim": "128"}
    mla |= {"--qk-pos-emb-head-dim": "64", "--v-head-dim": "128", "--qk-layernorm": None}
    assert {flag: args.get(flag, "absent") for flag in mla} == mla
    assert args.get("--q-lora-rank") == ("1536" if v3 else None)
    assert "--group-query-attention" not in args and "--num-query-groups" not in args
    assert args["--moe-layer-freq"] == ("([0]*3+[1]*58)" if v3 else "([0]*1+[1]*26)")
    assert args["--moe-router-score-function"] == ("sigmoid" if v3 else "softmax")
    # Megatron-Bridge has no DeepSeek PEFT recipe (v0.6.0): their LoRA runs on PEFT's Hugging Face names only
    assert not builds("megatron", get_preset(preset).model, "lora")
    hf = peft_config(LORA, get_preset(preset).model)["target_modules"]
    assert "kv_a_proj_with_mqa" in hf and "k_proj" not in hf


def test_qwen3_gets_qk_layernorm_and_llama_does_not() -> None:
    plan = Plan(dp=8, zero_stage=1)
    assert "--qk-layernorm" in _parsed(_megatron("qwen3-8b", CPT, plan)["args"])
    assert "--qk-layernorm" not in _parsed(_megatron("llama-3.1-8b", CPT, plan)["args"])


@pytest.mark.parametrize("preset", ["gemma-7b", "gemma-2-9b", "falcon-7b", "pythia-6.9b"])
def test_megatron_never_chosen_for_families_its_arguments_cannot_build(preset: str) -> None:
    model = get_preset(preset).model
    assert not builds("megatron", model, "full_finetune")
    assert stack_for(FULL, Plan(dp=4, zero_stage=1), model) == "deepspeed"
    assert stack_for(FULL, Plan(dp=4, pp=2, zero_stage=1), model) is None  # the HF Trainer runs no pipeline
    assert stack_for(FULL, Plan(dp=4, tp=2, zero_stage=1, fp32_main_grads=True), model) is None


@pytest.mark.parametrize(
    ("preset", "name", "flavor"),
    [("llama-3.1-8b", "llama3", "8B"), ("qwen3-32b", "qwen3", "32B"), ("deepseek-v3", "deepseek_v3", "671B")],
)
def test_torchtitan_toml_names_its_model_and_flavor(preset: str, name: str, flavor: str) -> None:
    model = get_preset(preset).model
    plan = Plan(dp=8, zero_stage=3)
    titan = launch_configs("fsdp", model, FULL, plan, 1, 8, 128)["fsdp"]["torchtitan"]
    assert (titan["model"]["name"], titan["model"]["flavor"]) == (name, flavor)
    assert not _dotted(titan) - TORCHTITAN_KEYS


@pytest.mark.parametrize("preset", ["gemma-7b", "phi-3-mini-4k", "mixtral-8x7b", "llama-2-7b", "falcon-7b"])
def test_fsdp_full_training_only_for_models_torchtitan_implements(preset: str) -> None:
    model = get_preset(preset).model
    assert not builds("fsdp", model, "full_finetune")
    assert stack_for(FULL, Plan(dp=8, zero_stage=3, recompute="selective"), model) is None
    assert stack_for(FULL, Plan(dp=8, zero_stage=3), model) == "deepspeed"


@pytest.mark.parametrize(
    ("preset", "expected"),
    [
        ("falcon-7b", ["query_key_value", "dense", "dense_h_to_4h", "dense_4h_to_h"]),
        ("pythia-6.9b", ["query_key_value", "dense", "dense_h_to_4h", "dense_4h_to_h"]),
        ("phi-3-mini-4k", ["qkv_proj", "o_proj", "gate_up_proj", "down_proj"]),
        # transformers 4.57.6 Mixtral has no gate_proj/up_proj/down_proj (data/transformers_lora_modules.txt)
        ("mixtral-8x7b", ["q_proj", "k_proj", "v_proj", "o_proj", "w1", "w3", "w2"]),
        ("llama-3.1-8b", ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]),
    ],
)
def test_peft_targets_are_the_familys_module_names(preset: str, expected: list[str]) -> None:
    model = get_preset(preset).model
    config = launch_configs("deepspeed", model, LORA, Plan(dp=8), 1, 8, 128)["deepspeed"]
    assert config["peft"]["target_modules"] == expected


def test_all_linear_stays_peft_shorthand() -> None:
    workload = Workload(task="lora", seq_len=4096, tokens=1e8, lora=LoraSpec(targets=("all-linear",)))
    assert peft_config(workload, get_preset("falcon-7b").model)["target_modules"] == "all-linear"


@pytest.mark.parametrize("preset", ["qwen2.5-3b", "gemma-2b", "gemma-7b", "phi-3-mini-4k"])
def test_recommended_options_name_a_stack_that_builds_the_model(client: Any, preset: str) -> None:
    body = {"model": {"preset": preset}, "task": "full_finetune", "tokens": 1e9, "constraints": {"limit": 20}}
    response = client.post("/recommend", json=body)
    assert response.status_code == 200, response.text
    model = get_preset(preset).model
    options = response.json()["options"]
    assert options
    for option in options:
        stack, plan = option["stack"], option["plan"]
        assert builds(stack, model, "full_finetune", plan["tp"]), (stack, plan["tp"])
        assert model.kv_heads % plan["tp"] == 0
        if stack == "fsdp":
            assert option["launch"]["fsdp"]["torchtitan"]["model"]["flavor"]
