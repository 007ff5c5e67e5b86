"""Out of sample: FP8 speed-ups, the NeMo stack, held-out runs, throughput and GPU-hours ranges (validation_cases.py).

FP8: the speed-up of FP8 over BF16 on the same stack, model and cluster, as published in pairs:
- torchtitan Float8 on Llama 3.1 8B, 8 H100: 8,532 / 6,667 tokens/s per GPU = 1.28x (pytorch/torchtitan
  docs/performance.md);
- NeMo 25.04 on DGX H100, Llama 3.1 8B (8 GPUs) 112,388 / 85,459 = 1.32x, 70B (64 GPUs) 106,346 / 71,526 = 1.49x,
  405B (1,024 GPUs) 337,706 / 211,406 = 1.60x tokens/s of the job (NVIDIA/dgxc-benchmarking llama3.1/README.md at
  25.04.02).
Tolerance 10 % on each speed-up: one FP8 GEMM fraction serves every model size and both recipes (torchao tensorwise
scaling, Transformer Engine current scaling); the fit leaves the pairs within -7 % to +6 %.

Range: `performance.tokens_per_s_per_gpu_range` runs from a typical stack to a tuned one. The issue's goals: about 80 %
of published runs inside, and a median half-width under ±30 %. The fit rows are held to 80 %; the held-out rows
(other sources, never fitted to) to the issue's 70 %.

GPU-hours: `performance.gpu_hours` (compute plus goodput) against whole runs' published GPU-hours, and
`performance.gpu_hours_range` (tuned stack with expected goodput to typical stack with a less reliable cluster):
- DeepSeek-V3: 2,664K H800 GPU-hours for 14.8T tokens (DeepSeek-V3 Technical Report, Table 1);
- SmolLM3 3B: 384 H100 for 24 days, 11.2T tokens = 221,184 GPU-hours (huggingface/smollm pretraining README);
- Llama 2 70B: 1,720,320 A100 GPU-hours for 2T tokens (Touvron et al. 2023b, Table 2);
- MPT-7B: 440 A100-40GB for 9.5 days, 1T tokens = 100,320 GPU-hours (MosaicML, 'Introducing MPT-7B').
Stack: Plan.tuning "nemo" puts the point at 1.25x, the median of NeMo 25.04's six DGX H100 runs above (fit). Checked
on NeMo 24.07's FP8 pre-training table (NVIDIA/NeMo docs/source/performance/performance_summary.md at 9c5c5e9709),
recorded as held-out rows before the factor existed: Llama 2 7B 16,934, 13B 8,715, 70B 1,728, Llama 3 8B 12,273,
70B 1,524 tokens/s per GPU. Tolerance 15 %: an earlier release than the runs the factor is set on, and one factor for
every model size (they land within -3 % to +14 %; without the factor they read 9-22 % low).

Held out, recorded before the changes above: Trainy's torchtitan Llama 3.1 8B Float8 on 32 and 64 H200 (10,938 and
10,753 tokens/s per GPU; pytorch/torchtitan benchmarks/llama3-8b_h200_202506_trainy-whitefiber.md) and torchtitan's
Llama 3.1 70B on 256 H100, FSDP 32 x TP 8, vanilla TP (597.3 BF16, 809.8 Float8; benchmarks/asyncTP_llama3_h100_
2025-06_torchtitan.md). Tolerance 10 %, the issue's held-out median goal. The same document's 8B at TP 8 reads 25-37 %
high: reported in docs/validation.md, not asserted.

GPU-hours tolerance 20 % (the issue's goal for the held-out median): these runs' layouts are partly assumed, and a
published figure is the job's allocation, restarts and all. Coverage is held to the issue's 70 % over the held-out set.
"""

from __future__ import annotations

import statistics
from dataclasses import replace

import pytest

from app.estimator.performance import estimate_performance
from tests.estimator.validation_cases import GPU_HOURS, THROUGHPUT, ThroughputCase

FP8_TOLERANCE = 0.10
BY_LABEL = {case.label: case for case in THROUGHPUT}
PAIRS = (
    ("torchtitan Llama 3.1 8B, 8 H100, FSDP+compile+Float8", "torchtitan Llama 3.1 8B, 8 H100, FSDP+compile"),
    ("NeMo 25.04 llama-3.1-8b FP8, 8 H100", "NeMo 25.04 llama-3.1-8b BF16, 8 H100"),
    ("NeMo 25.04 llama-3.1-70b FP8, 64 H100", "NeMo 25.04 llama-3.1-70b BF16, 64 H100"),
    ("NeMo 25.04 llama-3.1-405b FP8, 1024 H100", "NeMo 25.04 llama-3.1-405b BF16, 1024 H100"),
)


