"""Published, measured inference results with their exact configurations: the serving estimator's
validation set, shared by tests/estimator/test_serving_published.py and `benchmarks/peers.py --serving`.

Sources (five independent projects, each measuring its own runs):
  [trtllm]  NVIDIA/TensorRT-LLM docs/source/performance/perf-overview.md (commit 00f37686aa85, v1.0 tables):
            `trtllm-bench throughput`, PyTorch backend, offline maximum-throughput scenario (all requests
            queued at once), synthetic requests of exactly ISL input / OSL output tokens, ModelOpt FP8
            checkpoints (nvidia/Llama-3.1-8B-Instruct-FP8, -3.3-70B-, -3.1-405B-: FP8 weights, activations
            and KV cache), DGX H100 / DGX H200, metric "Total Output Throughput (tokens/sec)". Run with the batch
            and step-token limits trtllm-bench picks when none is given, chunked prefill off (`trtllm_bench_settings`).
  [gptfast] pytorch-labs/gpt-fast README.md (commit 0f925b5d4ce4) "Benchmarks": 8xA100-80GB power-limited to
            330 W, batch size 1, 5-token prompt, torch.compile, tokens/s = time per output token⁻¹;
            int8 = weight-only per-channel, int4 = weight-only groups of 32 (bf16 scales and zeros).
  [lmdeploy] InternLM/lmdeploy docs/en/benchmark/a100_fp16.md (commit 3e391df4673326, lmdeploy v0.1.0a1,
            TurboMind engine): "Static Inference Benchmark" on A100-80G, fp16, `batch` concurrent sessions
            each with exactly prompt_tokens in and output_tokens out, throughput(out tok/s) and FTL (first
            token latency, seconds). Run as release "turbomind-0.1" (NCCL all-reduce, 4 query heads per CTA in
            decode attention: app/estimator/serving/engines.py ENGINE_RELEASES cites the code).
  [vllm]    KV-capacity log lines in vLLM threads: PR vllm-project/vllm#2031 (W. Kwon, 2023-12-12: "# GPU
            blocks" on A100-80GB, block 16, gpu_memory_utilization 0.9, vLLM 0.2.x, max_model_len 4096) and
            issue vllm-project/vllm#10517 (comment 2024-12-02: RTX 3090, total_gpu_memory 23.58 GiB,
            meta-llama/Llama-3.1-8B-Instruct bf16, utilisation 0.90, chunked prefill off so the profile runs
            max_model_len tokens). The #2031 lines run as release "vllm-0.2": that profiler kept every all-reduce
            input of its forward (#2150, fixed by #2151 five days later).
  [sglang]  SGLang's own log in vllm-project/vllm#21348 (2025-07-22): Qwen3-235B-A22B-FP8, --tp 4 on 4xH100,
            --mem-fraction-static 0.93: "KV Cache is allocated. #tokens: 367404".
  [inferencex] SemiAnalysisAI/InferenceX#870 (2026-03-05, concurrency sweep run on the project's CI): DeepSeek-R1-0528
            (DeepSeek-V3 architecture), SGLang v0.5.7, FP8, TP 8 (EP 1) on 8xH200, ISL 1024 / OSL 1024, mean TPOT
            at concurrency 8 / 16 / 32 / 64. Fine-grained MoE at low concurrency: the estimate reads 2-9 % fast
            there (20-32 % before the MoE chain's fixed latency, tests/estimator/test_serving_moe_chain.py), and
            lower concurrency carries the warning moe_low_concurrency_unvalidated
            (tests/estimator/test_serving_moe_regime.py).

Split: the constants of app/estimator/serving/step.py were fitted (benchmarks/serving_fit.py) on the `fit` cases
only ([trtllm], [gptfast], and the [vllm] #10517 KV lines); the `holdout` cases ([lmdeploy], [vllm] #2031,
[sglang], [inferencex]) come from other projects and never entered the fit.

Tolerances: the issue's goals — median |error| ≤ 15 % for throughput/latency and ≤ 10 % for KV capacity,
worst ≤ 40 % — asserted per split in test_serving_published.py.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Literal

from app.estimator.hardware import get_gpu
from app.estimator.params import count_params
from app.estimator.presets import get_preset
from app.estimator.serving import ServingConfig, estimate_serving
from app.estimator.specs import Cluster, GpuSpec, ModelSpec

Metric = Literal["output_tokens_per_s", "tpot_ms", "ttft_ms", "kv_cache_tokens"]
Split = Literal["fit", "holdout"]

A100 = get_gpu("a100-80g-sxm")
H100 = get_gpu("h100-80g-sxm")
H200 = get_gpu("h200-141g-sxm")
# gpt-fast's A100s were power-limited to 330 W (README); the README measures ~1.7 TB/s peak bandwidth
# ("Empirically, seems like peak bandwidth is about 1700 GB/s") instead of the 2.04 TB/s datasheet figure.
A100_330W = replace(A100, id="a100-80g-sxm-330w", name="A100 80GB SXM (330 W cap)", hbm_bytes_per_s=1.7e12)
# RTX 3090 (not in the shipped table): 24 GB GDDR6X, 936 GB/s, 71 TFLOPS dense fp16 tensor (NVIDIA Ampere
# GA102 whitepaper); total memory as vLLM logged it (23.58 GiB).
RTX3090 = GpuSpec(
    id="rtx3090-24g",
    name="NVIDIA GeForce RTX 3090",
    memory_gib=23.58,
    usable_memory_gib=23.0,
    hbm_bytes_per_s=936e9,
    peak_flops={"fp32": 35.6e12, "fp16": 71e12, "bf16": 71e12, "fp8": 0},
    intra_node_link="pcie4",
    nvlink_bytes_per_s=0,
    pcie_gen=4,
)

LLAMA31_8B = get_preset("llama-3.1-8b").model
LLAMA31_70B = get_preset("llama-3.1-70b").model  # Llama 3.3 70B has the same architecture
LLAMA31_405B = get_preset("llama-3.1-405b").model
LLAMA2_7B = get_preset("llama-2-7b").model
LLAMA2_13B = get_preset("llama-2-13b").model
LLAMA2_70B = get_preset("llama-2-70b").model
# Qwen/Qwen3-235B-A22B config.json: 94 layers, hidden 4096, 64 heads, 4 KV heads of 128, 128 experts of
# 1536, 8 active, vocab 151936, untied.
QWEN3_235B = replace(
    get_preset("qwen3-30b-a3b").model,
    name="qwen3-235b-a22b",
    layers=94,
    hidden=4096,
    heads=64,
    kv_heads=4,
    ffn=12288,
    expert_ffn=1536,
    moe_layers=94,
)

DEEPSEEK_V3 = get_preset("deepseek-v3").model  # DeepSeek-R1-0528 shares its architecture
DEEPSEEK_MLA_VALUES = 512 + 64  # deepseek-ai/DeepSeek-V3 config.json: kv_lora_rank 512, qk_rope_head_dim 64


@dataclass(frozen=True, slots=True)
class ServingCase:
    label: str
    source: str
    model: ModelSpec
    gpu: GpuSpec
    cfg: ServingConfig
    tp: int
    metric: Metric
    published: float
    split: Split
    gpus_per_node: int = 8


# trtllm-bench's own KV-cache share when it sizes a run (throughput.py `--kv_cache_free_gpu_mem_fraction`, default 0.90)
TRTLLM_BENCH_KV_FRACTION = 0.90


def trtllm_bench_settings(model: ModelSpec, gpu: GpuSpec, tp: int, isl: int, osl: int) -> tuple[int, int]:
    """(max_batch_size, max_num_tokens) `trtllm-bench throughput` runs a PyTorch-backend dataset with when neither is
    given, as the perf overview's runs were (NVIDIA/TensorRT-LLM tensorrt_llm/bench/build/tuning.py @04cba882
    `calc_engine_setting` and `finetune_setting`, tensorrt_llm/bench/benchmark/utils/general.py `get_settings`): the
    requests whose ISL + OSL tokens of FP8 KV (one byte a value, at least one KV head a GPU) fit in 0.90 of the GPUs'
    memory beyond the weights at one byte a parameter, capped at 4,096, rounded up to 32 (at least 64) under 256, to
    128 under 1,024, to 256 above; the tokens a step 'raw_bs x (1 + ISL / OSL)' capped at 32,768, rounded up to 256 (at
    least 2,048) under 4,096, to 512 under 8,192, to 1,024 above; and, chunked prefill being off by default
    (`--enable_chunked_context`), at least the longest prompt plus the batch (max_isl + max_batch_size). The GPU memory
    is NVML's total, in GiB (`get_device_memory`)."""
    kv_gib_per_token = 2 * model.layers * max(tp, model.kv_heads) * model.d_head * 1.0 / 1024**3
    free_gib = gpu.memory_gib * tp - count_params(model).total * 1.0 / 1024**3
    requests = free_gib * TRTLLM_BENCH_KV_FRACTION / (kv_gib_per_token * (isl + osl))
    batch, tokens = trtllm_finetune_setting(requests, isl, osl)
    return batch, max(tokens, isl + batch)


