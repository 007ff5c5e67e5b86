"""What a serving request may ask and what a replica can run: field-named errors for inputs no engine accepts
(`validate_config`), the formats a GPU/engine has no kernels for (`kernel_support`), a replica that cannot hold one
sequence (`check_fits`), and the warning where a fine-grained MoE decodes outside the validated range."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from app.estimator.serving.config import ServingConfig
from app.estimator.serving.engines import _memory_fraction, engine_release
from app.estimator.serving.memory import max_concurrency, sequence_kv_tokens, serving_memory
from app.estimator.serving_levers import ENGINE_SPECULATION, MAX_SPECULATIVE_TOKENS, PREFIX_CACHING_ENGINES
from app.estimator.specs import GIB, EstimatorError, GpuSpec, ModelSpec, Warning_, require_choice
from app.estimator.vocabulary import BATCHINGS, ENGINES, SERVING_PRECISIONS, WEIGHT_FORMATS

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


def moe_low_concurrency_warning(model: ModelSpec, concurrency: float) -> Warning_ | None:
    """The warning (its code and figures: app/text/warning_words.py words them) when a fine-grained MoE decodes at low
    concurrency (not validated; the estimate is optimistic there), else None."""
    if not model.is_moe or model.experts < FINE_GRAINED_MOE_EXPERTS or concurrency > MOE_VALIDATED_CONCURRENCY:
        return None
    params = {"model": model.name, "experts": model.experts, "concurrency": concurrency}
    return Warning_(MOE_LOW_CONCURRENCY_WARNING, params | {"validated": MOE_VALIDATED_CONCURRENCY})


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
    (serving_levers): modelled on continuous batching with the current engine releases' steps only (a past release
    that differs only in its server's fixed cost per request runs them as the current one)."""
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
    past_step = cfg.release is not None and engine_release(cfg.release).changes_step
    if lever is not None and (cfg.batching == "static" or past_step or cfg.engine_overhead):
        raise EstimatorError.of("serving_levers_continuous", field=lever)


# What a GPU/engine lacks to run the request's formats (`KernelGap.gap`), in English; the API's rejections
# word the same gaps in Chinese too (app/text/messages.py KERNELS reads this table as its English).
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


def check_fits(model: ModelSpec, cfg: ServingConfig, gpu: GpuSpec, tp: int, pp: int) -> None:
    """Raise a field-named EstimatorError, naming both numbers, when a tp × pp replica cannot serve one sequence
    on `gpu`: no kernels for the formats (the kernel's field), the weights leave no KV cache (`hardware`), or
    the cache is shorter than one sequence (`serving.input_tokens`)."""
    unsupported = kernel_support(gpu, cfg)
    if unsupported:
        raise EstimatorError(unsupported.text, field=unsupported.field)
    if max_concurrency(model, cfg, gpu, tp, pp) >= 1:
        return
    cache_tokens = sequence_kv_tokens(model, cfg, gpu, tp, pp)  # under DP attention one rank's
    if cache_tokens > 0:
        code = "serving_no_sequence_rank" if cfg.dp_attention else "serving_no_sequence"
        raise EstimatorError.of(code, field="serving.input_tokens", context=cfg.context_len, tokens=cache_tokens, tp=tp)
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
