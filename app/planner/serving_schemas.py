"""API shapes of `task: "serving"` (POST /estimate and POST /recommend): the traffic, lengths, engine and
latency targets in, the latency, throughput, KV capacity and memory per GPU out."""

from __future__ import annotations

from pydantic import BaseModel, Field, model_validator

from app.estimator.vocabulary import Batching, Engine
from app.schemas import RequestModel


class SloIn(RequestModel):
    ttft_ms: float | None = Field(default=None, gt=0, le=3_600_000, description="Time to first token target, ms")
    tpot_ms: float | None = Field(default=None, gt=0, le=60_000, description="Time per output token target, ms")


class ServingIn(RequestModel):
    input_tokens: int = Field(default=1024, ge=1, le=1_048_576, description="Prompt tokens per request")
    output_tokens: int = Field(default=256, ge=1, le=1_048_576, description="Generated tokens per request")
    concurrency: int | None = Field(
        default=None, ge=1, le=65_536, description="Sequences in flight per replica (give this or requests_per_s)"
    )
    requests_per_s: float | None = Field(
        default=None, gt=0, le=1_000_000, description="Offered load for the whole deployment"
    )
    batching: Batching = Field(
        default="continuous",
        description="continuous (default: in-flight batching with chunked prefill) or static (a batch prefills "
        "together, then decodes together)",
    )
    engine: Engine = Field(default="vllm", description="vllm (default), sglang or trt-llm: memory budget and defaults")
    gpu_memory_utilization: float | None = Field(
        default=None, ge=0.05, le=0.99, description="vLLM gpu_memory_utilization / SGLang mem_fraction_static / "
        "TensorRT-LLM free-memory fraction; the engine's default otherwise"
    )  # fmt: skip
    max_model_len: int | None = Field(
        default=None,
        ge=2,
        le=10_485_760,
        description="The launch's --max-model-len (SGLang --context-length, TensorRT-LLM --max_seq_len): the longest "
        "request a replica accepts. Default: max_request_tokens, else the model's context (capped at what a "
        "replica's KV cache holds); never the mean request",
    )
    max_request_tokens: int | None = Field(
        default=None,
        ge=2,
        le=10_485_760,
        description="The longest request (prompt + output) the deployment must accept: each replica's KV cache must "
        "hold one, and it is the launch's --max-model-len; default: the model's context",
    )
    slo: SloIn | None = Field(default=None, description="Latency targets; none: no SLO, meets_slo is null")
    peak_factor: float = Field(
        default=1.5, ge=1.0, le=100.0, description="/recommend: traffic peak ÷ offered load the replicas must carry"
    )

    @model_validator(mode="after")
    def _one_load(self) -> ServingIn:
        if self.concurrency is not None and self.requests_per_s is not None:
            raise ValueError("give serving.concurrency or serving.requests_per_s, not both")
        if None not in (self.max_model_len, self.max_request_tokens) and self.max_model_len != self.max_request_tokens:
            raise ValueError("serving.max_model_len and max_request_tokens name the same length: give one")
        return self


class ServingMemoryOut(BaseModel):
    weights: float
    kv_cache: float
    activations: float
    engine_reserve: float
    total: float
    capacity: float


class ServingOut(BaseModel):
    ttft_ms: float | None = Field(
        description="Time to first token at the operating point (no queueing); null: none fits"
    )
    tpot_ms: float | None = Field(description="Time per output token at the operating point")
    e2e_latency_ms: float | None
    output_tokens_per_s: float = Field(description="Whole deployment")
    output_tokens_per_s_per_gpu: float
    requests_per_s: float = Field(description="Whole deployment")
    concurrency: float = Field(description="Sequences in flight per replica at the operating point")
    max_concurrency: int = Field(description="Sequences of these lengths one replica's KV cache holds")
    kv_cache_tokens: int = Field(description="Per replica")
    replicas: int
    replicas_needed: int | None = Field(description="For requests_per_s: replicas that carry it within the SLO")
    gpus_per_replica: int
    meets_slo: bool | None = Field(description="null without an SLO")
    bound: str = Field(description="'memory' or 'compute': what limits the decode step")
    headroom: float | None = Field(
        default=None, description="/recommend: requests/s the replicas carry within the SLO ÷ the peak load"
    )
    peak_requests_per_s: float | None = None
    memory_per_gpu_gib: ServingMemoryOut
    engine: str
    batching: str
    notes: list[str]