def trtllm_finetune_setting(requests: float, isl: int, osl: int) -> tuple[int, int]:
    """trtllm-bench's `finetune_setting` (tensorrt_llm/bench/build/tuning.py, the same from the v0.17 line to
    @04cba882, one pipeline stage): the batch from the `requests` the KV cache holds, capped at 4,096, rounded up to 32
    (at least 64) under 256, to 128 under 1,024, to 256 above; the tokens a step 'raw_bs x (1 + ISL / OSL)' capped at
    32,768, rounded up to 256 (at least 2,048) under 4,096, to 512 under 8,192, to 1,024 above."""
    raw_bs = min(requests, 4096)
    raw_tokens = min(raw_bs * (1 + isl / osl), 32768)
    if raw_bs < 256:
        batch = max(64, 32 * math.ceil(raw_bs / 32))
    else:
        batch = (128 if raw_bs < 1024 else 256) * math.ceil(raw_bs / (128 if raw_bs < 1024 else 256))
    if raw_tokens < 4096:
        tokens = max(2048, 256 * math.ceil(raw_tokens / 256))
    else:
        tokens = (512 if raw_tokens < 8192 else 1024) * math.ceil(raw_tokens / (512 if raw_tokens < 8192 else 1024))
    return batch, tokens


def _trtllm(
    model: ModelSpec, gpu: GpuSpec, tp: int, isl: int, osl: int, tokens_per_s: float, label: str
) -> ServingCase:
    batch, tokens = trtllm_bench_settings(model, gpu, tp, isl, osl)
    cfg = ServingConfig(
        input_tokens=isl, output_tokens=osl, engine="trt-llm", precision="fp8", weights="fp8", kv_cache_precision="fp8",
        max_num_seqs=batch, max_num_batched_tokens=tokens,
    )  # fmt: skip
    return ServingCase(
        f"trtllm {label} {gpu.id.split('-')[0]} tp{tp} {isl}/{osl}",
        "NVIDIA/TensorRT-LLM docs/source/performance/perf-overview.md @00f37686, Total Output Throughput",
        model, gpu, cfg, tp, "output_tokens_per_s", tokens_per_s, "fit",
    )  # fmt: skip


