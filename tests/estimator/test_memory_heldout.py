"""Peak memory on held-out published runs (tests/estimator/validation_cases.py MEMORY_HELD_OUT).

- torchtitan's December 2024 runs: 3D and 4D parallel Llama 3.1 405B and context-parallel 8B, measured as max
  reserved GiB over all ranks (pytorch/torchtitan benchmarks/llama3_h100_202412_torchtitan.md, Tables 2 and 6).
  Tolerance 25 % per run, the same as the other published memory cases: these runs add torch.compile and Float8
  buffers the estimator does not model. Before FSDP2 under a pipeline schedule was modelled the 405B runs read
  55-60 % low; before the unfused loss counted 12 bytes per logit the 8B runs read 13 % low (now 6-7 %,
  torch.compile counted).
- PEFT's method comparison (huggingface/peft method_comparison/MetaMathQA/results, Llama 3.2 3B on an L40S): max
  reserved. Tolerance 15 %: the figure is the caching allocator's reserve, not the allocated peak, and the harness
  keeps the model output (16-bit logits) alive through the backward, which a trainer does not; -8 % to +9 % today.
- Unsloth README, "Hugging Face + FA2": the longest sequence that fits a card, so the card bounds the peak from
  above. Asserted: the estimate does not exceed the card (we would refuse a run that was done) and reads at most
  35 % under it. Before the fp32 activations of PEFT's prepare_model_for_kbit_training were counted they read
  25-36 % under; these rows were looked at before that change (see docs/validation.md). Read as the device
  figure (CUDA context included), since the card holds the context too.
- fms-acceleration's A100 80GB table (foundation-model-stack/fms-acceleration scripts/benchmarks/refs/a100_80gb.csv
  at 24bdadb): every plain HF Trainer row (full fine-tune, LoRA, bitsandbytes QLoRA; 1 GPU, or 2 under FSDP) of
  Mistral 7B, Mixtral 8x7B and Llama 2 70B, read as torch's allocated peak. Tolerance 25 %, as above: recorded
  before any change at a 4.3 % median; the furthest rows are full fine-tuning at batch 8 (+18 to +21 %: the
  Trainer's peak is the optimizer step, where the estimate adds gradients to the activation peak) and Llama 2 70B
  QLoRA over 2 GPUs (-22 %; -26 % once the allocated reading stopped counting the recomputed layer beside the
  loss, activations.RECOMPUTE_BESIDE_LOSS, which hid 1.5 GiB of its gap: a known miss, below).
"""

from __future__ import annotations

import pytest

from app.estimator.memory import estimate_memory, measured_bytes
from app.estimator.specs import GIB
from tests.estimator.validation_cases import MEMORY, MEMORY_HELD_OUT, MemoryCase

TOLERANCE = 0.25
PEFT_TOLERANCE = 0.15
TITAN = [c for c in MEMORY_HELD_OUT if c.source == "torchtitan-2412"]
PEFT = [c for c in MEMORY_HELD_OUT if c.source == "peft-method-comparison"]
UNSLOTH = [c for c in MEMORY_HELD_OUT if c.source == "unsloth-readme"]
FMS = [c for c in MEMORY_HELD_OUT if c.source == "fms-acceleration"]
# Llama 2 70B bitsandbytes QLoRA on 2 GPUs under FSDP reads about 11 GiB under its allocated peak (43.5 GiB), which
# nothing the table states accounts for (the 4-bit weights, the LoRA states, the loss as transformers 4.48 ran it and
# FSDP's gathered units are counted); the recomputed layer beside the loss, which no instant holds, used to stand in
# for 1.5 GiB of it. Kept in the sweep as a strict expected failure, so the day it reads within 25 % the mark must go.
FMS_KNOWN_MISS = "fms-acceleration llama-2-70b qlora, 2 GPU, batch 2 x 4096"


def _gib(case: MemoryCase) -> float:
    """The estimate read as the case's figure was measured (reserved pool, or the device with its CUDA context)."""
    breakdown = estimate_memory(case.model, case.workload, case.plan, case.cluster).breakdown
    return measured_bytes(breakdown, case.plan, case.cluster, case.measured) / GIB


@pytest.mark.parametrize("case", TITAN, ids=[c.label for c in TITAN])
def test_held_out_peak_memory_within_tolerance(case: MemoryCase) -> None:
    assert _gib(case) == pytest.approx(case.published_gib, rel=TOLERANCE)


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(c, marks=pytest.mark.xfail(strict=True, reason="known miss (FMS_KNOWN_MISS)"))
        if c.label == FMS_KNOWN_MISS
        else c
        for c in FMS
    ],
    ids=[c.label for c in FMS],
)
def test_fms_acceleration_allocated_peak_within_tolerance(case: MemoryCase) -> None:
    assert _gib(case) == pytest.approx(case.published_gib, rel=TOLERANCE)


def test_fms_acceleration_rows_are_all_there() -> None:
    # 19 rows: the table's plain Trainer runs of the three presets that did not run out of memory
    assert len(FMS) == 19
    assert {c.measured for c in FMS} == {"allocated"}


@pytest.mark.parametrize("case", PEFT, ids=[c.label for c in PEFT])
def test_peft_method_comparison_within_tolerance(case: MemoryCase) -> None:
    assert _gib(case) == pytest.approx(case.published_gib, rel=PEFT_TOLERANCE)


@pytest.mark.parametrize("case", UNSLOTH, ids=[c.label for c in UNSLOTH])
def test_longest_context_that_fits_a_card_stays_under_it(case: MemoryCase) -> None:
    assert 0.65 * case.published_gib <= _gib(case) <= case.published_gib


def test_enough_memory_cases_from_enough_sources() -> None:
    # issue #16: at least 40 published peaks from at least 8 independent sources, fitted on at most two thirds
    assert len(MEMORY) >= 40
    assert len({c.source for c in MEMORY}) >= 8


def test_held_out_third_comes_from_other_sources() -> None:
    fit = [c for c in MEMORY if c.split == "fit"]
    held_out = [c for c in MEMORY if c.split == "holdout"]
    assert len(held_out) * 3 >= len(MEMORY)
    assert not {c.source for c in held_out} & {c.source for c in fit}
