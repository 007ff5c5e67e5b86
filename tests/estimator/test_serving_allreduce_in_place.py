"""A TP all-reduce costs more in a running engine than its kernel alone: the call waits at the kernel's entry barrier
for the last rank to arrive. ALLREDUCE_IN_PLACE_S charges that per call (app/estimator/serving/step.py), fitted per
engine on the TP >= 2 rows that led to it (benchmarks/serving_allreduce_fit.py); these tests hold it to the published
figures.

Sources:
- In-serving rank skew of vLLM-based engines, per all-reduce call: 1CatAI/1Cat-vLLM#173 (DeepSeek-V4-Flash TP 8
  on 8 x V100, CUDA graph, "Steady collective arrival skew: 31.578 us/call, 2.747 ms/token summed");
  vllm-project/vllm#52911 (vLLM on ROCm, one layer's all-reduce on 8 ranks: arrival gaps 45.1-64.2 us, and 68.5 us
  at a later layer). Tolerance: that band itself (31.6-68.5 us), no rounding.
- dstackai/benchmarks @06c957ab, comparison/h100sxm5_vs_mi300x/raw_data/8xH100SXM5-throughput/ (vLLM 0.6.3, Llama
  3.1 405B FP8, TP 8 on 8 x H100 SXM5): elapsed_time of N prompts of I tokens each generating 2,048 at once, 71.27 /
  75.06 / 75.82 s (I = 128, N = 4 / 8 / 16) and 73.01 / 78.75 / 83.86 s (I = 2,048). While every prompt is in flight
  the run is its 2,048 decode steps: elapsed / 2,048 is the time per output token plus a share of the prefill (1-2 %
  at 2,048 x 16 tokens). Tolerance 8 %: these rows are fitted (the vLLM constant's rows), so this guards the fit, not
  a prediction; before the constant the estimate's TPOT read 24.7-27.9 ms at N = 4-16, 25-30 % short.
"""

from __future__ import annotations

from statistics import median

import pytest

from app.estimator.hardware import get_gpu
from app.estimator.presets import get_preset
from app.estimator.serving import ServingConfig, estimate_serving, step as step_time
from app.estimator.specs import Cluster
from tests.estimator.serving_first_contact import SERVING_FIRST_CONTACT, predict

H100 = Cluster(gpu=get_gpu("h100-80g-sxm"), gpus_per_node=8)
LLAMA_405B = get_preset("llama-3.1-405b").model
LLAMA_70B = get_preset("llama-3.1-70b").model
VLLM_SKEW_US = (31.578, 68.460)  # 1Cat-vLLM#173 steady skew a call; vllm#52911's largest arrival gap
DSTACK_ELAPSED_S = {
    (128, 4): 71.27,
    (128, 8): 75.06,
    (128, 16): 75.82,
    (2048, 4): 73.01,
    (2048, 8): 78.75,
    (2048, 16): 83.86,
}


def test_vllm_in_place_cost_is_inside_the_published_rank_skew() -> None:
    low, high = VLLM_SKEW_US
    assert low <= step_time.ALLREDUCE_IN_PLACE_S["vllm"] * 1e6 <= high


@pytest.mark.parametrize(("isl", "prompts"), sorted(DSTACK_ELAPSED_S))
def test_vllm_405b_tp8_decode_step_reads_the_published_run(isl: int, prompts: int) -> None:
    cfg = ServingConfig(
        input_tokens=isl, output_tokens=2048, engine="vllm", precision="fp8", weights="fp8", kv_cache_precision="bf16",
        max_model_len=91680, concurrency=prompts,
    )  # fmt: skip
    published_ms = DSTACK_ELAPSED_S[(isl, prompts)] / 2048 * 1e3
    tpot_ms = estimate_serving(LLAMA_405B, cfg, H100, tp=8).tpot_ms
    assert tpot_ms == pytest.approx(published_ms, rel=0.08)


@pytest.mark.parametrize("engine", ["vllm", "sglang", "trt-llm"])
def test_tp1_is_not_charged(engine: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """One GPU runs no all-reduce: its estimate does not read the constant."""
    cfg = ServingConfig(input_tokens=1000, output_tokens=200, concurrency=8, engine=engine)
    before = estimate_serving(LLAMA_70B, cfg, H100, tp=1)
    monkeypatch.setitem(step_time.ALLREDUCE_IN_PLACE_S, engine, 1e-3)
    after = estimate_serving(LLAMA_70B, cfg, H100, tp=1)
    assert (after.tpot_ms, after.ttft_ms, after.output_tokens_per_s) == (
        before.tpot_ms,
        before.ttft_ms,
        before.output_tokens_per_s,
    )


def test_tensorrt_llm_tp_decode_against_the_dli_rows() -> None:
    """TensorRT-LLM 0.9.0's Llama 2 70B FP8 runs at TP 1-8 on H100 and H200, batch 1-8 (source `dli-trtllm09` in
    tests/estimator/serving_first_contact.py: NVIDIA DLI "Sizing LLM Inference Systems" dataset, republished in
    wbing520/ai-performance-engineering @5a4d0c37). Recorded at first contact with no TensorRT-LLM in-place cost: their
    TP >= 2 TPOT read 23.7 % low at the median, their TP 1 TPOT 5.4 %. The 17 us came from the fit without them; the
    choice to apply it was made after seeing them, so this guards the choice. Tolerance: the TP >= 2 median within 10 %
    and no more than 1.5 points from the TP 1 median (the TP term must not leave a TP-shaped gap behind)."""
    rows = [c for c in SERVING_FIRST_CONTACT if c.source == "dli-trtllm09" and c.metric == "tpot_ms"]
    errors = {tp1: [abs(predict(c) / c.published - 1) for c in rows if (c.tp == 1) == tp1] for tp1 in (True, False)}
    assert len(errors[False]) >= 60 and len(errors[True]) >= 30
    assert median(errors[False]) <= 0.10
    assert median(errors[False]) - median(errors[True]) <= 0.015
    assert step_time.ALLREDUCE_IN_PLACE_S["trt-llm"] > 0