def _gptfast(model: ModelSpec, tp: int, weights: str, tokens_per_s: float, label: str) -> ServingCase:
    cfg = ServingConfig(
        input_tokens=5, output_tokens=200, concurrency=1, batching="static", weights=weights,  # type: ignore[arg-type]
        group_size=32 if weights == "int4" else None, engine_overhead="none",
    )  # fmt: skip
    return ServingCase(
        f"gpt-fast {label} tp{tp} {weights}",
        "pytorch-labs/gpt-fast README.md @0f925b5d, Benchmarks (batch 1, A100-80GB at 330 W)",
        model, A100, cfg, tp, "tpot_ms", 1e3 / tokens_per_s, "fit",
    )  # fmt: skip


def _lmdeploy(
    model: ModelSpec, tp: int, batch: int, prompt: int, out: int, value: float, label: str, metric: Metric
) -> ServingCase:
    cfg = ServingConfig(
        input_tokens=prompt, output_tokens=out, concurrency=batch, batching="static", precision="fp16",
        engine="trt-llm",  # TurboMind: FasterTransformer-lineage C++ engine, the same per-step overhead class
        release="turbomind-0.1",  # the benchmark's stated version: NCCL all-reduce, 4 query heads per CTA
    )  # fmt: skip
    return ServingCase(
        f"lmdeploy {label} tp{tp} b{batch} {prompt}/{out} {metric.split('_')[0]}",
        "InternLM/lmdeploy docs/en/benchmark/a100_fp16.md @3e391df4, Static Inference Benchmark (v0.1.0a1)",
        model, A100, cfg, tp, metric, value, "holdout",
    )  # fmt: skip


