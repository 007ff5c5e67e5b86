"""Batches of varied length fed longest first after every clearing of the cache (Workload.cache_cleared_longest_first):
torch.cuda.empty_cache() releases every cached segment no live tensor holds (c10/cuda/CUDACachingAllocator.cpp
`emptyCache` -> `release_cached_blocks`), and a batch no longer than the first since the clear is cut from that
batch's blocks (best fit with splitting: `get_free_block`, `should_split`), so the pool never keeps blocks of another
length beside the longest batch's (activations VARIED_LENGTH_SLACK, VARIED_LENGTH_ACTIVATION_SETS).

Published (huggingface/peft method_comparison/MetaMathQA at 5d602fdb, results/lora--llama-3.2-3B-rank32.json and
full-finetuning--llama-3.2-3B-lr_0.00001.json, one L40S, train_info.accelerator_memory_max = max_memory_reserved() less
the reserve at start): Llama 3.2 3B in bf16 without autocast, batch 4 of MetaMathQA padded per batch to at most 768
tokens, no checkpointing, sdpa, torch AdamW; 22,292,725,760 bytes (LoRA r=32 on q, v) and 38,868,615,168 bytes (full
fine-tune). The loop: run.py empties the cache every ACCELERATOR_EMPTY_CACHE_SCHEDULE = 10 steps and utils.py
BucketIterator yields each bucket of BUCKET_FACTOR = 20 batches long to short (`torch.argsort(..., descending=True)`).
Tolerance 5 %: the rows' own pool beyond the live tensors (FRAGMENTATION, the logits' block) is what is left.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.estimator.hardware import get_gpu
from app.estimator.memory import estimate_memory, measured_bytes
from app.estimator.presets import get_preset
from app.estimator.specs import GIB, Cluster, LoraSpec, Plan, Workload

L40S = Cluster(gpu=get_gpu("l40s-48g"))
# run.py keeps the model's outputs (the bf16 logits) alive through backward()
PLAN = Plan(micro_batch=4, recompute="none", attention="sdpa", kept_logits_bytes=2.0)
LORA = Workload(
    task="lora",
    mixed_precision=False,
    seq_len=768,
    global_batch=4,
    lora=LoraSpec(rank=32, targets=("q", "v"), dropout=0.0),
    varied_lengths=True,
)
FULL = Workload(task="full_finetune", mixed_precision=False, seq_len=768, global_batch=4, varied_lengths=True)
LORA_PUBLISHED_GIB = 22292725760 / GIB  # 20.76
FULL_PUBLISHED_GIB = 38868615168 / GIB  # 36.20


def _reading(workload: Workload, measured: str = "reserved") -> float:
    model = get_preset("llama-3.2-3b").model
    breakdown = estimate_memory(model, workload, PLAN, L40S).breakdown
    return measured_bytes(breakdown, PLAN, L40S, measured) / GIB


@pytest.mark.parametrize(
    ("workload", "published"),
    [(LORA, LORA_PUBLISHED_GIB), (FULL, FULL_PUBLISHED_GIB)],
    ids=["lora-r32", "full-finetune"],
)
def test_clearing_before_the_longest_batch_keeps_no_blocks_of_other_lengths(
    workload: Workload, published: float
) -> None:
    """With the loop stated the reserved reading is within 5 % of PEFT's (-1.1 % and -3.7 %); counted as a loop that
    never clears, the blocks of other lengths put it 14 % or more above (+20 % and +23 %)."""
    cleared = _reading(replace(workload, cache_cleared_longest_first=True))
    kept = _reading(workload)
    assert cleared == pytest.approx(published, rel=0.05)
    assert kept > 1.14 * published


def test_the_lever_moves_only_the_pool() -> None:
    """Live tensors do not move: neither the allocated reading nor the gate figure (total) changes."""
    for workload in (LORA, FULL):
        cleared = replace(workload, cache_cleared_longest_first=True)
        assert _reading(cleared, "allocated") == pytest.approx(_reading(workload, "allocated"), rel=1e-12)
        assert _reading(cleared, "total") == pytest.approx(_reading(workload, "total"), rel=1e-12)


def test_without_varied_lengths_the_lever_changes_nothing() -> None:
    one_length = replace(LORA, varied_lengths=False)
    assert _reading(replace(one_length, cache_cleared_longest_first=True)) == _reading(one_length)
