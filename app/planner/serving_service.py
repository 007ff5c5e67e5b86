"""`task: "serving"` as a service: resolve the request into a serving config, run the pure estimator
(POST /estimate) or the deployment search (POST /recommend), and shape the response."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from app.estimator.notes import Note, note
from app.estimator.serving import (
    ServingConfig,
    ServingEstimate,
    check_fits,
    estimate_serving,
    kernel_support,
    moe_low_concurrency_warning,
    queue_wait_s,
)
from app.estimator.serving_levers import check_draft, check_pipeline
from app.estimator.serving_sim import Lengths
from app.estimator.specs import Cluster, EstimatorError, ModelSpec, Warning_
from app.estimator.vocabulary import TERM_MONTHS
from app.planner.availability import Availability, placed
from app.planner.explain import offer_warnings
from app.planner.mappers import (
    assumptions_out,
    availability_out,
    cost_out,
    fabric_assumptions,
    notes_out,
    placed_option_out,
    quote_body,
    warnings_out,
)
from app.planner.misses import slo_params
from app.planner.schemas import (
    EstimateOut,
    MissOut,
    ModelOut,
    OptionOut,
    ParetoPointOut,
    PlanOut,
    QuoteBodyOut,
    RecommendOut,
    RejectedOut,
    WorkloadIn,
)
from app.planner.serving import check_serving_plan, search_serving
from app.planner.serving_disagg import check_disaggregated, merged, search_disaggregated
from app.planner.serving_dp_attention import check_dp_attention_servers, dp_attention_config
from app.planner.serving_launch import Served
from app.planner.serving_mappers import memory_out, performance_out, plan_out, serving_out
from app.planner.serving_option import ServingOption, ServingSearch
from app.planner.serving_request import plan_config, served, serving_assumptions, serving_config
from app.planner.serving_schemas import ServingIn
from app.planner.serving_sixteen_bit import served_as, sixteen_bit_misses
from app.planner.serving_split import default_split
from app.text import messages
from app.text.words import serving_explanation

if TYPE_CHECKING:
    from app.planner.offers import Constraints, Offer
    from app.planner.schemas import EstimateIn, RecommendIn

SERVING_NOTE = (
    "Monthly price of the whole configuration; cost per million output tokens at the offered load "
    "(30-day months, around the clock); the job total is one term of the deployment, what its quote bills."
)


# The workload fields a serving deployment is sized on (the rest of WorkloadIn is training's or inference's).
SERVING_WORKLOAD_FIELDS = frozenset({"model", "task", "precision", "weights", "kv_cache_precision", "serving"})
NO_FABRIC_NOTE = note("replicas_share_nothing")


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
        tp, pp, replicas = default_split(model, cfg, cluster)
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
        plan=plan_out(replicas, tp, pp, result.concurrency, ep=tp if cfg.dp_attention else 1),
        memory=memory_out(result),
        performance=performance_out(result),
        warnings=warnings_out(warnings),
        assumptions=[n.text for n in notes],
        assumption_codes=notes_out(notes),
        serving=serving_out(result, cfg),
    )


def regime_warnings(model: ModelSpec, result: ServingEstimate) -> list[Warning_]:
    """Where the estimate leaves its validated range: a fine-grained MoE at low concurrency."""
    warning = moe_low_concurrency_warning(model, result.concurrency) if result.max_concurrency >= 1 else None
    return [] if warning is None else [warning]


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
    """The figures a serving option's explanation words (app/text/words.py `serving_explanation`): its layout, what it
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
    plan = plan_out(option.replicas, option.tp, option.pp, est.concurrency, option.pools, ep)
    return placed_option_out(
        option,
        plan=plan,
        memory=memory_out(est),
        performance=performance_out(est),
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
    """Where the deployment goes and what is free there, decided as for a training plan (review R7-1): the first
    allowed region with its units free, else one not tracked; the option moves to that region."""
    months = option.cost.months or TERM_MONTHS[option.cost.term]
    availability = placed(option.offer, option.cost.units, constraints, months)
    option.region = availability.region
    return availability


def with_capacity(search: ServingSearch, constraints: Constraints) -> ServingSearch:
    """Each deployment's region and its availability there from the start date (one term of it, `_placed`); a
    deployment that rents more units than are free in every allowed region, none of them untracked, becomes a near
    miss (`capacity`) and the others are ranked again."""
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
