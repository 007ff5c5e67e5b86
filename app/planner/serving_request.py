"""A `task: "serving"` request resolved for the estimator (app/planner/serving_service.py): its serving config
(lengths, precision, weights, speculation, latency targets, checked against the model's context), the config a stated
plan runs, what the launch serves, and the notes on what the figures assume."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.common.schemas import mirror
from app.estimator.checkpoints import checkpoint_from_config
from app.estimator.notes import Note, note
from app.estimator.presets import get_preset, preset_config
from app.estimator.serving import ServingConfig, context_limit, mla_cache_values
from app.estimator.serving_levers import Speculation, mtp_layers
from app.estimator.serving_sim import MAX_P95_RATIO
from app.estimator.specs import EstimatorError, ModelSpec
from app.estimator.vocabulary import SERVING_PRECISIONS, WEIGHT_FORMATS, ServingPrecision, WeightFormat
from app.planner.schemas import ModelIn, PlanIn, WorkloadIn
from app.planner.serving_dp_attention import dp_attention_applies, dp_attention_config, ep_refusal
from app.planner.serving_launch import Served
from app.planner.serving_schemas import ServingIn, SpeculativeIn

# What the serving figures assume (app/estimator/notes.py words them; app/text/note_words.py in Chinese).
SERVING_ASSUMPTIONS = [note("serving_engines"), note("serving_batching"), note("serving_decode")]


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
