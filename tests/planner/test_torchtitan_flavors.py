"""The fsdp stack offers only what torchtitan's registered model runs (data/stacks.json `flavors`, torchtitan v0.2.2
73a0e69), and no LoRA/QLoRA (torchtune's launch was not runnable). Each request here was offered and quoted before:

- Qwen3 pre-training as tp 2 x pp 8 x dp 2 on fsdp: torchtitan's qwen3 TrainSpec has pipelining_fn=None, and
  train.py raises "Pipeline Parallel is enabled but qwen3 does not support pipelining".
- DeepSeek-V2-Lite at 32k tokens with cp 4 on fsdp: the deepseek_v3 flavors use FlexAttention, and context parallel
  raises "Context Parallel only supports SDPA attention" (deepseek_v3/model/args.py, infra/parallelize.py).
- Llama 3.1 405B LoRA with SGD on fsdp: `tune run lora_finetune_distributed` without --config.
- Llama 3 8B on torchtitan's llama3 8B flavor, whose RoPE always applies Llama 3.1's scaling (factor 8); Llama 2
  70B on the 70B flavor (vocabulary 32,000, not 128,256: the checkpoint does not load)."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.estimator.presets import get_preset
from app.estimator.specs import LoraSpec, Plan, Workload
from app.planner.launch import launch_configs
from app.planner.stacks import MATRIX, Flavor, builds, flavor, runs, stack_for
from tests.factories import recommend

FSDP = MATRIX["fsdp"]


def _recommend(client: TestClient, body: dict[str, Any], limit: int = 20) -> dict[str, Any]:
    return recommend(client, body, constraints={"limit": limit})


def _offered(result: dict[str, Any]) -> list[dict[str, Any]]:
    return result["options"] + result["near_misses"]


def _registered(launch: dict[str, Any]) -> Flavor:
    named = launch["torchtitan"]["model"]
    return next(f for f in FSDP.flavors if (f.name, f.flavor) == (named["name"], named["flavor"]))


def _runs_on_flavor(entry: Flavor, plan: dict[str, Any]) -> bool:
    return (plan["pp"] == 1 or entry.pipeline) and (plan["cp"] == 1 or entry.attention in FSDP.cp_attention)


def test_the_data_records_pipelining_and_attention_per_flavor() -> None:
    by_name = {(f.name, f.flavor): f for f in FSDP.flavors}
    assert by_name[("llama3", "70B")].pipeline and by_name[("deepseek_v3", "16B")].pipeline
    assert not any(f.pipeline for f in FSDP.flavors if f.name == "qwen3")
    assert {f.attention for f in FSDP.flavors if f.name == "deepseek_v3"} == {"flex"}
    assert {f.attention for f in FSDP.flavors if f.name != "deepseek_v3"} == {"sdpa"}


def test_qwen3_runs_no_torchtitan_pipeline() -> None:
    model = get_preset("qwen3-32b").model
    assert builds("fsdp", model, "pretrain", tp=2) and not builds("fsdp", model, "pretrain", tp=2, pp=8)
    assert builds("fsdp", get_preset("llama-3.1-70b").model, "pretrain", tp=2, pp=8)
    sharded = Plan(dp=2, tp=2, pp=8, zero_stage=3, sequence_parallel=True)
    assert stack_for(Workload(task="pretrain"), sharded, model) is None  # was fsdp: only torchtitan runs ZeRO-3 here
    megatron = Plan(dp=2, tp=2, pp=8, zero_stage=1, sequence_parallel=True, fp32_main_grads=True)
    assert stack_for(Workload(task="pretrain"), megatron, model) == "megatron"


def test_qwen3_pretraining_pipeline_plans_go_to_megatron(client: TestClient) -> None:
    # fastest, ten options: over the add-on's 8 x 400 Gb/s a server data parallel leads, and a pipelined plan shows
    body = {"model": {"preset": "qwen3-32b"}, "task": "pretrain", "tokens": 1e11}
    result = recommend(client, body, constraints={"objective": "fastest", "limit": 10})
    for option in _offered(result):
        if option["stack"] == "fsdp":
            assert option["plan"]["pp"] == 1, option["plan"]
            assert option["launch"]["fsdp"]["torchtitan"]["parallelism"]["pipeline_parallel_degree"] == 1
    pipelined = [o for o in _offered(result) if o["plan"]["pp"] > 1]
    assert pipelined and {o["stack"] for o in pipelined} == {"megatron"}


def test_deepseek_flex_attention_flavors_run_no_context_parallel() -> None:
    model = get_preset("deepseek-v2-lite").model
    assert builds("fsdp", model, "full_finetune") and not builds("fsdp", model, "full_finetune", cp=4)
    assert builds("fsdp", get_preset("llama-3.1-8b").model, "full_finetune", cp=4)


def test_deepseek_v2_lite_context_parallel_plans_go_to_megatron(client: TestClient) -> None:
    body = {"model": {"preset": "deepseek-v2-lite"}, "task": "full_finetune", "tokens": 1e11, "seq_len": 32768}
    for option in _offered(_recommend(client, body)):
        if option["plan"]["cp"] > 1:
            assert option["stack"] == "megatron", option["plan"]


@pytest.mark.parametrize("task", ["lora", "qlora"])
def test_fsdp_runs_no_lora(task: str) -> None:
    workload = Workload(task=task, optimizer="sgd", lora=LoraSpec())  # type: ignore[arg-type]
    assert not runs("fsdp", workload, Plan(dp=8, zero_stage=3))
    assert not runs("fsdp", workload, Plan(dp=8, zero_stage=3, offload="optimizer_and_params"))
    assert not builds("fsdp", get_preset("llama-3.1-8b").model, task)  # type: ignore[arg-type]


def test_405b_lora_with_sgd_is_not_offered_on_torchtune(client: TestClient) -> None:
    body = {"model": {"preset": "llama-3.1-405b"}, "task": "lora", "tokens": 1e8, "optimizer": "sgd"}
    result = _recommend(client, body)
    for option in _offered(result):
        assert option["stack"] != "fsdp" and "torchtune" not in option["launch"].get(option["stack"], {})
        assert "tune run" not in option["launch"][option["stack"]]["command"]


@pytest.mark.parametrize("preset", ["llama-3-8b", "llama-3-70b", "llama-2-70b"])
def test_models_torchtitan_builds_differently_get_no_flavor(preset: str) -> None:
    # Llama 3.0: no rope_scaling, where torchtitan's llama3 always scales by 8; Llama 2 70B: vocabulary and RoPE base
    model = get_preset(preset).model
    assert flavor("fsdp", model) is None
    assert not builds("fsdp", model, "full_finetune")


def test_llama_3_1_keeps_its_flavors() -> None:
    expected = {"llama-3.1-8b": "8B", "llama-3.1-70b": "70B", "llama-3.1-405b": "405B", "qwen3-30b-a3b": "30B-A3B"}
    for preset, name in expected.items():
        entry = flavor("fsdp", get_preset(preset).model)
        assert entry is not None and entry.flavor == name, preset
    assert flavor("fsdp", get_preset("deepseek-v2-lite").model).flavor == "16B"  # type: ignore[union-attr]


def test_llama_3_fine_tune_goes_to_another_stack_without_rope_scaling(client: TestClient) -> None:
    result = _recommend(client, {"model": {"preset": "llama-3-8b"}, "task": "full_finetune", "tokens": 5e9})
    options = _offered(result)
    assert options and all(option["stack"] != "fsdp" for option in options)
    model = get_preset("llama-3-8b").model
    # Megatron-LM's flags (continued pretraining; a full fine-tune runs the Bridge recipe llama3_8b_sft_config, which
    # builds the model from its config.json)
    workload = Workload(task="continued_pretrain", tokens=5e9)
    megatron = launch_configs("megatron", model, workload, Plan(dp=4, tp=2, zero_stage=1), 1, 8, 128)["megatron"]
    assert "--use-rope-scaling" not in " ".join(megatron["args"])
    full = Workload(task="full_finetune", tokens=5e9)
    bridge = launch_configs("megatron", model, full, Plan(dp=4, tp=2, zero_stage=1), 1, 8, 128)["megatron"]
    assert bridge["recipe"] == "llama3_8b_sft_config"


SWEEP = [
    "llama-3.1-8b",
    "llama-3.1-70b",
    "llama-3.1-405b",
    "qwen3-8b",
    "qwen3-32b",
    "qwen3-30b-a3b",
    "deepseek-v2-lite",
    "mixtral-8x7b",
]


@pytest.mark.parametrize("preset", SWEEP)
@pytest.mark.parametrize(("task", "tokens"), [("pretrain", 1e11), ("full_finetune", 2e9), ("lora", 1e8)])
@pytest.mark.parametrize("seq_len", [4096, 32768])
def test_every_fsdp_option_names_a_flavor_that_runs_its_plan(
    client: TestClient, preset: str, task: str, tokens: float, seq_len: int
) -> None:
    body = {"model": {"preset": preset}, "task": task, "tokens": tokens, "seq_len": seq_len}
    for option in _offered(_recommend(client, body, limit=10)):
        if option["stack"] != "fsdp":
            continue
        assert task != "lora", option["plan"]
        launch, plan = option["launch"]["fsdp"], option["plan"]
        entry = _registered(launch)
        assert entry.matches(get_preset(preset).model) and _runs_on_flavor(entry, plan), (entry, plan)
        parallelism = launch["torchtitan"]["parallelism"]
        assert (parallelism["pipeline_parallel_degree"], parallelism["context_parallel_degree"]) == (
            plan["pp"],
            plan["cp"],
        )
