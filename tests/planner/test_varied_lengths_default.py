"""`varied_lengths` as the stack that runs the plan feeds its data (stacks.as_padded), and the launch that says so.

The Hugging Face Trainer's fine-tuning pads each batch to its longest sample: DataCollatorForSeq2Seq's default
`padding=True` is PaddingStrategy.LONGEST (transformers src/transformers/data/data_collator.py), and no Trainer
argument packs samples (TRL SFTConfig `packing` defaults to False). ms-swift's `swift sft` runs that Trainer and
collator: its Qwen 1.8B/7B/14B LoRA rows read 30.0-30.6 GiB more reserved at 8,192 tokens than at 512 (ms-swift
docs/source_en/LLM/Benchmark.md at 46922151), which only the varied-length slack reproduces
(tests/estimator/test_memory_varied_lengths.py). torchtitan and Megatron-LM cut concatenated text into seq_len
windows: batches of one length, no slack."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.estimator.hardware import get_gpu
from app.estimator.memory import estimate_memory, measured_bytes
from app.estimator.presets import get_preset
from app.estimator.specs import GIB, Cluster, LoraSpec, Plan, Workload
from app.planner.launch import launch_configs
from app.planner.stacks import as_padded, stack_for

LLAMA = get_preset("llama-3.1-8b").model
H100 = Cluster(gpu=get_gpu("h100-80g-sxm"), gpus_per_node=8)
LORA = Workload(task="lora", seq_len=4096, global_batch=64, lora=LoraSpec(rank=16, targets=("all-linear",)))


def test_hugging_face_trainer_fine_tuning_pads_per_batch_by_default() -> None:
    plan = Plan(dp=8, zero_stage=2, recompute="full", micro_batch=1)
    assert stack_for(LORA, plan, LLAMA) == "deepspeed"
    padded = as_padded(LORA, plan, LLAMA)
    assert padded.varied_lengths is True
    # the reserved reading grows by one set of the loss's per-logit bytes (4,096 x 128,256 x 12 B = 5.87 GiB), the
    # gate figure does not
    fixed = estimate_memory(LLAMA, replace(LORA, varied_lengths=False), plan, H100).breakdown
    varied = estimate_memory(LLAMA, padded, plan, H100).breakdown
    assert varied.total == fixed.total
    grown = measured_bytes(varied, plan, H100, "reserved") - measured_bytes(fixed, plan, H100, "reserved")
    assert grown / GIB == pytest.approx(4096 * 128256 * 12 / GIB, rel=1e-6)
    # the launch names the collator that pads so
    launch = launch_configs("deepspeed", LLAMA, padded, plan, 1, 8, 64)["deepspeed"]
    assert launch["data_collator"] == {"class": "DataCollatorForSeq2Seq", "padding": "longest"}


def test_a_stated_fixed_length_is_kept_and_launched_padded_to_seq_len() -> None:
    plan = Plan(dp=8, zero_stage=2, recompute="full", micro_batch=1)
    fixed = replace(LORA, varied_lengths=False)
    assert as_padded(fixed, plan, LLAMA) is fixed
    launch = launch_configs("deepspeed", LLAMA, fixed, plan, 1, 8, 64)["deepspeed"]
    assert launch["data_collator"] == {"class": "DataCollatorForSeq2Seq", "padding": "max_length", "max_length": 4096}


@pytest.mark.parametrize(
    ("workload", "plan"),
    [
        # Megatron-LM: model-parallel plans go to it first (stacks.PREFERENCE); GPTDataset samples are seq_len windows
        (Workload(task="full_finetune", seq_len=4096, global_batch=64), Plan(tp=8, recompute="full", micro_batch=1)),
        # pretraining under any stack: text grouped or packed into seq_len blocks
        (Workload(task="pretrain", seq_len=4096, global_batch=64), Plan(dp=8, zero_stage=3, micro_batch=1)),
    ],
    ids=["megatron-full-finetune", "pretrain"],
)
def test_packed_stacks_and_pretraining_keep_batches_of_one_length(workload: Workload, plan: Plan) -> None:
    assert as_padded(workload, plan, LLAMA).varied_lengths is False


def test_a_reserved_pool_past_the_limit_fits_but_may_exceed() -> None:
    """ms-swift's Qwen-7B LoRA r=8 at 8 x 2,048 on one A100 80GB ran with 76.14 GiB reserved (max_memory_reserved;
    ms-swift docs/source_en/LLM/Benchmark.md at 46922151): the gate keeps it (its figure, 50.3 GiB, is the live tensors
    plus workspaces and 5 % of the activations), since the allocator frees its cached blocks and retries before it
    fails; the reserved pool with the varied-length slack, 78.1 GiB before the cap at the card, is within 5 % of the
    published 76.14 (the card bounds the miss) and crosses the 75.05 GiB limit, so the plan carries
    memory_may_exceed. Without the slack the high end of the range, 67.9 GiB, did not reach the published reading."""
    from app.estimator.memory.band import may_exceed, memory_band
    from app.planner.padded_band import padded_band
    from tests.estimator.memory_first_contact import MEMORY_FIRST_CONTACT

    case = next(c for c in MEMORY_FIRST_CONTACT if c.label == "ms-swift qwen-7b LoRA r=8, batch 8 x 2048, A100")
    b = estimate_memory(case.model, case.workload, case.plan, case.cluster).breakdown
    assert b.gpu_fits
    assert measured_bytes(b, case.plan, case.cluster, "reserved") / GIB == pytest.approx(case.published_gib, rel=0.05)
    plain = memory_band(case.model, case.workload, case.plan, case.cluster, b)
    assert plain.high / GIB < case.published_gib and may_exceed(plain, b) is None
    band = padded_band(case.model, case.workload, case.plan, case.cluster, b)
    assert band.high / GIB >= case.published_gib
    warning = may_exceed(band, b)
    assert warning is not None and warning.code == "memory_may_exceed"
    # fixed-length batches: the band is the estimator's
    fixed = replace(case.workload, varied_lengths=False)
    b = estimate_memory(case.model, fixed, case.plan, case.cluster).breakdown
    assert padded_band(case.model, fixed, case.plan, case.cluster, b) == memory_band(
        case.model, fixed, case.plan, case.cluster, b
    )
