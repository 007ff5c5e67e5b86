"""Serving a model: KV-cache capacity, time to first token, time per output token and throughput of
an inference engine (vLLM, SGLang, TensorRT-LLM) under a traffic load, and the replicas it needs.

How the engines work, and how this module models them:

- Memory (per GPU). Each engine takes a memory budget and fills what the weights and its working
  buffers leave with a paged KV cache:
  * vLLM: `gpu_memory_utilization` × total memory is the budget; a profiling forward over
    `max_num_batched_tokens` measures the activation peak; the KV cache gets the budget minus the
    weights, that peak and the memory outside PyTorch (CUDA context, NCCL buffers). CUDA graphs are
    captured afterwards and live in the (1 − utilisation) margin (vLLM docs, "Engine arguments";
    vllm/worker/worker.py `determine_num_available_blocks`, log line "Memory profiling results").
  * SGLang: `mem_fraction_static` × total memory holds weights and the KV pool; the rest is left for
    activations and CUDA graphs (sglang/srt/server_args.py; model_runner.py `profile_max_num_token`:
    rest = available after weights − total × (1 − fraction)).
  * TensorRT-LLM: the KV cache takes `free_gpu_memory_fraction` (0.9) of the memory still free after
    the weights and the runtime's activation buffers are allocated (llmapi/llm_args.py KvCacheConfig).
  The cache is paged in blocks of `block_size` tokens; a sequence holds ceil(len / block) blocks.
- A decode step reads the weights a batch touches and the batch's KV cache from HBM, or is bound by
  the FLOPs at large batch: max(bytes / achieved HBM bandwidth, FLOPs / achieved compute), plus a
  per-step engine overhead (scheduler, sampling, launch gaps: CPU time that CUDA graphs shorten but
  do not remove) and, with tensor parallelism, two all-reduces per layer whose fixed latency does
  not shrink with the message (Megatron-LM TP; nccl-tests small-message times).
- Prefill is compute-bound: 2 FLOPs per weight per token plus the causal attention, whose cost
  grows with the square of the prompt.
- Continuous batching with chunked prefill (vLLM ≥ 0.6 default, SGLang, TRT-LLM in-flight
  batching): every step carries the decode token of each running sequence and a chunk of waiting
  prompts, up to `max_num_batched_tokens`. In steady state a request's prompt is spread over the
  steps its generation takes, in the steps of the OTHER requests in flight (its own prompt is its TTFT);
  its first token comes after ceil(prompt / free chunk) steps. MoE expert touches average the steps that
  carry a whole chunk and those that carry decodes only.
- Pipeline parallelism: every token crosses all stages in turn, so it never shortens one sequence's time
  per token; below pp sequences in flight each stage's micro-batch holds one sequence.
- Static batching (FasterTransformer, gpt-fast, LMDeploy's static benchmark): a batch prefills
  together, then decodes together; time per token is the decode step.
- MoE decode reads only the experts the batch routes to: with B tokens each picking k of E experts
  (uniform routing), E·(1 − (1 − k/E)^B) distinct experts per MoE layer are read.
- Throughput from Little's law: requests/s = concurrency / end-to-end latency; given an offered
  load, the per-replica concurrency solving it is found by bisection, and the replicas needed are
  those that carry the load within the latency targets.

The achieved fractions (HBM bandwidth, decode and prefill compute), the per-step overhead and the
activation-workspace factor were fitted on the calibration cases in tests/estimator/serving_cases.py
and checked on held-out cases from other sources (docs/validation.md, "Serving"). Standard library only.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, Final

from app.estimator.compute import attention_width, matmul_params
from app.estimator.interconnects import all_reduce_s, group_bandwidth, point_to_point_s
from app.estimator.models import CONTEXT_LENGTH_KEYS, check_config_numbers
from app.estimator.params import count_params, mlp_params
from app.estimator.performance import compute_precision
from app.estimator.serving_gemm import TILE_ROWS, gemm_shapes, occupancy_of_tile_rows
from app.estimator.serving_levers import (
    ENGINE_SPECULATION,
    MAX_SPECULATIVE_TOKENS,
    PREFIX_CACHING_ENGINES,
    Speculation,
    cached_prompt_tokens,
    check_draft,
)
from app.estimator.serving_sim import (
    DEFAULT_SEED,
    PERCENTILE_LEVELS,
    PERCENTILES,
    DecodeTime,
    DenseDecode,
    Lengths,
    LoadLatency,
    Percentile,
    Quantiles,
    Scheduler,
    StepTime,
    finite_run_output_rate,
    interrupted_tpot_estimate,
    md1_ttft_floor,
    queue_wait_estimate,
    simulate,
)
from app.estimator.specs import GIB, Cluster, EstimatorError, GpuSpec, ModelSpec, require_choice
from app.estimator.vocabulary import (
    BATCHINGS,
    ENGINES,
    SERVING_PRECISIONS,
    WEIGHT_FORMATS,
    Batching,
    Engine,
    ServingPrecision,
    WeightFormat,
)

# Bytes per weight of each storage format. Quantised formats also store one 16-bit scale per group
# of `group` weights (int4 also a packed 4-bit zero point): AWQ/GPTQ default group size 128
# (AutoAWQ `q_group_size=128`, AutoGPTQ `group_size=128`); int8 weight-only and FP8 use one scale per
# output channel (vLLM fp8 per-channel/per-tensor, gpt-fast int8), i.e. a negligible group scale.
WEIGHT_BYTES: dict[str, float] = {"fp16": 2.0, "bf16": 2.0, "fp8": 1.0, "int8": 1.0, "int4": 0.5}
GROUP_OVERHEAD_BYTES: dict[str, float] = {"int4": 2.0 + 0.5, "int8": 2.0, "fp8": 4.0}  # per group
DEFAULT_GROUP_SIZE: dict[str, int] = {"int4": 128, "int8": 4096, "fp8": 4096}  # per-channel ≈ one group per row
KV_BYTES: dict[str, float] = {"fp16": 2.0, "bf16": 2.0, "fp8": 1.0}


@dataclass(frozen=True, slots=True)
class EngineDefaults:
    """What an engine does when the user does not say (data/engines.json, each row citing its source)."""

    memory_fraction: float  # vLLM gpu_memory_utilization, SGLang mem_fraction_static, TRT-LLM free fraction
    block_size: int  # tokens per KV page
    max_num_seqs: int  # sequences a replica runs at once
    max_num_batched_tokens: int  # tokens per step (chunked-prefill budget)
    graph_max_batch: int  # largest decode batch captured in a CUDA graph
    mixed_prefill: bool  # a step carries the running decodes and prompt chunks together (else prefill steps alone)
    overlap_schedule: bool  # the scheduler runs one batch ahead of the GPU (an arrival waits one step more)
    source: str
    # fixed GPU latency of one MoE layer's kernel chain (routing alignment, two grouped expert GEMMs, activation,
    # top-k sum) that every step pays per MoE layer beyond its touched experts' bytes; 0 where not sized
    moe_layer_fixed_s: float = 0.0
    moe_layer_fixed_source: str = ""
    # fixed time a request spends in the engine's server outside the GPU (HTTP, chat template, tokenising, the hand-off
    # to the scheduler, detokenising and streaming the first token): latency, not GPU time; 0 where not sized
    request_overhead_s: float = 0.0
    request_overhead_source: str = ""


def _engine_defaults() -> dict[str, EngineDefaults]:
    """data/engines.json, each row with its source."""
    text = (Path(__file__).parent / "data" / "engines.json").read_text(encoding="utf-8")
    rows: dict[str, dict[str, Any]] = json.loads(text)["engines"]
    return {engine: EngineDefaults(**row) for engine, row in rows.items()}


ENGINE_DEFAULTS = _engine_defaults()


@dataclass(frozen=True, slots=True)
class EngineRelease:
    """How a past engine release differs from the current one, for measurements taken on it (the defaults
    above describe current releases; each field cites the code or thread that shows the behaviour)."""

    nccl_allreduce: bool = False  # TP all-reduce through NCCL, no one-shot custom kernel over NVLink
    gqa_heads_per_cta: int = 0  # decode attention reads a KV head once per this many query heads; 0: once
    profile_holds_allreduce_inputs: bool = False  # the memory profile keeps every all-reduce input alive
    no_overlap_schedule: bool = False  # processes each batch before scheduling the next (no one-batch lookahead)
    source: str = ""


ENGINE_RELEASES: dict[str, EngineRelease] = {
    "sglang-0.3": EngineRelease(
        no_overlap_schedule=True,
        source="SGLang v0.3 line (sgl-project/sglang benchmark/benchmark_vllm_060, v0.3.0): the scheduler processed "
        "each batch's result before scheduling the next; the overlapping loop (event_loop_overlap) became the default "
        "with the zero-overhead batch scheduler of v0.4 (lmsys.org/blog/2024-12-04-sglang-v0-4).",
    ),
    "vllm-0.2": EngineRelease(
        nccl_allreduce=True,
        profile_holds_allreduce_inputs=True,
        source="vLLM 0.2 line after vllm-project/vllm#2031 (2023-12-12: peak = total - free after the profile "
        "run) and before #2151 (2023-12-17): torch.distributed.all_reduce record-streams its input, so the "
        "caching allocator reuses none of the profile forward's all-reduce inputs (#2150: 'when using TP, the "
        "activation memory for all reduce is not reused'); the custom all-reduce kernel came later (#2192). "
        "All inputs are taken as held; #2151 measured 6 GiB less peak at TP 8 after its fix, against 10 GiB "
        "held by this count, so some may have been freed in time (at 60 % held, the held-out #2031 TP 4 line "
        "would read +22 % instead of +6 %).",
    ),
    "turbomind-0.1": EngineRelease(
        nccl_allreduce=True,
        gqa_heads_per_cta=4,
        source="LMDeploy tag v0.1.0a1 (the benchmark's version), TurboMind: LlamaFfnLayer.cc, "
        "LlamaContextAttentionLayer.cc and LlamaDecoderSelfAttentionLayer.cc all-reduce with ftNcclAllReduceSum "
        "(NCCL; LlamaTritonModel's enable_custom_all_reduce defaults to 0); kernels/decoder_multihead_attention/"
        "decoder_multihead_attention.cu dispatches at most 4 query heads per CTA (the group_size % 8 branch is "
        "commented out), so a group of 8 reads each KV head twice.",
    ),
}


def engine_release(cfg_release: str | None) -> EngineRelease:
    """The behaviour of a named past release; the current release's when None."""
    if cfg_release is None:
        return _CURRENT_RELEASE
    require_choice(cfg_release, ENGINE_RELEASES, "serving.release")
    return ENGINE_RELEASES[cfg_release]


_CURRENT_RELEASE = EngineRelease()


def sglang_memory_fraction(tp: int) -> float:
    """SGLang's default mem_fraction_static by tensor-parallel size (server_args.py)."""
    if tp >= 16:
        return 0.79
    if tp >= 8:
        return 0.81
    if tp >= 4:
        return 0.85
    if tp >= 2:
        return 0.87
    return 0.88


