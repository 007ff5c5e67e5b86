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

import math
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from app.estimator.serving import (
    ServingConfig,
    ServingEstimate,
    estimate_serving,
    kernel_support,
    kv_cache_tokens,
    max_concurrency,
    meets_at_peak,
    peak_latency,
    peak_latency_at,
    replica_capacity,
    replicas_for_slo,
    sequence_kv_tokens,
    simulations,
    steer_replicas,
)
from app.estimator.serving_levers import pipelines_with
from app.estimator.specs import Cluster, EstimatorError, ModelSpec, Warning_
from app.estimator.vocabulary import TERM_MONTHS
from app.messages import misses as miss_text
from app.planner.availability import Availability
from app.planner.budget import past, search_deadline
from app.planner.misses import Miss, budget_misses, slo_params, term_warnings
from app.planner.offers import (
    DAYS_PER_BILLED_MONTH,
    Configuration,
    Constraints,
    Cost,
    Offer,
    price,
    unconvertible,
    with_alternatives,
)
from app.planner.serving_dp_attention import dp_attention_applies, dp_attention_config, dp_attention_degrees
from app.planner.serving_headroom import checked_headroom
from app.planner.serving_launch import Served, launch_block
from app.planner.serving_misses import (
    miss_key,
    misses_one_request,
    queues_for_slots,
    simulated_miss,
    slo_miss,
    slot_params,
    with_simulated_peak,
)
from app.planner.serving_multinode import cross_node_degrees

SECONDS_PER_BILLED_MONTH = DAYS_PER_BILLED_MONTH * 86400
TP_DEGREES = (1, 2, 4, 8, 16)


@dataclass(slots=True)
class ServingOption:
    offer: Offer
    config: Configuration
    region: str
    tp: int
    replicas: int
    estimate: ServingEstimate  # at the offered load
    peak: ServingEstimate  # at the peak load
    cost: Cost
    per_million_output_tokens: Decimal
    headroom: float  # what the replicas carry within the SLO ÷ the peak load
    launch: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    rank: int | None = None
    misses: list[Miss] = field(default_factory=list)  # a near miss's reasons (app/messages.py words them)
    pp: int = 1  # pipeline stages of one replica, one server each beyond a server's TP
    # one replica: (its estimate at one request, requests/s within the SLO, concurrency there)
    replica: tuple[ServingEstimate, float, float] | None = None
    verified: bool = False  # its latency simulated: `estimate` carries the latency at the offered load and peak
    warnings: list[Warning_] = field(default_factory=list)  # about its cost: budgets, the other term
    # verified at the peak, its simulation at the offered load not run yet (`_settle` runs it): the replicas the
    # simulation needs, for the estimate
    deferred: int | None = None
    # disaggregated prefill/decode (app/planner/serving_disagg.py): {"prefill": {"tp", "replicas", "gpus"}, "decode":
    # {…}} and the KV transfer per request, ms; None: colocated replicas
    pools: dict[str, dict[str, int]] | None = None
    kv_transfer_ms: float | None = None
    # each pool's utilisation at the offered load and the peak ({"prefill": {"average", "peak"}, "decode": {…}});
    # the option's own (estimate.utilization) is the busier pool's
    pool_utilization: dict[str, dict[str, float]] | None = None
    availability: Availability | None = None  # set after the search (app.planner.serving_service.with_capacity)
    headroom_held: bool = False  # `headroom` held to the simulation (`simulated_headroom`): shown options only
    headroom_missed_at: float | None = None  # the factor of the peak whose headroom simulation missed the SLO
    dp_attention: bool = False  # DP attention with EP over the tp ranks (app/planner/serving_dp_attention.py)

    @property
    def miss_reason(self) -> str | None:
        """Why a near miss misses, in English."""
        return miss_text(self.misses)


@dataclass(frozen=True, slots=True)
class _Ask:
    """What every evaluation of one search shares."""

    model: ModelSpec
    cfg: ServingConfig
    constraints: Constraints
    peak_factor: float
    served: Served


@dataclass(slots=True)
class ServingSearch:
    options: list[ServingOption]
    near_misses: list[ServingOption]
    rejected: list[tuple[str, str, dict[str, Any]]]  # (sku id, code, its parameters for app/messages.py)
    evaluations: int = 0
    not_searched: list[str] = field(default_factory=list)  # SKUs left when the time budget ran out

    @property
    def stopped_early(self) -> bool:
        return bool(self.not_searched)


def valid_tp(model: ModelSpec, tp: int) -> bool:
    """Engines split attention heads evenly: heads % tp == 0 and KV heads divide or are divided by tp."""
    return model.heads % tp == 0 and (model.kv_heads % tp == 0 or tp % model.kv_heads == 0)