TRTLLM_CASES: tuple[ServingCase, ...] = (
    _trtllm(LLAMA31_8B, H100, 1, 128, 128, 28312, "llama-3.1-8b"),
    _trtllm(LLAMA31_8B, H100, 1, 128, 2048, 22714, "llama-3.1-8b"),
    _trtllm(LLAMA31_8B, H100, 1, 1000, 1000, 15220, "llama-3.1-8b"),
    _trtllm(LLAMA31_8B, H100, 1, 2048, 128, 3450, "llama-3.1-8b"),
    _trtllm(LLAMA31_8B, H100, 1, 2048, 2048, 9305, "llama-3.1-8b"),
    _trtllm(LLAMA31_8B, H100, 1, 5000, 500, 3459, "llama-3.1-8b"),
    _trtllm(LLAMA31_8B, H100, 1, 20000, 2000, 1351, "llama-3.1-8b"),
    _trtllm(LLAMA31_8B, H200, 1, 128, 2048, 26221, "llama-3.1-8b"),
    _trtllm(LLAMA31_8B, H200, 1, 2048, 2048, 12194, "llama-3.1-8b"),
    _trtllm(LLAMA31_70B, H100, 2, 128, 128, 6378, "llama-3.3-70b"),
    _trtllm(LLAMA31_70B, H100, 2, 1000, 1000, 4205, "llama-3.3-70b"),
    _trtllm(LLAMA31_70B, H100, 2, 2048, 128, 762, "llama-3.3-70b"),
    _trtllm(LLAMA31_70B, H100, 2, 2048, 2048, 3082, "llama-3.3-70b"),
    _trtllm(LLAMA31_70B, H200, 1, 128, 2048, 4336, "llama-3.3-70b"),
    _trtllm(LLAMA31_70B, H200, 1, 1000, 1000, 2909, "llama-3.3-70b"),
    _trtllm(LLAMA31_70B, H200, 1, 5000, 500, 566, "llama-3.3-70b"),
    _trtllm(LLAMA31_405B, H100, 8, 128, 2048, 4340, "llama-3.1-405b"),
    _trtllm(LLAMA31_405B, H100, 8, 1000, 1000, 2919, "llama-3.1-405b"),
    _trtllm(LLAMA31_405B, H100, 8, 2048, 128, 453, "llama-3.1-405b"),
    _trtllm(LLAMA31_405B, H200, 8, 2048, 2048, 2948, "llama-3.1-405b"),
    _trtllm(QWEN3_235B, H100, 8, 128, 2048, 19658, "qwen3-235b-a22b"),
    _trtllm(QWEN3_235B, H100, 8, 1000, 1000, 14898, "qwen3-235b-a22b"),
    _trtllm(QWEN3_235B, H100, 8, 5000, 500, 3225, "qwen3-235b-a22b"),
)

