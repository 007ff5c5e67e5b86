"""Pipelines whose degree does not divide the layers (review R2): DeepSeek-V3's 61 layers (a prime) and Llama 3.1
405B's 126 were never searched past PP 1 (61) or PP 2/7/14 (126), so /recommend offered DeepSeek-V3 fine-tuning on 32
H100 servers only as TP 4 × DP 64 (514 tok/s/GPU, MFU 6.2 %, communication_bound), and never Meta's TP 8 × PP 16.
The split (`stage_layers`), the shapes searched, the estimate of the heaviest and slowest stage, and the launches'
uneven-stage settings."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.estimator.hardware import get_gpu
from app.estimator.memory import memory_breakdown
from app.estimator.performance import microbatch_compute_s
from app.estimator.presets import get_preset
from app.estimator.specs import Cluster, Plan, Workload
from app.planner.launch import Job, bridge_overrides, megatron_args, torchtitan_config
from app.planner.shapes import pipeline_degrees, plan_shapes, stage_layers
from tests.factories import recommend
from tests.planner.test_launch_schemas import _overrides, _parsed

PRETRAIN = Workload(task="pretrain", seq_len=8192, global_batch=2048, tokens=1e11)
META_405B = Plan(dp=1, tp=8, pp=16, zero_stage=0, recompute="full")  # Dubey et al. 2024 §3.3.2 Table 4, dp 1 here


def _h100(nodes: int) -> Cluster:
    return Cluster(gpu=get_gpu("h100-80g-sxm"), gpus_per_node=8, nodes=nodes, host_ram_gib=2048)


def test_llama3_405b_on_pp16_is_split_as_meta_split_it() -> None:
    """Llama 3 §3.3.2 (arXiv:2407.21783): 126 layers on PP 16, one layer fewer on the first and the last stage,
    i.e. 7 | 8 × 14 | 7. Exact."""
    assert stage_layers(126, 16) == (7, 8, 7)


@pytest.mark.parametrize(("layers", "pp"), [(61, 2), (61, 4), (61, 8), (61, 13), (61, 16), (126, 4), (126, 8), (27, 8)])
def test_an_uneven_split_holds_every_layer_and_no_stage_above_the_ceiling(layers: int, pp: int) -> None:
    """Derivation: the stages hold all the layers; the middle stages hold ceil(layers / pp), the count the estimator
    sizes, and the first and last no more; Megatron-Core's rules (transformer_config.py, core_v0.15.3): first and
    last > 0 and the middle layers split evenly over pp - 2 stages."""
    split = stage_layers(layers, pp)
    assert split is not None
    first, middle, last = split
    assert first + (pp - 2) * middle + last == layers
    assert middle == -(-layers // pp) >= first >= last > 0


def test_no_split_where_the_first_and_last_stages_would_be_empty() -> None:
    """61 layers on PP 12: 10 middle stages of 6 leave 1 layer for two stages; PP 15: 13 of 5 leave none. The search
    tries uneven degrees that are powers of two (the published layouts'), even ones as before: 80 layers on 3 servers
    (24 GPUs over TP 8) stay unpipelined."""
    assert stage_layers(61, 12) is None and stage_layers(61, 15) is None
    assert stage_layers(61, 3) == (20, 21, 20)
    assert pipeline_degrees(61, 12) == [1, 2, 4]
    assert pipeline_degrees(80, 3) == [1]
    assert pipeline_degrees(126, 112) == [1, 2, 4, 7, 8, 14, 16]


def test_deepseek_v3_and_llama_405b_shapes_include_uneven_pipelines() -> None:
    """Before: pp only among the divisors of the layers: DeepSeek-V3 (61) searched PP 1 alone on 32 servers, and
    Llama 3.1 405B (126) with TP 8 on 16 servers PP 1 and 2."""
    deepseek = get_preset("deepseek-v3").model
    full = Workload(task="full_finetune", seq_len=4096, precision="fp8", tokens=1e10)
    pps = {shape.pp for shape in plan_shapes(deepseek, full, _h100(32))}
    assert {8, 16} <= pps
    llama = get_preset("llama-3.1-405b").model
    shapes = {(shape.tp, shape.pp, shape.dp) for shape in plan_shapes(llama, PRETRAIN, _h100(16))}
    assert (8, 16, 1) in shapes


def test_the_estimate_sizes_the_heaviest_stage_and_paces_on_the_slowest() -> None:
    """Derivation: at PP 16 the heaviest stage of Llama 3.1 405B holds 8 layers (plus the embedding on the first), as
    a 128-layer model's even split does: the same memory to the byte; and a micro-batch takes 8/126 of the
    unpipelined model's compute (the pipeline moves at its slowest stage: Narayanan et al. 2021 §2.2, every stage
    runs each micro-batch in turn). Exact: both are the same arithmetic."""
    model = get_preset("llama-3.1-405b").model
    even = dataclasses.replace(model, layers=128)
    assert memory_breakdown(model, PRETRAIN, META_405B, _h100(16)) == memory_breakdown(
        even, PRETRAIN, META_405B, _h100(16)
    )
    gpu = get_gpu("h100-80g-sxm")
    staged = microbatch_compute_s(model, PRETRAIN, META_405B, gpu)[0]
    whole = microbatch_compute_s(model, PRETRAIN, Plan(tp=8, recompute="full"), gpu)[0]
    assert staged / whole == pytest.approx(8 / 126, rel=1e-9)


def _torchtitan_split(layers: int, pp: int, less_first: int, less_last: int) -> list[int]:
    """torchtitan v0.2.2's split (distributed/pipeline_parallel.py generate_llm_fqn_per_model_part): layers plus
    the two weights dealt out evenly, the remainder to the first stages, the weights taken off the first and last."""
    effective = layers + less_first + less_last
    counts = [effective // pp + (1 if stage < effective % pp else 0) for stage in range(pp)]
    counts[0] -= less_first
    counts[-1] -= less_last
    return counts


def test_405b_pp16_launches_say_the_split_the_estimate_sized() -> None:
    model = get_preset("llama-3.1-405b").model
    args = _parsed(megatron_args(model, PRETRAIN, META_405B, 2048, None))
    assert args["--decoder-first-pipeline-num-layers"] == args["--decoder-last-pipeline-num-layers"] == "7"
    assert args["--pipeline-model-parallel-size"] == "16"
    parallelism = torchtitan_config(model, PRETRAIN, META_405B, 2048)["parallelism"]
    less = (
        parallelism["pipeline_parallel_first_stage_less_layers"],
        parallelism["pipeline_parallel_last_stage_less_layers"],
    )
    assert _torchtitan_split(126, 16, *less) == [7] + [8] * 14 + [7]


def test_even_torchtitan_pipelines_stay_even() -> None:
    """torchtitan's defaults (1 and 1) would split 32 layers on PP 4 as 8 | 9 | 8 | 7; the estimate sizes 8 a stage."""
    model = get_preset("llama-3.1-8b").model
    parallelism = torchtitan_config(model, PRETRAIN, Plan(dp=2, pp=4, zero_stage=3), 2048)["parallelism"]
    less = (
        parallelism["pipeline_parallel_first_stage_less_layers"],
        parallelism["pipeline_parallel_last_stage_less_layers"],
    )
    assert _torchtitan_split(32, 4, *less) == [8, 8, 8, 8]


