"""The levers serving teams pull beyond the engine's defaults: the prefix cache and speculative decoding. What each
engine runs, and the arithmetic of each; app/estimator/serving/ applies them to its step model and simulation.

Prefix caching. A prompt's tokens found in the cache (a shared system prompt, the earlier turns of a conversation,
a RAG document sent again) are not prefilled: the request starts prefilling at the first token not found, and the
tokens after it still attend to the cached ones. All three engines run it by default: vLLM V1's automatic prefix
caching (hash-addressed KV blocks, reference counted, freed blocks kept in an LRU queue until evicted: vLLM docs
"Automatic Prefix Caching", design/prefix_caching.md; `--enable-prefix-caching`, on by default in V1), SGLang's
RadixAttention (a radix tree over cached tokens, least-recently-used leaves evicted: Zheng et al. 2024, "SGLang:
Efficient Execution of Structured Language Model Programs", arXiv 2312.07104 §3; off only with
`--disable-radix-cache`), TensorRT-LLM's KV block reuse (`KvCacheConfig.enable_block_reuse`, default True in
tensorrt_llm/llmapi/llm_args.py).

How the capacity is counted: every running request still reserves the KV blocks of its whole length. A hit shares
blocks with another request (or with the cache's free LRU queue), so the engines hold fewer blocks than that; but the
hit rate says nothing about how many distinct prefixes are live, and the cached blocks must stay resident to be hit
at all (a hit rate measured on an engine assumes its cache held them). Counting no sharing credit keeps the
concurrency a replica holds a lower bound; the compute the hits save is counted in full.

Speculative decoding. A draft proposes k tokens; the target verifies them with the last accepted token in one
forward of k + 1 positions per sequence and keeps the accepted prefix plus its own next token. With a per-token
acceptance a, a step yields (1 − a^(k+1)) / (1 − a) tokens on average (Leviathan et al. 2023, "Fast Inference from
Transformers via Speculative Decoding", eq. 1). The step costs the target's verification (weights and the KV cache
read once; the GEMM FLOPs and the attention of k + 1 query tokens per sequence) plus the k draft forwards: an EAGLE-3
head (one decoder layer and an LM head: Li et al. 2025, arXiv 2503.01840 §3) or a multi-token-prediction module (one
more transformer layer: DeepSeek-V3 technical report, arXiv 2412.19437 §2.2) streamed at the batch's decode rate; an
n-gram lookup in the prompt (CPU, no model); or a separate draft model's decode. At low batch decode is bound by
streaming the weights, so the verified tokens come almost free and the time per token falls; at high batch the step
is bound by compute, the k + 1 positions cost nearly k + 1 times as much, and throughput gains little or falls.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from app.estimator.params import count_params
from app.estimator.specs import EstimatorError, ModelSpec
from app.estimator.vocabulary import ENGINES, SpeculativeMethod

# Which engines run which method, and under which name (the launch's flags: app/planner/serving_launch.py).
# vLLM: SpeculativeConfig.method in vllm/config/speculative.py ("eagle3", "mtp", "ngram", "draft_model");
# SGLang: ServerArgs.speculative_algorithm in python/sglang/srt/server_args.py (EAGLE3, NEXTN, NGRAM, STANDALONE);
# TensorRT-LLM: the speculative_config decoding_type of tensorrt_llm/llmapi/llm_args.py (Eagle3DecodingConfig,
# MTPDecodingConfig, NGramDecodingConfig, DraftTargetDecodingConfig).
ENGINE_SPECULATION: Final[dict[str, dict[str, str]]] = {
    "vllm": {"eagle3": "eagle3", "mtp": "mtp", "ngram": "ngram", "draft_model": "draft_model"},
    "sglang": {"eagle3": "EAGLE3", "mtp": "NEXTN", "ngram": "NGRAM", "draft_model": "STANDALONE"},
    "trt-llm": {"eagle3": "Eagle3", "mtp": "MTP", "ngram": "NGram", "draft_model": "DraftTarget"},
}
# Engines whose prefix cache is on by default (module docstring): every engine served here.
PREFIX_CACHING_ENGINES: Final = frozenset(ENGINES)
# config.json keys that say a checkpoint ships multi-token-prediction layers: DeepSeek-V3/R1's
# num_nextn_predict_layers (huggingface.co/deepseek-ai/DeepSeek-V3 config.json: 1), Qwen3-Next's and MiMo's
# mtp_num_hidden_layers / num_nextn_predict_layers.
MTP_CONFIG_KEYS: Final = ("num_nextn_predict_layers", "mtp_num_hidden_layers")
# The longest draft the engines are run with here: vLLM and SGLang accept more, but past a handful of tokens the
# acceptance of the last ones is negligible (a^k) while every one costs a draft forward.
MAX_SPECULATIVE_TOKENS: Final = 16
# The largest draft model, as a share of the target's parameters. A step of k drafts costs k draft forwards plus one
# verification, so the speed-up is (1 − a^(k+1)) / ((1 − a)(k·c + 1)) with c the draft's cost per token over the
# target's (Leviathan et al. 2023, "Fast Inference from Transformers via Speculative Decoding", Theorem 3.8). Decode
# streams the weights, so c is about the ratio of parameters: at a typical a = 0.7 and k = 3, c = 1/4 still gives
# 2.53 / 1.75 = 1.45×, c = 1/2 gives 2.53 / 2.5 ≈ 1.0× (no gain), and a draft as large as the target only slows it.
MAX_DRAFT_SHARE: Final = 0.25


@dataclass(frozen=True, slots=True)
class Speculation:
    """Speculative decoding as configured: the method, tokens drafted per step, per-token acceptance, and the draft
    model (draft_model only)."""

    method: SpeculativeMethod
    num_speculative_tokens: int
    acceptance_rate: float
    draft: ModelSpec | None = None
    draft_repo: str | None = None  # what the launch loads as the draft (draft_model: the preset's repository)

    @property
    def tokens_per_step(self) -> float:
        return expected_tokens_per_step(self.acceptance_rate, self.num_speculative_tokens)

    @property
    def verify_width(self) -> int:
        """Positions per sequence the target runs each step: the last accepted token and the k drafted."""
        return self.num_speculative_tokens + 1


def check_draft(target: ModelSpec, spec: Speculation | None) -> None:
    """422 on serving.speculative.draft_model for a draft the engines cannot pair with the target or that cannot
    speed it up: vLLM and SGLang verify the draft's token ids against the target's logits, so both must share one
    vocabulary (vLLM's speculative decoding asserts the proposer's and the scorer's vocab_size are equal); and the
    draft holds at most MAX_DRAFT_SHARE of the target's parameters."""
    if spec is None or spec.draft is None:
        return
    draft = spec.draft
    if draft.vocab != target.vocab:
        raise EstimatorError.of(
            "draft_vocab",
            field="serving.speculative.draft_model",
            draft=draft.name,
            draft_vocab=draft.vocab,
            target=target.name,
            target_vocab=target.vocab,
        )
    draft_params, target_params = count_params(draft).total, count_params(target).total
    if draft_params > MAX_DRAFT_SHARE * target_params:
        raise EstimatorError.of(
            "draft_size",
            field="serving.speculative.draft_model",
            share=MAX_DRAFT_SHARE,
            draft=draft.name,
            draft_b=draft_params / 1e9,
            target=target.name,
            target_b=target_params / 1e9,
        )


# Engines that refuse speculative decoding in a replica split into pipeline stages, at the release the launches pin.
# SGLang (sgl-project/sglang@001067fffe33, python/sglang/srt/server_args.py): pipeline parallelism and a speculative
# algorithm are mutually exclusive, the server asserts at start-up (sgl-project/sglang#30775 and #31139 describe the
# assertion; #30775 lifts it only behind the experimental SGLANG_ENABLE_PP_SPEC=1, EAGLE with top-k 1 and
# --disable-overlap-schedule, the default unchanged). vLLM (V1 engine, the releases around the pinned
# vllm-project/vllm@99d7eb5d6a51): the last pipeline stage broadcasts one sampled token per request to the others,
# vllm/v1/worker/gpu_model_runner.py `_pp_broadcast_prev_sampled_token_ids`, `assert sampled_token_ids.dim() == 2 and
# sampled_token_ids.shape[-1] == 1` (line 4764 in 0.25.2; byte-identical in the 0.28.0 and 0.29.0 sdists), which a
# verification step's [requests, k + 1] tokens fail on the first decode step; async scheduling, which takes that path,
# is turned on by default for EAGLE-type methods (EAGLE-3 and MTP, vllm/config/vllm.py), and without it the draft
# tokens never reach the earlier stages (vllm-project/vllm#49355, #57755, RFC #44697; the V2 runner's fix, #46994,
# is later and behind VLLM_USE_V2_MODEL_RUNNER). So neither engine is given pipeline stages with speculation; only
# TensorRT-LLM is.
NO_PIPELINED_SPECULATION: Final = frozenset(engine for engine in ENGINES if engine != "trt-llm")


def pipelines_with(engine: str, spec: Speculation | None) -> bool:
    """Whether a replica of `engine` may be split into pipeline stages with this speculation (None: none)."""
    return spec is None or engine not in NO_PIPELINED_SPECULATION


def check_pipeline(engine: str, spec: Speculation | None, pp: int, field: str = "plan.pp") -> None:
    """A 422 naming `field` for a pipelined replica the engine does not start with speculative decoding."""
    if pp > 1 and not pipelines_with(engine, spec):
        method = spec.method if spec is not None else ""
        raise EstimatorError.of("serving_pp_speculative", field=field, engine=engine, method=method, pp=pp)


def expected_tokens_per_step(acceptance: float, drafted: int) -> float:
    """(1 − a^(k+1)) / (1 − a): tokens a verification step yields on average (Leviathan et al. 2023, eq. 1); k + 1
    when every draft is accepted."""
    if acceptance >= 1.0:
        return float(drafted + 1)
    return (1.0 - acceptance ** (drafted + 1)) / (1.0 - acceptance)


def mtp_layers(hf_config: Mapping[str, Any] | None) -> int:
    """Multi-token-prediction layers the checkpoint ships (0: none)."""
    if not hf_config:
        return 0
    for key in MTP_CONFIG_KEYS:
        value = hf_config.get(key)
        if isinstance(value, int) and value > 0:
            return value
    return 0


def cached_prompt_tokens(prompt: int, hit_rate: float) -> int:
    """Prompt tokens found in the prefix cache: the share `hit_rate` of the prompt, and never its last token (the
    engines compute at least one position to sample the first output token: vLLM's KV cache manager caps a hit at
    the prompt length − 1, vllm/v1/core/kv_cache_manager.py `get_computed_blocks`)."""
    if hit_rate <= 0 or prompt <= 1:
        return 0
    return min(prompt - 1, math.floor(prompt * hit_rate))