# --- fitted constants (benchmarks/serving_fit.py on the `fit` cases of tests/estimator/serving_cases.py) ---
# Starting points were the cited figures below; the values are the fit's (rounded). The fit cases are
# TensorRT-LLM's perf overview (H100/H200, FP8) and gpt-fast (A100, batch 1, int8/int4, TP 1-8).
# Achieved fraction of HBM peak when a step streams the weights. STREAM-class kernels reach 80-90 % of
# peak; gpt-fast measures 1.40 TB/s of an A100's 2.04 TB/s at batch 1 (README "Memory Bandwidth").
DECODE_HBM_EFFICIENCY = 0.77
# Achieved fraction of HBM peak when attention reads the paged KV cache (gather over pages, softmax and
# a second pass: lower than a weight stream).
KV_HBM_EFFICIENCY = 0.575
# Weight-only quantised GEMV kernels dequantise on the fly and stream below the 16-bit rate: gpt-fast
# int8 1069 GB/s and int4 (g32) 863 GB/s against 1397 GB/s for bf16 on the same A100 (README).
WEIGHT_ONLY_STREAM_EFFICIENCY: dict[str, float] = {"int8": 0.82, "int4": 0.51}
# vLLM and SGLang run 4-bit AWQ/GPTQ checkpoints through Marlin (awq_marlin / gptq_marlin), which streams them
# at the 16-bit rate: "Marlin delivers essentially ideal speedups at all batchsizes, enabling the maximum
# possible 3.87x speedup [16 / 4.125 bits with group-128 scales] up to batchsizes around 16-32"
# (IST-DASLab/marlin README, A10; PPoPP'25 paper arXiv 2408.11743: close to 4x per layer at batch 16-32). Not
# fitted; the gpt-fast (tinygemm) and TensorRT-LLM int4 rates above stay as they were.
MARLIN_ENGINES = ("vllm", "sglang")
MARLIN_INT4_STREAM_EFFICIENCY = 1.0
# Achieved fraction of dense peak by the GEMMs of a decode-dominated step (skinny M = batch) and of a
# prefill-dominated step (large M).
STEP_COMPUTE_EFFICIENCY = 0.315
PREFILL_COMPUTE_EFFICIENCY = 0.72
# The attention core runs in 16 bits (FP8 recipes keep softmax(QK^T)V in bf16 unless FP8 FMHA is
# enabled) at a FlashAttention-class fraction of the 16-bit peak (FlashAttention-2/3 papers: 35-50 %).
ATTENTION_COMPUTE_EFFICIENCY = 0.28
# Routed-expert GEMMs (grouped GEMMs with few rows per expert, token permutation and routing) reach a
# fraction of a dense GEMM's speed.
MOE_GEMM_EFFICIENCY = 0.225
# FP8 GEMMs reach less of their 2x peak than 16-bit ones reach of theirs (scales, casts);
# the same derate as training (performance.FP8_GEMM_DERATE, fitted on torchtitan Float8).
FP8_DERATE = 0.75
# Block-scaled FP8 (DeepSeek-style: one scale per 128 x 128 weight block, the activation scaled per 1 x 128 group:
# DeepSeek-V3/R1 and Qwen3 FP8 checkpoints, config.json `weight_block_size` [128, 128]) runs its GEMMs below per-tensor
# FP8's rate at serving batches. vllm-project/vllm#49363 (H100, benchmarks/kernels/benchmark_fp8_gemm.py, Gemma-4-31B,
# TFLOP/s, both without the activation quantisation): block ÷ per-tensor FP8 at 1 / 16 / 64 rows = 4.91 / 5.16,
# 74.56 / 83.05, 263.26 / 318.41 (N = 12,288, K = 5,376) and 5.87 / 6.08, 72.97 / 93.96, 309.15 / 356.67 (N = 43,008):
# 0.95, 0.90, 0.83, 0.97, 0.78, 0.87, mean 0.88. Applied to the weights' stream (a decode step's GEMMs) and to the FP8
# GEMM rate alike; not fitted.
BLOCK_FP8_GROUP = 128 * 128  # weights per scale of a block-FP8 checkpoint (checkpoints.py: rows x cols)
BLOCK_FP8_GEMM_FACTOR = 0.88
# Per-step engine overhead (scheduling, sampling, input preparation, launch gaps), seconds, plus a
# per-sequence part (detokenisation, sampling). vLLM's V1 rewrite cut CPU overhead to a few ms per step
# (vLLM blog 2025-01-27 "vLLM V1"); "none" is a compiled single-stream loop (gpt-fast).
STEP_OVERHEAD_S: dict[str, float] = {"vllm": 2.0e-3, "sglang": 1.5e-3, "trt-llm": 1.0e-3, "none": 0.1e-3}
PER_SEQUENCE_OVERHEAD_S: dict[str, float] = {"vllm": 8e-6, "sglang": 6e-6, "trt-llm": 3e-6, "none": 0.0}
# The engine's fixed cost per request outside the model steps (HTTP and API server, chat template, tokenisation,
# admission, detokenising and streaming the first token), added to each time to first token and end-to-end latency of
# a request served through the engine's server (data/engines.json `request_overhead_s`, each with its source); none for
# a compiled loop or an offline run in the engine's own process (`_request_overhead_s`).
REQUEST_OVERHEAD_S: dict[str, float] = {
    **{engine: row.request_overhead_s for engine, row in ENGINE_DEFAULTS.items()},
    "none": 0.0,
}
# Fixed latency of one small TP all-reduce. Engines run one-shot custom kernels over NVLink (vLLM
# custom_all_reduce.cu, SGLang's copy, TRT-LLM's allreduce plugin). vLLM / SGLang: assumed, inside the band measured
# on H100 at 2-16 KB for TP 2 / 4 / 8 by sgl-project/sglang#2904 (SGLang's copy-input kernel 3.7-5.9 µs; vLLM's
# kernel 8.5-10.1 µs timed without a CUDA graph, so with the host launch a graph removes);
# tests/estimator/test_serving_allreduce_latency.py holds it there. TRT-LLM and gpt-fast's PyTorch collectives
# ("none"): fitted on their TP rows (benchmarks/serving_fit.py). Without NVLink the interconnect table's latency
# applies.
ALLREDUCE_LATENCY_S: dict[str, float] = {"vllm": 8e-6, "sglang": 8e-6, "trt-llm": 10e-6, "none": 28e-6}
# Activation workspace of the memory profile: bytes per batched token = factor x (3*ffn/tp + 4*h) x 2
# bytes, plus the sampler's fp32 logits for max_num_seqs rows. Fitted on vLLM "Memory profiling
# results" lines (#10517: peak_torch_memory - weights = 2.07 GiB at 20000 tokens, 2.99 GiB at 29000).
WORKSPACE_FACTOR = 0.88
# Memory outside the PyTorch allocator: CUDA context, cuBLAS workspaces; NCCL and custom all-reduce
# buffers with TP (vLLM logs: non_torch_memory 0.35 GiB on an RTX 3090 (#10517), 1.79 GiB at TP1 and
# 3.58 GiB at TP2 on an 80 GB card (#10511)). At one GPU the profiler's own figure, as logged since its
# fix in vllm-project/vllm#12126 ("further polish memory profiling": 0.16 GiB for an H100 at TP 1) and in the
# #10517 run (0.35 GiB, RTX 3090, TP 1): the larger of the two. The 1.79 GiB of #10511 was read before that
# fix; 0.6 GiB before this change read the KV cache of the #10517 runs 5.7-5.8 % short (0.25 GiB, 2,048
# tokens of Llama-3.1-8B) of the blocks they logged.
NON_TORCH_GIB = 0.35
NON_TORCH_TP_GIB = 1.8
# CUDA graphs for decode batches up to graph_max_batch: vLLM logs "Graph capturing finished ... took
# 0.3-1.2 GiB"; they live in the (1 - utilisation) margin for vLLM and SGLang, inside TRT-LLM's.
GRAPH_GIB = 0.5


# Fine-grained MoE at low concurrency is outside the validated range. The MoE speed cases of
# tests/estimator/serving_cases.py are offline maximum-throughput runs (TensorRT-LLM, Qwen3-235B-A22B, all
# requests queued); with few sequences in flight a step of a fine-grained MoE (DeepSeekMoE segmentation, arXiv
# 2401.06066: many small routed experts, 64 in DeepSeek-V2-Lite, 128 in Qwen3, 256 in DeepSeek-V3) runs a chain
# of small latency-bound kernels per layer (grouped top-k routing, token alignment, per-token FP8 quantisation,
# two grouped expert GEMMs on tiny tiles, the MLA absorb GEMMs). This model streams the touched weights at the fitted
# bandwidth and adds the fused-MoE call's fixed latency (data/engines.json moe_layer_fixed_s, from vLLM's H100 kernel
# benchmark, vllm-project/vllm#24700), not the rest of the chain. Published DeepSeek-V3/R1 FP8 decode measurements read
# slower than the estimate: SemiAnalysisAI/InferenceX#870 (SGLang v0.5.7, TP 8 on 8xH200, 1k/1k) TPOT 12.8 / 17.2 /
# 25.6 / 34.6 ms at 8 / 16 / 32 / 64 sequences, 16-25 % above the estimate; tenstorrent/tt-inference-server#356
# (SGLang, TP 16 on 16xH100 over InfiniBand, 128/128) 23.1 ms at one sequence, 2.9x the estimate;
# sgl-project/sglang#2643 (v0.4.1.post2, --tp 8) 30.29 tokens/s at batch 1, 128/256. Answers in that range carry a
# warning.
FINE_GRAINED_MOE_EXPERTS = 64  # routed experts per MoE layer from which the warning applies (Mixtral's 8 do not)
MOE_VALIDATED_CONCURRENCY = 64  # sequences per replica at and below which the published measurements above ran
MOE_LOW_CONCURRENCY_WARNING: Final = "moe_low_concurrency_unvalidated"


def moe_low_concurrency_note(model: ModelSpec, concurrency: float) -> str | None:
    """The warning text when a fine-grained MoE decodes at low concurrency (not validated; the estimate is
    optimistic there), else None."""
    if not model.is_moe or model.experts < FINE_GRAINED_MOE_EXPERTS or concurrency > MOE_VALIDATED_CONCURRENCY:
        return None
    return (
        f"{model.name} routes to {model.experts} small experts per layer: at {concurrency:.3g} sequence(s) in flight "
        f"(at most {MOE_VALIDATED_CONCURRENCY}) decode is not validated and this time per token is optimistic. "
        "Per-layer routing and grouped-GEMM kernels dominate there; published DeepSeek-V3/R1 FP8 measurements read "
        "23-33 ms per token at one sequence (SGLang, 16xH100: tenstorrent/tt-inference-server#356; 8 GPUs: "
        "sgl-project/sglang#2643) and 12.8 ms at 8 (SGLang v0.5.7, 8xH200: SemiAnalysisAI/InferenceX#870)"
    )


@dataclass(frozen=True, slots=True)
class ServingConfig:
    """The serving request: lengths, load, engine, formats and latency targets."""

    input_tokens: int
    output_tokens: int
    concurrency: int | None = None  # sequences in flight per replica
    requests_per_s: float | None = None  # offered load for the whole deployment
    batching: Batching = "continuous"
    engine: Engine = "vllm"
    precision: ServingPrecision = "bf16"  # the math
    weights: WeightFormat | None = None  # storage; None: same as precision
    kv_cache_precision: ServingPrecision | None = None  # None: 16-bit (the math's 16-bit type)
    gpu_memory_utilization: float | None = None  # engine default otherwise
    max_model_len: int | None = None  # None: input + output
    max_num_seqs: int | None = None
    max_num_batched_tokens: int | None = None
    slo_ttft_ms: float | None = None
    slo_tpot_ms: float | None = None
    group_size: int | None = None  # quantisation group; None: format default
    mla_cache_values: int = 0  # MLA (DeepSeek): values cached per token and layer (kv_lora_rank + rope dim)
    engine_overhead: str | None = None  # None: the engine's; "none" for a compiled loop (gpt-fast)
    release: str | None = None  # a past release in ENGINE_RELEASES a measurement ran on; None: current
    input_tokens_p95: int | None = None  # None: every prompt is input_tokens long; else lognormal (serving_sim)
    output_tokens_p95: int | None = None
    slo_percentile: Percentile = "p90"  # the percentile of the simulated latency at the peak the SLO is judged on
    peak_factor: float = 1.5  # the peak ÷ the offered load (requests_per_s) the SLO must hold at
    seed: int = DEFAULT_SEED  # of the simulated arrivals and lengths
    prefix_cache_hit_rate: float = 0.0  # share of prompt tokens found in the prefix cache (serving_levers)
    speculative: Speculation | None = None  # speculative decoding (serving_levers)
    # a disaggregated prefill pool's KV transfer after each prompt (serving_disagg): counted in the service time of
    # the M/D/1 queue its time to first token is held to (the option's isolated TTFT, prefill and transfer)
    kv_transfer_s: float = 0.0

    @property
    def weight_format(self) -> str:
        return self.weights or self.precision

    @property
    def kv_format(self) -> str:
        return self.kv_cache_precision or ("bf16" if self.precision == "fp8" else self.precision)

    @property
    def context_len(self) -> int:
        return self.max_model_len or (self.input_tokens + self.output_tokens)


@dataclass(frozen=True, slots=True)
class ServingMemory:
    """Per-GPU memory of one replica's GPUs, in bytes."""

    weights: float
    kv_cache: float
    activations: float  # activation workspace of the largest step
    engine_reserve: float  # CUDA context, NCCL buffers, CUDA graphs, the unused utilisation margin
    capacity: float  # the card's total memory

    @property
    def total(self) -> float:
        return self.weights + self.kv_cache + self.activations + self.engine_reserve


@dataclass(frozen=True, slots=True)
class ServingEstimate:
    ttft_ms: float
    tpot_ms: float
    e2e_latency_ms: float
    output_tokens_per_s: float  # whole deployment
    output_tokens_per_s_per_gpu: float
    requests_per_s: float  # whole deployment
    concurrency: float  # per replica at the operating point
    max_concurrency: int  # what one replica's KV cache and engine limits hold at these lengths
    kv_cache_tokens: int  # per replica
    replicas: int
    replicas_needed: int | None  # for requests_per_s: replicas that carry it within the SLO
    meets_slo: bool | None  # None without an SLO
    memory: ServingMemory
    gpus_per_replica: int
    bound: str  # "memory" or "compute" for the decode step at the operating point
    notes: list[str] = field(default_factory=list)
    # For requests_per_s: simulated latencies at the offered load and at its peak (serving_sim), seconds.
    latency: dict[str, LoadLatency] | None = None  # {"average": …, "peak": …}
    utilization: dict[str, float] | None = None  # offered ÷ what a replica completes at most, average and peak
    isolated_ttft_ms: float | None = None  # one request on an idle replica


# --- model quantities ---------------------------------------------------------------------------


def mla_cache_values(hf_config: Mapping[str, Any] | None) -> int:
    """Values MLA caches per token and layer, kv_lora_rank + qk_rope_head_dim (DeepSeek-V2 paper §2.1.2);
    0 for a model without MLA."""
    if not hf_config or not hf_config.get("kv_lora_rank"):
        return 0
    return int(hf_config["kv_lora_rank"]) + int(hf_config.get("qk_rope_head_dim") or 0)


# config.json keys that bound the sequence length, as vLLM reads them (vllm/config.py
# `_get_and_verify_max_len`: the smallest of those present), and the rope scalings that do not extend it
# there (llama3 and longrope configs already state the extended length).
CONTEXT_KEYS = CONTEXT_LENGTH_KEYS
UNSCALED_ROPE = ("default", "llama3", "longrope", "su", "mrope")


def context_limit(hf_config: Mapping[str, Any] | None) -> int | None:
    """The longest sequence (prompt + output) an engine serves the model at, None when the config says none:
    the config's length times the rope_scaling factor (YaRN: of original_max_position_embeddings)."""
    if not hf_config:
        return None
    check_config_numbers(hf_config)  # finite, and small enough that the product below is
    lengths = [
        int(hf_config[k]) for k in CONTEXT_KEYS if isinstance(hf_config.get(k), int | float) and hf_config[k] > 0
    ]
    if not lengths:
        return None
    limit = float(min(lengths))
    scaling = hf_config.get("rope_scaling")
    if isinstance(scaling, Mapping) and isinstance(scaling.get("factor"), int | float):
        kind = scaling.get("rope_type", scaling.get("type"))
        if kind not in UNSCALED_ROPE:
            original = scaling.get("original_max_position_embeddings")
            if kind == "yarn" and isinstance(original, int | float) and original > 0:
                limit = float(original)
            limit *= float(scaling["factor"])
    return int(limit)