def test_even_megatron_pipelines_carry_no_uneven_flags() -> None:
    model = get_preset("llama-3.1-8b").model
    args = _parsed(megatron_args(model, PRETRAIN, Plan(dp=2, pp=4), 2048, None))
    assert "--decoder-first-pipeline-num-layers" not in args


def test_bridge_overrides_give_the_uneven_split_and_drop_a_recipe_layout() -> None:
    """Megatron-Bridge (v0.6.0 ConfigContainer fields): TransformerConfig's num_layers_in_first/last_pipeline_stage,
    with the recipe's layout and embedding/loss accounting off (Megatron-Core refuses them together)."""
    model = get_preset("llama-3.1-405b").model
    full = Workload(task="full_finetune", seq_len=4096, tokens=1e9)
    job = Job(model=model, workload=full, plan=META_405B, nodes=16, gpus_per_node=8, global_batch=128, performance=None)
    out = _overrides(bridge_overrides(job))
    assert (out["model.num_layers_in_first_pipeline_stage"], out["model.num_layers_in_last_pipeline_stage"]) == (
        "7",
        "7",
    )
    assert out["model.pipeline_model_parallel_layout"] == "null"
    assert out["model.account_for_embedding_in_pipeline_split"] == "false"


def test_deepseek_v3_recommendation_pipelines_and_beats_tp4_dp64(client: TestClient) -> None:
    """Review R2: /recommend for DeepSeek-V3 fp8 full fine-tuning on up to 32 H100 servers offered only TP 4 × DP 64 ×
    EP 64 (514 tok/s/GPU, MFU 6.2 %, communication_bound). Now its first option pipelines, unevenly (61 layers), faster
    a GPU than /estimate puts that plan (torchtitan TP 8 × PP 16 × DP 2 at 808), and its launch gives the split."""
    body: dict[str, Any] = {
        "model": {"preset": "deepseek-v3"},
        "task": "full_finetune",
        "precision": "fp8",
        "seq_len": 4096,
        "tokens": 1e10,
    }
    top = recommend(client, body, constraints={"max_nodes": 32})["options"][0]
    plan = top["plan"]
    assert plan["pp"] > 1 and 61 % plan["pp"]
    old = {"tp": 4, "pp": 1, "dp": 64, "ep": 64, "zero_stage": 1, "recompute": "full"}
    hardware = {"gpu": "h100-80g-sxm", "nodes": 32}
    before = client.post("/estimate", json={**body, "hardware": hardware, "plan": old})
    assert before.status_code == 200, before.text
    assert top["performance"]["tokens_per_s_per_gpu"] > before.json()["performance"]["tokens_per_s_per_gpu"]
    first, middle, last = stage_layers(61, plan["pp"]) or (0, 0, 0)
    launch = top["launch"][top["stack"]]
    if top["stack"] == "megatron":
        args = _parsed(launch["args"])
        uneven = (args["--decoder-first-pipeline-num-layers"], args["--decoder-last-pipeline-num-layers"])
        assert uneven == (str(first), str(last))
    else:
        parallelism = launch["torchtitan"]["parallelism"]
        less = (
            parallelism["pipeline_parallel_first_stage_less_layers"],
            parallelism["pipeline_parallel_last_stage_less_layers"],
        )
        assert _torchtitan_split(61, plan["pp"], *less) == [first] + [middle] * (plan["pp"] - 2) + [last]
