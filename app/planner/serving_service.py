"""`task: "serving"` as a service: resolve the request into a serving config, run the pure estimator
(POST /estimate) or the deployment search (POST /recommend), and shape the response."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from datetime import date
from typing import TYPE_CHECKING, Any

from app import messages
from app.estimator.checkpoints import checkpoint_from_config
from app.estimator.interconnects import fabric_of
from app.estimator.notes import Note, note
from app.estimator.presets import get_preset, preset_config
from app.estimator.serving import (
    MOE_LOW_CONCURRENCY_WARNING,
    MOE_VALIDATED_CONCURRENCY,
    ServingConfig,
    ServingEstimate,
    check_fits,
    context_limit,
    estimate_serving,
    kernel_support,
    kv_cache_tokens,
    max_concurrency,
    mla_cache_values,
    moe_low_concurrency_note,
    queue_wait_s,
    replica_capacity,
)
from app.estimator.serving_levers import Speculation, check_draft, check_pipeline, mtp_layers, pipelines_with
from app.estimator.serving_sim import MAX_P95_RATIO, Lengths, LoadLatency, Quantiles
from app.estimator.specs import GIB, Cluster, EstimatorError, ModelSpec, Warning_
from app.estimator.vocabulary import SERVING_PRECISIONS, TERM_MONTHS, WEIGHT_FORMATS, ServingPrecision, WeightFormat
from app.planner.availability import Availability, in_region
from app.planner.explain import offer_warnings
from app.planner.mappers import (
    assumptions_out,
    availability_out,
    cost_out,
    fabric_assumptions,
    gib_memory_out,
    notes_out,
    placed_option_out,
    quote_body,
    warnings_out,
)
from app.planner.misses import slo_params
from app.planner.schemas import (
    EstimateOut,
    MemoryOut,
    MissOut,
    ModelIn,
    ModelOut,
    OptionOut,
    ParetoPointOut,
    PerformanceOut,
    PlanIn,
    PlanOut,
    QuoteBodyOut,
    RecommendOut,
    RejectedOut,
    WorkloadIn,
)
from app.planner.serving import check_serving_plan, search_serving
from app.planner.serving_disagg import check_disaggregated, merged, search_disaggregated
from app.planner.serving_dp_attention import (
    check_dp_attention_servers,
    dp_attention_applies,
    dp_attention_config,
    ep_refusal,
)
from app.planner.serving_launch import Served
from app.planner.serving_multinode import cross_node_tp
from app.planner.serving_option import TP_DEGREES, ServingOption, ServingSearch, valid_tp
from app.planner.serving_schemas import (
    UNBOUNDED,
    LatencyOut,
    LoadLatencyOut,
    PercentilesOut,
    PoolOut,
    ServingIn,
    ServingMemoryOut,
    ServingOut,
    SpeculativeIn,
    UtilizationOut,
)
from app.planner.serving_sixteen_bit import served_as, sixteen_bit_misses
from app.schemas import mirror
from app.words import serving_explanation, serving_summary as words_summary

if TYPE_CHECKING:
    from app.planner.offers import Constraints, Offer
    from app.planner.schemas import EstimateIn, RecommendIn

SERVING_NOTE = (
    "Monthly price of the whole configuration; cost per million output tokens at the offered load "
    "(30-day months, around the clock); the job total is one term of the deployment, what its quote bills."
)


# The workload fields a serving deployment is sized on (the rest of WorkloadIn is training's or inference's).
SERVING_WORKLOAD_FIELDS = frozenset({"model", "task", "precision", "weights", "kv_cache_precision", "serving"})
# What the serving figures assume (app/estimator/notes.py words them; app/note_words.py in Chinese).
SERVING_ASSUMPTIONS = [note("serving_engines"), note("serving_batching"), note("serving_decode")]
NO_FABRIC_NOTE = note("replicas_share_nothing")
# Plan fields of training that serving does not size (defaults: not used), with what each would mean.
TRAINING_LEVERS: dict[str, tuple[object, ...]] = {
    "ep": (1,),
    "expert_tp": (None,),
    "cp": (1,),
    "zero_stage": (0, "NO_SHARD", "no_shard"),
    "offload": ("none",),
    "recompute": ("none",),
}


def lognormal_p95(mean: int, p95: int | None) -> int | None:
    """The p95 the lengths are simulated with: the stated one, or the widest lognormal's with that mean where the
    stated tail is heavier (a lognormal's p95 ÷ mean is at most MAX_P95_RATIO, app/estimator/serving_sim.py)."""
    return None if p95 is None else min(p95, int(mean * MAX_P95_RATIO))


def tail_notes(serving: ServingIn) -> list[Note]:
    """A note for each length whose stated p95 the lognormal cannot reach (serving_tail_capped)."""
    notes = []
    for name in ("input_tokens", "output_tokens"):
        mean, p95 = getattr(serving, name), getattr(serving, f"{name}_p95")
        modelled = lognormal_p95(mean, p95)
        if p95 is not None and modelled is not None and modelled < p95:
            ratio, most = round(p95 / mean, 1), round(MAX_P95_RATIO, 2)
            notes.append(
                note("serving_tail_capped", name=name, p95=p95, mean=mean, ratio=ratio, most=most, modelled=modelled)
            )
    return notes


def serving_assumptions(request: WorkloadIn) -> list[Note]:
    """What the serving figures assume; the default lengths when the request gave no serving block."""
    if request.serving is not None:
        return [*SERVING_ASSUMPTIONS, *tail_notes(request.serving)]
    default = ServingIn()
    lengths = note("serving_no_block", input_tokens=default.input_tokens, output_tokens=default.output_tokens)
    return [*SERVING_ASSUMPTIONS, lengths]


def check_training_levers(plan: PlanIn) -> None:
    """422 on a training lever (expert/context parallel, ZeRO, offload, recompute) in a serving plan: serving
    sizes tp × pp replicas and dp of them, so the lever would be silently ignored."""
    for name, unused in TRAINING_LEVERS.items():
        value = getattr(plan, name)
        if value not in unused:
            raise EstimatorError.of(
                "serving_training_lever", field=f"plan.{name}", name=name, value=value, default=unused[0]
            )


def plan_config(model: ModelSpec, cfg: ServingConfig, plan: PlanIn) -> ServingConfig:
    """The config a serving plan runs: DP attention with expert parallel where plan.ep equals plan.tp (> 1, one
    stage) on a model and engine that run it (app/planner/serving_dp_attention.py), else `cfg`; 422 on any other
    training lever (`check_training_levers`)."""
    if plan.ep > 1 and plan.ep == plan.tp and plan.pp == 1 and dp_attention_applies(model, cfg):
        check_training_levers(plan.model_copy(update={"ep": 1}))
        return dp_attention_config(cfg)
    if plan.ep > 1:
        raise EstimatorError.of(ep_refusal(model, cfg), field="plan.ep", ep=plan.ep, tp=plan.tp, pp=plan.pp,
                                engine=cfg.engine)  # fmt: skip
    check_training_levers(plan)
    return cfg


def serving_config(request: WorkloadIn) -> ServingConfig:
    """The estimator's serving config from the request; 422 naming the field for formats serving has not."""
    serving = request.serving or ServingIn()
    precision = _serving_precision(request.precision)
    if precision is None:
        raise EstimatorError.of("serving_precision", field="precision", precision=request.precision)
    kv_precision = _serving_precision(request.kv_cache_precision)
    if request.kv_cache_precision is not None and kv_precision is None:
        raise EstimatorError.of("serving_kv_precision", field="kv_cache_precision", allowed=list(SERVING_PRECISIONS))
    slo = serving.slo
    weights, group_size = checkpoint_weights(request)
    cfg = mirror(
        ServingConfig,
        serving,
        precision=precision,
        weights=weights,
        group_size=group_size,
        max_model_len=serving.max_model_len or serving.max_request_tokens,
        input_tokens_p95=lognormal_p95(serving.input_tokens, serving.input_tokens_p95),
        output_tokens_p95=lognormal_p95(serving.output_tokens, serving.output_tokens_p95),
        kv_cache_precision=kv_precision,
        slo_ttft_ms=slo.ttft_ms if slo else None,
        slo_tpot_ms=slo.tpot_ms if slo else None,
        slo_percentile=slo.percentile if slo else "p90",
        mla_cache_values=_mla(request.model),
        speculative=_speculation(serving.speculative, request.model),
    )
    _check_context(_hf_config(request.model), cfg, "max_model_len" if serving.max_model_len else "max_request_tokens")
    return cfg


def _speculation(spec: SpeculativeIn | None, model: ModelIn) -> Speculation | None:
    """The estimator's speculation: MTP only where the checkpoint ships its layers, a draft model as its preset."""
    if spec is None:
        return None
    if spec.method == "mtp" and mtp_layers(_hf_config(model)) == 0:
        raise EstimatorError.of("serving_mtp_absent", field="serving.speculative.method")
    draft, repo = None, None
    if spec.draft_model is not None:
        try:
            preset = get_preset(spec.draft_model)
        except EstimatorError as error:
            raise EstimatorError(
                str(error), field="serving.speculative.draft_model", code=error.code, params=error.params
            ) from error
        draft, repo = preset.model, _draft_repo(preset.variants, preset.hf_repo, model)
    return Speculation(spec.method, spec.num_speculative_tokens, spec.acceptance_rate, draft=draft, draft_repo=repo)


def _target_variant(model: ModelIn) -> str | None:
    """The variant (base / instruct) the launch serves of the target: the one named, else a preset's instruct model
    where it ships both (as `served`), else None (not a preset with variants)."""
    if model.preset is None:
        return model.variant
    known = dict(get_preset(model.preset).variants)
    return model.variant or ("instruct" if "instruct" in known else None)


def _draft_repo(variants: tuple[tuple[str, str], ...], default: str, target: ModelIn) -> str:
    """The draft's repository: the same variant as the target's where the draft's preset ships it (an instruct
    target drafts with the instruct draft, whose token distribution it matches), else the preset's own."""
    variant = _target_variant(target)
    return dict(variants).get(variant, default) if variant is not None else default


def checkpoint_weights(request: WorkloadIn) -> tuple[WeightFormat | None, int | None]:
    """The weights serving sizes, and their scale group: the request's `weights`, else what the checkpoint ships
    (its config.json quantization_config: DeepSeek-V3's block FP8), else None (= the precision). A quantised
    checkpoint in a format serving does not size is a 422 on `weights` unless the request states one."""
    shipped = checkpoint_from_config(_hf_config(request.model))
    if request.weights is not None:
        return request.weights, shipped.group_size if request.weights == shipped.weights else None
    if not shipped.readable:
        raise EstimatorError.of(
            "serving_checkpoint_format", field="weights", scheme=shipped.scheme, allowed=list(WEIGHT_FORMATS)
        )
    return shipped.weights, shipped.group_size


def served(spec: ModelIn, model: ModelSpec) -> Served:
    """What the launch serves: the repository (a preset's instruct model by default where it ships both, for a
    chat deployment must not serve the base model), the checkpoint it ships and the model's context."""
    config = _hf_config(spec)
    variant = None
    repo = model_repo(spec, model)
    if spec.preset is not None:
        preset = get_preset(spec.preset)
        known = dict(preset.variants)
        chosen = spec.variant or ("instruct" if "instruct" in known else None)
        repo = preset.repo_for(chosen)
        if chosen is not None and len(known) > 1:
            other = next(v for v in known if v != chosen)
            variant = (chosen, other, known[other])
    return Served(repo=repo, checkpoint=checkpoint_from_config(config), context=context_limit(config), variant=variant)


def _check_context(config: Mapping[str, Any] | None, cfg: ServingConfig, stated: str = "max_model_len") -> None:
    """422 naming the field when the lengths exceed the model's context (the engine refuses to start), or a stated
    longest request is shorter than the mean one."""
    total = cfg.input_tokens + cfg.output_tokens
    if cfg.max_model_len is not None and cfg.max_model_len < total:
        raise EstimatorError.of(
            "serving_length_short", field=f"serving.{stated}", name=stated, length=cfg.max_model_len, total=total
        )
    limit = context_limit(config)
    if limit is None:
        return
    if cfg.max_model_len is not None and cfg.max_model_len > limit:
        raise EstimatorError.of(
            "serving_length_context", field=f"serving.{stated}", name=stated, length=cfg.max_model_len, limit=limit
        )
    if total > limit:
        raise EstimatorError.of("serving_request_context", field="serving.input_tokens", total=total, limit=limit)


def _serving_precision(value: str | None) -> ServingPrecision | None:
    """The value as a serving precision (fp16, bf16, fp8), None for anything else."""
    return next((p for p in SERVING_PRECISIONS if p == value), None)


def _hf_config(spec: ModelIn) -> Mapping[str, Any] | None:
    """The config.json values behind the model: the preset's, or the one pasted."""
    return preset_config(spec.preset, _target_variant(spec)) if spec.preset is not None else spec.hf_config


def _mla(spec: ModelIn) -> int:
    return mla_cache_values(_hf_config(spec))


def model_repo(spec: ModelIn, model: ModelSpec) -> str | None:
    """What the engine's command line loads: the preset's Hugging Face repo, the model's hf_id or the pasted
    config's `_name_or_path`; None where none is known (a pasted config's model_type names an architecture, not a
    checkpoint: the launch names a placeholder for the customer's)."""
    if spec.preset is not None:
        return get_preset(spec.preset).hf_repo
    return model.hf_repo


def _finite(value: float) -> float | None:
    return None if math.isinf(value) or math.isnan(value) else value


def serving_out(estimate: ServingEstimate, cfg: ServingConfig, option: ServingOption | None = None) -> ServingOut:
    mem = estimate.memory
    saturated = estimate.latency is not None and estimate.latency["average"].saturated  # unbounded (_latency_out)
    return mirror(
        ServingOut,
        estimate,
        ttft_ms=None if saturated else _finite(estimate.ttft_ms),
        tpot_ms=_finite(estimate.tpot_ms),
        e2e_latency_ms=None if saturated else _finite(estimate.e2e_latency_ms),
        headroom=round(option.headroom, 3) if option and estimate.max_concurrency >= 1 else None,
        latency=_latency_out(estimate.latency),
        utilization=UtilizationOut(**{k: round(v, 3) for k, v in estimate.utilization.items()})
        if estimate.utilization
        else None,
        isolated_ttft_ms=estimate.isolated_ttft_ms,
        peak_requests_per_s=option.peak.requests_per_s if option else None,
        pools=_pools_out(option),
        kv_transfer_ms=option.kv_transfer_ms if option else None,
        memory_per_gpu_gib=ServingMemoryOut(
            weights=round(mem.weights / GIB, 2),
            kv_cache=round(mem.kv_cache / GIB, 2),
            activations=round(mem.activations / GIB, 2),
            engine_reserve=round(mem.engine_reserve / GIB, 2),
            total=round(mem.total / GIB, 2),
            capacity=round(mem.capacity / GIB, 2),
        ),
        engine=cfg.engine,
        batching=cfg.batching,
        notes=list(estimate.notes),
    )


def _pools_out(option: ServingOption | None) -> dict[str, PoolOut] | None:
    if option is None or not option.pools:
        return None
    used = option.pool_utilization or {}
    return {
        name: PoolOut(
            **pool,
            utilization=UtilizationOut(**{k: round(v, 3) for k, v in used[name].items()}) if name in used else None,
        )
        for name, pool in option.pools.items()
    }


def _percentiles_ms(values: Quantiles) -> PercentilesOut:
    return PercentilesOut(p50=values.p50 * 1e3, p90=values.p90 * 1e3, p99=values.p99 * 1e3)


def _latency_out(latency: dict[str, LoadLatency] | None) -> LoadLatencyOut | None:
    """The simulated percentiles; a saturated load's TTFT and end-to-end latency unbounded (PercentilesOut)."""
    if latency is None:
        return None
    parts = {
        name: LatencyOut(
            ttft_ms=UNBOUNDED if load.saturated else _percentiles_ms(load.ttft),
            tpot_ms=_percentiles_ms(load.tpot),
            e2e_ms=UNBOUNDED if load.saturated else _percentiles_ms(load.e2e),
            saturated=load.saturated,
        )  # fmt: skip
        for name, load in latency.items()
    }
    return LoadLatencyOut(average=parts["average"], peak=parts["peak"])


def _memory_out(estimate: ServingEstimate) -> MemoryOut:
    mem = estimate.memory
    parts = {
        "weights": mem.weights,
        "gradients": 0.0,
        "optimizer": 0.0,
        "activations": mem.activations,
        "kv_cache": mem.kv_cache,
        "other": mem.engine_reserve,
        "total": mem.total,
    }
    return gib_memory_out(parts, capacity=mem.capacity, fits=estimate.max_concurrency >= 1)


def _performance_out(estimate: ServingEstimate) -> PerformanceOut:
    return PerformanceOut(
        tokens_per_s=estimate.output_tokens_per_s,
        tokens_per_s_per_gpu=estimate.output_tokens_per_s_per_gpu,
        decode_tokens_per_s=estimate.output_tokens_per_s,
        time_per_output_token_ms=_finite(estimate.tpot_ms),
        breakdown_s={"ttft": estimate.ttft_ms / 1e3} if _finite(estimate.ttft_ms) is not None else {},
    )


def serving_summary(replicas: int, tp: int, pp: int, pools: dict[str, Any] | None = None, ep: int = 1) -> str:
    """A serving plan's summary: its replicas × TP (× PP), or a disaggregated deployment's two pools (`pools`: each
    pool's `tp` and `replicas`), in the API's English (app/words.py SERVE_WORDS words it in each language). The quote
    words its own plan with it (app.quotes.plan_summary)."""
    return words_summary(replicas, tp, pp, pools, "en", ep)


def _plan_out(
    replicas: int, tp: int, pp: int, concurrency: float, pools: dict[str, Any] | None = None, ep: int = 1
) -> PlanOut:
    summary = serving_summary(replicas, tp, pp, pools, ep)
    return PlanOut(
        dp=replicas,
        tp=tp,
        pp=pp,
        cp=1,
        ep=ep,
        zero_stage=0,
        offload="none",
        recompute="none",
        sequence_parallel=False,
        flash_attention=True,
        micro_batch=max(1, math.ceil(concurrency)),
        global_batch=None,
        virtual_stages=1,
        summary=summary,
    )


def _default_split(model: ModelSpec, cfg: ServingConfig, cluster: Cluster) -> tuple[int, int, int]:
    """(tp, pp, replicas), every GPU serving: of the TP degrees within a server that hold a sequence, the one
    whose replicas carry the most (the smaller degree on a tie; the same GPUs, so also the lowest cost per
    token); a model no server holds runs TP over a server and one pipeline stage per server."""
    best: tuple[tuple[bool, float], int] | None = None
    largest_cache = (0, 1)  # (tokens, tp)
    for tp in TP_DEGREES:
        if tp > cluster.gpus_per_node or cluster.gpus % tp or not valid_tp(model, tp):
            continue
        if max_concurrency(model, cfg, cluster.gpu, tp, 1) < 1:
            largest_cache = max(largest_cache, (kv_cache_tokens(model, cfg, cluster.gpu, tp, 1), tp))
            continue
        score = _split_score(model, cfg, cluster, tp, cluster.gpus // tp)
        if best is None or score > best[0]:
            best = (score, tp)
    if best is not None:
        return best[1], 1, cluster.gpus // best[1]
    pipeline = _pipeline_split(model, cfg, cluster)
    if pipeline is not None:
        return pipeline
    where = f"{cluster.nodes} × {cluster.gpus_per_node} × {cluster.gpu.name}"
    if largest_cache[0] > 0:
        raise EstimatorError.of(
            "serving_sequence_kv",
            field="serving.input_tokens",
            context=cfg.context_len,
            where=where,
            tokens=largest_cache[0],
            tp=largest_cache[1],
        )
    code = "serving_no_kv_nodes" if cluster.nodes > 1 else "serving_no_kv"
    raise EstimatorError.of(code, field="hardware", model=model.name, where=where)


def _pipeline_split(model: ModelSpec, cfg: ServingConfig, cluster: Cluster) -> tuple[int, int, int] | None:
    """TP over one server's GPUs, the fewest servers as pipeline stages that hold a sequence."""
    tp = cluster.gpus_per_node
    if cluster.nodes < 2 or not valid_tp(model, tp):
        return None
    for pp in range(2, min(cluster.nodes, model.layers) + 1):
        if cluster.nodes % pp == 0 and max_concurrency(model, cfg, cluster.gpu, tp, pp) >= 1:
            across = _tp_across(model, cfg, cluster, pp)
            if across is not None:
                return across, 1, cluster.nodes // pp
            check_pipeline(cfg.engine, cfg.speculative, pp, field="serving.speculative")
            return tp, pp, cluster.nodes // pp
    return None


def _tp_across(model: ModelSpec, cfg: ServingConfig, cluster: Cluster, servers: int) -> int | None:
    """Where the engine runs no pipeline with the request's speculation: one TP group over `servers` servers joined by
    an RDMA fabric (app/planner/serving_multinode.py), if it holds a sequence; None: the pipeline (or its 422)."""
    if pipelines_with(cfg.engine, cfg.speculative):
        return None
    tp = cross_node_tp(model, cfg, cluster.gpus_per_node, fabric_of(cluster), servers)
    if tp is None or not valid_tp(model, tp) or max_concurrency(model, cfg, cluster.gpu, tp, 1) < 1:
        return None
    return tp


def _split_score(model: ModelSpec, cfg: ServingConfig, cluster: Cluster, tp: int, replicas: int) -> tuple[bool, float]:
    """(meets the SLO or carries the offered load, output tokens/s): at the requested concurrency, or for an
    offered load what the replicas carry within the SLO."""
    if cfg.requests_per_s is None:
        result = estimate_serving(model, cfg, cluster, tp=tp, replicas=replicas)
        return result.meets_slo is not False, result.output_tokens_per_s
    per_replica, _ = replica_capacity(model, cfg, cluster, tp=tp)
    return per_replica * replicas >= cfg.requests_per_s, per_replica * replicas * cfg.output_tokens


def estimate(
    request: EstimateIn,
    model: ModelSpec,
    model_summary: ModelOut,
    warnings_in: list[Warning_],
    hardware: tuple[Cluster, list[Note]],
) -> EstimateOut:
    """POST /estimate with task serving: the plan's tp × pp per replica, dp independent replicas; the hardware's
    assumptions (`{"gpu"}` alone is one card, with `nodes` whole usual servers) head the response's, as training's."""
    cluster, hardware_notes = hardware
    cfg = serving_config(request)
    check_draft(model, cfg.speculative)
    if request.serving is not None and request.serving.disaggregated is not False:
        raise EstimatorError.of("serving_estimate_disaggregated", field="serving.disaggregated")
    unsupported = kernel_support(cluster.gpu, cfg)
    if unsupported:
        raise EstimatorError(unsupported.text, field=unsupported.field)
    if request.plan is not None:
        tp, pp, replicas = request.plan.tp, request.plan.pp, request.plan.dp
        cfg = plan_config(model, cfg, request.plan)
        check_dp_attention_servers(cfg, tp, cluster.gpus_per_node)
        check_serving_plan(model, tp, pp)
        check_pipeline(cfg.engine, cfg.speculative, pp)
        if tp * pp * replicas != cluster.gpus:
            raise EstimatorError.of("serving_plan_gpus", field="plan", gpus=replicas * tp * pp, hardware=cluster.gpus)
        check_fits(model, cfg, cluster.gpu, tp, pp)
    else:
        tp, pp, replicas = _default_split(model, cfg, cluster)
    result = estimate_serving(model, cfg, cluster, tp=tp, pp=pp, replicas=replicas)
    warnings = list(warnings_in)
    if result.max_concurrency < 1:
        tokens = {"context_len": cfg.context_len, "kv_cache_tokens": result.kv_cache_tokens}
        warnings.append(Warning_("no_kv_cache", tokens))
    if result.meets_slo is False:
        warnings.append(_slo_miss(result, cfg))
    warnings += regime_warnings(model, result) + queue_warnings(cfg, result)
    notes = hardware_notes + serving_assumptions(request) + ([NO_FABRIC_NOTE] if replicas > 1 else [])
    return EstimateOut(
        model=model_summary,
        plan=_plan_out(replicas, tp, pp, result.concurrency, ep=tp if cfg.dp_attention else 1),
        memory=_memory_out(result),
        performance=_performance_out(result),
        warnings=warnings_out(warnings),
        assumptions=[n.text for n in notes],
        assumption_codes=notes_out(notes),
        serving=serving_out(result, cfg),
    )


def regime_warnings(model: ModelSpec, result: ServingEstimate) -> list[Warning_]:
    """Where the estimate leaves its validated range: a fine-grained MoE at low concurrency."""
    if result.max_concurrency < 1 or moe_low_concurrency_note(model, result.concurrency) is None:
        return []
    params = {"model": model.name, "experts": model.experts, "concurrency": result.concurrency}
    return [Warning_(MOE_LOW_CONCURRENCY_WARNING, params | {"validated": MOE_VALIDATED_CONCURRENCY})]


def queue_warnings(cfg: ServingConfig, result: ServingEstimate, longest: int | None = None) -> list[Warning_]:
    """A concurrency beyond the sequences a replica runs: the others queue for a KV slot (their wait is in the TTFT),
    and the replicas of this shape that would run them all; prompts the stated p95 draws past the `longest` request
    the replica accepts (its launch's max_model_len; else the stated one, or one sequence's KV cache) with their
    output: the engine refuses them, and the simulation (serving.simulation `_lengths`) counts them shorter."""
    clients, slots = cfg.concurrency, result.max_concurrency
    limit = min(longest or cfg.max_model_len or result.sequence_kv_tokens, result.sequence_kv_tokens)
    share = Lengths(cfg.input_tokens, cfg.input_tokens_p95).share_above(limit - cfg.output_tokens)
    refused = [Warning_("prompts_over_limit", {"share": share, "limit": limit})] if share >= 0.001 else []
    if clients is None or slots < 1 or clients <= slots:
        return refused
    params = {
        "concurrency": clients, "max_concurrency": slots, "wait_ms": queue_wait_s(result, clients) * 1e3,
        "replicas": math.ceil(clients / slots) * result.replicas,
    }  # fmt: skip
    return [*refused, Warning_("concurrency_over_kv", params)]


def _slo_miss(result: ServingEstimate, cfg: ServingConfig) -> Warning_:
    """The miss as it was judged: for requests_per_s the SLO's percentile at the peak (saturated: the queue grows),
    for a concurrency the steady state's latencies."""
    peak = result.latency.get("peak") if result.latency else None
    if peak is None or cfg.requests_per_s is None:
        reached = {"ttft_ms": result.ttft_ms, "tpot_ms": result.tpot_ms, "concurrency": result.concurrency}
        if (at_q := result.at_percentile_ms) is not None:  # judged at the SLO's percentile (estimate_serving)
            at = {"ttft_ms": at_q[0], "tpot_ms": at_q[1], "percentile": cfg.slo_percentile}
            return Warning_("slo_missed_percentile", reached | at | slo_params(cfg))
        return Warning_("slo_missed", reached | slo_params(cfg))
    q = cfg.slo_percentile
    judged = {
        "percentile": q, "ttft_ms": peak.ttft.at(q) * 1e3, "tpot_ms": peak.tpot.at(q) * 1e3,
        "peak_rps": cfg.requests_per_s * cfg.peak_factor,
    }  # fmt: skip
    if peak.saturated:
        return Warning_("slo_missed_saturated", judged | slo_params(cfg))
    return Warning_("slo_missed_peak", judged | slo_params(cfg))


def serving_facts(option: ServingOption, cfg: ServingConfig) -> dict[str, Any]:
    """The figures a serving option's explanation words (app/words.py `serving_explanation`): its layout, what it
    carries at what latency, the peak asked (requests_per_s × peak_factor, not what a saturated shape carries), and the
    headroom as checked: the factor one simulation met above the peak, or, where none was met (or run), the factor it
    missed at and the peak's utilisation, since nothing above the peak was verified."""
    est = option.estimate
    peak_rps = cfg.requests_per_s * cfg.peak_factor if cfg.requests_per_s is not None else option.peak.requests_per_s
    facts: dict[str, Any] = {
        "replicas": option.replicas, "tp": option.tp, "pp": option.pp, "pools": option.pools or None,
        "ep": option.tp if option.dp_attention else 1,
        "sku": option.offer.name, "requests_per_s": est.requests_per_s, "ttft_ms": est.ttft_ms,
        "tpot_ms": est.tpot_ms, "peak_rps": peak_rps,
        # its TTFT is a queue's growth over the run, no latency
        "saturated": (est.utilization or {}).get("average", 0.0) >= 1.0,
        # a shape that holds no request has no latency, throughput, unit price or launch to show (review R2 R4:
        # ¥0.00 per million tokens and a --max-model-len 1888 launch for a 8,300-token request)
        "holds": est.max_concurrency >= 1 or option.pools is not None,
    }  # fmt: skip
    if any(code.startswith(("slo_", "kv_slots")) for code, _ in option.misses):  # a near miss on its latency
        return facts | {"missed": True}
    if option.headroom > 1.0:
        return facts | {"headroom": option.headroom}
    return facts | {
        "missed_at": option.headroom_missed_at,
        "peak_utilisation": (est.utilization or {}).get("peak"),
    }


def option_out(
    option: ServingOption,
    cfg: ServingConfig,
    model_warnings: list[Warning_],
    workload_body: dict[str, Any],
    model: ModelSpec,
) -> OptionOut:
    est = option.estimate
    cfg = dp_attention_config(cfg) if option.dp_attention else cfg
    facts = serving_facts(option, cfg)
    explanation = serving_explanation(facts, "en")
    holds = facts["holds"]
    per_million = str(option.per_million_output_tokens) if holds else None
    ep = option.tp if option.dp_attention else 1
    plan = _plan_out(option.replicas, option.tp, option.pp, est.concurrency, option.pools, ep)
    return placed_option_out(
        option,
        plan=plan,
        memory=_memory_out(est),
        performance=_performance_out(est),
        cost=cost_out(option.cost, SERVING_NOTE, per_million_output_tokens=per_million),
        availability=availability_out(option.availability),
        explanation=explanation,
        warnings=warnings_out(
            model_warnings
            + regime_warnings(model, est)
            + queue_warnings(cfg, est, (option.launch or {}).get("max_model_len"))
            + _offer_warnings(option)
            + option.warnings
        ),
        launch=option.launch if holds else None,
        miss_reason=option.miss_reason,
        misses=[MissOut(code=code, params=params) for code, params in option.misses],
        serving=serving_out(est, cfg, option),
        quote=_quote(option, plan, workload_body),
        **assumptions_out(fabric_assumptions(option)),
    )


def _miss_out(
    option: ServingOption, cfg: ServingConfig, model_warnings: list[Warning_], body: dict[str, Any], model: ModelSpec
) -> OptionOut:
    """A near miss as the config and request it was sized on answer it (a `bf16_for_fp8` one: the request in bf16; a
    `pp_speculative` one: the request without speculation, which its launch runs and its quote states)."""
    option_cfg, option_body = served_as(option, cfg, body)
    if option.misses and option.misses[0][0] == "pp_speculative":
        option_cfg, option_body = _without_speculation(option_cfg, option_body)
    return option_out(option, option_cfg, model_warnings, option_body, model)


def _without_speculation(cfg: ServingConfig, body: dict[str, Any]) -> tuple[ServingConfig, dict[str, Any]]:
    serving = {key: value for key, value in body.get("serving", {}).items() if key != "speculative"}
    return replace(cfg, speculative=None), body | {"serving": serving}


# The plan's parallel degrees a quote's plan check re-sizes as colocated replicas (app/quotes/plan_check.py DEGREES).
COLOCATED_DEGREES = ("dp", "tp", "pp", "cp", "ep")


def _quote(option: ServingOption, plan: PlanOut, workload_body: dict[str, Any]) -> QuoteBodyOut:
    """The option's POST /quotes body. A disaggregated deployment's plan states its pools in place of colocated
    degrees (two pools are no dp × tp × pp), which the quote's plan check holds the quantity and add-ons to; the
    workload states the mode chosen (an "auto" request's option is one or the other)."""
    serving = workload_body.get("serving")
    if isinstance(serving, dict) and serving.get("disaggregated", False) is not False:
        workload_body = workload_body | {"serving": serving | {"disaggregated": bool(option.pools)}}
    quote = quote_body(option, plan, workload_body)
    if option.pools:
        quote.plan = {key: value for key, value in quote.plan.items() if key not in COLOCATED_DEGREES}
        quote.plan["pools"] = {name: dict(option.pools[name]) for name in ("prefill", "decode")}
    return quote


def _offer_warnings(option: ServingOption) -> list[Warning_]:
    """The price's omissions: the fabric add-on of every server when a replica's pipeline spans servers
    (replicas that share nothing need none), an indicative price."""
    joined = option.config.nodes if option.launch["needs_infiniband"] else 1
    return offer_warnings(option.offer, joined)


def _placed(option: ServingOption, constraints: Constraints) -> Availability:
    months = option.cost.months or TERM_MONTHS[option.cost.term]
    return in_region(option.offer, option.region, option.cost.units, months, constraints.start_date or date.today())


def with_capacity(search: ServingSearch, constraints: Constraints) -> ServingSearch:
    """Each deployment's availability in its region from the start date (one term of it); a deployment that rents
    more units than are free there becomes a near miss (`capacity`) and the others are ranked again."""
    kept, short = [], []
    for option in search.near_misses:
        option.availability = _placed(option, constraints)
    for option in search.options:
        availability = option.availability = _placed(option, constraints)
        if availability.short:
            option.misses.append(("capacity", availability.miss_params(option.offer.sku_id, option.offer.rental_unit)))
            option.rank = None
            short.append(option)
        else:
            kept.append(option)
    for rank, option in enumerate(kept, start=1):
        option.rank = rank
    search.options, search.near_misses = kept, short + search.near_misses
    return search


def _search(
    model: ModelSpec, cfg: ServingConfig, serving: ServingIn, offers: list[Offer], constraints: Constraints, how: Served
) -> ServingSearch:
    """Colocated replicas, disaggregated pools, or both ranked together (serving.disaggregated)."""
    factor = serving.peak_factor
    if serving.disaggregated is False:
        return search_serving(model, cfg, offers, constraints, peak_factor=factor, served=how)
    check_disaggregated(cfg)
    pools = search_disaggregated(model, cfg, offers, constraints, peak_factor=factor, served=how)
    if serving.disaggregated is True:
        return pools
    return merged(search_serving(model, cfg, offers, constraints, peak_factor=factor, served=how), pools, constraints)


def rejected_out(search: ServingSearch) -> list[RejectedOut]:
    rejected = [
        RejectedOut(sku=sku, code=code, params=params, reason=messages.rejection(code, params))
        for sku, code, params in search.rejected
    ]
    skipped = messages.rejection("time_budget", {})
    return rejected + [RejectedOut(sku=sku, code="time_budget", reason=skipped) for sku in search.not_searched]


def recommendation(
    model: ModelSpec,
    request: RecommendIn,
    offers: list[Offer],
    constraints: Constraints,
    model_summary: ModelOut,
    model_warnings: list[Warning_],
    *,
    currency: str,
) -> RecommendOut:
    """POST /recommend with task serving: the cheapest deployments that carry the peak within the SLO."""
    cfg = serving_config(request)
    check_draft(model, cfg.speculative)
    serving = request.serving or ServingIn()
    how = served(request.model, model)
    search = _search(model, cfg, serving, offers, constraints, how)
    if serving.disaggregated is not True:  # colocated replicas asked (or either): the bf16 a refused SKU would run
        factor = serving.peak_factor
        alternatives = sixteen_bit_misses(model, cfg, offers, constraints, search, peak_factor=factor, served=how)
        search.near_misses = alternatives + search.near_misses
    search = with_capacity(search, constraints)
    # the workload the deployment was sized on: serving's own fields, and only what the request set of the training
    # and inference ones (their defaults, e.g. output_tokens 256 beside serving.output_tokens, size nothing here)
    kept = SERVING_WORKLOAD_FIELDS | request.model_fields_set
    body = request.model_dump(mode="json", include=set(WorkloadIn.model_fields) & kept, exclude_none=True)
    return RecommendOut(
        model=model_summary,
        currency=currency,
        options=[option_out(o, cfg, model_warnings, body, model) for o in search.options],
        near_misses=[_miss_out(o, cfg, model_warnings, body, model) for o in search.near_misses],
        rejected=rejected_out(search),
        pareto=[
            ParetoPointOut(sku=o.offer.sku_id, total_gpus=o.config.gpus, cost=str(o.cost.compared_monthly), hours=None)
            for o in search.options
        ],
        assumptions=[n.text for n in serving_assumptions(request)],
        assumption_codes=notes_out(serving_assumptions(request)),
        stopped_early=search.stopped_early,
        search={"configurations": search.evaluations},
    )
