"""The scheduler simulation against a published loaded-latency curve: SGLang v0.3.0 at 4 and 8 requests/s.

Source: sgl-project/sglang benchmark/benchmark_vllm_060/README.md, "Online benchmark results" (SGLang v0.3.0,
`python3 -m sglang.bench_serving --backend sglang --dataset-name sharegpt --num-prompts 1200 --request-rate 4`,
2400 prompts at 8; Poisson arrivals). Llama 3.1 8B Instruct on 1 × A100 80G (`--enable-torch-compile
--disable-radix-cache`) and Llama 3.1 70B Instruct on 4 × H100 80G (`--tp 4 --disable-radix-cache`); medians in ms.

Lengths: ShareGPT's output tokens average 194 (the same README's offline rows: 4,281.51 output tokens/s ÷ 22.03
requests/s; 3,856.01 ÷ 19.84); its prompts average 230 Llama-3.1 tokens (vllm-project/vllm#18566: 229,711 input
tokens over 1,000 ShareGPT prompts, Llama-3.1-8B-Instruct). The spread of either is not stated by these sources, so
the lengths are constant at the means, and the medians of TTFT and TPOT (not E2E, which follows the output length
distribution) are compared.

Tolerance 50 %, and why so wide: the steady state's own decode step reads SGLang v0.3.0's TP 4 70B median inter-token
latency (21.7 ms at 4 requests/s) about 25 % fast (that release ran the 70B without torch.compile), and the 70B's TTFT
reads about half the published (27.8 / 28.1 ms at first contact; 29.0 / 30.5 ms, -46 / -47 %, since the prefill's
GEMMs count the SMs a 230-token prompt at TP 4 leaves idle: app/estimator/serving_gemm.py; 35.9 / 37.4 ms, -34 / -36 %,
since SGLang's server adds 6.9 ms a request, REQUEST_OVERHEAD_S, measured on a current release: the 8B's TTFT reads
+13 / +2 %). The load's effect is checked on its own: both TTFT and TPOT grow from 4 to 8 requests/s, as published.
"""

from __future__ import annotations

import pytest

from app.estimator.hardware import get_gpu
from app.estimator.presets import get_preset
from app.estimator.serving import ServingConfig, estimate_serving
from app.estimator.specs import Cluster

# (preset, GPU, TP, mem_fraction_static, {rate: (median TTFT ms, median TPOT ms)})
CURVES = [
    ("llama-3.1-8b", "a100-80g-sxm", 1, None, {4: (31.98, 13.17), 8: (35.68, 17.85)}),
    ("llama-3.1-70b", "h100-80g-sxm", 4, None, {4: (53.94, 25.03), 8: (58.11, 33.07)}),
]
TOLERANCE = 0.50


def _simulated(preset: str, gpu: str, tp: int, fraction: float | None, rate: float) -> tuple[float, float]:
    cfg = ServingConfig(
        input_tokens=230, output_tokens=194, requests_per_s=rate, engine="sglang", peak_factor=1.0,
        max_model_len=4096, gpu_memory_utilization=fraction, release="sglang-0.3",
    )  # fmt: skip
    result = estimate_serving(
        get_preset(preset).model, cfg, Cluster(gpu=get_gpu(gpu), gpus_per_node=tp), tp=tp, replicas_needed=0
    )
    assert result.latency is not None
    average = result.latency["average"]
    return average.ttft.p50 * 1e3, average.tpot.p50 * 1e3


@pytest.mark.parametrize(
    ("curve", "metric"),
    [
        (CURVES[0], 0),
        (CURVES[0], 1),
        (CURVES[1], 0),
        (CURVES[1], 1),
    ],
    ids=["8b-ttft", "8b-tpot", "70b-ttft", "70b-tpot"],
)
def test_medians_along_the_published_curve(curve: tuple, metric: int) -> None:
    preset, gpu, tp, fraction, points = curve
    for rate, published in points.items():
        simulated = _simulated(preset, gpu, tp, fraction, rate)
        assert simulated[metric] == pytest.approx(published[metric], rel=TOLERANCE), (rate, simulated)


@pytest.mark.parametrize("curve", CURVES, ids=["8b", "70b"])
def test_latency_grows_with_the_rate_as_published(curve: tuple) -> None:
    """TTFT and TPOT both grow from 4 to 8 requests/s (published: TTFT +12 % and +8 %, TPOT +36 % and +32 %)."""
    preset, gpu, tp, fraction, points = curve
    low, high = (_simulated(preset, gpu, tp, fraction, rate) for rate in sorted(points))
    assert high[0] > low[0] and high[1] > 1.05 * low[1]
