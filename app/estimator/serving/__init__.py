"""Serving a model: KV-cache capacity, time to first token, time per output token and throughput of
an inference engine (vLLM, SGLang, TensorRT-LLM) under a traffic load, and the replicas it needs.

The package, by job: `config` (the request and the answer's records), `engines` (each engine's defaults and past
releases, and the limits a request runs under), `memory` (weights and KV bytes, and the KV cache the engine's budget
leaves), `step` (the fitted speed constants, a replica's per-step constants and one step's time, for the closed
forms and the simulation alike), `operating_point` (the steady-state closed forms), `simulation` (latency under load,
app/estimator/serving_sim.py's runs), `replicas` (the SLO solver: the fewest replicas that meet it), `rules` (what a
request may ask and a GPU can run), `estimate` (the entry point); `memo` holds what one answer computes once.

How the engines work, and how this package models them:

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

from app.estimator.serving.config import ServingConfig, ServingEstimate, ServingMemory
from app.estimator.serving.engines import (
    ENGINE_DEFAULTS,
    REQUEST_OVERHEAD_S,
    VLLM_LARGE_GPU_MAX_NUM_SEQS,
    sglang_memory_fraction,
)
from app.estimator.serving.estimate import estimate_serving
from app.estimator.serving.memo import simulations
from app.estimator.serving.memory import (
    KV_BYTES,
    context_limit,
    expected_experts_touched,
    held_sequences,
    kv_bytes_per_token,
    kv_bytes_per_token_per_gpu,
    kv_cache_tokens,
    max_concurrency,
    mla_cache_values,
    sequence_kv_tokens,
    serving_memory,
    weight_bytes_per_param,
    weights_bytes,
)
from app.estimator.serving.operating_point import launch_max_seqs, queue_wait_s
from app.estimator.serving.replicas import replica_capacity, replicas_for_slo, steer_replicas
from app.estimator.serving.rules import (
    KERNEL_GAPS,
    MOE_LOW_CONCURRENCY_WARNING,
    MOE_VALIDATED_CONCURRENCY,
    KernelGap,
    check_fits,
    kernel_support,
    moe_low_concurrency_warning,
    validate_config,
)
from app.estimator.serving.simulation import (
    meets_at_peak,
    offline_run_output_tokens_per_s,
    peak_latency,
    peak_latency_at,
    peak_meets_at,
)
from app.estimator.serving.step import ALLREDUCE_LATENCY_S, BLOCK_FP8_GROUP

__all__ = [
    "ALLREDUCE_LATENCY_S",
    "BLOCK_FP8_GROUP",
    "ENGINE_DEFAULTS",
    "KERNEL_GAPS",
    "KV_BYTES",
    "KernelGap",
    "MOE_LOW_CONCURRENCY_WARNING",
    "MOE_VALIDATED_CONCURRENCY",
    "REQUEST_OVERHEAD_S",
    "ServingConfig",
    "ServingEstimate",
    "ServingMemory",
    "VLLM_LARGE_GPU_MAX_NUM_SEQS",
    "check_fits",
    "context_limit",
    "estimate_serving",
    "expected_experts_touched",
    "kernel_support",
    "kv_bytes_per_token",
    "kv_bytes_per_token_per_gpu",
    "kv_cache_tokens",
    "launch_max_seqs",
    "sequence_kv_tokens",
    "held_sequences",
    "max_concurrency",
    "meets_at_peak",
    "mla_cache_values",
    "moe_low_concurrency_warning",
    "offline_run_output_tokens_per_s",
    "peak_latency",
    "peak_latency_at",
    "peak_meets_at",
    "queue_wait_s",
    "replica_capacity",
    "replicas_for_slo",
    "serving_memory",
    "sglang_memory_fraction",
    "simulations",
    "steer_replicas",
    "validate_config",
    "weight_bytes_per_param",
    "weights_bytes",
]