def _region(offer: Offer, constraints: Constraints) -> str | None:
    allowed = [r for r in offer.regions if not constraints.regions or r in constraints.regions]
    return allowed[0] if allowed else None


def offer_region(
    offer: Offer, constraints: Constraints, cfg: ServingConfig, rejected: list[tuple[str, str, dict[str, Any]]]
) -> str | None:
    """The region to serve from `offer` in, or None when the offer is out: not a GPU type or region asked for,
    or rejected with its code (added to `rejected`): prices without an exchange rate, kernels the GPU lacks."""
    if constraints.gpu_types and offer.gpu.id not in constraints.gpu_types:
        return None
    region = _region(offer, constraints)
    if region is None:
        return None
    if offer.unconvertible:
        rejected.append((offer.sku_id, "exchange_rate", unconvertible(offer)))
        return None
    unsupported = kernel_support(offer.gpu, cfg)
    if unsupported:
        rejected.append((offer.sku_id, "kernels", {"gap": unsupported.gap, **unsupported.params}))
        return None
    return region


def _configuration(offer: Offer, gpus: int, constraints: Constraints) -> Configuration | None:
    """The smallest rentable configuration with at least `gpus` cards (independent replicas may span servers)."""
    if offer.rental_unit == "card":
        counts = [c for c in sorted(offer.card_counts) if c >= gpus]
        return Configuration(counts[0], 1) if counts else None
    nodes = math.ceil(gpus / offer.gpus_per_node)
    return Configuration(offer.gpus_per_node, nodes) if nodes <= constraints.max_nodes else None


def _money(amount: Decimal, quantum: Decimal) -> Decimal:
    return amount.quantize(quantum, rounding=ROUND_HALF_UP)


def per_million_tokens(monthly: Decimal, tokens_per_s: float, quantum: Decimal) -> Decimal:
    """Monthly price ÷ output tokens produced in a billed month at that rate, per million tokens."""
    if tokens_per_s <= 0:
        return Decimal(0)
    per_month = Decimal(str(tokens_per_s)) * SECONDS_PER_BILLED_MONTH
    return _money(monthly * Decimal(1_000_000) / per_month, quantum)


def search_serving(
    model: ModelSpec,
    cfg: ServingConfig,
    offers: list[Offer],
    constraints: Constraints,
    *,
    peak_factor: float = 1.5,
    model_repo: str | None = None,
    served: Served | None = None,
) -> ServingSearch:
    """Cheapest deployments per offer and TP degree that carry cfg.requests_per_s × peak_factor within the SLO.

    Without requests_per_s, one replica per configuration at cfg.concurrency (or the most it holds). A model
    no server of the offer serves is tried as a pipeline: TP over a server's GPUs, one stage per server,
    on SKUs a fabric joins.
    """
    ask = _Ask(
        model, replace(cfg, peak_factor=peak_factor), constraints, peak_factor, served or Served(repo=model_repo)
    )
    with simulations():
        return _search(ask, offers)


def _search(ask: _Ask, offers: list[Offer]) -> ServingSearch:
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
        found = _offer_shapes(ask, offer, region)
        if dp_attention_applies(ask.model, ask.cfg):
            found = _merged(found, _offer_shapes(replace(ask, cfg=dp_attention_config(ask.cfg)), offer, region))
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
    verified = _verify_ranked(ask, pending, rank_key)
    misses += _verified_misses(ask, verified, steady_misses)
    options, misses = _shown(ask, list(verified.best.values()), misses, _lazy(ask, rank_key))
    return ServingSearch(options, misses, rejected, evaluations, not_searched)


def _without_speculation(ask: _Ask, offer: Offer, region: str, why: tuple[str, dict[str, Any]]) -> list[ServingOption]:
    """For a SKU only a pipelined replica serves, under an engine that runs no speculation across pipeline stages
    (`pp_speculative`): its cheapest deployment without speculation, simulated, as a near miss that says why."""
    if why[0] != "pp_speculative":
        return []
    plain = replace(ask, cfg=replace(ask.cfg, speculative=None))
    found = _offer_shapes(plain, offer, region)
    shown = min(found.candidates, key=_key) if found.candidates else found.miss
    if shown is None:
        return []
    _simulated(plain, shown)  # its figures without speculation (the shown misses' own simulation then skips it)
    shown.misses.insert(0, ("pp_speculative", why[1]))
    return [shown]


