"""The performance estimate keeps per-(model, workload, cluster) caches keyed by the plan fields each part reads
(step shapes, warnings and assumptions per shape; a plan's whole answer per every field the training estimate reads;
inference times per tp and batch). Property: an estimate made after a sibling plan filled those caches equals
the estimate made in a fresh context (copies of the inputs, so nothing is found by identity). Exact equality:
the caches must return the very numbers and texts a fresh computation gives."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings, strategies as st

from app.estimator import performance
from app.estimator.performance import estimate_performance
from app.estimator.specs import Cluster, GpuSpec, LoraSpec, ModelSpec, Plan, Workload
from tests.estimator.perf_cases import A100_80_SXM, H100_SXM, LLAMA2_7B, LLAMA3_70B
from tests.factories import moe_model

MIXTRAL = moe_model()  # mistralai/Mixtral-8x7B-v0.1 config.json
tasks = st.sampled_from(["pretrain", "full_finetune", "lora", "qlora", "inference"])
plans = st.builds(
    Plan,
    dp=st.sampled_from([1, 2, 4, 8]),
    tp=st.sampled_from([1, 2, 4, 8]),
    pp=st.sampled_from([1, 2, 4]),
    ep=st.sampled_from([1, 2]),
    zero_stage=st.sampled_from([0, 1, 2, 3]),
    recompute=st.sampled_from(["none", "selective", "full"]),
    offload=st.sampled_from(["none", "optimizer", "optimizer_and_params"]),
    micro_batch=st.sampled_from([1, 2, 4]),
    flash_attention=st.booleans(),
    activation_offload=st.booleans(),
)
# what a sibling plan changes: fields outside the shape key, and fields that only inference ignores
SIBLING_FIELDS = {
    "zero_stage": st.sampled_from([0, 1, 2, 3]),
    "offload": st.sampled_from(["none", "optimizer"]),
    "recompute": st.sampled_from(["none", "selective", "full"]),
    "flash_attention": st.booleans(),
    "sequence_parallel": st.booleans(),
    "chunked_loss": st.booleans(),
    "tuning": st.sampled_from([None, "typical", "nemo", "trainer_peft"]),
}
siblings = st.fixed_dictionaries(SIBLING_FIELDS)


def _inputs(
    model: ModelSpec, gpu: GpuSpec, task: str, plan: Plan, accumulation: int, tokens: float | None, gbps: float
) -> tuple[ModelSpec, Workload, Cluster]:
    per_node = min(8, plan.gpus)
    cluster = Cluster(gpu=gpu, gpus_per_node=per_node, nodes=plan.gpus // per_node, inter_node_gbps=gbps)
    lora = LoraSpec(rank=16) if task in ("lora", "qlora") else None
    batch = None if task == "inference" else plan.dp * plan.micro_batch * accumulation
    return model, Workload(task=task, seq_len=2048, global_batch=batch, tokens=tokens, lora=lora), cluster


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from([LLAMA2_7B, LLAMA3_70B]),
    st.sampled_from([A100_80_SXM, H100_SXM]),
    tasks,
    plans,
    siblings,
    st.booleans(),
    st.integers(1, 9),
    st.sampled_from([None, 1e9, 1e12]),
    st.sampled_from([25.0, 400.0, 3200.0]),
)
def test_cached_estimate_equals_a_fresh_one(model, gpu, task, plan, sibling, swap, accumulation, tokens, gbps) -> None:
    if plan.ep > 1:  # expert parallel: an MoE model, ep inside dp
        model, plan = MIXTRAL, replace(plan, dp=max(plan.dp, plan.ep))
    model, workload, cluster = _inputs(model, gpu, task, plan, accumulation, tokens, gbps)
    other = replace(plan, **sibling)
    if swap:  # same GPU count, another pipeline depth
        other = replace(other, dp=plan.pp * max(1, plan.ep), pp=plan.dp // max(1, plan.ep))
    estimate_performance(model, workload, other, cluster)
    cached = estimate_performance(model, workload, plan, cluster)
    fresh = estimate_performance(replace(model), replace(workload), plan, replace(cluster))
    assert cached == fresh


def test_activation_offload_copies_depend_on_sequence_parallel() -> None:
    """Sequence parallel shards the saved activations over tp, so activation offload copies fewer bytes: a plan
    that differs only in sequence_parallel must not reuse its sibling's cached step (it once did)."""
    model, workload, cluster = _inputs(LLAMA2_7B, H100_SXM, "pretrain", Plan(tp=2), 1, None, 400.0)
    plan = Plan(tp=2, recompute="selective", activation_offload=True)
    estimate_performance(model, workload, replace(plan, sequence_parallel=True), cluster)
    cached = estimate_performance(model, workload, plan, cluster)
    assert cached == estimate_performance(replace(model), replace(workload), plan, replace(cluster))


