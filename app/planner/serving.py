"""Serving deployments: search SKU × tensor parallel × replicas for the cheapest that carry an offered
load within latency targets. PURE: offers in, options out (estimator, offers and the time budget only).

For each offer and TP degree the estimator gives one replica's capacity at the SLO (the highest
concurrency whose TTFT and TPOT meet the targets, `app.estimator.serving`). The replicas needed for
the peak load (offered requests/s × peak factor) set the GPU count; a rentable configuration is the
smallest that holds them. Replicas share nothing (each is its own engine behind a load balancer), so
they may sit on separate servers without any inter-node fabric. Ranking: lowest cost per million output
tokens in the request's currency (app.planner.market; for an offered load, the lowest monthly price),
then the lower monthly price, the larger capacity within the SLO (headroom), lower TPOT, then SKU id;
objective "fastest" ranks by a request's end-to-end latency at the offered load first.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any, Unpack

from app.estimator.serving import ServingConfig, kernel_support, simulations
from app.estimator.specs import EstimatorError, ModelSpec
from app.planner.availability import allowed_regions
from app.planner.budget import past, search_deadline
from app.planner.misses import term_warnings
from app.planner.offers import Constraints, Offer, excluded, with_alternatives
from app.planner.serving_dp_attention import dp_attention_applies, dp_attention_config
from app.planner.serving_misses import miss_key, misses_one_request, with_simulated_peak
from app.planner.serving_option import (
    Ask,
    SearchOptions,
    ServingOption,
    ServingSearch,
    ask_for,
    search_ask,
    valid_tp,
)
from app.planner.serving_rank import cost_key, ranking
from app.planner.serving_shapes import OfferShapes, offer_shapes
from app.planner.serving_verify import (
    Verified,
    count_needs,
    hold_headroom,
    lazy_rank,
    settle,
    simulated,
    verify_ranked,
)


def _region(offer: Offer, constraints: Constraints) -> str | None:
    """The first allowed region: where the search prices the offer. The deployment is placed once its units are
    known (app.planner.serving_service.with_capacity, app.planner.availability.placed, as a training plan is)."""
    allowed = allowed_regions(offer, constraints)
    return allowed[0] if allowed else None


def offer_region(
    offer: Offer, constraints: Constraints, cfg: ServingConfig, rejected: list[tuple[str, str, dict[str, Any]]]
) -> str | None:
    """The region to serve from `offer` in, or None when the offer is out, rejected with its code (added to
    `rejected`): left out by the constraints as training leaves it out (app.planner.offers.excluded: a GPU type or
    region not asked for, no fabric where one is required, prices without an exchange rate), kernels the GPU lacks."""
    left_out = excluded(offer, constraints)
    if left_out is not None:
        rejected.append((offer.sku_id, *left_out))
        return None
    region = _region(offer, constraints)
    if region is None:  # not reached: `excluded` leaves out an offer in none of the regions asked for
        return None
    unsupported = kernel_support(offer.gpu, cfg)
    if unsupported:
        rejected.append((offer.sku_id, "kernels", {"gap": unsupported.gap, **unsupported.params}))
        return None
    return region


def search_serving(
    model: ModelSpec, cfg: ServingConfig, offers: list[Offer], constraints: Constraints, **how: Unpack[SearchOptions]
) -> ServingSearch:
    """Cheapest deployments per offer and TP degree that carry cfg.requests_per_s × peak_factor within the SLO.

    Without requests_per_s, one replica per configuration at cfg.concurrency (or the most it holds). A model
    no server of the offer serves is tried as a pipeline: TP over a server's GPUs, one stage per server,
    on SKUs a fabric joins.
    """
    ask = search_ask(model, cfg, constraints, how)
    with simulations():
        return _search(ask, offers)


def _search(ask: Ask, offers: list[Offer]) -> ServingSearch:
    """search_serving's body, its simulations shared."""
    constraints = ask.constraints
    rank_key = ranking(constraints)
    misses: list[ServingOption] = []
    rejected: list[tuple[str, str, dict[str, Any]]] = []
    pending: list[ServingOption] = []  # every offer's candidates, simulated in rank order once all are known
    steady_misses: dict[str, ServingOption] = {}  # an offer's nearest miss by the closed forms, by SKU
    evaluations = 0
    not_searched: list[str] = []
    deadline = search_deadline()
    for offer in offers:
        if past(deadline):
            not_searched.append(offer.sku_id)
            continue
        region = offer_region(offer, constraints, ask.cfg, rejected)
        if region is None:
            continue
        found = offer_shapes(ask, offer, region)
        if dp_attention_applies(ask.model, ask.cfg):
            found = _merged(found, offer_shapes(replace(ask, cfg=dp_attention_config(ask.cfg)), offer, region))
        evaluations += found.evaluations
        if found.candidates:
            pending.extend(found.candidates)
            if found.miss is not None:
                steady_misses[offer.sku_id] = found.miss
        elif found.capable is not None and (found.miss is None or misses_one_request(found.miss)):
            rejected.append((offer.sku_id, "max_nodes", found.capable[1]))
        elif found.miss is not None:
            misses.append(found.miss)
        else:
            rejected.append((offer.sku_id, *found.why_not))
            misses += _without_speculation(ask, offer, region, found.why_not)
    verified = verify_ranked(ask, pending, rank_key)
    misses += _verified_misses(ask, verified, steady_misses)
    options, misses = _shown(ask, list(verified.best.values()), misses, lazy_rank(ask, rank_key))
    return ServingSearch(options, misses, rejected, evaluations, not_searched)


