"""DP attention with expert parallelism as a serving shape beside plain TP, for MoE models with MLA (DeepSeek-V2/V3/R1).

Under TP attention MLA's latent KV cache (kv_lora_rank + rope dim per token and layer) is replicated on every TP
rank, so a TP 16 replica caches as many tokens as one GPU. Under DP attention each rank runs attention for its own
sequences and caches only theirs, and the routed experts are split over the ranks (expert parallel), the tokens sent
to their experts and back by an all-to-all per MoE layer (app/estimator/serving/step.py `_dp_attention_hardware`).
The engines' documented DeepSeek deployments run it: SGLang `--enable-dp-attention --dp-size N --ep-size N`
(--moe-a2a-backend deepep, --moe-dense-tp-size 1 for the dense layers on each rank alone; LMSYS "Deploying DeepSeek
with PD Disaggregation and Large-scale Expert Parallelism on 96 H100 GPUs", 2025-05), vLLM `--data-parallel-size N
--enable-expert-parallel` (one engine per GPU). PURE.

The degrees: a server's GPUs, then (SGLang only: vLLM's multi-server data parallel needs a launch per server, not
written here) whole servers joined by the SKU's fabric; each must split the routed experts evenly (the engines
place num_experts / ep_size on each rank, unless redundant experts are added: not modelled). No speculation (SGLang's
MTP beside DP attention was incomplete then: the LMSYS post's limits) and no pipeline stages.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from app.estimator.serving import ServingConfig
from app.estimator.specs import EstimatorError, ModelSpec
from app.planner.offers import Offer

# the engines that run it, and whether over several servers (the launch this module's docstring names)
DP_ATTENTION_OVER_SERVERS: dict[str, bool] = {"sglang": True, "vllm": False}


def dp_attention_applies(model: ModelSpec, cfg: ServingConfig) -> bool:
    """Whether the search also weighs DP attention with EP for this model and request."""
    return (
        model.is_moe
        and cfg.mla_cache_values > 0
        and cfg.engine in DP_ATTENTION_OVER_SERVERS
        and cfg.speculative is None
        and cfg.batching == "continuous"
        and not cfg.dp_attention
    )


def check_dp_attention_servers(cfg: ServingConfig, tp: int, gpus_per_node: int) -> None:
    """422 on plan.ep for a DP-attention plan over several servers on an engine that runs it on one server only."""
    if cfg.dp_attention and tp > gpus_per_node and not DP_ATTENTION_OVER_SERVERS[cfg.engine]:
        raise EstimatorError.of(
            "serving_dp_attention_servers", field="plan.ep", engine=cfg.engine, ep=tp, gpus_per_node=gpus_per_node
        )


def dp_attention_config(cfg: ServingConfig) -> ServingConfig:
    return replace(cfg, dp_attention=True)


def dp_attention_degrees(model: ModelSpec, cfg: ServingConfig, offer: Offer, max_nodes: int) -> Iterator[int]:
    """GPUs per replica (DP = EP = that count): one server's, then whole servers over the fabric."""
    spans = offer.rental_unit == "node" and offer.may_span_nodes and DP_ATTENTION_OVER_SERVERS[cfg.engine]
    for servers in range(1, (max_nodes if spans else 1) + 1):
        gpus = servers * offer.gpus_per_node
        if gpus >= 2 and model.experts % gpus == 0:
            yield gpus


def ep_refusal(model: ModelSpec, cfg: ServingConfig) -> str:
    """Why a serving plan's ep > 1 is refused (review R3-10: each refusal by the rule it breaks, not "a training
    setting"): the rules of `dp_attention_applies`, then ep equal to tp on one stage."""
    if not model.is_moe or cfg.mla_cache_values <= 0:
        return "serving_ep_model"
    if cfg.engine not in DP_ATTENTION_OVER_SERVERS:
        return "serving_ep_engine"
    if cfg.speculative is not None:
        return "serving_ep_speculative"
    if cfg.batching != "continuous":
        return "serving_ep_batching"
    return "serving_ep_tp"