def kv_bytes_per_token(model: ModelSpec, kv_format: str, mla_cache_values: int = 0) -> float:
    """KV-cache bytes per token for the whole model: 2·L·kv_heads·head_dim (GQA) or L·(rank + rope) (MLA)."""
    values = mla_cache_values if mla_cache_values else 2 * model.kv_heads * model.d_head
    return model.layers * values * KV_BYTES[kv_format]


def kv_bytes_per_token_per_gpu(model: ModelSpec, kv_format: str, tp: int, pp: int, mla_cache_values: int = 0) -> float:
    """KV heads split over TP ranks (replicated when kv_heads < tp; MLA's latent is replicated); layers over PP."""
    if mla_cache_values:
        per_layer = mla_cache_values * KV_BYTES[kv_format]
    else:
        heads_per_rank = max(1.0, model.kv_heads / tp)
        per_layer = 2 * heads_per_rank * model.d_head * KV_BYTES[kv_format]
    return math.ceil(model.layers / pp) * per_layer


def weight_bytes_per_param(fmt: str, group_size: int | None = None) -> float:
    group = group_size or DEFAULT_GROUP_SIZE.get(fmt, 0)
    return WEIGHT_BYTES[fmt] + (GROUP_OVERHEAD_BYTES.get(fmt, 0.0) / group if group else 0.0)


@dataclass(frozen=True, slots=True)
class _Parts:
    """Parameter groups of a model as serving reads them."""

    quantised: float  # linear layers outside the routed experts (attention, dense MLPs, shared experts, router)
    expert: float  # one routed expert's parameters
    experts_total: float  # all routed experts of all MoE layers
    head: float  # the LM head matrix (16-bit; quantisers keep it and the embedding unquantised)
    embedding: float  # input table (16-bit; looked up, not streamed)
    small: float  # norms, biases


@lru_cache(maxsize=1024)
def _parts(model: ModelSpec) -> _Parts:
    counts = count_params(model)
    head = float(model.vocab * model.hidden)  # tied or not, the LM head GEMM reads V × h
    small = float(counts.norms_per_layer * model.layers + counts.final_norm)
    if model.is_moe:
        one = float(mlp_params(model, model.expert_ffn or model.ffn))
        experts_total = one * model.experts * model.moe_layers
    else:
        one = experts_total = 0.0
    quantised = float(counts.total) - counts.embedding - counts.lm_head - small - experts_total
    return _Parts(quantised, one, experts_total, head, float(counts.embedding), small)


def weights_bytes(model: ModelSpec, fmt: str, group_size: int | None = None) -> float:
    """Stored bytes of the whole model: linear layers in `fmt` (with group scales); embedding, head and norms
    in 16 bits."""
    p = _parts(model)
    per = weight_bytes_per_param(fmt, group_size)
    head = 0.0 if model.tied_embeddings else p.head
    return (p.quantised + p.experts_total) * per + (p.embedding + head + p.small) * 2.0


def draft_weights_bytes(model: ModelSpec, cfg: ServingConfig) -> float:
    """Stored bytes of the speculation's draft (whole, before TP): an EAGLE-3 head or an MTP module is one decoder
    layer of the target, in its format, and an LM head in 16 bits (serving_levers); a draft model its own linear
    layers and head; n-gram lookup none."""
    spec = cfg.speculative
    if spec is None or spec.method == "ngram":
        return 0.0
    if spec.draft is not None:
        return weights_bytes(spec.draft, cfg.weight_format, cfg.group_size)
    p = _parts(model)
    per = weight_bytes_per_param(cfg.weight_format, cfg.group_size)
    return (p.quantised + p.experts_total) / model.layers * per + p.head * 2.0


def _draft_kv_per_token(model: ModelSpec, cfg: ServingConfig, tp: int) -> float:
    """KV bytes per token per GPU the draft caches beside the target's: one layer of the target's (EAGLE-3 head,
    MTP module), or the draft model's whole cache."""
    spec = cfg.speculative
    if spec is None or spec.method == "ngram":
        return 0.0
    if spec.draft is not None:
        return kv_bytes_per_token_per_gpu(spec.draft, cfg.kv_format, tp, 1)
    return kv_bytes_per_token_per_gpu(model, cfg.kv_format, tp, 1, cfg.mla_cache_values) / model.layers


def expected_experts_touched(experts: int, top_k: int, tokens: float) -> float:
    """Distinct experts per MoE layer that `tokens` uniformly routed top-k picks touch: E·(1 − (1 − k/E)^T)."""
    if experts <= 0 or tokens <= 0:
        return 0.0
    untouched: float = (1.0 - top_k / experts) ** tokens
    return experts * (1.0 - untouched)


# --- engine limits and memory -------------------------------------------------------------------


def _memory_fraction(cfg: ServingConfig, tp: int) -> float:
    if cfg.gpu_memory_utilization is not None:
        return cfg.gpu_memory_utilization
    if cfg.engine == "sglang":
        return sglang_memory_fraction(tp)
    return ENGINE_DEFAULTS[cfg.engine].memory_fraction


# vLLM's max_num_seqs default depends on the GPU (vllm/engine/arg_utils.py `get_batch_defaults`, v0.9 on):
# 1024 for the OpenAI server on a GPU of ≥ 70 GiB that is not an A100 ("For GPUs like H100 and MI300x, use
# larger default values"; A100 excluded after PR #17885), 256 elsewhere (ENGINE_DEFAULTS).
VLLM_LARGE_GPU_GIB = 70
VLLM_LARGE_GPU_MAX_NUM_SEQS = 1024


def _max_num_seqs(cfg: ServingConfig, gpu: GpuSpec) -> int:
    if cfg.max_num_seqs:
        return cfg.max_num_seqs
    if cfg.engine == "vllm" and gpu.memory_gib >= VLLM_LARGE_GPU_GIB and "a100" not in gpu.id.lower():
        return VLLM_LARGE_GPU_MAX_NUM_SEQS
    return ENGINE_DEFAULTS[cfg.engine].max_num_seqs


def _batched_tokens(cfg: ServingConfig, gpu: GpuSpec) -> int:
    if cfg.max_num_batched_tokens:
        return cfg.max_num_batched_tokens
    if cfg.engine == "sglang" and gpu.memory_gib < 25:
        return 2048  # server_args.py: chunked_prefill_size 2048 under 25 GB
    return ENGINE_DEFAULTS[cfg.engine].max_num_batched_tokens


def _workspace_bytes(model: ModelSpec, cfg: ServingConfig, gpu: GpuSpec, tp: int, tokens: int, layers: int) -> float:
    """Activation peak of the engine's profiling step over `tokens` tokens, per GPU (`layers` on this GPU)."""
    width = model.ffn if not model.is_moe else max(model.ffn, (model.expert_ffn or model.ffn) * model.experts_per_token)
    per_token = WORKSPACE_FACTOR * (3.0 * width / tp + 4.0 * model.hidden) * 2.0
    logits = _max_num_seqs(cfg, gpu) * model.vocab * 4.0  # fp32 logits of the last token of each sequence
    held = 0.0
    if tp > 1 and engine_release(cfg.release).profile_holds_allreduce_inputs:
        # two all-reduces per layer (attention and MLP outputs) and the vocab-parallel embedding's, each
        # a [tokens, hidden] 16-bit tensor that stays reserved until the forward synchronises
        held = (2 * layers + 1) * tokens * model.hidden * 2.0
    return tokens * per_token + logits + held


def serving_memory(model: ModelSpec, cfg: ServingConfig, gpu: GpuSpec, tp: int, pp: int) -> ServingMemory:
    """Per-GPU memory: weights, the KV cache the engine allocates, workspace and reserve."""
    total = gpu.memory_gib * GIB
    weights = (weights_bytes(model, cfg.weight_format, cfg.group_size) + draft_weights_bytes(model, cfg)) / (tp * pp)
    fraction = _memory_fraction(cfg, tp)
    non_torch = (NON_TORCH_GIB + (NON_TORCH_TP_GIB if tp * pp > 1 else 0.0)) * GIB
    workspace = _workspace_bytes(model, cfg, gpu, tp, _batched_tokens(cfg, gpu), math.ceil(model.layers / pp))
    graphs = GRAPH_GIB * GIB
    if cfg.engine == "sglang":
        kv = total * fraction - weights - non_torch
    elif cfg.engine == "trt-llm":
        kv = fraction * (total - weights - workspace - non_torch - graphs)
    else:
        kv = total * fraction - weights - workspace - non_torch
    kv = max(0.0, kv)
    reserve = max(0.0, total - weights - kv - workspace)
    return ServingMemory(weights=weights, kv_cache=kv, activations=workspace, engine_reserve=reserve, capacity=total)


