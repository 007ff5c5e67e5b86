"""The serving request (`ServingConfig`) and the answer's records: one replica GPU's memory (`ServingMemory`) and
the estimate (`ServingEstimate`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from app.estimator.notes import Note
from app.estimator.serving_levers import Speculation
from app.estimator.serving_sim import DEFAULT_SEED, LoadLatency, Percentile
from app.estimator.vocabulary import Batching, Engine, ServingPrecision, WeightFormat


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
    # the engine driven inside the caller's own process (vLLM's LLM / AsyncLLMEngine, SGLang's Engine in a benchmark
    # harness), no HTTP server in front: no server cost per request (engines._request_overhead_s)
    in_process: bool = False
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
    # a disaggregated decode pool (serving_disagg.decode_config): each request waits for a sequence slot, held for its
    # whole decode, before its first step; that wait (at least the M/D/c queue's) is part of the time to first token
    decode_pool: bool = False
    # data-parallel attention with expert parallelism (SGLang `--enable-dp-attention --dp-size tp --ep-size tp`, vLLM
    # `--data-parallel-size tp --enable-expert-parallel`): each of the replica's tp ranks runs attention and the dense
    # layers whole for its own sequences (their KV cache on that rank only) and holds 1/tp of the routed experts; the
    # tokens go to their experts and back by an all-to-all per MoE layer (serving.md, "DP attention")
    dp_attention: bool = False
    # a closed loop (concurrency) of identical requests whose clients start together: the requests prefilled in one step
    # finish on one step and their replacements arrive together, so the loop stays in waves (serving/waves.py; a
    # benchmark of fixed lengths with ignore_eos, not traffic)
    waves: bool = False

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
    sequence_kv_tokens: int  # what one sequence may use: the replica's cache, one rank's under DP attention
    replicas: int
    replicas_needed: int | None  # for requests_per_s: replicas that carry it within the SLO
    meets_slo: bool | None  # None without an SLO
    memory: ServingMemory
    gpus_per_replica: int
    bound: str  # "memory" or "compute" for the decode step at the operating point
    notes: list[Note] = field(default_factory=list)  # codes with parameters (app/estimator/notes.py words them)
    # For requests_per_s: simulated latencies at the offered load and at its peak (serving_sim), seconds.
    latency: dict[str, LoadLatency] | None = None  # {"average": …, "peak": …}
    utilization: dict[str, float] | None = None  # offered ÷ what a replica completes at most, average and peak
    # the prompt's service on an idle replica, the M/D/1 queue's D: its prefill (a prefill pool's: and the KV transfer),
    # the engine server's fixed cost per request (request_overhead_ms) left out: one request's TTFT is the two summed
    isolated_ttft_ms: float | None = None
    request_overhead_ms: float | None = None  # in every TTFT, in no queue: it holds no GPU
    # the tokens a scheduler step takes at most (vLLM max_num_batched_tokens, SGLang chunked_prefill_size, TensorRT-LLM
    # max_num_tokens) the estimate ran with: the launch states it, as the engines' defaults vary by GPU and release
    token_budget: int = 0
    # For a closed loop (concurrency) judged on a percentile above the p50 with lengths drawn about their means: the
    # TTFT and TPOT at that percentile meets_slo was judged on, ms (operating_point._at_percentile); else None
    at_percentile_ms: tuple[float, float] | None = None
    # the sequences one replica runs at once under load by its engine's KV rule (memory.held_sequences: a request at
    # the tokens it holds on average over its decode where the engine allocates as tokens come), at least
    # max_concurrency; what a launch's --max-num-seqs may admit (0: not computed)
    held_sequences: int = 0
    # the sequences one replica's launch admits (--max-num-seqs: operating_point._launch_slots), the slots the
    # simulation queues on, where a load was simulated (0: not simulated)
    launch_slots: int = 0
