"""What each engine does when the user does not say, and how a past release differs: the defaults read from
data/engines.json (memory fraction, KV block, max_num_seqs, token budget, mixed prefill, overlap loop, the fixed
costs per MoE layer and per request), the releases measurements ran on, and the limits a request's engine runs
under (`_memory_fraction`, `_max_num_seqs`, `_batched_tokens`, `_request_overhead_s`, `_overlap_loop`)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.estimator.serving.config import ServingConfig
from app.estimator.specs import GpuSpec, require_choice


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
    # the share of a request's output still owed that admission reserves in the KV cache (1: its whole length, never
    # preempted; 0: none, blocks allocated as tokens come and the last admitted preempted when they run out)
    kv_reserve_share: float = 1.0
    kv_reserve_source: str = ""
    # fixed GPU latency of one MoE layer's kernel chain (routing alignment, two grouped expert GEMMs, activation,
    # top-k sum) that every step pays per MoE layer beyond its touched experts' bytes; 0 where not sized
    moe_layer_fixed_s: float = 0.0
    moe_layer_fixed_source: str = ""
    # a step that prefills runs the model eagerly (no CUDA graph for extend batches), so it lasts at least the host's
    # time to issue its forward's kernels (step.EAGER_PREFILL_*_LAYER_S); False: prefill steps replay graphs or compiled
    # code whose host cost is not charged
    eager_prefill: bool = False
    eager_prefill_source: str = ""
    # fixed time a request spends in the engine's server outside the GPU (HTTP, chat template, tokenising, the hand-off
    # to the scheduler, detokenising and streaming the first token): latency, not GPU time; 0 where not sized
    request_overhead_s: float = 0.0
    request_overhead_source: str = ""


def _engine_defaults() -> dict[str, EngineDefaults]:
    """data/engines.json, each row with its source."""
    text = (Path(__file__).parent.parent / "data" / "engines.json").read_text(encoding="utf-8")
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
    contiguous_kv: bool = False  # one contiguous KV tensor per layer (no pages): decode attention streams it
    # host time per layer and step of a decode run eagerly (no CUDA graph): the Python model code launches each layer's
    # kernels one by one (EAGER_LAYER_S); False: decode steps replay CUDA graphs
    eager_decode: bool = False
    # the server's fixed cost per request on that release (REQUEST_OVERHEAD_S); None: the current release's
    request_overhead_s: float | None = None
    source: str = ""

    @property
    def changes_step(self) -> bool:
        """Whether the release runs a model step differently from the current one (not only its server's cost)."""
        return (
            self.nccl_allreduce
            or self.gqa_heads_per_cta > 0
            or self.profile_holds_allreduce_inputs
            or self.no_overlap_schedule
            or self.contiguous_kv
            or self.eager_decode
        )


ENGINE_RELEASES: dict[str, EngineRelease] = {
    "sglang-0.3": EngineRelease(
        no_overlap_schedule=True,
        source="SGLang v0.3 line (sgl-project/sglang benchmark/benchmark_vllm_060, v0.3.0): the scheduler processed "
        "each batch's result before scheduling the next; the overlapping loop (event_loop_overlap) became the default "
        "with the zero-overhead batch scheduler of v0.4 (lmsys.org/blog/2024-12-04-sglang-v0-4).",
    ),
    "trt-llm-0.14": EngineRelease(
        no_overlap_schedule=True,
        source="TensorRT-LLM v0.14 serving a TensorRT engine through the C++ Executor API (the Triton backend): "
        "Executor::Impl::executionLoop (cpp/tensorrt_llm/executor/executorImpl.cpp, NVIDIA/TensorRT-LLM at b35ac1b6) "
        "waits for the step under way (forwardSync), returns its tokens, and only then fetches new requests and "
        "launches the next step (forwardAsync), so an arrival waits for the rest of one step, not one more; the "
        "one-iteration-ahead loop is the PyTorch backend's (PyExecutor, disable_overlap_scheduler), whose use in the "
        "perf overview starts with v0.19 (docs/source/performance/perf-overview.md @00f37686).",
    ),
    "trt-llm-0.6": EngineRelease(
        contiguous_kv=True,
        source="TensorRT-LLM v0.5-v0.6.1 static-batch runs of NVIDIA/TensorRT-LLM docs/source/performance.md "
        "(@77d24b5f, Peak Throughput): gptSessionBenchmark over Llama 2 engines built by examples/llama/build.py "
        "without --paged_kv_cache (the Falcon-180B build of the same page passes it), so the session holds the "
        "contiguous KV cache docs/source/gpt_attention.md (@138f96d4) describes, one monolithic [batch, 2, heads, "
        "max_seqlen, head_dim] tensor, and the masked MHA kernel reads each sequence's keys and values as "
        "contiguous rows: a stream, read at the weight stream's efficiency, not the paged gather's.",
    ),
    "trt-llm-0.17-pytorch": EngineRelease(
        eager_decode=True,
        no_overlap_schedule=True,
        source="TensorRT-LLM 0.17's PyTorch backend (trtllm-serve --backend pytorch, experimental from 0.17: "
        "docs/source/torch.md 'available in version 0.17 and later'), served without --extra_llm_api_options: the "
        "early DeepSeek-R1 recipes of examples/deepseek_v3 turn CUDA graphs and the overlap scheduler on by hand "
        "(pytorch_backend_config: use_cuda_graph: true, enable_overlap_scheduler: true), so a plain launch ran every "
        "decode step eagerly and processed each step before scheduling the next; the later PyTorchConfig defaults "
        "(use_cuda_graph True, disable_overlap_scheduler False: tensorrt_llm/_torch/pyexecutor/config.py @01303b38) "
        "are the current release's. The 0.17 tag's own default was not read: taken from the recipes.",
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
    "vllm-0.8": EngineRelease(
        request_overhead_s=0.004,
        source="vLLM's V1 engine before 0.10 (0.8.x-0.9.x, the OpenAI server's /v1/completions): 4 ms of a request's "
        "time to first token outside the model steps, FITTED on the first-contact rows of IOG-Foundation/"
        "llm-inference-benchmarks @4990a807 (vLLM 0.8.5, tests/estimator/serving_first_contact_iog.py): on one H100 "
        "PCIe, models of 1.5B to 14B parameters at 1, 4 and 8 requests/s with their prompts in the prefix cache, the "
        "published median TTFT (10.7-38.2 ms) less the simulated one without a server cost leaves 3.3-6.1 ms, median "
        "4.0 (15 runs). Out of that fit, vLLM 0.8.3 (surajssd/llm-k8s @58b61c59, Llama 3.3 70B at TP 8 on 8 x A100 "
        "40GB) leaves 4.4 and 8.8 ms. vLLM 0.10.0 raised the time to first token of one request in flight by 33-97 % "
        "over 0.9.2 on the same GPUs and models, the gap closing by 10 in flight (vllm-project/vllm#21983, "
        "2025-07-31): the current release keeps engines.json's figure.",
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


# The engine's fixed cost per request outside the model steps (HTTP and API server, chat template, tokenisation,
# admission, detokenising and streaming the first token), added to each time to first token and end-to-end latency of
# a request served through the engine's server (data/engines.json `request_overhead_s`, each with its source); none for
# a compiled loop or an offline run in the engine's own process (`_request_overhead_s`).
REQUEST_OVERHEAD_S: dict[str, float] = {
    **{engine: row.request_overhead_s for engine, row in ENGINE_DEFAULTS.items()},
    "none": 0.0,
}


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


def _overhead_key(cfg: ServingConfig) -> str:
    return cfg.engine_overhead or cfg.engine


def _request_overhead_s(cfg: ServingConfig) -> float:
    """The fixed time a request spends in the engine's server outside the GPU (REQUEST_OVERHEAD_S). None for a static
    batch: the engines' static-batch benchmarks (TensorRT-LLM's gptSessionBenchmark, LMDeploy's profile_generation,
    gpt-fast) run the model in their own process, with no server, tokeniser or stream in front of it. None either for
    an engine driven in the caller's process (`in_process`): the figures are sized through the engines' HTTP chat
    endpoints (HTTP, chat template, tokenising, the hand-off to the scheduler, detokenising, streaming), and no
    measurement splits off what an in-process caller still pays (its tokeniser and the hand-off), so none is charged."""
    if cfg.batching == "static" or cfg.in_process:
        return 0.0
    release = engine_release(cfg.release).request_overhead_s
    if release is not None and cfg.engine_overhead is None:
        return release
    return REQUEST_OVERHEAD_S[_overhead_key(cfg)]


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
