"""The memory estimate keeps per-(model, workload) caches keyed by the plan and cluster fields each part reads
(model states per stage; working sets per stage; the worst stage; the ZeRO-3 advice; the assumptions). Property: an
estimate made after a sibling plan, on a sibling cluster, filled those caches equals the estimate made in a fresh
context (copies of the inputs, so nothing is found by identity, and the contexts found by value dropped). Exact
equality: the caches must return the very numbers and texts a fresh computation gives."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings, strategies as st

from app.estimator.memory import estimate_memory
from app.estimator.memory.activations import _split_of
from app.estimator.memory.breakdown import _grads_made_in_backward, _sharded, _worst_stage
from app.estimator.memory.estimate import _build_context
from app.estimator.specs import Cluster, GpuSpec, LoraSpec, ModelSpec, Plan, Workload
from tests.estimator.perf_cases import A100_80_SXM, H100_SXM, LLAMA2_7B, LLAMA3_70B
from tests.estimator.test_perf_cache import MIXTRAL, SIBLING_FIELDS, STRUCTURE_PLANS, _reads, plans as perf_plans

# the performance cache test's plans, with the fields only the memory estimate reads
plans = st.builds(
    lambda plan, main_grads, host_load: replace(plan, fp32_main_grads=main_grads, host_load=host_load),
    perf_plans,
    st.booleans(),
    st.sampled_from(["none", "every_rank", "local_rank_0"]),
)
# what a sibling plan may change (any of it, or nothing), and the cluster fields the estimate reads besides the GPU
siblings = st.fixed_dictionaries(
    {},
    optional={
        **SIBLING_FIELDS,
        "fp32_main_grads": st.booleans(),
        "compiled": st.booleans(),
        "pp_keeps_outputs": st.booleans(),
        "host_load": st.sampled_from(["none", "every_rank", "local_rank_0"]),
        "fsdp_torch_adamw": st.booleans(),
        "fsdp1": st.booleans(),
    },
)
clusters = st.fixed_dictionaries(
    {"memory_headroom": st.sampled_from([0.0, 0.05, 0.5]), "host_ram_gib": st.sampled_from([None, 256.0, 2048.0])}
)


def _valid(plan: Plan) -> Plan:
    if plan.offload == "optimizer_and_params":
        plan = replace(plan, zero_stage=3)
    if plan.zero_stage == 3 and plan.dp > 1 and plan.dp % 2 == 0:
        plan = replace(plan, dp_shard=plan.dp // 2)  # hybrid sharding too
    return plan


def _inputs(
    model: ModelSpec, gpu: GpuSpec, task: str, plan: Plan, accumulation: int, cluster_fields: dict
) -> tuple[ModelSpec, Workload, Cluster]:
    per_node = min(8, plan.gpus)
    cluster = Cluster(gpu=gpu, gpus_per_node=per_node, nodes=plan.gpus // per_node, inter_node_gbps=400.0)
    lora = LoraSpec(rank=16) if task in ("lora", "qlora") else None
    batch = None if task == "inference" else plan.dp * plan.micro_batch * accumulation
    workload = Workload(task=task, seq_len=2048, global_batch=batch, lora=lora)
    return model, workload, replace(cluster, **cluster_fields)


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from([LLAMA2_7B, LLAMA3_70B]),
    st.sampled_from([A100_80_SXM, H100_SXM]),
    st.sampled_from(["pretrain", "full_finetune", "lora", "qlora", "inference"]),
    plans,
    siblings,
    st.booleans(),
    clusters,
    clusters,
    st.integers(1, 9),
)
def test_cached_memory_estimate_equals_a_fresh_one(
    model, gpu, task, plan, sibling, swap, cluster_fields, sibling_cluster_fields, accumulation
) -> None:
    if plan.ep > 1:  # expert parallel: an MoE model, ep inside dp
        model, plan = MIXTRAL, replace(plan, dp=max(plan.dp, plan.ep))
    plan = _valid(plan)
    model, workload, cluster = _inputs(model, gpu, task, plan, accumulation, cluster_fields)
    other = replace(plan, **sibling, dp_shard=None)
    if swap:  # same GPU count, another pipeline depth
        other = replace(other, dp=plan.pp * max(1, plan.ep), pp=plan.dp // max(1, plan.ep))
    estimate_memory(model, workload, _valid(other), replace(cluster, **sibling_cluster_fields))
    cached = estimate_memory(model, workload, plan, cluster)
    _build_context.cache_clear()  # contexts are also found by value (equal copies share one): start afresh
    fresh = estimate_memory(replace(model), replace(workload), plan, replace(cluster))
    assert cached == fresh


WORST_STAGE_PLANS = (  # the step's branches too: ZeRO-3 under the Trainer's DeepSpeed or FSDP's AdamW, one GPU
    *STRUCTURE_PLANS,
    Plan(dp=8, zero_stage=3, tuning="trainer"),
    Plan(dp=8, zero_stage=3, fsdp_torch_adamw=True),
    Plan(dp=8, zero_stage=2),
    Plan(),
)


@pytest.mark.parametrize("task", ["pretrain", "full_finetune", "qlora"])
@pytest.mark.parametrize("plan", WORST_STAGE_PLANS, ids=range(len(WORST_STAGE_PLANS)))
def test_the_worst_stage_reads_only_plan_fields_of_its_keys(task: str, plan: Plan) -> None:
    """The worst stage is cached in the sharded states' entry (breakdown._sharded, whose split has its own key) by
    whether the gradients are made in the backward: the plan fields it reads on a miss must be among those the keys
    and that flag read, else a sibling plan would get its worst stage. A new Plan field it comes to read must join a
    key."""
    model = MIXTRAL if plan.ep > 1 else LLAMA2_7B
    model, workload, cluster = _inputs(model, H100_SXM, task, plan, 1, {})
    ctx = _build_context(replace(model), workload)
    shard = (plan.dp_shard or plan.dp) * plan.cp
    split = _split_of(ctx, plan, plan.dp)
    sharded = _sharded(ctx, split, plan, shard, plan.zero_stage, plan.offload)
    keyed = _reads(lambda c, p: _split_of(c, p, p.dp), ctx, plan)
    keyed |= _reads(lambda c, p: _sharded(c, split, p, shard, p.zero_stage, p.offload), ctx, plan)
    keyed |= _reads(lambda c, p: _grads_made_in_backward(c, p, p.dp, p.zero_stage), ctx, plan)
    for made_in_backward in (False, True):
        read = _reads(
            lambda c, p, flag=made_in_backward: _worst_stage(c, split, p, sharded, (p.zero_stage, shard), flag),
            ctx,
            plan,
        )
        assert read <= keyed, f"_worst_stage reads {sorted(read - keyed)} without keying on them"