GPTFAST_CASES: tuple[ServingCase, ...] = (
    _gptfast(LLAMA2_7B, 1, "bf16", 104.9, "llama-2-7b"),
    _gptfast(LLAMA2_7B, 1, "int8", 155.58, "llama-2-7b"),
    _gptfast(LLAMA2_7B, 1, "int4", 196.80, "llama-2-7b"),
    _gptfast(LLAMA2_70B, 1, "int8", 19.13, "llama-2-70b"),
    _gptfast(LLAMA2_7B, 2, "bf16", 168.84, "llama-2-7b"),
    _gptfast(LLAMA2_7B, 8, "bf16", 328.43, "llama-2-7b"),
    _gptfast(LLAMA2_70B, 2, "bf16", 21.32, "llama-2-70b"),
    _gptfast(LLAMA2_70B, 4, "bf16", 38.01, "llama-2-70b"),
    _gptfast(LLAMA2_70B, 8, "bf16", 62.50, "llama-2-70b"),
    _gptfast(LLAMA2_70B, 8, "int4", 90.77, "llama-2-70b"),
)

LMDEPLOY_CASES: tuple[ServingCase, ...] = (
    _lmdeploy(LLAMA2_7B, 1, 1, 128, 128, 102.21, "llama-2-7b", "output_tokens_per_s"),
    _lmdeploy(LLAMA2_7B, 1, 1, 2048, 2048, 93.78, "llama-2-7b", "output_tokens_per_s"),
    _lmdeploy(LLAMA2_7B, 1, 1, 2048, 128, 139.0, "llama-2-7b", "ttft_ms"),
    _lmdeploy(LLAMA2_7B, 1, 16, 128, 2048, 1010.62, "llama-2-7b", "output_tokens_per_s"),
    _lmdeploy(LLAMA2_7B, 1, 32, 128, 128, 2125.47, "llama-2-7b", "output_tokens_per_s"),
    _lmdeploy(LLAMA2_7B, 1, 64, 128, 2048, 1852.06, "llama-2-7b", "output_tokens_per_s"),
    _lmdeploy(LLAMA2_7B, 1, 64, 2048, 128, 493.46, "llama-2-7b", "output_tokens_per_s"),
    _lmdeploy(LLAMA2_13B, 1, 1, 128, 128, 56.58, "llama-2-13b", "output_tokens_per_s"),
    _lmdeploy(LLAMA2_13B, 1, 1, 2048, 128, 242.0, "llama-2-13b", "ttft_ms"),
    _lmdeploy(LLAMA2_13B, 1, 32, 128, 2048, 860.14, "llama-2-13b", "output_tokens_per_s"),
    _lmdeploy(LLAMA2_70B, 4, 1, 128, 128, 33.63, "llama-2-70b", "output_tokens_per_s"),
    _lmdeploy(LLAMA2_70B, 4, 1, 2048, 128, 402.0, "llama-2-70b", "ttft_ms"),
    _lmdeploy(LLAMA2_70B, 4, 16, 128, 2048, 482.99, "llama-2-70b", "output_tokens_per_s"),
    _lmdeploy(LLAMA2_70B, 4, 64, 128, 2048, 1391.8, "llama-2-70b", "output_tokens_per_s"),
    _lmdeploy(LLAMA2_70B, 4, 64, 2048, 2048, 930.46, "llama-2-70b", "output_tokens_per_s"),
)


