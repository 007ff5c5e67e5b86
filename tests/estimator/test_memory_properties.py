"""Hypothesis properties of estimate_memory over random valid plans."""

from dataclasses import replace

from hypothesis import given, settings, strategies as st

from app.estimator.hardware import get_gpu
from app.estimator.memory import estimate_memory
from app.estimator.presets import get_preset
from app.estimator.specs import Cluster, LoraSpec, ModelSpec, Plan, Workload

MODELS = [
    get_preset(p).model
    for p in ("llama-2-7b", "mixtral-8x7b", "gpt2", "qwen2.5-0.5b", "gemma-2-9b", "deepseek-v2-lite", "llama-3.1-70b")
]
H100 = get_gpu("h100-80g-sxm")


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[ModelSpec, Workload, Plan, Cluster]:
    model = draw(st.sampled_from(MODELS))
    task = draw(st.sampled_from(["pretrain", "full_finetune", "lora", "qlora", "inference"]))
    workload = Workload(
        task=task,
        precision=draw(st.sampled_from(["bf16", "fp16", "fp32"] + (["fp8"] if task == "inference" else []))),
        mixed_precision=draw(st.booleans()),
        optimizer=draw(st.sampled_from(["adamw", "adamw_8bit", "lion", "sgd", "adafactor"])),
        seq_len=draw(st.sampled_from([128, 512, 2048, 8192])),
        global_batch=draw(st.sampled_from([None, 64, 512])),
        lora=LoraSpec(rank=draw(st.sampled_from([4, 16, 64])), dropout=draw(st.sampled_from([0.0, 0.05]))),
    )
    tp = draw(st.sampled_from([d for d in (1, 2, 4, 8) if model.heads % d == 0]))
    pp = draw(st.sampled_from([d for d in (1, 2, 4) if d <= model.layers]))
    plan = Plan(
        dp=draw(st.sampled_from([1, 2, 4, 16, 64])),
        tp=tp,
        pp=pp,
        cp=draw(st.sampled_from([1, 2])),
        zero_stage=draw(st.integers(0, 3)),
        recompute=draw(st.sampled_from(["none", "selective", "full"])),
        sequence_parallel=draw(st.booleans()),
        flash_attention=draw(st.booleans()),
        micro_batch=draw(st.sampled_from([1, 2, 8])),
        virtual_stages=draw(st.sampled_from([1, 2])) if pp > 1 and model.layers >= 2 * pp else 1,
        chunked_loss=draw(st.booleans()),
    )
    nodes = -(-plan.gpus // 8)
    return model, workload, plan, Cluster(gpu=H100, gpus_per_node=8, nodes=nodes, host_ram_gib=2048)


def _total(model: ModelSpec, workload: Workload, plan: Plan, cluster: Cluster) -> float:
    return estimate_memory(model, workload, plan, cluster).breakdown.total


def _states(model: ModelSpec, workload: Workload, plan: Plan, cluster: Cluster) -> float:
    b = estimate_memory(model, workload, plan, cluster).breakdown
    return b.weights + b.gradients + b.optimizer


@settings(max_examples=300, deadline=None)
@given(scenarios())
def test_memory_is_never_negative(scenario: tuple) -> None:
    breakdown = estimate_memory(*scenario).breakdown
    for name in ("weights", "gradients", "optimizer", "activations", "kv_cache", "other", "host_ram"):
        assert getattr(breakdown, name) >= 0.0, name
    assert breakdown.total > 0


@settings(max_examples=300, deadline=None)
@given(scenarios())
def test_more_zero_never_increases_per_gpu_memory(scenario: tuple) -> None:
    """Within one pipeline stage. With pipeline stages, ZeRO-2 and ZeRO-3 are FSDP2 under a pipeline schedule
    as torchtitan runs them (fp32 gradients unsynced until the last micro-batch; ZeRO-3's weights not
    resharded either), which holds more than ZeRO-1 would; DeepSpeed's pipeline engine refuses ZeRO-2/3.

    For the same optimizer states: ZeRO's flat partitions hold Adafactor's second moment unfactored, and QLoRA pages
    its states only without ZeRO (memory.states._flat_partitions, paged_optimizer), so both can cost more with ZeRO; and
    ZeRO-2's fp32 gradient shards (4/N) outweigh ZeRO-1's whole 16-bit gradients (2) below N = dp × cp = 3.
    QLoRA's adapters under any ZeRO stage gain DeepSpeed's fp32 master partition (4/N bytes a parameter) that the
    Trainer without ZeRO does not keep, so on a few ranks ZeRO-1 can hold more than no ZeRO: QLoRA compares the ZeRO
    stages among themselves. DeepSpeed ZeRO-1/2's gradient buckets (states._ipg_buffers) are a fixed cost the sharding
    does not pay back on a small model: compared without them. On one GPU without ZeRO, torch makes each gradient in
    the backward and frees it after the step, so the peak is the larger of the backward's start and the step
    (memory.breakdown._grads_made_in_backward), while DeepSpeed's ZeRO-1/2 keep contiguous gradient buffers: there
    ZeRO-1 can hold more than no ZeRO (GPT-2 pretraining, bf16, batch 2 x 128: 1.434 against 1.421 GB), so the
    ZeRO stages compare among themselves."""
    model, workload, plan, cluster = scenario
    plan = replace(plan, reduce_bucket_elements=0)
    optimizer = "adamw" if workload.optimizer == "adafactor" else workload.optimizer
    workload = replace(workload, optimizer=optimizer, paged_optimizer=False)
    chains = ((0, 1, 2, 3),) if plan.dp * plan.cp >= 3 else ((0, 1), (2, 3))
    if plan.pp > 1:
        chains = ((0, 1),)
    if workload.task == "qlora" or plan.dp * plan.tp * plan.cp == 1:
        chains = tuple(tuple(z for z in chain if z) for chain in chains)
    for stages in chains:
        totals = [_total(model, workload, replace(plan, zero_stage=z), cluster) for z in stages]
        assert all(later <= earlier * (1 + 1e-12) for earlier, later in zip(totals, totals[1:], strict=False))


@settings(max_examples=300, deadline=None)
@given(scenarios())
def test_doubling_dp_with_zero3_shrinks_model_states(scenario: tuple) -> None:
    model, workload, plan, cluster = scenario
    if workload.task == "inference":
        return
    # Doubling dp under a fixed global batch halves the micro-batches a pipeline holds in flight: the worst stage
    # (the one reported) can move from the first to the last, whose head adds states, and paged optimizer states
    # give way to those activations. Compare the same stage: pipelines full (no global batch), states unpaged.
    workload = replace(workload, paged_optimizer=False, global_batch=None)
    plan = replace(plan, zero_stage=3)
    doubled = replace(plan, dp=plan.dp * 2)
    big_cluster = replace(cluster, nodes=-(-doubled.gpus // 8))
    assert _states(model, workload, doubled, big_cluster) < _states(model, workload, plan, big_cluster)


@settings(max_examples=300, deadline=None)
@given(scenarios())
def test_recompute_never_increases_activations(scenario: tuple) -> None:
    model, workload, plan, cluster = scenario

    def activations(mode: str) -> float:
        return estimate_memory(model, workload, replace(plan, recompute=mode), cluster).breakdown.activations

    baseline = activations("none")
    assert activations("selective") <= baseline
    assert activations("full") <= baseline