@dataclass(slots=True)
class _OfferShapes:
    """One offer's shapes weighed by the closed forms."""

    candidates: list[ServingOption]  # the offer's deployments that meet the SLO by the closed forms
    miss: ServingOption | None  # its nearest deployment that does not
    # why the offer has no deployment at all: the weights leave no KV cache at any degree (a SKU of servers without
    # a fabric cannot pipeline either), or the smallest shape is refused for the SKU's size limits
    why_not: tuple[str, dict[str, Any]]
    # the fewest-GPU shape refused for the SKU's size limits whose one request meets the SLO: where the shapes it
    # rents miss even one request at a time, the size limit (max_nodes) is what binds
    capable: tuple[int, dict[str, Any]] | None
    evaluations: int


def _offer_shapes(ask: _Ask, offer: Offer, region: str) -> _OfferShapes:
    """The offer's tensor × pipeline shapes, fewest GPUs first; pipelines across servers only for what one server
    cannot serve."""
    one_server = offer.rental_unit == "node" and not offer.may_span_nodes
    found = _OfferShapes([], None, ("gpu_memory", {"gpu": offer.gpu.name, "one_server": one_server}), None, 0)
    smallest: int | None = None  # GPUs of the smallest deployment refused for the SKU's size limits
    pipelines = pipelines_with(ask.cfg.engine, ask.cfg.speculative)
    for tp, pp in _shapes(ask, offer, pipelines):
        if any(c.tp * c.pp < tp * pp for c in found.candidates) and tp * pp > offer.gpus_per_node:
            break  # servers beyond the fewest that serve it
        found.evaluations += 1
        option, reason, one_meets = _evaluate(ask, offer, region, tp, pp)
        if option is None:
            if reason and (smallest is None or reason[0] < smallest):  # the shape needing the fewest GPUs
                smallest, found.why_not = reason[0], ("max_nodes", reason[1])
            if reason and one_meets and (found.capable is None or reason[0] < found.capable[0]):
                found.capable = reason
            continue
        if not option.misses:
            found.candidates.append(option)
        elif found.miss is None or miss_key(option) < miss_key(found.miss):
            found.miss = option
    if not pipelines and not found.candidates and found.miss is None and _may_pipeline(ask.model, offer):
        spec = ask.cfg.speculative
        found.why_not = ("pp_speculative", {"engine": ask.cfg.engine, "method": spec.method if spec else ""})
    return found


def _verified_misses(ask: _Ask, verified: _Verified, steady_misses: dict[str, ServingOption]) -> list[ServingOption]:
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


def _held_to_simulation(ask: _Ask, miss: ServingOption) -> None:
    """A near miss simulated at the offered load, its latency misses held to that simulation (`with_simulated_peak`)."""
    _settle(ask, miss)
    # more than the SKU rents: the replicas its own max_nodes miss cites, not the closed forms' at the offered rate
    _simulated(ask, miss, next((p["replicas"] for code, p in miss.misses if code == "max_nodes"), None))
    miss.misses = with_simulated_peak(_ask_for(ask, miss).cfg, miss.misses, miss.estimate)


def _shown(
    ask: _Ask, options: list[ServingOption], misses: list[ServingOption], rank: Callable[[ServingOption], Any]
) -> tuple[list[ServingOption], list[ServingOption]]:
    """The options and near misses shown, ranked and cut at the limit; only these are settled at the offered load,
    the misses simulated, and both priced on the other term (the search evaluates far more)."""
    options = sorted(options, key=rank)[: ask.constraints.limit]
    for option in options:
        _settle(ask, option)
        _hold_headroom(ask, option)
    options = sorted(options, key=rank)  # the shown headroom ranks equal prices
    for place, option in enumerate(options, start=1):
        option.rank = place
    misses = sorted(misses, key=lambda o: (o.peak.tpot_ms, o.cost.compared_monthly, o.offer.sku_id))
    misses = misses[: ask.constraints.limit]
    for miss in misses:
        _held_to_simulation(ask, miss)
    for option in options + misses:
        _with_other_term(option)
    return options, misses


def _with_other_term(option: ServingOption) -> None:
    """The other term's price of the option's units for the same months (`Cost.alternatives`), and its warning
    where that bills less."""
    joined = option.offer.inter_node_fabric is not None and option.tp * option.pp > option.offer.gpus_per_node
    option.cost = with_alternatives(option.offer, option.config, option.cost, joined=joined)
    option.warnings = [*option.warnings, *term_warnings(option.cost)]


@dataclass(slots=True)
class _Verified:
    best: dict[str, ServingOption]  # by SKU: its best deployment that meets the SLO (simulated) within budget
    nearest: dict[str, ServingOption]  # by SKU: its nearest deployment the simulation turned into a miss
    over_budget: list[ServingOption]  # deployments that meet the SLO but cost more than a budget allows
    settled: set[str]  # SKUs whose every candidate was simulated


