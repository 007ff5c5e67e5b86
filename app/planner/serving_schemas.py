"""API shapes of `task: "serving"` (POST /estimate and POST /recommend): the traffic, lengths, engine and
latency targets in, the latency, throughput, KV capacity and memory per GPU out."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field, ValidationInfo, field_validator, model_validator

from app.common.schemas import RequestModel, coded_error
from app.estimator.serving import ENGINE_DEFAULTS, VLLM_LARGE_GPU_MAX_NUM_SEQS
from app.estimator.serving_levers import MAX_SPECULATIVE_TOKENS
from app.estimator.vocabulary import Batching, Engine, SpeculativeMethod
from app.planner.word_schemas import NoteOut

# Why a SKU yields no disaggregated deployment (app/planner/serving_disagg.py): `disaggregated_pools`, no prefill and
# decode pools within max_nodes meet the SLO at the peak; `disaggregated_spanning`, a pool replica would span servers
# (pools are sized within one server).
DisaggregatedRejection = Literal["disaggregated_pools", "disaggregated_spanning"]

# The longest request a replica accepts, prompt and output, in tokens: at least one of each; 10 Mi tokens is
# past every published context window.
LongestRequest = Annotated[int, Field(ge=2, le=10_485_760)]
# A share of tokens, from none to all.
Share = Annotated[float, Field(ge=0.0, le=1.0)]


class SloIn(RequestModel):
    ttft_ms: float | None = Field(default=None, gt=0, le=3_600_000, description="Time to first token target, ms")
    tpot_ms: float | None = Field(default=None, gt=0, le=60_000, description="Time per output token target, ms")
    percentile: Literal["p50", "p90", "p99"] = Field(
        default="p90",
        description="The percentile of requests the targets hold for, judged on the simulated latency at the peak",
    )


class SpeculativeIn(RequestModel):
    method: SpeculativeMethod = Field(
        description="eagle3 (an EAGLE-3 draft head), mtp (the checkpoint's own multi-token-prediction layers: "
        "DeepSeek-V3/R1), ngram (prompt lookup, no draft model) or draft_model (a smaller model of the same "
        "tokenizer, named by draft_model)"
    )
    num_speculative_tokens: int = Field(
        ge=1,
        le=MAX_SPECULATIVE_TOKENS,
        description="Tokens the draft proposes each step (k); the target verifies k + 1",
    )
    acceptance_rate: float = Field(
        ge=0.0,
        lt=1.0,
        description="The chance each drafted token is accepted (a), 0 ≤ a < 1, as the engine reports it on your "
        "traffic; a step yields (1 - a^(k+1)) / (1 - a) tokens on average",
    )
    draft_model: str | None = Field(
        default=None, description="draft_model only: the preset id of the draft model (e.g. llama-3.2-1b)"
    )

    @model_validator(mode="after")
    def _draft_for_draft_model(self) -> SpeculativeIn:
        if (self.method == "draft_model") != (self.draft_model is not None):
            raise coded_error("draft_model_method")
        return self


# serving.concurrency's bound: the most sequences any engine runs at once in one replica as launched, its
# max_num_seqs (app/estimator/data/engines.json: TensorRT-LLM's max_batch_size 2048, SGLang 1024, vLLM 256 and 1024 on
# GPUs of 70 GiB or more). Review R7: 65,536 per replica on one A100 40G (128 slots) came back as rank 1 with a TTFT
# of 2.2 hours, every sequence past the slots queued; beyond this bound no replica runs them, and requests_per_s
# sizes the replicas for them.
MAX_CONCURRENCY = max(VLLM_LARGE_GPU_MAX_NUM_SEQS, *(row.max_num_seqs for row in ENGINE_DEFAULTS.values()))


# No lengths have a p95 above 20 × their mean: if 5 % of requests are at least p95 tokens long, the mean is at least
# 0.05 × p95 (Markov's inequality for a non-negative length, P(X >= a) <= mean / a), so a larger p95 is a typing error,
# refused rather than capped (review R12: input_tokens 1,000 with input_tokens_p95 100,000 was sized as a tail).
P95_MARKOV_RATIO = 20


class ServingIn(RequestModel):
    input_tokens: int = Field(default=1024, ge=1, le=1_048_576, description="Prompt tokens per request (the mean)")
    output_tokens: int = Field(default=256, ge=1, le=1_048_576, description="Generated tokens per request (the mean)")
    input_tokens_p95: int | None = Field(
        default=None, ge=1, le=10_485_760, description="95th percentile of the prompt tokens, at least input_tokens "
        "and at most 20 × it (Markov's bound: a larger p95 would make the mean larger): lengths then follow a "
        "lognormal with the mean input_tokens and this p95 (above 3.87 × the mean, which no lognormal reaches, the "
        "widest one, and a note says the tail is under-modelled); none: every prompt is input_tokens long"
    )  # fmt: skip
    output_tokens_p95: int | None = Field(
        default=None, ge=1, le=10_485_760, description="95th percentile of the generated tokens (as input_tokens_p95)"
    )
    concurrency: int | None = Field(
        default=None,
        ge=1,
        le=MAX_CONCURRENCY,
        description=f"Sequences in flight per replica (give this or requests_per_s), at most {MAX_CONCURRENCY:,}: the "
        "most any engine runs at once in a replica (its max_num_seqs); beyond what the replica's KV cache holds the "
        "others queue for a slot (warning concurrency_over_kv). For more clients, give requests_per_s",
    )
    requests_per_s: float | None = Field(
        default=None, gt=0, le=1_000_000, description="Offered load for the whole deployment"
    )
    batching: Batching = Field(
        default="continuous",
        description="continuous (default: in-flight batching with chunked prefill) or static (a batch prefills "
        "together, then decodes together; with concurrency only: an offered requests_per_s is simulated as the "
        "continuous batching the engines' servers run, and static with it is a 422)",
    )
    engine: Engine = Field(default="vllm", description="vllm (default), sglang or trt-llm: memory budget and defaults")
    gpu_memory_utilization: float | None = Field(
        default=None, ge=0.05, le=0.99, description="vLLM gpu_memory_utilization / SGLang mem_fraction_static / "
        "TensorRT-LLM free-memory fraction; the engine's default otherwise"
    )  # fmt: skip
    max_model_len: LongestRequest | None = Field(
        default=None,
        description="The launch's --max-model-len (SGLang --context-length, TensorRT-LLM --max_seq_len): the longest "
        "request a replica accepts. Default: max_request_tokens, else the model's context (capped at what a "
        "replica's KV cache holds); never the mean request",
    )
    max_request_tokens: LongestRequest | None = Field(
        default=None,
        description="The longest request (prompt + output) the deployment must accept: each replica's KV cache must "
        "hold one, and it is the launch's --max-model-len; default: the model's context",
    )
    slo: SloIn | None = Field(default=None, description="Latency targets; none: no SLO, meets_slo is null")
    peak_factor: float = Field(
        default=1.5, ge=1.0, le=100.0, description="/recommend: traffic peak ÷ offered load the replicas must carry"
    )
    prefix_cache_hit_rate: Share = Field(
        default=0.0,
        description="Share of prompt tokens found in the engine's prefix cache (a shared system prompt, earlier turns, "
        "a document sent again): they are not prefilled. Every request still reserves KV for its whole length",
    )
    speculative: SpeculativeIn | None = Field(
        default=None, description="Speculative decoding; none: every decode step yields one token"
    )
    disaggregated: Literal[False, True, "auto"] = Field(
        default=False,
        description="/recommend with requests_per_s, engine sglang: true sizes a prefill pool and a decode pool on "
        'separate servers joined by the SKU\'s fabric (SGLang PD disaggregation, the KV sent between them); "auto" '
        "ranks those beside colocated replicas; false (default): colocated replicas only",
    )

    @model_validator(mode="after")
    def _one_load(self) -> ServingIn:
        if self.concurrency is not None and self.requests_per_s is not None:
            raise coded_error("serving_one_load")
        if None not in (self.max_model_len, self.max_request_tokens) and self.max_model_len != self.max_request_tokens:
            raise coded_error("serving_one_length")
        return self

    @field_validator("input_tokens_p95", "output_tokens_p95")
    @classmethod
    def _p95_of_a_lognormal(cls, p95: int | None, info: ValidationInfo) -> int | None:
        """A field validator (not the model's), so a 422 names serving.<name>_p95; the mean is validated first
        (declared above), and a mean that failed has its own error. A p95 above what a lognormal with the mean can
        have (MAX_P95_RATIO × it) is accepted: serving_request.lognormal_p95 simulates the widest one, and says so
        (review R8: RAG and agent traffic has p95 ÷ mean of 5-10)."""
        name = str(info.field_name).removesuffix("_p95")
        mean = info.data.get(name)
        if p95 is not None and mean is not None and p95 < mean:
            raise coded_error("p95_below_mean", name=name, mean=mean)
        if p95 is not None and mean is not None and p95 > P95_MARKOV_RATIO * mean:
            raise coded_error("p95_above_markov", name=name, mean=mean, most=P95_MARKOV_RATIO * mean)
        return p95


class ServingMemoryOut(BaseModel):
    weights: float
    kv_cache: float
    activations: float
    engine_reserve: float
    total: float
    capacity: float


class PercentilesOut(BaseModel):
    """null: unbounded (TTFT and end-to-end latency where `saturated`: the queue grows through any run, and a finite
    run's percentiles measure its length, not the load: review, one H100 with 16,000-token prompts read a p50 TTFT of
    1,104 s at 1.7 requests/s and 202 s at 1.9). A saturated TPOT stays a figure: the running batch is held to the
    sequences a replica runs, whose steps stay finite however long the queue."""

    p50: float | None
    p90: float | None
    p99: float | None


UNBOUNDED = PercentilesOut(p50=None, p90=None, p99=None)


class LatencyOut(BaseModel):
    ttft_ms: PercentilesOut
    tpot_ms: PercentilesOut
    e2e_ms: PercentilesOut
    saturated: bool = Field(description="The queue grows without bound at this load: the replicas cannot keep up")


class LoadLatencyOut(BaseModel):
    average: LatencyOut = Field(description="At requests_per_s")
    peak: LatencyOut = Field(description="At requests_per_s × peak_factor: meets_slo is judged here")


class UtilizationOut(BaseModel):
    average: float = Field(
        description="The busiest resource of a replica: offered requests/s ÷ the most it completes, the prompts' "
        "share of its time (offered rate × a prompt's prefill on an idle replica: the M/D/1 queue's load), or the KV "
        "cache's sequence slots in use (offered rate × time a request holds its KV ÷ max_concurrency); ≥ 1 saturates. "
        "Disaggregated: the busier pool's"
    )
    peak: float


# What a serving option's `binding` names (app/planner/serving_mappers.py `binding_out`): the latency target, the
# throughput or the KV cache nearest its limit at the peak, or a peak whose queue grows without bound.
BindingTarget = Literal["ttft", "tpot", "throughput", "memory", "saturated"]


class BindingOut(BaseModel):
    target: BindingTarget = Field(
        description="What the deployment is nearest its limit on at the peak: ttft or tpot (the SLO's percentile of "
        "the simulated latency at the peak ÷ its target), throughput (utilization.peak), memory (the sequences in "
        "flight at the peak ÷ max_concurrency), or saturated (latency.peak.saturated: the queue grows without bound)"
    )
    share: float = Field(
        description="How near: that figure ÷ its limit (1 is at it); saturated: utilization.peak (at least 1)"
    )


class PoolOut(BaseModel):
    tp: int
    replicas: int
    gpus: int
    utilization: UtilizationOut | None = Field(
        default=None,
        description="This pool's replicas, as serving.utilization (the deployment's is the busier pool's); for "
        "the prefill pool the prompts' share of its time counts the KV transfer after each",
    )


class ServingOut(BaseModel):
    ttft_ms: float | None = Field(
        description="Time to first token: for requests_per_s the simulated p50 at that load (queueing included); "
        "for concurrency the steady state at that concurrency; null: none fits, or unbounded (latency.average "
        "saturated: the queue grows without bound)"
    )
    tpot_ms: float | None = Field(description="Time per output token: as ttft_ms (the p50 for requests_per_s)")
    latency: LoadLatencyOut | None = Field(
        default=None,
        description="For requests_per_s: simulated percentiles at the offered load and at its peak (Poisson "
        "arrivals through each replica's scheduler)",
    )
    isolated_ttft_ms: float | None = Field(
        default=None,
        description="The prompt's service on an idle replica (its prefill; disaggregated: and the KV transfer): the "
        "D of the M/D/1 queue the TTFT percentiles are held to; one request's TTFT is this plus request_overhead_ms",
    )
    request_overhead_ms: float | None = Field(
        default=None,
        description="The engine server's fixed cost per request (HTTP, tokenising, streaming): in every TTFT, in no "
        "queue (it holds no GPU)",
    )
    token_budget: int | None = Field(
        default=None,
        description="The tokens a scheduler step takes at most (vLLM --max-num-batched-tokens, SGLang "
        "--chunked-prefill-size, TensorRT-LLM --max_num_tokens) the latencies were simulated with, each rank's under "
        "DP attention; the launch sets it (SGLang's times --dp-size, which it divides by)",
    )
    utilization: UtilizationOut | None = Field(default=None, description="For requests_per_s")
    e2e_latency_ms: float | None
    output_tokens_per_s: float = Field(description="Whole deployment")
    output_tokens_per_s_per_gpu: float
    requests_per_s: float = Field(description="Whole deployment")
    concurrency: float = Field(
        description="Sequences in flight per replica: for requests_per_s what the simulation runs at the offered "
        "load (at most max_concurrency), else the steady state's"
    )
    max_concurrency: int = Field(
        description="Sequences of these lengths one replica runs at once: under a load (requests_per_s), what its "
        "launch admits (--max-num-seqs: within the SLO, and what the KV cache holds by the engine's rule, vLLM "
        "allocating as tokens come), the slots the simulated latencies queue on; else the smaller of what its KV "
        "cache holds at whole length and the engine's max_num_seqs"
    )
    kv_cache_tokens: int = Field(description="Per replica")
    replicas: int = Field(
        description="Replicas deployed; /recommend: every replica the rented servers hold, replicas − replicas_needed "
        "of them spare beyond what the load needs"
    )
    replicas_needed: int | None = Field(
        description="For requests_per_s: the fewest replicas that carry it within the SLO at the peak (as /estimate "
        "counts them, one by one, not whole servers)"
    )
    gpus_per_replica: int
    meets_slo: bool | None = Field(description="null without an SLO")
    bound: str = Field(
        description="'memory' or 'compute': what limits the step kind (decode-only, or carrying a prefill chunk) "
        "that takes most of a replica's time"
    )
    binding: BindingOut | None = Field(
        default=None,
        description="For requests_per_s: the target nearest its limit at the peak and how near, read from latency, "
        "utilization and max_concurrency; null without the simulated figures (a concurrency request)",
    )
    headroom: float | None = Field(
        default=None,
        description="/recommend: requests/s the replicas carry within the SLO ÷ the peak load; null where the SLO is "
        "missed (a near miss)",
    )
    peak_requests_per_s: float | None = None
    memory_per_gpu_gib: ServingMemoryOut
    pools: dict[str, PoolOut] | None = Field(
        default=None, description='Disaggregated: {"prefill": {tp, replicas, gpus}, "decode": {…}}; null: colocated'
    )
    kv_transfer_ms: float | None = Field(
        default=None, description="Disaggregated: one mean prompt's KV sent from prefill to decode over the fabric"
    )
    engine: str
    batching: str
    notes: list[str] = Field(description="What a replica cannot run as asked, in English")
    note_codes: list[NoteOut] = Field(
        default_factory=list,
        description="`notes` as codes with parameters, one for one and in the same order (app/text/note_words.py "
        "words them in English and Chinese)",
    )