class _Reads:
    """Stands in for a Plan and records the fields read from it (a property through the fields it reads)."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.read: set[str] = set()

    def __getattr__(self, name: str) -> object:
        attribute = getattr(Plan, name, None)
        if isinstance(attribute, property):
            return attribute.fget(self)
        self.read.add(name)
        return getattr(self.plan, name)


def _reads(find, ctx, plan: Plan) -> set[str]:
    recorder = _Reads(plan)
    find(ctx, recorder)
    return recorder.read


STRUCTURE_PLANS = (  # every branch of the cached computations: offloads, pipelines, cp, ep, hybrid sharding
    Plan(dp=8),
    Plan(dp=8, zero_stage=3, offload="optimizer_and_params", recompute="full"),
    Plan(dp=4, tp=2, zero_stage=1, offload="optimizer", activation_offload=True, sequence_parallel=True),
    Plan(dp=2, tp=2, pp=2, virtual_stages=2, micro_batch=2, zero_stage=2),
    Plan(dp=2, tp=2, cp=2, ep=2, zero_stage=3, dp_shard=1, flash_attention=False),
    Plan(dp=8, tp=1, pp=2, zero_stage=3, dp_shard=4, recompute="selective"),
    Plan(dp=8, tuning="torchtitan"),
)


@pytest.mark.parametrize("task", ["pretrain", "full_finetune", "qlora", "inference"])
@pytest.mark.parametrize("plan", STRUCTURE_PLANS, ids=range(len(STRUCTURE_PLANS)))
def test_cache_keys_hold_every_plan_field_their_computation_reads(task: str, plan: Plan) -> None:
    """A cached part may read only plan fields its key holds (else a sibling plan would get its answer): the fields
    read while computing it, on a miss, are among those read to build its key, on a hit. A new Plan field that the
    step, the shape or inference times come to depend on must join their key."""
    model = MIXTRAL if plan.ep > 1 else LLAMA2_7B
    model, workload, cluster = _inputs(model, H100_SXM, task, plan, 2, 1e9, 25.0)
    if task == "inference":  # keyed by (tp, micro_batch) in _estimate_inference
        read = _reads(lambda _, p: performance._inference_times(model, workload, p, cluster), None, plan)
        assert read <= {"tp", "micro_batch"}, read
        return
    for find in (performance._shape_of, performance._step_of):
        ctx = performance._context(replace(model), workload, cluster)  # fresh: the first call misses
        miss = _reads(find, ctx, plan)
        hit = _reads(find, ctx, plan)
        assert miss <= hit, f"{find.__name__} reads {sorted(miss - hit)} without keying on them"


def test_an_estimate_met_again_hands_out_outputs_of_its_own() -> None:
    """A plan's answer is cached, its outputs are not: changing what one estimate returned (its warnings, breakdown,
    goodput) leaves the next estimate of the plan as a fresh one."""
    model, workload, cluster = _inputs(LLAMA2_7B, H100_SXM, "pretrain", Plan(dp=4, pp=2), 1, 1e9, 400.0)
    plan = Plan(dp=4, pp=2)
    first = estimate_performance(model, workload, plan, cluster)
    assert first.performance.goodput is not None and first.warnings  # pipeline_bubble
    first.warnings.append(first.warnings[0])
    first.performance.breakdown_s["compute"] = 0.0
    first.performance.goodput.wall_hours = 0.0
    first.performance.step_time_s = 0.0
    again = estimate_performance(model, workload, plan, cluster)
    assert again == estimate_performance(replace(model), replace(workload), plan, replace(cluster))