def _verify_ranked(ask: _Ask, pending: list[ServingOption], rank_key: Callable[[ServingOption], Any]) -> _Verified:
    """Every offer's candidates in the closed forms' rank order, each simulated (its replicas set by the simulated
    percentile at the peak), until `limit` offers have a verified deployment within budget that ranks before every
    candidate left, and the offers behind them are not simulated at all. The simulation mostly adds replicas to
    what the closed forms allow; where it removes some (their tail reads high), a candidate left behind could have
    ranked a little better than its closed-form price: a known limit of the early stop."""
    limit = ask.constraints.limit
    result = _Verified({}, {}, [], set())
    left = Counter(candidate.offer.sku_id for candidate in pending)
    rank = _lazy(ask, rank_key)
    for candidate in sorted(pending, key=rank):
        shown = sorted(result.best.values(), key=rank)[:limit]
        if len(shown) >= limit and rank(shown[-1]) <= rank(candidate):
            break
        sku = candidate.offer.sku_id
        left[sku] -= 1
        if sku in result.best and rank(result.best[sku]) <= rank(candidate):
            continue
        option = _verify(ask, candidate.region, candidate)
        if option is None:
            continue
        if option.misses:
            if sku not in result.nearest or miss_key(option) < miss_key(result.nearest[sku]):
                result.nearest[sku] = option
            continue
        budget_miss, warnings = budget_misses(option.cost, ask.constraints)  # the job: one term of the deployment
        if budget_miss:
            option.misses.extend(budget_miss)
            result.over_budget.append(option)
        elif sku not in result.best or rank(option) < rank(result.best[sku]):
            option.warnings = [*option.warnings, *warnings]
            result.best[sku] = option
    result.settled = {sku for sku, count in left.items() if count == 0}
    over = [o for o in result.over_budget if o.offer.sku_id not in result.best]
    result.over_budget = [min(g, key=rank) for g in _by_sku(over).values()]
    return result


class _LazyRank:
    """An option's rank key whose parts that read the simulation at the offered load (TPOT, TTFT, end-to-end
    latency) are computed only when the parts before them tie: the cheapest objective's first four parts (cost
    per token, monthly price, a fabric priced on consultation, headroom) come from the steady state, the price and
    the headroom held so far (`_settle` changes none of them), so a verified option that is never shown, and never
    ties one that is, is not simulated at the offered load. Compares as the full key."""

    __slots__ = ("ask", "option", "rank_key")

    def __init__(self, ask: _Ask, option: ServingOption, rank_key: Callable[[ServingOption], Any]) -> None:
        self.ask, self.option, self.rank_key = ask, option, rank_key

    def _order(self, other: _LazyRank) -> int:
        if self.rank_key is _key:
            mine, theirs = _key(self.option)[:4], _key(other.option)[:4]
            if mine != theirs:
                return -1 if mine < theirs else 1
        _settle(self.ask, self.option)
        _settle(other.ask, other.option)
        mine, theirs = self.rank_key(self.option), self.rank_key(other.option)
        return -1 if mine < theirs else (1 if mine > theirs else 0)

    def __lt__(self, other: _LazyRank) -> bool:
        return self._order(other) < 0

    def __le__(self, other: _LazyRank) -> bool:
        return self._order(other) <= 0


def _lazy(ask: _Ask, rank_key: Callable[[ServingOption], Any]) -> Callable[[ServingOption], _LazyRank]:
    return lambda option: _LazyRank(ask, option, rank_key)


def _settle(ask: _Ask, option: ServingOption) -> None:
    """The option's estimate with its simulated latency, where `_verify` deferred it (nothing otherwise: an option
    not yet verified keeps the steady state's figures)."""
    ask = _ask_for(ask, option)
    if option.deferred is not None:
        needed, option.deferred = option.deferred, None
        _simulated(ask, option, needed)


def _hold_headroom(ask: _Ask, option: ServingOption) -> None:
    """A shown option's headroom held to its simulation (`simulated_headroom`), once."""
    ask = _ask_for(ask, option)
    cfg, est = ask.cfg, option.estimate
    if option.headroom_held or cfg.requests_per_s is None or est.latency is None or est.meets_slo is False:
        return
    option.headroom_held = True
    if est.latency["peak"].saturated:
        return
    node = _replica_cluster(option.offer, option.tp, option.pp)
    at = peak_latency_at(ask.model, cfg, node, tp=option.tp, pp=option.pp, replicas=option.replicas)
    if at is not None:
        found = checked_headroom(option.headroom, lambda factor: meets_at_peak(at(factor), cfg))
        option.headroom, option.headroom_missed_at = found


