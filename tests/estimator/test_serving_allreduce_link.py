"""On A100 (NVLink3) the engines' one-shot TP all-reduce is charged what the same kernel was measured to take there, not
its H100 time.

Source: the same SGLang test (`tests/test_trt_reduce.py`: float32 tensors of 512 / 4,096 / 32,768 elements, 5,000
launches without a CUDA graph, timed on the host) run by the same author on A100 in sgl-project/sglang#2688
(description, "performance result in a100") and on H100 in sgl-project/sglang#2904 ("unit test performance in H100").
vLLM's kernel (custom_all_reduce.cu), µs, TP 2 / 4 / 8:
- A100: 13.0 / 13.5 / 14.0 at 512, 11.3 / 12.1 / 14.2 at 4,096, 12.1 / 13.5 at 32,768 (TP 8 not legible in the copy
  read); SGLang's kernel of that time: 11.9 / 11.9 / 13.7, 13.6 / 14.0 / 16.5, 12.2 / 13.7.
- H100: 9.5 / 9.1 / 10.1, 8.8 / 8.5 / 9.3, 8.7 / 9.2 / 11.8.
A100 ÷ H100 for vLLM's kernel over the eight pairs: 1.28-1.53, mean 1.42 (ONE_SHOT_ALLREDUCE_LINK_FACTOR).

Tolerance: the measured spread itself, no rounding added: the modelled A100 ÷ H100 ratio lies within the eight pairs'
ratios, and the A100 call within the lowest to highest A100 time of either kernel (11.3-16.5 µs). Before this change
the A100 call was charged the H100 figure, 8 µs, below every A100 measurement. NCCL's value ("none", and releases that
run NCCL) was fitted on A100 rows and is not scaled. The in-place cost beyond the kernel (ALLREDUCE_IN_PLACE_S, the same
on either GPU: test_serving_allreduce_in_place.py) is taken off: these are the kernel's times."""

from __future__ import annotations

import pytest

from app.estimator.hardware import get_gpu
from app.estimator.presets import get_preset
from app.estimator.serving import ServingConfig
from app.estimator.serving.step import ALLREDUCE_IN_PLACE_S, _new_hardware
from app.estimator.specs import Cluster

A100 = Cluster(gpu=get_gpu("a100-40g-sxm"), gpus_per_node=8)
H100 = Cluster(gpu=get_gpu("h100-80g-sxm"), gpus_per_node=8)
LLAMA_70B = get_preset("llama-3.1-70b").model
# (A100, H100) µs of vLLM's kernel, sglang#2688 and #2904, by (elements, TP)
VLLM_KERNEL_US = {
    (512, 2): (13.0, 9.5), (512, 4): (13.5, 9.1), (512, 8): (14.0, 10.1),
    (4096, 2): (11.3, 8.8), (4096, 4): (12.1, 8.5), (4096, 8): (14.2, 9.3),
    (32768, 2): (12.1, 8.7), (32768, 4): (13.5, 9.2),
}  # fmt: skip
A100_BAND_US = (11.3, 16.5)  # #2688: lowest and highest A100 time of vLLM's and SGLang's kernels, TP 2-8, 512-32,768


def _per_call_us(cluster: Cluster, engine: str, tp: int, release: str | None = None) -> float:
    cfg = ServingConfig(input_tokens=1000, output_tokens=200, concurrency=1, engine=engine, release=release)
    hw = _new_hardware(LLAMA_70B, cfg, cluster, tp, 1)
    return (hw.allreduce_fixed_s / (2 * LLAMA_70B.layers) - ALLREDUCE_IN_PLACE_S[engine]) * 1e6


@pytest.mark.parametrize("engine", ["vllm", "sglang", "trt-llm"])
@pytest.mark.parametrize("tp", [2, 4, 8])
def test_a100_call_over_h100_call_is_the_measured_kernel_ratio(engine: str, tp: int) -> None:
    ratios = [a100 / h100 for a100, h100 in VLLM_KERNEL_US.values()]
    modelled = _per_call_us(A100, engine, tp) / _per_call_us(H100, engine, tp)
    assert min(ratios) <= modelled <= max(ratios)


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
@pytest.mark.parametrize("tp", [2, 4, 8])
def test_a100_call_is_inside_the_a100_measurements(engine: str, tp: int) -> None:
    low, high = A100_BAND_US
    assert low <= _per_call_us(A100, engine, tp) <= high


def test_nccl_fitted_on_a100_is_not_scaled() -> None:
    """A release without the one-shot kernel (vLLM 0.2: NCCL) keeps NCCL's value, fitted on gpt-fast's A100 rows."""
    assert _per_call_us(A100, "vllm", 4, release="vllm-0.2") == pytest.approx(28.0)