def kv_cache_tokens(model: ModelSpec, cfg: ServingConfig, gpu: GpuSpec, tp: int, pp: int) -> int:
    """Tokens one replica's paged KV cache holds (whole blocks)."""
    memory = serving_memory(model, cfg, gpu, tp, pp)
    per_token = kv_bytes_per_token_per_gpu(model, cfg.kv_format, tp, pp, cfg.mla_cache_values)
    per_token += _draft_kv_per_token(model, cfg, tp)
    block = ENGINE_DEFAULTS[cfg.engine].block_size
    return int(memory.kv_cache // (per_token * block)) * block


def _blocks_per_sequence(tokens: int, block: int) -> int:
    return math.ceil(tokens / block)


def max_concurrency(model: ModelSpec, cfg: ServingConfig, gpu: GpuSpec, tp: int, pp: int) -> int:
    """Sequences of input + output tokens one replica holds at once: KV blocks, max_num_seqs."""
    block = ENGINE_DEFAULTS[cfg.engine].block_size
    cache_tokens = kv_cache_tokens(model, cfg, gpu, tp, pp)
    per_seq = _blocks_per_sequence(cfg.input_tokens + cfg.output_tokens, block) * block
    return max(0, min(_max_num_seqs(cfg, gpu), cache_tokens // per_seq))


# --- step time ----------------------------------------------------------------------------------


@dataclass(slots=True)
class _Hardware:
    """One replica's GPUs and the per-step constants derived once per estimate (the search calls a step
    function thousands of times)."""

    gpu: GpuSpec
    tp: int
    pp: int
    cluster: Cluster
    split: int = 1
    weight_bytes_static: float = 0.0  # per GPU, every step (non-expert linear layers, head)
    expert_bytes: float = 0.0  # per GPU, per distinct expert touched in every MoE layer
    experts: int = 0
    top_k: int = 0
    hbm_weights: float = 1.0  # achieved bytes/s for weights
    hbm_kv: float = 1.0  # achieved bytes/s for the KV cache
    kv_token: float = 0.0  # KV bytes per token per GPU
    kv_reads: float = 1.0  # times decode attention reads each cached KV byte
    dense_flops_per_token: float = 0.0  # per GPU
    expert_flops_per_token: float = 0.0  # per GPU, already divided by the MoE GEMM efficiency
    attention_coef: float = 0.0  # per GPU: FLOPs per (token x key)
    gemm_rate: float = 1.0
    attention_rate: float = 1.0
    overhead_s: float = 0.0  # per stage
    overhead_per_seq_s: float = 0.0  # per stage
    moe_fixed_s: float = 0.0  # per stage: the MoE layers' kernel chains' fixed latency, every step
    allreduce_fixed_s: float = 0.0
    allreduce_per_token_s: float = 0.0
    hop_fixed_s: float = 0.0
    hop_per_token_s: float = 0.0
    # speculative decoding (serving_levers): positions each decoding sequence runs a step, the tokens a step yields
    # on average, and the draft's k forwards a step (per GPU: bytes streamed, one MoE layer's expert, KV per token,
    # FLOPs per token already divided by the GEMM rate)
    verify_width: int = 1
    tokens_per_step: float = 1.0
    draft_forwards: int = 0
    draft_bytes: float = 0.0
    draft_expert_bytes: float = 0.0
    draft_kv_token: float = 0.0
    draft_flops_per_token: float = 0.0
    draft_overhead_s: float = 0.0
    # the dense layers' GEMMs (columns and weights per GPU) and the SMs they run on: the prompt tokens' compute
    # efficiency is scaled by their wave occupancy at the step's token count (serving_gemm)
    gemm_shapes: tuple[tuple[int, float], ...] = ()
    sms: int = 0
    occupancy_by_rows: dict[int, float] = field(default_factory=dict)  # memo: rows of tiles -> occupancy
    # memos of what the replica's model and traffic give on it (a _Hardware serves one model and one traffic, its
    # offered rate aside: `_hardware`): operating points by concurrency (its type too: a point carries it), and the
    # isolated request's time to first token
    points: dict[tuple[type, float], _Point] = field(default_factory=dict)
    isolated_s: float | None = None

    def occupancy(self, tokens: float) -> float:
        """The wave occupancy of the step's GEMMs at `tokens` rows (1.0 when the SM count is unknown or MoE)."""
        if not self.sms or tokens <= 0:
            return 1.0
        rows = -int(-tokens // TILE_ROWS)
        found = self.occupancy_by_rows.get(rows)
        if found is None:
            found = self.occupancy_by_rows[rows] = occupancy_of_tile_rows(self.gemm_shapes, self.sms, rows)
        return found


def _where(cluster: Cluster, tp: int, pp: int) -> tuple[object, ...]:
    """What a replica's step depends on of its servers (the GPU type by its id), and its split."""
    return (cluster.gpu.id, cluster.gpus_per_node, cluster.nodes, cluster.intra_node_link, cluster.inter_node_gbps,
            cluster.inter_node_fabric, tp, pp)  # fmt: skip


def _hardware(model: ModelSpec, cfg: ServingConfig, cluster: Cluster, tp: int, pp: int) -> _Hardware:
    """The replica's constants; within a `simulations` block, one object per replica and traffic (the offered rate
    aside, which none of them reads), so its memos serve every estimate of the answer."""
    memo = _MEMO.get()
    if memo is None:
        return _new_hardware(model, cfg, cluster, tp, pp)
    key = (model, replace(cfg, requests_per_s=None), _where(cluster, tp, pp))
    found = memo.hardware.get(key)
    if found is None:
        found = memo.hardware[key] = _new_hardware(model, cfg, cluster, tp, pp)
    return found


def _new_hardware(model: ModelSpec, cfg: ServingConfig, cluster: Cluster, tp: int, pp: int) -> _Hardware:
    gpu = cluster.gpu
    split = tp * pp
    parts = _parts(model)
    per = weight_bytes_per_param(cfg.weight_format, cfg.group_size)
    gemm_rate, attention_rate = _math_rates(gpu, cfg)
    expert = _expert_active_params(model)
    key = _overhead_key(cfg)
    hw = _Hardware(gpu, tp, pp, cluster, split=split)
    hw.weight_bytes_static = (parts.quantised * per + parts.head * 2.0) / split
    hw.expert_bytes = parts.expert * model.moe_layers * per / split if model.is_moe else 0.0
    hw.experts, hw.top_k = (model.experts, model.experts_per_token) if model.is_moe else (0, 0)
    hw.hbm_weights = gpu.hbm_bytes_per_s * _weight_stream_efficiency(cfg)
    hw.hbm_kv = gpu.hbm_bytes_per_s * KV_HBM_EFFICIENCY
    hw.kv_token = kv_bytes_per_token_per_gpu(model, cfg.kv_format, tp, pp, cfg.mla_cache_values)
    release = engine_release(cfg.release)
    if release.gqa_heads_per_cta and not cfg.mla_cache_values:
        hw.kv_reads = float(max(1, math.ceil(model.heads // model.kv_heads / release.gqa_heads_per_cta)))
    hw.dense_flops_per_token = 2.0 * (matmul_params(model) - expert) / split / gemm_rate
    hw.expert_flops_per_token = 2.0 * expert / MOE_GEMM_EFFICIENCY / split / gemm_rate
    hw.attention_coef = (
        4.0 * model.layers * attention_width(model) / split / (attention_rate * ATTENTION_COMPUTE_EFFICIENCY)
    )
    hw.overhead_s = STEP_OVERHEAD_S[key] / pp
    if not model.is_moe:
        hw.gemm_shapes, hw.sms = gemm_shapes(model, tp), gpu.sm_count
    hw.overhead_per_seq_s = PER_SEQUENCE_OVERHEAD_S[key] / pp
    if model.is_moe and key in ENGINE_DEFAULTS:
        hw.moe_fixed_s = math.ceil(model.moe_layers / pp) * ENGINE_DEFAULTS[key].moe_layer_fixed_s
    if tp > 1:
        link = group_bandwidth(cluster, tp, min(tp, cluster.gpus_per_node))
        nvlink = "nvlink" in (cluster.intra_node_link or gpu.intra_node_link) and tp <= cluster.gpus_per_node
        # NCCL's own small-message latency: the PyTorch-collective value fitted on gpt-fast's TP rows
        engine_latency = ALLREDUCE_LATENCY_S["none" if release.nccl_allreduce else key]
        latency = engine_latency if nvlink else link.latency_s
        calls = 2 * math.ceil(model.layers / pp)
        hw.allreduce_fixed_s = calls * latency
        hw.allreduce_per_token_s = calls * (all_reduce_s(model.hidden * 2.0, tp, link) - link.latency_s)
    if cfg.speculative is not None:
        _speculation_hardware(hw, model, cfg, gemm_rate)
    if pp > 1:
        # neighbouring stages share a server only while the whole replica does; beyond, each hop crosses the
        # inter-node fabric (the slowest hop sets the pipeline's pace)
        link = group_bandwidth(cluster, 2, 1 if split > cluster.gpus_per_node else min(2, cluster.gpus_per_node))
        hw.hop_fixed_s = (pp - 1) * link.latency_s
        hw.hop_per_token_s = (pp - 1) * (point_to_point_s(model.hidden * 2.0, link) - link.latency_s)
    return hw


def _speculation_hardware(hw: _Hardware, model: ModelSpec, cfg: ServingConfig, gemm_rate: float) -> None:
    """The speculation's constants: verification width, expected tokens per step, and the draft's forwards. A draft
    forward is replayed from a CUDA graph like a compiled decode loop, so it carries that loop's fixed cost
    (STEP_OVERHEAD_S["none"]) rather than the engine's scheduling overhead."""
    spec = cfg.speculative
    if spec is None:
        return
    hw.verify_width, hw.tokens_per_step = spec.verify_width, spec.tokens_per_step
    if spec.method == "ngram":
        return  # a CPU lookup in the prompt and output so far: no model runs
    per = weight_bytes_per_param(cfg.weight_format, cfg.group_size)
    hw.draft_forwards = spec.num_speculative_tokens
    hw.draft_overhead_s = STEP_OVERHEAD_S["none"]
    hw.draft_kv_token = _draft_kv_per_token(model, cfg, hw.tp)
    if spec.draft is not None:
        draft = _parts(spec.draft)
        hw.draft_bytes = ((draft.quantised + draft.experts_total) * per + draft.head * 2.0) / hw.split
        hw.draft_flops_per_token = 2.0 * matmul_params(spec.draft) / hw.split / gemm_rate
        return
    parts = _parts(model)
    hw.draft_bytes = (parts.quantised / model.layers * per + parts.head * 2.0) / hw.split
    hw.draft_expert_bytes = parts.expert * per / hw.split if model.is_moe else 0.0
    one_layer = matmul_params(model) / model.layers + model.vocab * model.hidden
    hw.draft_flops_per_token = 2.0 * one_layer / hw.split / gemm_rate


def _draft_s(hw: _Hardware, decodes: float, kv: float) -> float:
    """The draft's k forwards in one step over `decodes` sequences holding `kv` tokens: each streams the draft's
    weights (an MoE module: the experts the batch touches) and its KV cache, or is bound by its FLOPs."""
    if not hw.draft_forwards or decodes <= 0:
        return 0.0
    weights = hw.draft_bytes
    if hw.draft_expert_bytes:
        weights += expected_experts_touched(hw.experts, hw.top_k, decodes) * hw.draft_expert_bytes
    memory = weights / hw.hbm_weights + kv * hw.draft_kv_token / hw.hbm_kv
    compute = decodes * hw.draft_flops_per_token / STEP_COMPUTE_EFFICIENCY
    return hw.draft_forwards * (max(memory, compute) + hw.draft_overhead_s)


def _math_rates(gpu: GpuSpec, cfg: ServingConfig) -> tuple[float, float]:
    """(GEMM, attention) dense peaks of the math that runs: weight-only int4/int8 dequantise into 16-bit
    GEMMs; FP8 weights run FP8 GEMMs on GPUs with FP8 tensor cores; the attention core runs in 16 bits."""
    math_precision = cfg.precision
    if cfg.weight_format != "fp8" and math_precision == "fp8":
        math_precision = "bf16"
    if cfg.weight_format == "fp8" and gpu.peak_flops.get("fp8"):
        # engines run FP8 weights as W8A8 where FP8 tensor cores exist (vLLM Fp8LinearMethod: cutlass_scaled_mm
        # with dynamic activation scales on SM89+, FP8-Marlin weight-only below; SGLang and TensorRT-LLM alike)
        math_precision = "fp8"
    runs_as = compute_precision(gpu, math_precision)
    gemm = gpu.peak_flops[runs_as] * (FP8_DERATE if runs_as == "fp8" else 1.0)
    if runs_as == "fp8" and _block_fp8(cfg):
        gemm *= BLOCK_FP8_GEMM_FACTOR
    attention = gpu.peak_flops[compute_precision(gpu, "bf16")]
    return gemm, attention


def _overhead_key(cfg: ServingConfig) -> str:
    return cfg.engine_overhead or cfg.engine


def _request_overhead_s(cfg: ServingConfig) -> float:
    """The fixed time a request spends in the engine's server outside the GPU (REQUEST_OVERHEAD_S). None for a static
    batch: the engines' static-batch benchmarks (TensorRT-LLM's gptSessionBenchmark, LMDeploy's profile_generation,
    gpt-fast) run the model in their own process, with no server, tokeniser or stream in front of it."""
    if cfg.batching == "static":
        return 0.0
    return REQUEST_OVERHEAD_S[_overhead_key(cfg)]


@lru_cache(maxsize=1024)
def _expert_active_params(model: ModelSpec) -> float:
    """GEMM weights per token inside routed experts (top-k of them, every MoE layer)."""
    if not model.is_moe:
        return 0.0
    return float(mlp_params(model, model.expert_ffn or model.ffn)) * model.experts_per_token * model.moe_layers


def _block_fp8(cfg: ServingConfig) -> bool:
    """FP8 weights with one scale per 128 x 128 block (BLOCK_FP8_GEMM_FACTOR)."""
    return cfg.weight_format == "fp8" and cfg.group_size == BLOCK_FP8_GROUP


def _weight_stream_efficiency(cfg: ServingConfig) -> float:
    if cfg.weight_format == "int4" and _overhead_key(cfg) in MARLIN_ENGINES:
        return DECODE_HBM_EFFICIENCY * MARLIN_INT4_STREAM_EFFICIENCY
    if _block_fp8(cfg):
        return DECODE_HBM_EFFICIENCY * BLOCK_FP8_GEMM_FACTOR
    return DECODE_HBM_EFFICIENCY * WEIGHT_ONLY_STREAM_EFFICIENCY.get(cfg.weight_format, 1.0)


def _step_s(
    hw: _Hardware,
    decode_seqs: float,
    context: float,
    prefill_tokens: float,
    prefill_len: float,
    prefill_chunk: float | None = None,
    one_gemm: bool = False,
) -> tuple[float, str]:
    """One engine step on one pipeline stage: `decode_seqs` sequences at `context` tokens decode one token each
    and `prefill_tokens` prompt tokens of prompts of length `prefill_len` are prefilled. Returns (s, bound).

    `prefill_chunk`: the size of the chunks the prefill tokens come in when `prefill_tokens` is an average
    over steps (a prompt is scheduled whole, up to the chunk budget, on one step, not a little on each):
    a fraction prefill_tokens / chunk of the steps carries one chunk. None: this step carries them all.
    `one_gemm`: the decodes' rows run inside the chunk's GEMMs, at the large-M efficiency of all the step's rows
    (_mixed_step_s), not at the skinny-M decode efficiency.

    Memory: the weights the step touches (MoE: the distinct experts its tokens route to, averaged over the
    steps with and without a chunk) and the KV cache read (decodes) and written (prefill), at achieved
    bandwidths. Compute: dense and expert GEMMs at the decode/prefill mix's efficiency, the attention core at
    its own. The larger of the two, plus the engine's per-step overhead and the TP all-reduces (fixed latency
    + bytes)."""
    verify = decode_seqs * hw.verify_width  # positions the decoding sequences run (k + 1 each when speculating)
    tokens = verify + prefill_tokens
    weights = hw.weight_bytes_static
    if hw.experts:
        chunk = max(prefill_chunk or prefill_tokens, prefill_tokens)
        share = prefill_tokens / chunk if chunk else 0.0
        touched = (1.0 - share) * expected_experts_touched(hw.experts, hw.top_k, max(verify, 1.0))
        touched += share * expected_experts_touched(hw.experts, hw.top_k, max(verify + chunk, 1.0))
        weights += touched * hw.expert_bytes
    kv = (decode_seqs * context * hw.kv_reads + prefill_tokens) * hw.kv_token
    memory_s = weights / hw.hbm_weights + kv / hw.hbm_kv
    decode_share = verify / tokens if tokens else 1.0
    # the GEMMs of a step that prefills run at M = its decodes + one whole chunk (prefill_tokens may be an average)
    chunk_rows = verify + max(prefill_chunk or prefill_tokens, prefill_tokens)
    prefill_efficiency = PREFILL_COMPUTE_EFFICIENCY * hw.occupancy(chunk_rows) if prefill_tokens else 0.0
    efficiency = decode_share * STEP_COMPUTE_EFFICIENCY + (1 - decode_share) * prefill_efficiency
    if one_gemm and prefill_tokens:
        efficiency = prefill_efficiency
    compute_s = (hw.dense_flops_per_token + hw.expert_flops_per_token) * tokens / efficiency
    compute_s += hw.attention_coef * (verify * context + prefill_tokens * prefill_len / 2)
    compute_s += hw.draft_flops_per_token * prefill_tokens / PREFILL_COMPUTE_EFFICIENCY  # the draft reads the prompt
    overhead = hw.overhead_s + hw.overhead_per_seq_s * decode_seqs + hw.moe_fixed_s
    comm = hw.allreduce_fixed_s + hw.allreduce_per_token_s * tokens if hw.tp > 1 else 0.0
    bound = "memory" if memory_s >= compute_s else "compute"
    draft = _draft_s(hw, decode_seqs, decode_seqs * context) if hw.draft_forwards else 0.0
    return max(memory_s, compute_s) + overhead + comm + draft, bound


@dataclass(frozen=True, slots=True)
class _Point:
    ttft_s: float
    tpot_s: float
    e2e_s: float
    requests_per_s: float  # per replica
    concurrency: float
    bound: str


def _pipeline_hop_s(hw: _Hardware, tokens: float) -> float:
    return hw.hop_fixed_s + hw.hop_per_token_s * tokens if hw.pp > 1 else 0.0


def _operating_point(model: ModelSpec, cfg: ServingConfig, hw: _Hardware, concurrency: float) -> _Point:
    """Latencies and throughput of one replica with `concurrency` sequences in flight (kept on `hw`, built for this
    model and traffic: the closed forms ask for the same points many times in one answer)."""
    key = (type(concurrency), concurrency)
    found = hw.points.get(key)
    if found is None:
        found = hw.points[key] = _new_operating_point(model, cfg, hw, concurrency)
    return found


def _new_operating_point(model: ModelSpec, cfg: ServingConfig, hw: _Hardware, concurrency: float) -> _Point:
    c = max(concurrency, 1e-9)
    prompt, out = cfg.input_tokens, max(cfg.output_tokens, 1)
    pp = hw.pp
    if cfg.batching == "static":
        batch = max(1.0, math.ceil(c))
        prefill, _ = _step_s(hw, 0.0, 0.0, batch * prompt, prompt)
        ttft = pp * prefill + _pipeline_hop_s(hw, batch * prompt)
        per_stage_batch = max(1.0, batch / pp)
        step, bound = _step_s(hw, per_stage_batch, prompt + out / 2, 0.0, 0.0)
        tpot = pp * step + _pipeline_hop_s(hw, per_stage_batch)
        e2e = ttft + (out - 1) * tpot
        return _Point(ttft, tpot, e2e, batch / e2e, batch, bound)
    budget = _batched_tokens(cfg, hw.gpu)
    chunk = max(budget - c, budget / 2)
    cached = cached_prompt_tokens(prompt, cfg.prefix_cache_hit_rate)
    computed = prompt - cached  # the prompt tokens a request prefills (the rest are found in the prefix cache)
    prefill_steps = math.ceil(computed / chunk)
    decode_steps = (out - 1) / hw.tokens_per_step  # speculation yields tokens_per_step tokens a step
    steps_per_request = prefill_steps + decode_steps
    # Steady state: a request's decode steps carry the decodes of its micro-batch and the prompt tokens of the
    # OTHER requests that start meanwhile (its own prompt is its TTFT). With pp stages the c sequences form pp
    # micro-batches in flight, but one sequence cannot be split: below pp sequences each micro-batch holds
    # one, and every token still crosses all pp stages (pipelining adds latency; it adds throughput only
    # once there are micro-batches to overlap). A request in flight at a mean concurrency under 1 decodes
    # alone (its step holds itself).
    per_stage = max(1.0, c / pp)
    prefill_tokens = max(0.0, per_stage - 1.0) * computed / max(steps_per_request, 1e-9)
    mixed = ENGINE_DEFAULTS[cfg.engine].mixed_prefill
    step, bound = _mixed_step_s(
        hw, per_stage, prompt + out / 2, prefill_tokens, prompt + cached, min(computed, chunk), mixed
    )
    hop = _pipeline_hop_s(hw, per_stage + prefill_tokens)
    tpot = (pp * step + hop) / hw.tokens_per_step
    prefill = _chunked_prefill_s(model, cfg, hw, per_stage, prompt + out / 2, prompt, chunk, cached) * pp + hop
    e2e = prefill + (out - 1) * tpot
    # Each finished request is replaced at once (a closed loop of c): the new prompts queue for the prefill one
    # after another, the queue the simulated TTFT is held to under Poisson load (_held_to_md1): its mean wait,
    # ρD / (2(1 − ρ)) at ρ = (c − 1) / E2E × D (Pollaczek-Khinchine), the c − 1 others' prompts in front of this one.
    rho = min(0.95, max(0.0, per_stage - 1.0) / e2e * prefill) if c > 1 else 0.0
    ttft = prefill + rho * prefill / (2.0 * (1.0 - rho))
    e2e = ttft + (out - 1) * tpot
    # The server's fixed cost per request is latency, not GPU time: the engine completes c / e2e requests/s whatever
    # the time its requests spend in the server before and after (the server overlaps it with the running steps).
    served = _request_overhead_s(cfg)
    return _Point(ttft + served, tpot, e2e + served, c / e2e, c, bound)


def _mixed_step_s(
    hw: _Hardware,
    decodes: float,
    context: float,
    prefill_tokens: float,
    prefill_len: float,
    chunk: float,
    mixed: bool = True,
) -> tuple[float, str]:
    """The mean step of `decodes` sequences decoding while other prompts' tokens, `prefill_tokens` a step on
    average, arrive in whole chunks of `chunk` tokens (the engines schedule a waiting prompt whole, up to the token
    budget, on the next step: vLLM's and SGLang's schedulers, TensorRT-LLM's in-flight batching): a share
    prefill_tokens / chunk of the steps carries a chunk, the rest decode only. The mean of the two steps, not one
    step at the mean load: a step that carries a chunk is compute-bound and one that decodes only is bound by the
    weights' read, so the average of their maxima is longer than the maximum of their averages (the decode's read
    hides the averaged prefill). A step that carries a chunk packs the decodes' tokens and the chunk's into one
    batch of tokens (vLLM V1's unified token budget, SGLang's mixed chunk, TensorRT-LLM's in-flight batching with
    packed inputs), so each linear layer runs one GEMM over all its rows, at the large-M efficiency (`one_gemm`).
    The computed tokens attend to the cached ones before them (`prefill_len`). An engine that does not mix
    (`mixed` False: SGLang, `enable_mixed_chunk` off by default, sglang/srt/server_args.py) runs the chunk as a
    step of its own while the decodes wait: each decode step then follows, on average, `share` prefill steps."""
    if prefill_tokens <= 0.0 or prefill_tokens >= chunk:
        return _step_s(hw, decodes, context, prefill_tokens, prefill_len, chunk)
    share = prefill_tokens / chunk
    decode_only, bound = _step_s(hw, decodes, context, 0.0, 0.0)
    if not mixed:
        prefill_only, _ = _step_s(hw, 0.0, 0.0, chunk, prefill_len)
        return decode_only + share * prefill_only, bound
    with_chunk, bound = _step_s(hw, decodes, context, chunk, prefill_len, one_gemm=True)
    return share * with_chunk + (1.0 - share) * decode_only, bound


def _chunked_prefill_s(
    model: ModelSpec,
    cfg: ServingConfig,
    hw: _Hardware,
    decodes: float,
    context: float,
    prompt: int,
    chunk: float,
    cached: int = 0,
) -> float:
    """A prompt's prefill in chunks, each sharing a step with the running decodes; chunk k attends to the
    offset + its own causal half. The first `cached` tokens are found in the prefix cache: prefilling starts
    after them. Queueing before admission is not included."""
    chunk = max(1, int(chunk))
    steps = math.ceil((prompt - cached) / chunk)
    if steps > 64:  # long prompts in small chunks: the average chunk stands for all of them
        step, _ = _step_s(hw, decodes, context, chunk, prompt + cached)
        return steps * step
    total, offset = 0.0, cached
    while offset < prompt:
        size = min(chunk, prompt - offset)
        step, _ = _step_s(hw, decodes, context, size, 2 * offset + size)
        total += step
        offset += size
    return total


def _queued(point: _Point, clients: int, slots: int) -> _Point:
    """The operating point of `clients` in a closed loop on a replica that runs `slots` of them at once: the replica
    completes X = slots / C requests/s, C a slot's cycle (the engine's time for one request: the server's fixed cost
    per request holds no slot), so by Little's law the others wait (clients − slots) / X = (clients / slots − 1) × C
    for a slot before their prefill starts (TTFT and E2E both carry the wait)."""
    if clients <= slots:
        return point
    wait = (clients - slots) / point.requests_per_s
    return replace(point, ttft_s=point.ttft_s + wait, e2e_s=point.e2e_s + wait)


def _overlap_loop(cfg: ServingConfig) -> bool:
    """Whether the engine's scheduler launches a step before processing the last one's output (engines.json
    `overlap_schedule`, for the release the request states). SGLang turns its overlap loop off with speculative
    decoding: python/sglang/srt/server_args.py `_handle_speculative_decoding` (v0.5.6): "Overlap scheduler is disabled
    because of using eagle3 or standalone speculative decoding" (EAGLE, EAGLE3 and NEXTN, which shares EAGLE's code,
    and STANDALONE, unless SGLANG_ENABLE_SPEC_V2 is set) and "The overlap scheduler and mixed chunked prefill are
    disabled because of using ngram speculative decoding"."""
    if cfg.engine == "sglang" and cfg.speculative is not None:
        return False
    return ENGINE_DEFAULTS[cfg.engine].overlap_schedule and not engine_release(cfg.release).no_overlap_schedule


def _replaced(point: _Point, cfg: ServingConfig, hw: _Hardware, clients: int, slots: int) -> _Point:
    """The operating point of a closed loop of `clients` whose finished requests are replaced by their clients: the
    replacement waits for the steps already under way when it reaches the engine, none of which carries its prompt.

    A client sends its next request once it has read the last token of the one before (vllm bench serve
    --max-concurrency and AIPerf's concurrency mode hold a slot until the response ends), so the replacement arrives
    after the step that finished its predecessor, while the next one runs: the path out to the client and back in
    (detokenising, HTTP, the chat template, tokenising) is far longer than the engine's turn from one step to the next.
    vLLM's engine core takes new requests only between steps (vllm/v1/engine/core.py: `_process_input_queue` before
    each `step`, which schedules, runs the model and processes its output), so the prompt waits for the running step
    and is scheduled in the one after: one step. SGLang's overlap loop (scheduler.py `event_loop_overlap`) and
    TensorRT-LLM's PyTorch executor launch step N + 1 before processing step N's output, so when the predecessor's
    last token leaves, N + 1 already runs; the next turn of the loop launches N + 2 before the replacement arrives,
    and the turn after it receives the replacement and queues its prefill behind N + 2: two steps. One client alone
    finds the replica idle (nothing runs), and a request that waited for a slot (clients over slots) is already
    queued when the slot frees: it waits only for the step the overlap loop launched ahead. Static batches are not
    replaced, nor is a replica asked for its capacity (no concurrency: an offline run, whose requests are all queued
    already). The simulation of Poisson arrivals (serving_sim) already holds each arrival to the next step boundary,
    and one more under the overlap loop (`Scheduler.lookahead`)."""
    if cfg.concurrency is None or cfg.batching == "static":  # None: at capacity, queued (offline)
        return point
    overlap = int(_overlap_loop(cfg))
    step = point.tpot_s * hw.tokens_per_step / hw.pp  # a step of the loop: each stage's micro-batch
    if clients <= 1:
        wait = 0.0
    elif clients <= slots:  # the rest of the step under way when the replacement reaches the engine, then the lookahead
        wait = (_residual_step_fraction(_request_overhead_s(cfg), step) + overlap) * step
    else:
        wait = overlap * step
    e2e = point.e2e_s + wait
    # Little's law as the clients see it (each holds one request for its whole end-to-end latency, the server's fixed
    # cost included) while every client has a slot; beyond the slots a request is queued, past the server, when a slot
    # frees, so a slot's cycle is the engine's time for one request and the lookahead's wait
    held = e2e if clients <= slots else _engine_e2e_s(point) + wait
    return replace(point, ttft_s=point.ttft_s + wait, e2e_s=e2e, requests_per_s=point.concurrency / held)


def _residual_step_fraction(served_s: float, step_s: float) -> float:
    """The share of a step still to run when a replacement reaches the engine, `served_s` (the server's fixed cost per
    request: the predecessor's last token out to the client, the replacement back in) after the step that finished its
    predecessor. The steps run back to back meanwhile, so it lands `served_s` into the next one: 1 − served_s / step_s
    of it is left. Once the path is longer than half a step its arrival falls anywhere in a step (the path's time varies
    from request to request by more than the rest of a step), and the mean rest is half a step (the mean residual of a
    uniform phase)."""
    if step_s <= 0.0:
        return 0.0
    return max(1.0 - served_s / step_s, 0.5)


def queue_wait_s(estimate: ServingEstimate, clients: int) -> float:
    """The wait for a KV slot in `estimate`'s TTFT when `clients` exceed its max_concurrency (0 otherwise)."""
    slots = estimate.max_concurrency
    if slots < 1 or clients <= slots:
        return 0.0
    return (clients - slots) / (estimate.requests_per_s / estimate.replicas)  # Little's law, as `_queued`


def _meets(point: _Point, cfg: ServingConfig) -> bool:
    if cfg.slo_ttft_ms is not None and point.ttft_s * 1e3 > cfg.slo_ttft_ms:
        return False
    return not (cfg.slo_tpot_ms is not None and point.tpot_s * 1e3 > cfg.slo_tpot_ms)


def _has_slo(cfg: ServingConfig) -> bool:
    return cfg.slo_ttft_ms is not None or cfg.slo_tpot_ms is not None


def _best_within_slo(model: ModelSpec, cfg: ServingConfig, hw: _Hardware, limit: int) -> _Point | None:
    """The highest-throughput concurrency (≤ limit) that meets the SLO; latency grows with concurrency."""
    top = _operating_point(model, cfg, hw, limit)
    if _meets(top, cfg):
        return top
    low = _operating_point(model, cfg, hw, 1)
    if not _meets(low, cfg):
        return None
    lo, hi = 1, limit
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _meets(_operating_point(model, cfg, hw, mid), cfg):
            lo = mid
        else:
            hi = mid
    return _operating_point(model, cfg, hw, lo)


def _engine_e2e_s(point: _Point) -> float:
    """The time a request of `point` holds its sequence slot in the engine (the server's fixed cost left out)."""
    return point.concurrency / point.requests_per_s


def _solve_load(model: ModelSpec, cfg: ServingConfig, hw: _Hardware, per_replica_rps: float, limit: int) -> _Point:
    """The concurrency at which one replica completes `per_replica_rps` requests/s (Little's law: C = λ·E2E(C));
    capped at limit. E2E grows with C more slowly than C itself below saturation, so the fixed-point
    iteration from C = λ·E2E(0) climbs monotonically to the solution; bisection finishes slow cases."""
    top = _operating_point(model, cfg, hw, limit)
    if top.requests_per_s <= per_replica_rps:
        return top
    c = per_replica_rps * _engine_e2e_s(_operating_point(model, cfg, hw, 1e-6))
    for _ in range(40):
        following = per_replica_rps * _engine_e2e_s(_operating_point(model, cfg, hw, c))
        if abs(following - c) <= 1e-7 * max(c, 1e-6):
            return _operating_point(model, cfg, hw, following)
        c = following
    lo, hi = c, float(limit)
    for _ in range(40):
        mid = (lo + hi) / 2
        if _operating_point(model, cfg, hw, mid).requests_per_s < per_replica_rps:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-7 * hi:
            break
    return _operating_point(model, cfg, hw, hi)


def _capacity_point(model: ModelSpec, cfg: ServingConfig, hw: _Hardware, limit: int) -> _Point | None:
    return _best_within_slo(model, cfg, hw, limit) if _has_slo(cfg) else _operating_point(model, cfg, hw, limit)


def _capacity(model: ModelSpec, cfg: ServingConfig, hw: _Hardware, limit: int) -> float:
    point = _capacity_point(model, cfg, hw, limit)
    return point.requests_per_s if point else 0.0


# --- latency under load (app/estimator/serving_sim.py) -------------------------------------------------------


def _lengths(cfg: ServingConfig, kv_tokens: int) -> tuple[Lengths, Lengths]:
    """Prompt and output lengths: constant at the means, or lognormal through the stated 95th percentiles, a
    drawn length no longer than max_model_len or the replica's KV cache (an engine refuses a longer request)."""
    cap = min(cfg.max_model_len or kv_tokens, kv_tokens)
    prompts = Lengths(cfg.input_tokens, cfg.input_tokens_p95, max(cap, cfg.input_tokens))
    return prompts, Lengths(cfg.output_tokens, cfg.output_tokens_p95, max(cap, cfg.output_tokens))


def _sim_step(hw: _Hardware) -> StepTime:
    """The simulator's step: `decodes` sequences holding `kv` tokens decode one token each and `prefill` prompt
    tokens whose chunks attend `span` keys in all are prefilled. With pp stages the decoding sequences form pp
    micro-batches and every token crosses all stages (as in _operating_point); a prompt's chunk is not split
    among the micro-batches (a request is in one micro-batch at a time, as vLLM V1 schedules with pipeline
    parallelism), so the step that prefills it takes pp stage times of the whole chunk: the latency of a prompt
    is that of every stage in turn, whatever the pipeline's throughput."""
    if hw.pp == 1 and not hw.experts and hw.verify_width == 1:
        return _dense_step(hw)
    return _stage_step(hw)


def _sim_decode(hw: _Hardware) -> DecodeTime | None:
    """The simulator's decode-only step, where the step model has one apart (a dense model on one stage)."""
    if hw.pp == 1 and not hw.experts and hw.verify_width == 1:
        return _dense_decode(hw)
    return None


def _stage_step(hw: _Hardware) -> StepTime:
    """The simulator's step from `_step_s(hw, decodes / pp, kv / decodes, prefill, 2 span / prefill)[0]` (whole
    prompt chunks: of the two expert counts _step_s weighs by the chunk's share, 1 or 0 here, the one weighed 1), its
    constants read once: the same terms in the same order, so the same floats; then pp stages and their hops
    (`_pipeline_hop_s`). The experts a step's tokens touch are kept by token count: a run asks for a few hundred counts
    thousands of times."""
    weights_static, expert_bytes, experts, top_k = hw.weight_bytes_static, hw.expert_bytes, hw.experts, hw.top_k
    width, reads, kv_token, hbm_weights, hbm_kv = hw.verify_width, hw.kv_reads, hw.kv_token, hw.hbm_weights, hw.hbm_kv
    flops, attention = hw.dense_flops_per_token + hw.expert_flops_per_token, hw.attention_coef
    fixed, per_seq, moe_fixed, occupancy = hw.overhead_s, hw.overhead_per_seq_s, hw.moe_fixed_s, hw.occupancy
    comm_fixed, comm_per_token = (hw.allreduce_fixed_s, hw.allreduce_per_token_s) if hw.tp > 1 else (0.0, 0.0)
    pp, hop_fixed, hop_per_token, draft_flops = hw.pp, hw.hop_fixed_s, hw.hop_per_token_s, hw.draft_flops_per_token
    touched: dict[float, float] = {}  # tokens -> experts they touch

    def step(decodes: int, kv: float, prefill: int, span: float) -> float:
        context = kv / decodes if decodes else 0.0
        prefill_len = 2.0 * span / prefill if prefill else 0.0
        seqs = decodes / pp if pp > 1 else decodes
        verify = seqs * width
        tokens = verify + prefill
        weights = weights_static
        if experts:
            rows = 1.0 if tokens < 1.0 else tokens  # max(tokens, 1.0), without the call
            found = touched.get(rows)
            if found is None:
                found = touched[rows] = expected_experts_touched(experts, top_k, rows)
            weights += found * expert_bytes
        memory_s = weights / hbm_weights + (seqs * context * reads + prefill) * kv_token / hbm_kv
        efficiency = STEP_COMPUTE_EFFICIENCY
        if prefill:
            share = verify / tokens
            efficiency = share * efficiency + (1 - share) * (PREFILL_COMPUTE_EFFICIENCY * occupancy(tokens))
        compute_s = flops * tokens / efficiency
        compute_s += attention * (verify * context + prefill * prefill_len / 2)
        compute_s += draft_flops * prefill / PREFILL_COMPUTE_EFFICIENCY
        overhead = fixed + per_seq * seqs + moe_fixed
        draft = _draft_s(hw, seqs, seqs * context) if hw.draft_forwards else 0.0
        bound_s = compute_s if compute_s > memory_s else memory_s  # max(memory_s, compute_s)
        seconds = bound_s + overhead + (comm_fixed + comm_per_token * tokens) + draft
        return seconds if pp == 1 else pp * seconds + (hop_fixed + hop_per_token * (seqs + prefill))

    return step


def _dense_step(hw: _Hardware) -> StepTime:
    """_step_s of a dense model on one stage, its constants read once (the simulation's inner loop): the same sum
    of the weights and KV bytes, the GEMM and attention FLOPs at the decode/prefill mix's efficiency, the
    overheads and the all-reduces."""
    weights_s, kv_s, reads, flops, decode_eff, attention, fixed, per_seq, per_token = _dense_terms(hw)
    prefill_eff = PREFILL_COMPUTE_EFFICIENCY
    by_rows, occupancy = hw.occupancy_by_rows, hw.occupancy

    def step(decodes: int, kv: float, prefill: int, span: float) -> float:
        tokens = decodes + prefill
        memory = weights_s + (kv * reads + prefill) * kv_s
        if prefill:
            share = by_rows.get(-(-tokens // TILE_ROWS)) or occupancy(tokens)
            efficiency = (decodes * decode_eff + prefill * prefill_eff * share) / tokens
        else:
            efficiency = decode_eff
        compute = flops * tokens / efficiency + attention * (kv + span)
        return (compute if compute > memory else memory) + fixed + per_seq * decodes + per_token * tokens

    return step


def _dense_decode(hw: _Hardware) -> DecodeTime:
    """`_dense_step(hw)(decodes, kv, 0, 0.0)`, to the last bit: its terms without the prompt's (adding an integer 0
    or 0.0 leaves a float as it is)."""
    # memory = weights_s + kv·reads·kv_s, compute = flops·decodes / decode_eff + attention·kv (inlined by the run)
    return DenseDecode(*_dense_terms(hw))


def _dense_terms(hw: _Hardware) -> tuple[float, float, float, float, float, float, float, float, float]:
    """A dense step's constants, read once, in DenseDecode's order: the weights' and a KV token's seconds, the KV
    reads per token, the FLOPs per token, the decode efficiency, the attention coefficient, the fixed seconds (the
    overhead and, under TP, the all-reduces' fixed part), the seconds per sequence and per token (TP all-reduces)."""
    tp = hw.tp > 1
    return (
        hw.weight_bytes_static / hw.hbm_weights,
        hw.kv_token / hw.hbm_kv,
        hw.kv_reads,
        hw.dense_flops_per_token + hw.expert_flops_per_token,
        STEP_COMPUTE_EFFICIENCY,
        hw.attention_coef,
        hw.overhead_s + (hw.allreduce_fixed_s if tp else 0.0),
        hw.overhead_per_seq_s,
        hw.allreduce_per_token_s if tp else 0.0,
    )


def _scheduler(model: ModelSpec, cfg: ServingConfig, hw: _Hardware) -> Scheduler:
    return Scheduler(
        token_budget=_batched_tokens(cfg, hw.gpu),
        max_seqs=_max_num_seqs(cfg, hw.gpu),
        kv_tokens=kv_cache_tokens(model, cfg, hw.gpu, hw.tp, hw.pp),
        block=ENGINE_DEFAULTS[cfg.engine].block_size,
        mixed=ENGINE_DEFAULTS[cfg.engine].mixed_prefill,
        lookahead=int(_overlap_loop(cfg)),
    )


def _isolated_ttft_s(model: ModelSpec, cfg: ServingConfig, hw: _Hardware) -> float:
    """One request on an idle replica: its prompt's chunks with nothing else running (kept on `hw`)."""
    if hw.isolated_s is None:
        hw.isolated_s = _new_isolated_ttft_s(model, cfg, hw)
    return hw.isolated_s


def _new_isolated_ttft_s(model: ModelSpec, cfg: ServingConfig, hw: _Hardware) -> float:
    prompt = cfg.input_tokens
    cached = cached_prompt_tokens(prompt, cfg.prefix_cache_hit_rate)
    prefill = _chunked_prefill_s(model, cfg, hw, 0.0, 0.0, prompt, _batched_tokens(cfg, hw.gpu), cached)
    return prefill * hw.pp + _pipeline_hop_s(hw, prompt / hw.pp) + _request_overhead_s(cfg)


@dataclass(frozen=True, slots=True)
class _Load:
    """One tp × pp replica under a load: what the simulation and the closed forms need of it."""

    model: ModelSpec
    cfg: ServingConfig
    hw: _Hardware
    top_rps: float  # requests/s one replica completes at most (all it holds in flight)
    isolated_s: float
    key: tuple[object, ...] = ()  # what a simulation depends on besides the rate, for the memo
    limit: int = 1  # the sequences one replica holds (max_concurrency)

    @property
    def service_s(self) -> float:
        """The service time of the M/D/1 queue in front of a prompt: its prefill on an idle replica (the engine's fixed
        per-request cost left out: it holds no GPU), and a prefill pool's KV transfer after it."""
        return self.isolated_s - _request_overhead_s(self.cfg) + self.cfg.kv_transfer_s

    def utilization(self, rate: float, latency: LoadLatency) -> float:
        """The busier of the replica's resources at `rate`: compute (rate ÷ the most it completes), the prompts'
        share of its time (rate × service_s, the M/D/1 queue's load) and the KV cache's sequence slots (Little's
        law: rate × the simulated time a request holds its KV ÷ the slots), so a replica whose queue grows for want of
        KV cache reads at least 1."""
        return max(rate / self.top_rps, rate * self.service_s, rate * latency.held_s / self.limit)


def _load(model: ModelSpec, cfg: ServingConfig, hw: _Hardware, limit: int) -> _Load:
    top = _operating_point(model, cfg, hw, limit).requests_per_s
    key = (model, replace(cfg, requests_per_s=None), _where(hw.cluster, hw.tp, hw.pp))
    return _Load(model, cfg, hw, top, _isolated_ttft_s(model, cfg, hw), key, limit)


@dataclass(slots=True)
class _Memo:
    """What one answer computes once: simulations by (replica, traffic, engine, seed, rate), and replicas' constants
    (with their memos) by (model, traffic, servers, split). A search and the estimates of the options it shows ask for
    the same runs and points, and each is a pure function of these."""

    runs: dict[tuple[object, ...], LoadLatency] = field(default_factory=dict)
    hardware: dict[tuple[object, ...], _Hardware] = field(default_factory=dict)


# Scoped to the answer (`simulations`), so every request starts cold.
_MEMO: ContextVar[_Memo | None] = ContextVar("serving_memo", default=None)


@contextmanager
def simulations() -> Iterator[None]:
    """Share the simulations and replica constants computed inside the block (nested blocks share the outer one's)."""
    if _MEMO.get() is not None:
        yield
        return
    token = _MEMO.set(_Memo())
    try:
        yield
    finally:
        _MEMO.reset(token)


def _simulate(load: _Load, rate: float) -> LoadLatency:
    """Simulated latencies of one replica at `rate` requests/s (reused within a `simulations` block)."""
    memo, key = _MEMO.get(), (*load.key, rate)
    found = memo.runs.get(key) if memo is not None else None
    if found is None:
        found = _run_simulation(load, rate)
        if memo is not None:
            memo.runs[key] = found
    return found


def _run_simulation(load: _Load, rate: float) -> LoadLatency:
    scheduler = _scheduler(load.model, load.cfg, load.hw)
    prompts, outputs = _lengths(load.cfg, scheduler.kv_tokens)
    latency = simulate(
        _sim_step(load.hw), scheduler, rate, prompts, outputs,
        seed=load.cfg.seed, per_request_s=_request_overhead_s(load.cfg),
        cached_share=load.cfg.prefix_cache_hit_rate, tokens_per_step=load.hw.tokens_per_step,
        decode_time=_sim_decode(load.hw),
    )  # fmt: skip
    latency = _held_to_md1(latency, load, rate)
    # beyond what the replica completes at most, or its KV slots (or prompts) loaded to 1 or more: the queue grows,
    # whatever a finite run's queue at its last arrival read (`_Load.utilization`)
    if not latency.saturated and (rate >= load.top_rps or load.utilization(rate, latency) >= 1):
        return replace(latency, saturated=True)
    return latency


def _held_to_md1(latency: LoadLatency, load: _Load, rate: float) -> LoadLatency:
    """The simulated latencies with each TTFT percentile at least the M/D/1 queue's on the replica's service time
    (`_Load.service_s`) at `rate`, and each end-to-end percentile later by as much as its TTFT's was raised.

    A run of a thousand measured requests samples the tail widely at high load (an M/D/1 queue of 0.33 s prompts at
    ρ = 0.83: over 200 seeds the p90 of such runs lies between 1.66 and 4.79 s for nine in ten, its exact value
    2.40 s), and a replica count searched on one run keeps whichever its draw lets through. A replica's prompts
    queue for its prefill as an M/D/1 queue's customers do (one after another, each about its idle-replica time),
    so that queue's percentile is the floor; prompts of lognormal lengths about the same mean queue longer still
    (M/G/1: the Pollaczek-Khinchine mean grows with the service time's variance), which the simulation reads above
    it. Saturated where the prompts alone keep the replica busy (ρ ≥ 1)."""
    service = load.service_s
    if rate * service >= 1:
        return latency if latency.saturated else replace(latency, saturated=True)
    floor = md1_ttft_floor(rate, service, load.isolated_s - service)
    ttft = Quantiles(*(max(latency.ttft.at(q), floor.at(q)) for q in PERCENTILES))
    if ttft == latency.ttft:
        return latency
    later = [latency.e2e.at(q) + ttft.at(q) - latency.ttft.at(q) for q in PERCENTILES]
    return replace(latency, ttft=ttft, e2e=Quantiles(*itertools.accumulate(later, max)))


def offline_run_output_tokens_per_s(
    model: ModelSpec, cfg: ServingConfig, cluster: Cluster, tp: int, requests: int, pp: int = 1
) -> float:
    """Output tokens/s one replica reports over a finite offline run of `requests` requests queued at once (the
    ramp-up and the drain counted, as the engines' benchmarks count them: serving_sim.finite_run_output_rate)."""
    hw = _hardware(model, cfg, cluster, tp, pp)
    scheduler = _scheduler(model, cfg, hw)
    prompts, outputs = _lengths(cfg, scheduler.kv_tokens)
    return finite_run_output_rate(_sim_step(hw), scheduler, prompts, outputs, requests, seed=cfg.seed)


def meets_at_peak(latency: LoadLatency, cfg: ServingConfig) -> bool:
    """The SLO judged on the simulated percentile at the peak; a saturated replica never meets it."""
    if latency.saturated:
        return False
    q = cfg.slo_percentile
    if cfg.slo_ttft_ms is not None and latency.ttft.at(q) * 1e3 > cfg.slo_ttft_ms:
        return False
    return not (cfg.slo_tpot_ms is not None and latency.tpot.at(q) * 1e3 > cfg.slo_tpot_ms)


def _steer(load: _Load, peak_rps: float, start: int) -> int | None:
    """The fewest replicas (≥ start) the closed forms allow at the peak, each replica below saturation and within
    the targets at the SLO's percentile: TTFT, the prefill of an idle replica plus the M/D/1-class queue before
    it (queue_wait_estimate); TPOT, the decode step with the prompts that arrive meanwhile prefilled in its steps
    (interrupted_tpot_estimate). None: even an idle replica misses the TTFT target."""
    cfg = load.cfg
    if cfg.slo_ttft_ms is not None and load.isolated_s * 1e3 > cfg.slo_ttft_ms:
        return None
    low = max(start, math.floor(peak_rps / load.top_rps) + 1 if load.top_rps > 0 else start)
    if _steer_meets(load, peak_rps / low):
        return low
    step, failed = 1, low
    while not _steer_meets(load, peak_rps / (failed + step)):
        failed, step = failed + step, step * 2
        if failed > 1_000_000:
            return None
    high = failed + step
    while high - failed > 1:
        mid = (failed + high) // 2
        if _steer_meets(load, peak_rps / mid):
            high = mid
        else:
            failed = mid
    return high


def _steer_meets(load: _Load, rate: float) -> bool:
    """The closed forms' verdict for one replica at `rate` requests/s."""
    cfg, hw = load.cfg, load.hw
    if rate >= load.top_rps:
        return False
    level = PERCENTILE_LEVELS[cfg.slo_percentile]
    prefill = load.isolated_s - _request_overhead_s(cfg)  # the queue's service: the server's fixed cost holds no GPU
    wait = queue_wait_estimate(rate, prefill, level)
    if cfg.slo_ttft_ms is not None and (load.isolated_s + wait) * 1e3 > cfg.slo_ttft_ms:
        return False
    if cfg.slo_tpot_ms is None:
        return True
    out = cfg.output_tokens
    alone = _step_s(hw, 1.0, cfg.input_tokens + out / 2, 0.0, 0.0)[0] / hw.tokens_per_step
    in_flight = max(1.0, rate * (prefill + (out - 1) * alone * hw.pp))  # Little's law in the engine, idle latencies
    step = hw.pp * _step_s(hw, max(1.0, in_flight / hw.pp), cfg.input_tokens + out / 2, 0.0, 0.0)[0]
    step /= hw.tokens_per_step
    return interrupted_tpot_estimate(step, prefill, rate, out, level) * 1e3 <= cfg.slo_tpot_ms


def steer_replicas(
    model: ModelSpec, cfg: ServingConfig, cluster: Cluster, *, tp: int = 1, pp: int = 1, start: int = 1
) -> int | None:
    """The fewest replicas (≥ start) the closed forms allow at the peak (no simulation); None when none does."""
    limit = max_concurrency(model, cfg, cluster.gpu, tp, pp)
    if cfg.requests_per_s is None or limit < 1:
        return None
    load = _load(model, cfg, _hardware(model, cfg, cluster, tp, pp), limit)
    return _steer(load, cfg.requests_per_s * cfg.peak_factor, start)


def peak_latency(
    model: ModelSpec, cfg: ServingConfig, cluster: Cluster, *, tp: int = 1, pp: int = 1, replicas: int = 1
) -> LoadLatency | None:
    """The simulated latency of one of `replicas` replicas at the peak (requests_per_s × peak_factor shared among
    them); None when no sequence fits or no load is given."""
    limit = max_concurrency(model, cfg, cluster.gpu, tp, pp)
    if cfg.requests_per_s is None or limit < 1:
        return None
    load = _load(model, cfg, _hardware(model, cfg, cluster, tp, pp), limit)
    return _simulate(load, cfg.requests_per_s * cfg.peak_factor / replicas)


def peak_latency_at(
    model: ModelSpec, cfg: ServingConfig, cluster: Cluster, *, tp: int = 1, pp: int = 1, replicas: int = 1
) -> Callable[[float], LoadLatency] | None:
    """`peak_latency` with the peak scaled by a factor (the replica's quantities computed once, for several factors);
    None when no sequence fits or no load is given."""
    limit = max_concurrency(model, cfg, cluster.gpu, tp, pp)
    if cfg.requests_per_s is None or limit < 1:
        return None
    load, peak = _load(model, cfg, _hardware(model, cfg, cluster, tp, pp), limit), cfg.requests_per_s * cfg.peak_factor
    return lambda factor: _simulate(load, peak * factor / replicas)


# How far below the closed forms' replica count the simulation may still meet the SLO: their exponential queue
# tail reads the simulated p90 high (Llama-3.1-70B RAG, 8,000 / 300 tokens at 5 requests/s, TP 8 on A100s: the
# closed forms ask 17 replicas, the simulation meets the SLO with 15), so counts down to 0.8 of theirs are
# simulated (a smaller configuration, or the most replicas an offer rents), and none below.
CLOSED_FORM_SLACK: Final = 0.8


def replicas_for_slo(
    model: ModelSpec, cfg: ServingConfig, cluster: Cluster, *, tp: int = 1, pp: int = 1, start: int = 1,
    most: int = 4096, floor: int = 1,
) -> tuple[int, LoadLatency] | None:  # fmt: skip
    """The fewest replicas (at most `most`) whose simulated latency at the peak (requests_per_s × peak_factor,
    shared among them) meets the SLO at its percentile, with that latency; None when no count up to `most` does.
    The search starts at `start` (a guess, e.g. the steady state's count) or the closed forms' count if larger,
    and steps down (not below saturation, nor below `floor`: fewer would not rent less) or up from there. The
    simulation decides."""
    if cfg.requests_per_s is None:
        raise EstimatorError.of("serving_rate_needed", field="serving.requests_per_s")
    limit = max_concurrency(model, cfg, cluster.gpu, tp, pp)
    if limit < 1:
        return None
    hw = _hardware(model, cfg, cluster, tp, pp)
    load = _load(model, cfg, hw, limit)
    peak = cfg.requests_per_s * cfg.peak_factor
    low = _steer_within(load, peak, start, most)
    if low is None:
        return None
    tried: dict[int, LoadLatency] = {}

    def meets(replicas: int) -> bool:
        tried[replicas] = _simulate(load, peak / replicas)
        return meets_at_peak(tried[replicas], cfg)

    guess = max(low, start)
    if meets(guess):  # the fewest that meet lie at or below the guess: step down, as far as saturation allows
        unsaturated = math.floor(peak / load.top_rps) + 1 if load.top_rps > 0 else 1
        return _fewest_below(max(1, unsaturated, min(floor, guess)), guess, meets, tried)
    failed = guess
    if cfg.slo_ttft_ms is not None:
        # the closed form again, on the prefill time that reproduces the simulated wait (decodes share the
        # prefill's steps, so the simulated service is longer than an idle replica's)
        fitted = replace(load, isolated_s=_fitted_service(load, peak / guess, tried[guess]))
        jump = _steer(fitted, peak, guess + 1)
        if jump is not None and jump <= most:
            if meets(jump):
                return _fewest(guess, jump, meets, tried)
            failed = jump
    # steps that double until one meets, then the interval halved back to the fewest that meet
    step = max(1, failed // 8)
    while True:
        high = min(most, failed + step)
        if meets(high):
            break
        if high == most:
            return None
        failed, step = high, step * 2
    return _fewest(failed, high, meets, tried)


def _steer_within(load: _Load, peak: float, start: int, most: int) -> int | None:
    """The closed forms' count (≥ start), or `most` where theirs exceeds it by no more than CLOSED_FORM_SLACK
    allows (they read the simulated tail high: the simulation decides); None beyond that."""
    low = _steer(load, peak, start)
    if low is not None and low > most >= CLOSED_FORM_SLACK * low:
        return most
    return None if low is None or low > most else low


def _fewest_below(
    low: int, high: int, meets: Callable[[int], bool], tried: dict[int, LoadLatency]
) -> tuple[int, LoadLatency]:
    """The fewest replicas in [low, high] that meet, high meeting: steps down that double until one fails (or
    low is reached), then bisection."""
    step = max(1, high // 8)
    while high > low:
        probe = max(low, high - step)
        if not meets(probe):
            return _fewest(probe, high, meets, tried)
        high, step = probe, step * 2
    return high, tried[high]


def _fewest(
    failed: int, high: int, meets: Callable[[int], bool], tried: dict[int, LoadLatency]
) -> tuple[int, LoadLatency]:
    """The fewest replicas in (failed, high] that meet, high meeting (bisection)."""
    while high - failed > 1:
        mid = (failed + high) // 2
        if meets(mid):
            high = mid
        else:
            failed = mid
    return high, tried[high]


def _fitted_service(load: _Load, rate: float, latency: LoadLatency) -> float:
    """The idle-replica TTFT (`_Load.isolated_s`) whose prefill as the service time makes the closed form's TTFT at
    the SLO's percentile the simulated one (the server's fixed cost per request is latency, not service)."""
    level = PERCENTILE_LEVELS[load.cfg.slo_percentile]
    ttft = latency.ttft.at(load.cfg.slo_percentile)
    served = _request_overhead_s(load.cfg)
    low, high = load.isolated_s - served, 1.0 / rate  # the closed form is infinite at ρ = 1
    if latency.saturated or ttft <= low + served:
        return (high if latency.saturated else low) + served
    for _ in range(40):
        mid = (low + high) / 2
        if mid + served + queue_wait_estimate(rate, mid, level) < ttft:
            low = mid
        else:
            high = mid
    return low + served


def replica_capacity(
    model: ModelSpec, cfg: ServingConfig, cluster: Cluster, *, tp: int = 1, pp: int = 1
) -> tuple[float, float]:
    """(requests/s, concurrency) of one tp × pp replica at the highest concurrency that meets the SLO (all it
    holds without an SLO); (0, 0) when not even one sequence fits or meets it."""
    validate_config(cfg)
    check_draft(model, cfg.speculative)
    limit = max_concurrency(model, cfg, cluster.gpu, tp, pp)
    if limit < 1:
        return 0.0, 0.0
    point = _capacity_point(model, cfg, _hardware(model, cfg, cluster, tp, pp), limit)
    return (point.requests_per_s, point.concurrency) if point else (0.0, 0.0)


def validate_config(cfg: ServingConfig) -> None:
    """Field-named errors for inputs no engine accepts."""
    if cfg.input_tokens < 1:
        raise EstimatorError.of("at_least_one", field="serving.input_tokens", name="input_tokens")
    if cfg.output_tokens < 1:
        raise EstimatorError.of("at_least_one", field="serving.output_tokens", name="output_tokens")
    require_choice(cfg.engine, ENGINES, "serving.engine")
    require_choice(cfg.batching, BATCHINGS, "serving.batching")
    require_choice(cfg.weight_format, WEIGHT_FORMATS, "weights")
    require_choice(cfg.kv_format, SERVING_PRECISIONS, "kv_cache_precision")
    if cfg.concurrency is not None and cfg.concurrency < 1:
        raise EstimatorError.of("at_least_one", field="serving.concurrency", name="concurrency")
    if cfg.requests_per_s is not None and not cfg.requests_per_s > 0:
        raise EstimatorError.of("serving_rate_positive", field="serving.requests_per_s")
    if cfg.gpu_memory_utilization is not None and not 0.05 <= cfg.gpu_memory_utilization <= 0.99:
        raise EstimatorError.of("serving_memory_utilization", field="serving.gpu_memory_utilization")
    _validate_levers(cfg)
    if cfg.batching == "static" and cfg.requests_per_s is not None:
        # the load simulation runs the engines' continuous batching, and every launch here starts a continuous
        # batching server: static batching is sized at a stated concurrency (a fixed batch run offline) only
        raise EstimatorError.of("serving_static_rate", field="serving.batching")
    if cfg.max_model_len is not None and cfg.max_model_len < cfg.input_tokens + cfg.output_tokens:
        raise EstimatorError.of(
            "serving_max_model_len",
            field="serving.max_model_len",
            length=cfg.max_model_len,
            total=cfg.input_tokens + cfg.output_tokens,
        )


def _validate_levers(cfg: ServingConfig) -> None:
    """Field-named errors for a prefix-cache hit rate or a speculation no engine here runs as asked
    (serving_levers): modelled on continuous batching with the current engine releases only."""
    if not 0.0 <= cfg.prefix_cache_hit_rate <= 1.0:
        raise EstimatorError.of("serving_prefix_rate", field="serving.prefix_cache_hit_rate")
    lever = "serving.prefix_cache_hit_rate" if cfg.prefix_cache_hit_rate > 0 else None
    if cfg.prefix_cache_hit_rate > 0 and cfg.engine not in PREFIX_CACHING_ENGINES:
        raise EstimatorError.of("serving_prefix_engine", field="serving.prefix_cache_hit_rate", engine=cfg.engine)
    spec = cfg.speculative
    if spec is not None:
        lever = lever or "serving.speculative"
        require_choice(spec.method, ENGINE_SPECULATION[cfg.engine], "serving.speculative.method")
        if not 1 <= spec.num_speculative_tokens <= MAX_SPECULATIVE_TOKENS:
            raise EstimatorError.of(
                "serving_speculative_tokens",
                field="serving.speculative.num_speculative_tokens",
                most=MAX_SPECULATIVE_TOKENS,
            )
        if not 0.0 <= spec.acceptance_rate < 1.0:  # at 1 every draft is accepted: an unbounded speed-up
            raise EstimatorError.of("serving_acceptance_rate", field="serving.speculative.acceptance_rate")
        if spec.method == "draft_model" and spec.draft is None:
            raise EstimatorError.of("serving_draft_needed", field="serving.speculative.draft_model")
    if lever is not None and (cfg.batching == "static" or cfg.release is not None or cfg.engine_overhead):
        raise EstimatorError.of("serving_levers_continuous", field=lever)


# What a GPU/engine lacks to run the request's formats (`KernelGap.gap`), in English; the API's rejections
# word the same gaps in Chinese too (app/messages.py KERNELS reads this table as its English).
KERNEL_GAPS: Final[dict[str, str]] = {
    "fp8_math": "{gpu} has no FP8 tensor cores; use bf16 or fp16 math",
    "fp8_kv_volta": "{gpu} has no FP8 KV-cache kernels; use fp16",
    "weights_volta": "{engine} has no {weight_format} kernels for {gpu} (compute capability 7.0)",
    "fp8_weights": "{engine} runs FP8 weights only on GPUs with FP8 tensor cores",
    "trt_fp8_kv": "trt-llm's FP8 KV cache needs FP8 tensor cores (SM89+); {gpu} has none",
}


@dataclass(frozen=True, slots=True)
class KernelGap:
    """The request field whose format the GPU/engine cannot run, the gap (a KERNEL_GAPS key) and its figures."""

    field: str
    gap: str
    params: dict[str, str]

    @property
    def text(self) -> str:
        return KERNEL_GAPS[self.gap].format(**self.params)


def kernel_support(gpu: GpuSpec, cfg: ServingConfig) -> KernelGap | None:
    """What the GPU/engine lacks to run the formats, else None.

    FP8 weights/KV/math need FP8 tensor cores (Ada, Hopper, Blackwell; vLLM and SGLang fall back to weight-only
    FP8 Marlin on Ampere, so FP8 *weights* are allowed there with 16-bit math). int4/int8 weight-only
    kernels (Marlin, AWQ, GPTQ, TRT-LLM weight-only) need compute capability ≥ 8.0: V100 has none in
    vLLM (docs "Supported hardware" for quantization kernels). SGLang's AWQ/GPTQ run on ≥ 8.0 too.
    """
    name = f"{gpu.id} {gpu.name}".lower()
    volta = "v100" in name
    has_fp8 = bool(gpu.peak_flops.get("fp8"))
    params = {"gpu": gpu.name, "engine": cfg.engine, "weight_format": cfg.weight_format}
    if cfg.precision == "fp8" and not has_fp8:
        return KernelGap("precision", "fp8_math", params)
    if cfg.kv_format == "fp8" and volta:
        return KernelGap("kv_cache_precision", "fp8_kv_volta", params)
    if cfg.weight_format in ("int4", "int8", "fp8") and volta:
        return KernelGap("weights", "weights_volta", params)
    if cfg.weight_format == "fp8" and not has_fp8 and cfg.engine == "trt-llm":
        # vLLM and SGLang run FP8 weights weight-only through FP8 Marlin on SM80+ (app/planner/serving_weight_only.py
        # cites marlin_utils_fp8.py and SGLang's can_auto_enable_marlin_fp8); TensorRT-LLM's FP8 needs SM89+
        return KernelGap("weights", "fp8_weights", params)
    if cfg.kv_format == "fp8" and not has_fp8 and cfg.engine == "trt-llm":
        # TensorRT-LLM docs, features/quantization.html: FP8 recipes (FP8 KV cache included) in its support
        # matrix need SM89+ (Ada, Hopper, Blackwell); Ampere (SM80/86) has INT8 KV cache only
        return KernelGap("kv_cache_precision", "trt_fp8_kv", params)
    return None  # bf16 on a GPU without it (V100) runs as fp16, as the engines' dtype "auto" does


def _no_sequence_note(cfg: ServingConfig, cache_tokens: int, tp: int) -> str:
    """Why not even one sequence runs: no room for a cache at all, or a cache shorter than one sequence."""
    if cache_tokens <= 0:
        return "the weights leave no room for one sequence's KV cache"
    return (
        f"one sequence of {cfg.context_len:,} tokens does not fit: the KV cache holds {cache_tokens:,} tokens at "
        f"TP {tp}; shorten input_tokens + output_tokens (or max_model_len), or use more or larger GPUs"
    )


def check_fits(model: ModelSpec, cfg: ServingConfig, gpu: GpuSpec, tp: int, pp: int) -> None:
    """Raise a field-named EstimatorError, naming both numbers, when a tp × pp replica cannot serve one sequence
    on `gpu`: no kernels for the formats (the kernel's field), the weights leave no KV cache (`hardware`), or
    the cache is shorter than one sequence (`serving.input_tokens`)."""
    unsupported = kernel_support(gpu, cfg)
    if unsupported:
        raise EstimatorError(unsupported.text, field=unsupported.field)
    if max_concurrency(model, cfg, gpu, tp, pp) >= 1:
        return
    cache_tokens = kv_cache_tokens(model, cfg, gpu, tp, pp)
    if cache_tokens > 0:
        raise EstimatorError.of(
            "serving_no_sequence", field="serving.input_tokens", context=cfg.context_len, tokens=cache_tokens, tp=tp
        )
    memory = serving_memory(model, cfg, gpu, tp, pp)
    budget = gpu.memory_gib * _memory_fraction(cfg, tp)
    raise EstimatorError.of(
        "serving_no_kv_room",
        field="hardware",
        model=model.name,
        format=cfg.weight_format,
        weights_gib=memory.weights / GIB,
        tp=tp,
        pp=pp,
        budget_gib=budget,
        engine=cfg.engine,
        gpu=gpu.name,
        gpu_gib=gpu.memory_gib,
    )


def estimate_serving(
    model: ModelSpec,
    cfg: ServingConfig,
    cluster: Cluster,
    *,
    tp: int = 1,
    pp: int = 1,
    replicas: int = 1,
    simulate: bool = True,
    replicas_needed: int | None = None,
) -> ServingEstimate:
    """Latency, throughput, KV capacity and memory of `replicas` independent copies of a tp × pp replica.

    For requests_per_s, with `simulate` (the default), the latencies are those of the scheduler simulation at the
    offered load and at its peak (`latency`; ttft_ms, tpot_ms and e2e_latency_ms are the p50s at the offered
    load), meets_slo is judged at the peak on the SLO's percentile, and replicas_needed is the simulated count
    (or the one given). Without it (the search's candidates), the steady-state operating point alone."""
    validate_config(cfg)
    check_draft(model, cfg.speculative)
    if tp < 1 or pp < 1 or replicas < 1:
        raise EstimatorError.of("serving_plan_degrees", field="plan")
    if model.layers < pp:
        raise EstimatorError.of("serving_pp_layers", field="plan.pp", pp=pp, layers=model.layers)
    gpu = cluster.gpu
    unsupported = kernel_support(gpu, cfg)
    if unsupported:
        raise EstimatorError(unsupported.text, field=unsupported.field)
    hw = _hardware(model, cfg, cluster, tp, pp)
    memory = serving_memory(model, cfg, gpu, tp, pp)
    cache_tokens = kv_cache_tokens(model, cfg, gpu, tp, pp)
    limit = max_concurrency(model, cfg, gpu, tp, pp)
    notes: list[str] = []
    if cfg.context_len > cache_tokens and limit >= 1:
        notes.append(
            f"max_model_len {cfg.context_len} exceeds the {cache_tokens} tokens the KV cache holds: "
            "the engine refuses to start; lower max_model_len or add GPUs"
        )
    gpus_per_replica = tp * pp
    if limit < 1:
        point = None
    elif cfg.requests_per_s is not None:
        point = _solve_load(model, cfg, hw, cfg.requests_per_s / replicas, limit)
    else:
        wanted = cfg.concurrency if cfg.concurrency is not None else limit
        if wanted > limit:
            seqs = _max_num_seqs(cfg, gpu)
            why = (
                f"{cfg.engine}'s max_num_seqs default of {seqs} on {gpu.name}"
                if limit == seqs and not cfg.max_num_seqs
                else "what its KV cache holds at these lengths"
            )
            notes.append(
                f"concurrency {wanted} exceeds the {limit} sequences a replica runs ({why}): {limit} run and the "
                "others wait for a slot before their prefill"
            )
        point = _queued(
            _replaced(_operating_point(model, cfg, hw, min(wanted, limit)), cfg, hw, wanted, limit), wanted, limit
        )
    if point is None:
        zero = ServingEstimate(
            ttft_ms=math.inf, tpot_ms=math.inf, e2e_latency_ms=math.inf, output_tokens_per_s=0.0,
            output_tokens_per_s_per_gpu=0.0, requests_per_s=0.0, concurrency=0.0, max_concurrency=0,
            kv_cache_tokens=cache_tokens, replicas=replicas, replicas_needed=None,
            meets_slo=False if _has_slo(cfg) else None, memory=memory, gpus_per_replica=gpus_per_replica,
            bound="memory", notes=notes + [_no_sequence_note(cfg, cache_tokens, tp)],
        )  # fmt: skip
        return zero
    needed = None
    if cfg.requests_per_s is not None:
        capacity = _capacity(model, cfg, hw, limit)
        needed = max(1, math.ceil(cfg.requests_per_s / capacity - 1e-9)) if capacity > 0 else None
        if point.requests_per_s * replicas < cfg.requests_per_s * (1 - 1e-3):
            notes.append(
                f"{replicas} replica(s) carry at most {point.requests_per_s * replicas:.3g} requests/s "
                f"of the {cfg.requests_per_s:g} offered"
            )
    rps = point.requests_per_s * replicas
    tokens_per_s = rps * cfg.output_tokens
    result = ServingEstimate(
        ttft_ms=point.ttft_s * 1e3,
        tpot_ms=point.tpot_s * 1e3,
        e2e_latency_ms=point.e2e_s * 1e3,
        output_tokens_per_s=tokens_per_s,
        output_tokens_per_s_per_gpu=tokens_per_s / (replicas * gpus_per_replica),
        requests_per_s=rps,
        concurrency=point.concurrency,
        max_concurrency=limit,
        kv_cache_tokens=cache_tokens,
        replicas=replicas,
        replicas_needed=needed,
        meets_slo=_meets(point, cfg) if _has_slo(cfg) else None,
        memory=memory,
        gpus_per_replica=gpus_per_replica,
        bound=point.bound,
        notes=notes,
        isolated_ttft_ms=_isolated_ttft_s(model, cfg, hw) * 1e3,
    )
    if cfg.requests_per_s is None or not simulate:
        return result
    with simulations():
        load = _load(model, cfg, hw, limit)
        return _under_load(result, model, cfg, cluster, (tp, pp, replicas), load, replicas_needed)


def _under_load(
    result: ServingEstimate,
    model: ModelSpec,
    cfg: ServingConfig,
    cluster: Cluster,
    shape: tuple[int, int, int],
    load: _Load,
    replicas_needed: int | None,
) -> ServingEstimate:
    """The estimate with the simulated latencies at the offered load and its peak, judged at the peak."""
    tp, pp, replicas = shape
    offered = (cfg.requests_per_s or 0.0) / replicas
    peak_rate = offered * cfg.peak_factor
    peak = _simulate(load, peak_rate)
    average = _simulate(load, offered).at_most(peak)  # the same arrivals at the lower rate: no slower than the peak
    if replicas_needed is None:
        found = replicas_for_slo(model, cfg, cluster, tp=tp, pp=pp)
        replicas_needed = found[0] if found else None
    return replace(
        result,
        ttft_ms=average.ttft.p50 * 1e3,
        tpot_ms=average.tpot.p50 * 1e3,
        e2e_latency_ms=average.e2e.p50 * 1e3,
        replicas_needed=replicas_needed,
        meets_slo=meets_at_peak(peak, cfg) if _has_slo(cfg) else None,
        latency={"average": average, "peak": peak},
        concurrency=min(float(load.limit), average.running),  # what the simulation holds at the offered load
        utilization={"average": load.utilization(offered, average), "peak": load.utilization(peak_rate, peak)},
        isolated_ttft_ms=load.isolated_s * 1e3,
    )