def _by_sku(options: list[ServingOption]) -> dict[str, list[ServingOption]]:
    groups: dict[str, list[ServingOption]] = {}
    for option in options:
        groups.setdefault(option.offer.sku_id, []).append(option)
    return groups


def _most_replicas(ask: _Ask, offer: Offer, gpus_per_replica: int) -> int:
    """The most replicas the offer rents (its largest card count, or max_nodes servers)."""
    if offer.rental_unit == "card":
        return max(offer.card_counts, default=0) // gpus_per_replica
    return ask.constraints.max_nodes * offer.gpus_per_node // gpus_per_replica


def _verify(ask: _Ask, region: str, option: ServingOption) -> ServingOption | None:
    """The option with the replicas its simulated latency at the peak needs, and that latency; a miss (slo_peak)
    when no count the offer rents meets the SLO; None when the count needed cannot be rented."""
    ask = _ask_for(ask, option)
    cfg = ask.cfg
    if cfg.requests_per_s is None or option.replica is None:
        return option
    tp, pp, offer, replica = option.tp, option.pp, option.offer, option.replica
    node = _replica_cluster(offer, tp, pp)
    most = _most_replicas(ask, offer, tp * pp)
    # from the closed forms' count, down to the fewest whole servers' replicas the simulation accepts (the smallest
    # configuration that holds them is rented) or up
    per_server = offer.gpus_per_node // (tp * pp) if offer.rental_unit == "node" else 0  # replicas a server holds
    found = replicas_for_slo(
        ask.model, cfg, node, tp=tp, pp=pp, start=option.replicas, most=max(most, 1), granule=max(1, per_server)
    )
    if found is None:  # no count meets: the miss is shown at the most replicas the constraints rent, the nearest
        if most > option.replicas:
            rebuilt, _ = _with_replicas(ask, offer, region, (tp, pp), most, replica)
            if rebuilt is not None:
                rebuilt.misses = [m for m in rebuilt.misses if m[0] == "slo_one_request"]
                option = rebuilt
        # the count that would meet lies beyond what the SKU rents: the simulation's, searched on past it (or None)
        beyond = replicas_for_slo(ask.model, cfg, node, tp=tp, pp=pp, start=max(most, 1) + 1)
        _simulated(ask, option, beyond[0] if beyond else None, searched=True)
        peak = option.estimate.latency["peak"] if option.estimate.latency else None
        option.misses.append(simulated_miss(cfg, peak))
        return option
    needed = found[0]
    if needed != option.replicas:
        rebuilt, _ = _with_replicas(ask, offer, region, (tp, pp), needed, replica)
        if rebuilt is None:
            return None
        # the simulation decides the load the replicas carry: the steady state's peak misses no longer apply
        rebuilt.misses = [m for m in rebuilt.misses if m[0] == "slo_one_request"]
        option = rebuilt
    if _meets_at_peak_simulated(ask, option, node) is True:
        option.deferred = needed  # the simulation at the offered load waits until the option is shown or tied
        return option
    _simulated(ask, option, needed)
    if option.estimate.meets_slo is False and not option.misses:
        option.misses.append(simulated_miss(cfg, option.estimate.latency["peak"] if option.estimate.latency else None))
    return option


def _meets_at_peak_simulated(ask: _Ask, option: ServingOption, node: Cluster) -> bool | None:
    """True where the estimate's verdict at the peak is known to be "meets" without simulating anything new: an
    SLO is set and the peak simulation the estimate would read, at (requests_per_s / replicas) × peak_factor, is
    the one the replica search already ran (the same rate to the last bit) and met it. None: not known."""
    cfg = ask.cfg
    if cfg.requests_per_s is None or option.verified or option.estimate.max_concurrency < 1:
        return None
    if cfg.slo_ttft_ms is None and cfg.slo_tpot_ms is None:
        return None
    searched = cfg.requests_per_s * cfg.peak_factor / option.replicas
    if cfg.requests_per_s / option.replicas * cfg.peak_factor != searched:
        return None
    latency = peak_latency(ask.model, cfg, node, tp=option.tp, pp=option.pp, replicas=option.replicas)
    return True if latency is not None and meets_at_peak(latency, cfg) else None


