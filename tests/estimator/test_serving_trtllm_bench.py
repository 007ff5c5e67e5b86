"""The TensorRT-LLM perf overview's runs as `trtllm-bench throughput` ran them (tests/estimator/serving_cases.py
`trtllm_bench_settings`): with no --max_batch_size / --max_num_tokens it sizes both from the dataset and the KV cache
(tensorrt_llm/bench/build/tuning.py @04cba882 `calc_engine_setting`, `finetune_setting`) and, chunked prefill being off
by default, raises the step's tokens to the longest prompt plus the batch (bench/benchmark/utils/general.py
`get_settings`). Exact figures: the rounding rules are arithmetic on the run's lengths and the GPU's memory.

Llama 3.1 8B FP8 on one H100 (79.6 GiB less 8.03 B parameters at one byte, 64 KiB of FP8 KV a token): at 128/128,
0.90 of it holds 4,154 requests of 256 tokens, capped at 4,096, and 4,096 x (1 + 128/128) = 8,192 tokens a step, so
the run holds what the KV cache holds (3,889 sequences), not the 2,048 of TensorRT-LLM's default max_batch_size; at
20000/2000, 48 requests: a batch of 64 (the floor) and 20,064 tokens a step (the whole prompt and the batch); at
2048/128, 489 requests: 512, and 489 x 17 = 8,308 tokens, rounded up to 9,216."""

from __future__ import annotations

from app.estimator.serving import estimate_serving
from app.estimator.specs import Cluster
from tests.estimator.serving_cases import H100, LLAMA31_8B, TRTLLM_CASES, trtllm_bench_settings


def test_the_bench_sizes_the_batch_and_the_step_from_the_kv_cache() -> None:
    assert trtllm_bench_settings(LLAMA31_8B, H100, 1, 128, 128) == (4096, 8192)
    assert trtllm_bench_settings(LLAMA31_8B, H100, 1, 20000, 2000) == (64, 20064)
    assert trtllm_bench_settings(LLAMA31_8B, H100, 1, 2048, 128) == (512, 9216)


def test_the_short_prompt_run_holds_what_its_kv_cache_holds() -> None:
    (case,) = [c for c in TRTLLM_CASES if c.label == "trtllm llama-3.1-8b h100 tp1 128/128"]
    estimate = estimate_serving(case.model, case.cfg, Cluster(gpu=case.gpu, gpus_per_node=8), tp=case.tp)
    assert estimate.max_concurrency == estimate.kv_cache_tokens // 256 > 2048