def _inferencex(concurrency: int, tpot_ms: float) -> ServingCase:
    cfg = ServingConfig(
        input_tokens=1024, output_tokens=1024, concurrency=concurrency, engine="sglang", precision="fp8",
        weights="fp8", mla_cache_values=DEEPSEEK_MLA_VALUES,
        group_size=128 * 128,  # DeepSeek-R1-0528's block FP8: config.json weight_block_size [128, 128]
    )  # fmt: skip
    return ServingCase(
        f"inferencex deepseek-r1 h200 tp8 c{concurrency} 1024/1024 tpot",
        "SemiAnalysisAI/InferenceX#870 (2026-03-05): SGLang v0.5.7, DeepSeek-R1-0528 FP8, TP 8 on 8xH200, mean TPOT",
        DEEPSEEK_V3, H200, cfg, 8, "tpot_ms", tpot_ms, "holdout",
    )  # fmt: skip


INFERENCEX_CASES: tuple[ServingCase, ...] = (
    _inferencex(8, 12.8),
    _inferencex(16, 17.2),
    _inferencex(32, 25.6),
    _inferencex(64, 34.6),
)

KV_CASES: tuple[ServingCase, ...] = (
    ServingCase(
        "vllm llama-3.1-8b rtx3090 max_model_len 20000 kv",
        "vllm-project/vllm#10517 (comment 2024-12-02): '# GPU blocks: 1952' x 16",
        LLAMA31_8B, RTX3090, ServingConfig(input_tokens=1000, output_tokens=1000, max_num_batched_tokens=20000),
        1, "kv_cache_tokens", 1952 * 16, "fit", 1,
    ),
    ServingCase(
        "vllm llama-3.1-8b rtx3090 max_model_len 29000 kv",
        "vllm-project/vllm#10517 (comment 2024-12-02): '# GPU blocks: 1478' x 16",
        LLAMA31_8B, RTX3090, ServingConfig(input_tokens=1000, output_tokens=1000, max_num_batched_tokens=29000),
        1, "kv_cache_tokens", 1478 * 16, "fit", 1,
    ),
    ServingCase(
        "vllm llama-2-7b a100 tp1 kv",
        "vllm-project/vllm#2031 (2023-12-12): 'Llama2-7B with TP=1 and 1xA100-80GB ... # GPU blocks: 7351' x 16",
        LLAMA2_7B, A100, ServingConfig(input_tokens=2048, output_tokens=2048, max_num_batched_tokens=4096,
                                      release="vllm-0.2"),
        1, "kv_cache_tokens", 7351 * 16, "holdout", 1,
    ),
    ServingCase(
        "vllm llama-2-70b a100 tp4 kv",
        "vllm-project/vllm#2031 (2023-12-12): 'Llama2-70B with TP=4 and 4xA100-80GB ... # GPU blocks: 20865' x 16",
        LLAMA2_70B, A100, ServingConfig(input_tokens=2048, output_tokens=2048, max_num_batched_tokens=4096,
                                      release="vllm-0.2"),
        4, "kv_cache_tokens", 20865 * 16, "holdout", 4,
    ),
    ServingCase(
        "sglang qwen3-235b-a22b-fp8 h100 tp4 kv",
        "vllm-project/vllm#21348 (2025-07-22), SGLang log 'KV Cache is allocated. #tokens: 367404'",
        QWEN3_235B, H100,
        ServingConfig(input_tokens=1024, output_tokens=1024, engine="sglang", precision="fp8", weights="fp8",
                      kv_cache_precision="bf16", gpu_memory_utilization=0.93),
        4, "kv_cache_tokens", 367404, "holdout", 4,
    ),
)  # fmt: skip

CASES: tuple[ServingCase, ...] = TRTLLM_CASES + GPTFAST_CASES + LMDEPLOY_CASES + INFERENCEX_CASES + KV_CASES


def predict(case: ServingCase) -> float:
    """The estimator's figure for the case's metric."""
    cluster = Cluster(gpu=case.gpu, gpus_per_node=case.gpus_per_node)
    estimate = estimate_serving(case.model, case.cfg, cluster, tp=case.tp)
    return float(getattr(estimate, case.metric))


def relative_error(case: ServingCase) -> float:
    """(predicted − published) / published."""
    return predict(case) / case.published - 1.0