def _simulated(ask: _Ask, option: ServingOption, needed: int | None = None, searched: bool = False) -> None:
    """The option's estimate at the offered load with its simulated latency (average and peak); `needed` the replicas
    that meet the SLO, the closed forms' where not given, unless `searched` (then None: none found)."""
    ask = _ask_for(ask, option)
    if ask.cfg.requests_per_s is None or option.verified or option.estimate.max_concurrency < 1:
        return
    node = _replica_cluster(option.offer, option.tp, option.pp)
    option.estimate = estimate_serving(
        ask.model, ask.cfg, node, tp=option.tp, pp=option.pp, replicas=option.replicas,
        replicas_needed=needed if searched else needed or option.estimate.replicas_needed,
    )  # fmt: skip
    option.verified = True
    # priced at the rate the simulation carries (less than offered where it saturates the replicas: estimate._carried)
    tokens = option.estimate.output_tokens_per_s
    option.per_million_output_tokens = per_million_tokens(
        option.cost.monthly_effective, tokens, option.offer.money_quantum
    )


def _compared_per_token(option: ServingOption) -> Decimal:
    """Monthly price in the compared currency per output token/s at the offered load (∝ cost per token). The
    rate is read to 3 significant figures: options that carry the same offered load tie, whatever the last
    digits of the load solver, and the next keys decide."""
    tokens = float(f"{option.estimate.output_tokens_per_s:.3g}")
    return option.cost.compared_monthly / Decimal(str(tokens)) if tokens > 0 else Decimal("Infinity")


def _key(option: ServingOption) -> tuple[Decimal, Decimal, bool, float, float, str, int]:
    """Lowest cost per million output tokens first (for an offered load every option carries the same tokens,
    so this is the cheapest; at a given concurrency, the same price buys the layout that produces more), then
    the lower monthly price, then at the same price the one whose price leaves nothing out (no fabric add-on priced
    on consultation: its real cost is higher), the larger capacity (headroom), the lower TPOT."""
    return (
        _compared_per_token(option),
        option.cost.compared_monthly,
        option.cost.fabric_on_consultation,
        -round(option.headroom, 3),
        option.estimate.tpot_ms,
        option.offer.sku_id,
        option.config.gpus,
    )


def _fastest_key(option: ServingOption) -> tuple[float, float, Decimal, Decimal, str, int]:
    """objective "fastest": the lowest end-to-end latency of a request at the offered load (TTFT + the
    output's TPOTs, read to 3 significant figures), then the lower TTFT, then as the cheapest."""
    cheapest = _key(option)
    latency = float(f"{option.estimate.e2e_latency_ms:.3g}")
    return latency, option.estimate.ttft_ms, cheapest[0], cheapest[1], option.offer.sku_id, option.config.gpus


def ranking(constraints: Constraints) -> Callable[[ServingOption], Any]:
    """The sort key of the request's objective: "fastest" ranks by latency (_fastest_key), any other by cost (_key)."""
    return _fastest_key if constraints.objective == "fastest" else _key


def _shapes(ask: _Ask, offer: Offer, pipelines: bool = True) -> Iterator[tuple[int, int]]:
    """(tp, pp) per replica: every TP degree within a server; then, per count of servers (2, 3, …) where the SKU's
    fabric joins them, TP over all their GPUs (app/planner/serving_multinode.py) and a server's TP with one pipeline
    stage per server (where the engine pipelines with the request's levers)."""
    model = ask.model
    if ask.cfg.dp_attention:
        yield from ((gpus, 1) for gpus in dp_attention_degrees(model, ask.cfg, offer, ask.constraints.max_nodes))
        return
    for tp in TP_DEGREES:
        if tp <= offer.gpus_per_node and valid_tp(model, tp):
            yield tp, 1
    if offer.rental_unit != "node" or not offer.may_span_nodes:
        return
    pipeline = pipelines and _may_pipeline(model, offer)
    for servers in range(2, ask.constraints.max_nodes + 1):
        for tp in cross_node_degrees(model, ask.cfg, offer, servers):
            if valid_tp(model, tp):
                yield tp, 1
        if pipeline and servers <= model.layers:
            yield offer.gpus_per_node, servers


def _ask_for(ask: _Ask, option: ServingOption) -> _Ask:
    """The search's ask as the option was sized: with DP attention where the option runs it."""
    return ask if option.dp_attention == ask.cfg.dp_attention else replace(ask, cfg=dp_attention_config(ask.cfg))


def _merged(plain: _OfferShapes, dp: _OfferShapes) -> _OfferShapes:
    """An offer's plain-TP shapes and its DP-attention ones, weighed together (the nearer miss of the two)."""
    plain.candidates += dp.candidates
    plain.evaluations += dp.evaluations
    if dp.miss is not None and (plain.miss is None or miss_key(dp.miss) < miss_key(plain.miss)):
        plain.miss = dp.miss
    plain.capable = plain.capable or dp.capable
    return plain


