"""MFU across GPU generations and form factors.

Why an A100 shows a higher MFU than an H100 on the same 7-8B run: the H100 SXM has 3.2x the A100's dense BF16
peak but 1.6x its HBM bandwidth, so the memory-bound share of a step (norms, activations, residuals, the
optimizer) grows and GEMMs reach less of a larger peak. The published runs say the same: MosaicML llm-foundry's
MPT-7B table (8 GPUs, seq 2048, FSDP) gives 4,641 tokens/s per A100-80GB and 10,643 per H100, MFU 0.64 and 0.47 with
6N + 12·L·h·s FLOPs per token, a ratio of 1.38; torchtitan's Llama 3 8B runs give 0.58 (A100, 64 GPUs) and 0.41 (H100,
8 GPUs). The A100 figure is a tuned stack's; the typical stack is the low end of the range (0.75x).

A PCIe A100 lists the SXM4 part's peaks but runs at 250-300 W instead of 400 W; NVIDIA's launch specification
gives it 90 % of the SXM4 part's performance on real applications (data/gpus.json `sustained_fraction`).
"""

from __future__ import annotations

import pytest

from app.estimator.hardware import get_gpu
from app.estimator.performance import estimate_performance, microbatch_compute_s
from app.estimator.presets import get_preset
from app.estimator.specs import Cluster, Plan, Workload
from tests.estimator.perf_cases import CASES

LLAMA31_8B = get_preset("llama-3.1-8b").model


def _mfu(label: str) -> float:
    case = next(c for c in CASES if c.label == label)
    return estimate_performance(case.model, case.workload, case.plan, case.cluster).performance.mfu or 0.0


def test_a100_over_h100_mfu_ratio_matches_llm_foundry_mpt_7b() -> None:
    # published: (4641 / 312e12) / (10643 / 989.4e12) = 1.38 (same model, FLOPs per token cancel); tolerance 10 %
    published = (4641 / 312e12) / (10643 / 989.4e12)
    ratio = _mfu("MPT-7B 8xA100-80 s2048") / _mfu("MPT-7B 8xH100 s2048")
    assert ratio == pytest.approx(published, rel=0.10)


def test_a100_pcie_sustains_ninety_percent_of_the_sxm_compute() -> None:
    workload = Workload(task="full_finetune", seq_len=4096)
    plan = Plan(micro_batch=2, recompute="selective")
    sxm = get_gpu("a100-80g-sxm")
    pcie = get_gpu("a100-80g-pcie")
    assert pcie.sustained_fraction == 0.9 and sxm.sustained_fraction == 1.0
    sxm_s = microbatch_compute_s(LLAMA31_8B, workload, plan, sxm)[0]
    pcie_s = microbatch_compute_s(LLAMA31_8B, workload, plan, pcie)[0]
    # the tensor-core part slows by 1/0.9; the memory-bound part follows HBM (1.935 vs 2.039 TB/s), so overall
    # between 5 % and 11.1 % slower
    assert 1.05 < pcie_s / sxm_s < 1 / 0.9 + 1e-9


def test_a100_pcie_mfu_is_below_the_sxm_part_on_one_gpu() -> None:
    workload = Workload(task="full_finetune", seq_len=2048, global_batch=8)
    plan = Plan(micro_batch=1, zero_stage=0)
    mfu = {
        gpu: estimate_performance(LLAMA31_8B, workload, plan, Cluster(gpu=get_gpu(gpu))).performance.mfu or 0.0
        for gpu in ("a100-80g-sxm", "a100-80g-pcie")
    }
    assert mfu["a100-80g-pcie"] < 0.93 * mfu["a100-80g-sxm"]