def _without_speculation(ask: Ask, offer: Offer, region: str, why: tuple[str, dict[str, Any]]) -> list[ServingOption]:
    """For a SKU only a pipelined replica serves, under an engine that runs no speculation across pipeline stages
    (`pp_speculative`): its cheapest deployment without speculation, simulated, as a near miss that says why."""
    if why[0] != "pp_speculative":
        return []
    plain = replace(ask, cfg=replace(ask.cfg, speculative=None))
    found = offer_shapes(plain, offer, region)
    shown = min(found.candidates, key=cost_key) if found.candidates else found.miss
    if shown is None:
        return []
    simulated(plain, shown)  # its figures without speculation (the shown misses' own simulation then skips it)
    shown.misses.insert(0, ("pp_speculative", why[1]))
    return [shown]


def _verified_misses(ask: Ask, verified: Verified, steady_misses: dict[str, ServingOption]) -> list[ServingOption]:
    """The near misses the simulation leaves: for a SKU whose every candidate was simulated and none meets, the
    nearest miss, a simulated one and the closed forms' both simulated before they are compared (review R3-4: with
    max_nodes 4, DeepSeek-V3's TP 8 × PP 2, its closed forms' TTFT 113 ms, was shown before EP 16 × 2 at a simulated
    p90 of 784 ms, while it saturates at the peak: 38.6 s); then the deployments over a budget."""
    misses = []
    for sku in verified.settled - set(verified.best):
        nearest = [m for m in (verified.nearest.get(sku), steady_misses.get(sku)) if m is not None]
        for miss in nearest if len(nearest) > 1 else []:
            _held_to_simulation(ask, miss)
        if nearest:
            misses.append(min(nearest, key=miss_key))
    return misses + verified.over_budget


def _held_to_simulation(ask: Ask, miss: ServingOption) -> None:
    """A near miss simulated at the offered load, its latency misses held to that simulation (`with_simulated_peak`)."""
    settle(ask, miss)
    # more than the SKU rents: the replicas its own max_nodes miss cites, not the closed forms' at the offered rate
    simulated(ask, miss, next((p["replicas"] for code, p in miss.misses if code == "max_nodes"), None))
    miss.misses = with_simulated_peak(ask_for(ask, miss).cfg, miss.misses, miss.estimate)


def _shown(
    ask: Ask, options: list[ServingOption], misses: list[ServingOption], rank: Callable[[ServingOption], Any]
) -> tuple[list[ServingOption], list[ServingOption]]:
    """The options and near misses shown, ranked and cut at the limit; only these are settled at the offered load,
    the misses simulated, their replicas_needed counted (`count_needs`), and both priced on the other term (the
    search evaluates far more)."""
    options = sorted(options, key=rank)[: ask.constraints.limit]
    for option in options:
        count_needs(ask, option)
        hold_headroom(ask, option)
    options = sorted(options, key=rank)  # the shown headroom ranks equal prices
    for place, option in enumerate(options, start=1):
        option.rank = place
    misses = sorted(misses, key=lambda o: (o.peak.tpot_ms, o.cost.compared_monthly, o.offer.sku_id))
    misses = misses[: ask.constraints.limit]
    for miss in misses:
        _held_to_simulation(ask, miss)
        count_needs(ask, miss)
    for option in options + misses:
        _with_other_term(option)
    return options, misses


def _with_other_term(option: ServingOption) -> None:
    """The other term's price of the option's units for the same months (`Cost.alternatives`), and its warning
    where that bills less."""
    joined = option.offer.inter_node_fabric is not None and option.tp * option.pp > option.offer.gpus_per_node
    option.cost = with_alternatives(option.offer, option.config, option.cost, joined=joined)
    option.warnings = [*option.warnings, *term_warnings(option.cost)]


def _merged(plain: OfferShapes, dp: OfferShapes) -> OfferShapes:
    """An offer's plain-TP shapes and its DP-attention ones, weighed together (the nearer miss of the two)."""
    plain.candidates += dp.candidates
    plain.evaluations += dp.evaluations
    if dp.miss is not None and (plain.miss is None or miss_key(dp.miss) < miss_key(plain.miss)):
        plain.miss = dp.miss
    plain.capable = plain.capable or dp.capable
    return plain


def check_serving_plan(model: ModelSpec, tp: int, pp: int) -> None:
    """Field-named errors for a TP/PP split the engines refuse."""
    if not valid_tp(model, tp):
        raise EstimatorError.of("serving_tp_heads", field="plan.tp", tp=tp, heads=model.heads, kv_heads=model.kv_heads)
    if pp > model.layers:
        raise EstimatorError.of("serving_pp_layers", field="plan.pp", pp=pp, layers=model.layers)