def _may_pipeline(model: ModelSpec, offer: Offer) -> bool:
    return offer.rental_unit == "node" and offer.may_span_nodes and valid_tp(model, offer.gpus_per_node)


def _replica_cluster(offer: Offer, tp: int, pp: int) -> Cluster:
    """The servers one replica occupies, joined by the SKU's fabric when it spans several."""
    nodes = math.ceil(tp * pp / offer.gpus_per_node)
    fabric = offer.inter_node_fabric if nodes > 1 else None
    return Cluster(
        gpu=offer.gpu,
        gpus_per_node=offer.gpus_per_node,
        nodes=nodes,
        intra_node_link=offer.intra_node_link,
        inter_node_gbps=offer.inter_node_gbps if fabric else None,
        inter_node_fabric=fabric,
    )


def _evaluate(
    ask: _Ask, offer: Offer, region: str, tp: int, pp: int
) -> tuple[ServingOption | None, tuple[int, dict[str, Any]] | None, bool]:
    """The option of `tp` × `pp` replicas on the offer; or None with (GPUs needed, why) when the SKU cannot rent
    that many, or None alone when the weights leave no KV cache. Last: whether one request at a time meets the
    SLO on such a replica."""
    model, cfg, peak_factor = ask.model, ask.cfg, ask.peak_factor
    node = _replica_cluster(offer, tp, pp)
    stated = cfg.max_model_len  # a stated longest request: one must fit the cache a sequence may use (one rank's)
    short = stated is not None and sequence_kv_tokens(model, cfg, offer.gpu, tp, pp) < stated
    if short or max_concurrency(model, cfg, offer.gpu, tp, pp) < 1:
        if kv_cache_tokens(model, cfg, offer.gpu, tp, pp) < 1:
            return None, None, False  # the weights leave no cache at all: rejected for memory
        return _sequence_too_long(ask, offer, region, node, (tp, pp)), None, False
    one = estimate_serving(model, replace(cfg, requests_per_s=None, concurrency=1), node, tp=tp, pp=pp)
    per_replica, slo_concurrency = replica_capacity(model, cfg, node, tp=tp, pp=pp)
    replicas, limited = 1, None
    if cfg.requests_per_s is not None and per_replica > 0:
        replicas = max(1, math.ceil(cfg.requests_per_s * peak_factor / per_replica - 1e-9))
        # the closed forms' queue before the prefill at the peak (the simulation checks the shown options)
        steady = replicas
        replicas = steer_replicas(model, cfg, node, tp=tp, pp=pp, start=replicas) or replicas
        most = _most_replicas(ask, offer, tp * pp)
        if steady <= most < replicas:
            replicas = most  # the closed forms read the simulated tail high: the simulation decides (`_verify`)
        elif 1 <= most < steady:  # more than the SKU rents: a near miss at the most it rents, naming the limit
            limited = _limit_params(ask, offer, tp * pp, replicas, most)
            replicas = most
    option, reason = _with_replicas(ask, offer, region, (tp, pp), replicas, (one, per_replica, slo_concurrency))
    if option is not None and limited is not None:
        option.misses.append(("max_nodes", limited))
    return option, reason, one.meets_slo is not False


def _limit_params(ask: _Ask, offer: Offer, replica_gpus: int, needed: int, most: int) -> dict[str, Any]:
    """A `max_nodes` miss's parameters: the replicas the peak needs by the closed forms, the most the SKU rents (its
    max_nodes servers, or its largest card count)."""
    params: dict[str, Any] = {"replicas": needed, "replica_gpus": replica_gpus, "most": most}
    if offer.rental_unit != "card":
        params["max_nodes"] = ask.constraints.max_nodes
    return params