def _speed(case: ThroughputCase) -> tuple[float, tuple[float, float]]:
    perf = estimate_performance(case.model, case.workload, case.plan, case.cluster).performance
    assert perf.tokens_per_s_per_gpu is not None and perf.tokens_per_s_per_gpu_range is not None
    return perf.tokens_per_s_per_gpu, perf.tokens_per_s_per_gpu_range


@pytest.mark.parametrize(("fp8", "bf16"), PAIRS)
def test_fp8_speedup_matches_the_published_pair(fp8: str, bf16: str) -> None:
    published = BY_LABEL[fp8].tokens_per_s_per_gpu / BY_LABEL[bf16].tokens_per_s_per_gpu
    ours = _speed(BY_LABEL[fp8])[0] / _speed(BY_LABEL[bf16])[0]
    assert ours == pytest.approx(published, rel=FP8_TOLERANCE)


def _coverage(split: str) -> tuple[float, float]:
    inside, widths = [], []
    for case in (c for c in THROUGHPUT if c.split == split):
        low, high = _speed(case)[1]
        inside.append(low <= case.tokens_per_s_per_gpu <= high)
        widths.append((high - low) / (high + low))
    return sum(inside) / len(inside), statistics.median(widths)


@pytest.mark.parametrize(("split", "wanted"), [("fit", 0.80), ("holdout", 0.70)])
def test_throughput_range_holds_the_published_runs(split: str, wanted: float) -> None:
    share, half_width = _coverage(split)
    assert share >= wanted
    assert half_width < 0.30


GPU_HOURS_TOLERANCE = 0.20
HOURS_BY_LABEL = {case.label: case for case in GPU_HOURS}


@pytest.mark.parametrize(
    "label",
    ["DeepSeek-V3 671B, 14.8T tokens, FP8", "SmolLM3 3B, 11.2T tokens", "Llama 2 70B, 2T tokens", "MPT-7B, 1T tokens"],
)
def test_gpu_hours_of_published_runs(label: str) -> None:
    case = HOURS_BY_LABEL[label]
    perf = estimate_performance(case.model, case.workload, case.plan, case.cluster).performance
    assert perf.gpu_hours == pytest.approx(case.gpu_hours, rel=GPU_HOURS_TOLERANCE)


def test_gpu_hours_range_holds_the_held_out_runs() -> None:
    inside, widths = [], []
    for case in (c for c in GPU_HOURS if c.split == "holdout"):
        perf = estimate_performance(case.model, case.workload, case.plan, case.cluster).performance
        assert perf.gpu_hours_range is not None
        fast, slow = perf.gpu_hours_range
        inside.append(fast <= case.gpu_hours <= slow)
        widths.append((slow - fast) / (slow + fast))
    assert sum(inside) / len(inside) >= 0.70
    assert statistics.median(widths) < 0.30


NEMO_TOLERANCE = 0.15


@pytest.mark.parametrize("label", [c.label for c in THROUGHPUT if c.source == "nemo-2407"])
def test_nemo_recipes_run_at_their_published_speed(label: str) -> None:
    case = BY_LABEL[label]
    assert case.plan.tuning == "nemo"
    assert _speed(case)[0] == pytest.approx(case.tokens_per_s_per_gpu, rel=NEMO_TOLERANCE)


HELD_OUT_TOLERANCE = 0.10


@pytest.mark.parametrize(
    "label",
    [
        "Trainy Llama 3.1 8B FP8, 32 H200, FSDP",
        "Trainy Llama 3.1 8B FP8, 64 H200, FSDP",
        "torchtitan 2025-06 Llama 3.1 70B BF16, 256 H100, FSDP 32 x TP 8",
        "torchtitan 2025-06 Llama 3.1 70B FP8, 256 H100, FSDP 32 x TP 8",
    ],
)
def test_held_out_torchtitan_runs(label: str) -> None:
    case = BY_LABEL[label]
    assert case.split == "holdout"
    assert _speed(case)[0] == pytest.approx(case.tokens_per_s_per_gpu, rel=HELD_OUT_TOLERANCE)


def test_nemo_factor_is_for_dense_models_only() -> None:
    """Measured on NeMo's dense runs; NeMo's MoE runs (Megatron-Bridge Qwen3-30B-A3B on 16 H100: 10,494, 5,275, 5,113,
    9,058 tokens/s per GPU across releases) sit below the tuned point, so an MoE plan naming nemo keeps the point."""
    case = BY_LABEL["NeMo Qwen3-30B-A3B FP8, 16 H100, pp2 ep8"]
    named, plain = _speed(case), _speed(replace(case, plan=replace(case.plan, tuning=None)))
    assert named == plain
