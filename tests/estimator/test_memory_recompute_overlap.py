"""Under full recompute the layer being recomputed and the loss's logit-sized buffers are never live together.

The loss's buffers (fp32 upcast, log-probs, nll_loss's and log_softmax's fp32 gradients: 12 bytes a logit) are freed
by the loss's own backward; the last checkpointed layer's forward is recomputed only afterwards, inside that layer's
backward (torch/utils/checkpoint.py CheckpointFunction.backward). The allocated peak holds the checkpoints and the
larger of the two; the reserved pool keeps both, because the loss's requests are larger than every block the layers'
forward left cached (c10/cuda/CUDACachingAllocator.cpp `get_free_block`), so the gate and the reserved and device
readings keep the sum (app/estimator/memory/activations.py RECOMPUTE_BESIDE_LOSS).

Measured: fms-acceleration's PowerLM-3B table (foundation-model-stack/fms-acceleration
scripts/benchmarks/refs/a100_80gb_granite.csv at fc78b55b6; the rows of tests/estimator/memory_first_contact.py
`_fms_granite`, recorded at first contact at +2.4 to +17.6 %), torch.cuda.max_memory_allocated.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.estimator.memory import estimate_memory, measured_bytes
from app.estimator.specs import GIB
from tests.estimator.memory_first_contact import MEMORY_FIRST_CONTACT, FirstContactCase

GRANITE = {c.label: c for c in MEMORY_FIRST_CONTACT if c.source == "fms-granite"}
LORA_4 = GRANITE["fms-acceleration PowerLM-3b lora, 1 GPU, batch 4 x 4096"]
LORA_8 = GRANITE["fms-acceleration PowerLM-3b lora, 1 GPU, batch 8 x 4096"]


def _allocated(case: FirstContactCase) -> float:
    breakdown = estimate_memory(case.model, case.workload, case.plan, case.cluster).breakdown
    return measured_bytes(breakdown, case.plan, case.cluster, "allocated") / GIB


@pytest.mark.parametrize("case", [LORA_4, LORA_8], ids=["batch 4", "batch 8"])
def test_powerlm_lora_allocated_peak(case: FirstContactCase) -> None:
    """18.78 and 30.88 GiB allocated (20,169,870,848 and 33,152,880,128 bytes). They read +7.4 and +8.4 % with the
    recomputed layer counted beside the loss; -0.5 and -1.2 % without it. Tolerance 4 %: the harness's other rows
    of the table read -1.2 to +4.6 % (two GPUs under FSDP1, QLoRA)."""
    assert _allocated(case) / case.published_gib - 1.0 == pytest.approx(0.0, abs=0.04)


def test_the_growth_per_token_is_the_checkpoints_and_the_loss() -> None:
    """From batch 4 to 8 (16,384 more tokens) the table grows 12.10 GiB, 793 KB a token: the 40 checkpoints (2 x 2304
    bytes each) and 12 bytes for each of the 49,152 logits make 774 KB, with the recomputed layer 871 KB. Tolerance
    5 %: the 2.4 % left is what neither counts (the final norm's saved input, the allocator's rounding)."""
    measured = (LORA_8.published_gib - LORA_4.published_gib) * GIB / 16384
    ours = (_allocated(LORA_8) - _allocated(LORA_4)) * GIB / 16384
    assert ours / measured - 1.0 == pytest.approx(0.0, abs=0.05)


def test_the_gate_and_the_reserved_reading_keep_both() -> None:
    case = LORA_4
    breakdown = estimate_memory(case.model, case.workload, case.plan, case.cluster).breakdown
    assert breakdown.recompute_overlap > 0.0
    reserved = measured_bytes(breakdown, case.plan, case.cluster, "reserved")
    allocated = measured_bytes(breakdown, case.plan, case.cluster, "allocated")
    # the overlap is the recomputed layer's working set here (its 1.5 GiB is below the loss's 9 GiB)
    assert 1.0 * GIB < breakdown.recompute_overlap < 2.0 * GIB
    assert reserved - allocated >= breakdown.recompute_overlap
    assert breakdown.total >= breakdown.weights + breakdown.activations


def test_no_overlap_without_full_recompute_or_with_the_fused_loss() -> None:
    case = LORA_4
    for plan in (replace(case.plan, recompute="none"), replace(case.plan, fused_loss=True)):
        breakdown = estimate_memory(case.model, case.workload, plan, case.cluster).breakdown
        assert breakdown.recompute_overlap == 0.0