def _with_replicas(
    ask: _Ask,
    offer: Offer,
    region: str,
    split: tuple[int, int],
    replicas: int,
    replica: tuple[ServingEstimate, float, float],
) -> tuple[ServingOption | None, tuple[int, dict[str, Any]] | None]:
    """The option of at least `replicas` tp × pp replicas on the smallest configuration that holds them (their
    steady-state figures), or None with (GPUs needed, why) when the SKU cannot rent that many."""
    model, cfg, peak_factor = ask.model, ask.cfg, ask.peak_factor
    tp, pp = split
    one, per_replica, slo_concurrency = replica
    node = _replica_cluster(offer, tp, pp)
    config = _configuration(offer, tp * pp * replicas, ask.constraints)
    if config is None:
        params: dict[str, Any] = {"replicas": replicas, "replica_gpus": tp * pp}
        if offer.rental_unit != "card":
            params["max_nodes"] = ask.constraints.max_nodes
        return None, (replicas * tp * pp, params)
    replicas = config.gpus // (tp * pp)  # whole configuration in use: spare GPUs become spare replicas
    at_load = estimate_serving(model, cfg, node, tp=tp, pp=pp, replicas=replicas, simulate=False)
    peak = at_load
    if cfg.requests_per_s is not None:
        peak_cfg = replace(cfg, requests_per_s=cfg.requests_per_s * peak_factor)
        peak = estimate_serving(model, peak_cfg, node, tp=tp, pp=pp, replicas=replicas, simulate=False)
    offered = (cfg.requests_per_s or at_load.requests_per_s) * (peak_factor if cfg.requests_per_s else 1.0)
    headroom = per_replica * replicas / offered if offered > 0 else 0.0
    option = _option(ask, offer, region, (tp, pp, replicas), config, (at_load, peak), slo_concurrency, headroom)
    option.replica = replica
    slo_missed = one.meets_slo is False or peak.meets_slo is False
    if slo_missed:
        option.misses.append(slo_miss(cfg, one, peak))
    elif not slo_params(cfg) and queues_for_slots(cfg, peak):
        # no target to judge the wait by: a shape whose clients queue for its sequence slots is still not the
        # deployment asked for (review R7: 2,048 per replica on one A100 40 GB card, 128 slots, ranked first at a
        # TTFT of 235 s)
        option.misses.append(("kv_slots_wait", slot_params(cfg, peak)))
    elif cfg.requests_per_s is not None and peak.requests_per_s < cfg.requests_per_s * peak_factor * (1 - 1e-3):
        carried = {"replicas": replicas, "carried": peak.requests_per_s, "offered": offered}
        option.misses.append(("peak_load", carried))
    return option, None


def _option(
    ask: _Ask,
    offer: Offer,
    region: str,
    shape: tuple[int, int, int],
    config: Configuration,
    estimates: tuple[ServingEstimate, ServingEstimate],
    slo_concurrency: float,
    headroom: float,
) -> ServingOption:
    """An option of `replicas` tp × pp replicas on `config`: (at the offered load, at the peak) estimates."""
    tp, pp, replicas = shape
    at_load, peak = estimates
    term = ask.constraints.term
    fabric = offer.inter_node_fabric if tp * pp > offer.gpus_per_node else None
    hours = TERM_MONTHS[term] * DAYS_PER_BILLED_MONTH * 24.0  # a deployment runs its term
    cost = price(offer, config, term, hours, joined=fabric is not None)  # replicas sharing nothing need no fabric
    return ServingOption(
        offer=offer,
        config=config,
        region=region,
        tp=tp,
        pp=pp,
        replicas=replicas,
        estimate=at_load,
        peak=peak,
        cost=cost,
        per_million_output_tokens=per_million_tokens(
            cost.monthly_effective, at_load.output_tokens_per_s, offer.money_quantum
        ),
        headroom=headroom,
        launch=launch_block(
            ask.model, ask.cfg, (tp, pp, replicas), config, at_load, slo_concurrency, ask.served, fabric=fabric
        ),
        notes=list(at_load.notes),
        dp_attention=ask.cfg.dp_attention,
    )


def _sequence_too_long(
    ask: _Ask, offer: Offer, region: str, node: Cluster, split: tuple[int, int]
) -> ServingOption | None:
    """A near miss: the KV cache exists but is shorter than one sequence of the requested lengths."""
    tp, pp = split
    config = _configuration(offer, tp * pp, ask.constraints)
    if config is None:
        return None
    result = estimate_serving(ask.model, replace(ask.cfg, requests_per_s=None, concurrency=1), node, tp=tp, pp=pp)
    option = _option(ask, offer, region, (tp, pp, 1), config, (result, result), 1.0, 0.0)
    # the cache one sequence may use: under DP attention one rank's
    tokens = {"context_len": ask.cfg.context_len, "kv_cache_tokens": result.sequence_kv_tokens, "tp": tp}
    option.misses.append(("sequence_too_long", tokens))
    return option


def check_serving_plan(model: ModelSpec, tp: int, pp: int) -> None:
    """Field-named errors for a TP/PP split the engines refuse."""
    if not valid_tp(model, tp):
        raise EstimatorError.of("serving_tp_heads", field="plan.tp", tp=tp, heads=model.heads, kv_heads=model.kv_heads)
    if pp > model.layers:
        raise EstimatorError.of("serving_pp_layers", field="plan.pp", pp=pp, layers=model.layers)
