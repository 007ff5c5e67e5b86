"""The serving search's simulation stage (app/planner/serving.py): candidates in the closed forms' rank order, each
held to its simulated latency at the peak (the replicas it needs), until the shown options are known; an option's
figures at the offered load simulated only once it is shown or tied. PURE."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from app.estimator.serving import estimate_serving, meets_at_peak, peak_latency, peak_meets_at, replicas_for_slo
from app.estimator.specs import Cluster
from app.planner.misses import budget_misses
from app.planner.serving_headroom import checked_headroom, spare_replicas_headroom
from app.planner.serving_misses import miss_key, simulated_miss
from app.planner.serving_option import Ask, ServingOption, ask_for, per_million_tokens, replica_cluster
from app.planner.serving_rank import cost_key
from app.planner.serving_shapes import most_replicas, with_replicas


@dataclass(slots=True)
class Verified:
    best: dict[str, ServingOption]  # by SKU: its best deployment that meets the SLO (simulated) within budget
    nearest: dict[str, ServingOption]  # by SKU: its nearest deployment the simulation turned into a miss
    over_budget: list[ServingOption]  # deployments that meet the SLO but cost more than a budget allows
    settled: set[str]  # SKUs whose every candidate was simulated


def verify_ranked(ask: Ask, pending: list[ServingOption], rank_key: Callable[[ServingOption], Any]) -> Verified:
    """Every offer's candidates in the closed forms' rank order, each simulated (its replicas set by the simulated
    percentile at the peak), until `limit` offers have a verified deployment within budget that ranks before every
    candidate left, and the offers behind them are not simulated at all. The simulation mostly adds replicas to
    what the closed forms allow; where it removes some (their tail reads high), a candidate left behind could have
    ranked a little better than its closed-form price: a known limit of the early stop."""
    limit = ask.constraints.limit
    result = Verified({}, {}, [], set())
    left = Counter(candidate.offer.sku_id for candidate in pending)
    rank = lazy_rank(ask, rank_key)
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
    the headroom held so far (`settle` changes none of them), so a verified option that is never shown, and never
    ties one that is, is not simulated at the offered load. Compares as the full key."""

    __slots__ = ("ask", "option", "rank_key")

    def __init__(self, ask: Ask, option: ServingOption, rank_key: Callable[[ServingOption], Any]) -> None:
        self.ask, self.option, self.rank_key = ask, option, rank_key

    def _order(self, other: _LazyRank) -> int:
        if self.rank_key is cost_key:
            mine, theirs = cost_key(self.option)[:4], cost_key(other.option)[:4]
            if mine != theirs:
                return -1 if mine < theirs else 1
        settle(self.ask, self.option)
        settle(other.ask, other.option)
        mine, theirs = self.rank_key(self.option), self.rank_key(other.option)
        return -1 if mine < theirs else (1 if mine > theirs else 0)

    def __lt__(self, other: _LazyRank) -> bool:
        return self._order(other) < 0

    def __le__(self, other: _LazyRank) -> bool:
        return self._order(other) <= 0


def lazy_rank(ask: Ask, rank_key: Callable[[ServingOption], Any]) -> Callable[[ServingOption], _LazyRank]:
    return lambda option: _LazyRank(ask, option, rank_key)


def settle(ask: Ask, option: ServingOption) -> None:
    """The option's estimate with its simulated latency, where `_verify` deferred it (nothing otherwise: an option
    not yet verified keeps the steady state's figures)."""
    ask = ask_for(ask, option)
    if option.deferred is not None:
        needed, option.deferred = option.deferred, None
        simulated(ask, option, needed)


def hold_headroom(ask: Ask, option: ServingOption) -> None:
    """A shown option's headroom held to its simulation (`simulated_headroom`), once."""
    ask = ask_for(ask, option)
    cfg, est = ask.cfg, option.estimate
    if option.headroom_held or cfg.requests_per_s is None or est.latency is None or est.meets_slo is False:
        return
    option.headroom_held = True
    if est.latency["peak"].saturated:
        return
    node = replica_cluster(option.offer, option.tp, option.pp)
    meets_at = peak_meets_at(ask.model, cfg, node, tp=option.tp, pp=option.pp, replicas=option.replicas)
    if meets_at is None:
        return
    option.headroom, option.headroom_missed_at = checked_headroom(option.headroom, meets_at)
    needed = est.replicas_needed
    if option.headroom_missed_at is not None and needed is not None and needed < option.replicas:
        # the check missed beyond the spare replicas' share: the count the load needs met at the peak (its run kept)
        at_needed = peak_meets_at(ask.model, cfg, node, tp=option.tp, pp=option.pp, replicas=needed)
        if at_needed is not None:
            spare = spare_replicas_headroom(option.replicas, needed, lambda: at_needed(1.0))
            option.headroom = max(option.headroom, min(spare, option.headroom_missed_at))


def _by_sku(options: list[ServingOption]) -> dict[str, list[ServingOption]]:
    groups: dict[str, list[ServingOption]] = {}
    for option in options:
        groups.setdefault(option.offer.sku_id, []).append(option)
    return groups


def _verify(ask: Ask, region: str, option: ServingOption) -> ServingOption | None:
    """The option with the replicas its simulated latency at the peak needs, and that latency; a miss (slo_peak)
    when no count the offer rents meets the SLO; None when the count needed cannot be rented."""
    ask = ask_for(ask, option)
    cfg = ask.cfg
    if cfg.requests_per_s is None or option.replica is None:
        return option
    tp, pp, offer, replica = option.tp, option.pp, option.offer, option.replica
    node = replica_cluster(offer, tp, pp)
    most = most_replicas(ask, offer, tp * pp)
    # from the closed forms' count, down to the fewest whole servers' replicas the simulation accepts (the smallest
    # configuration that holds them is rented) or up
    per_server = offer.gpus_per_node // (tp * pp) if offer.rental_unit == "node" else 0  # replicas a server holds
    found = replicas_for_slo(
        ask.model, cfg, node, tp=tp, pp=pp, start=option.replicas, most=max(most, 1), granule=max(1, per_server)
    )
    if found is None:  # no count meets: the miss is shown at the most replicas the constraints rent, the nearest
        if most > option.replicas:
            rebuilt, _ = with_replicas(ask, offer, region, (tp, pp), most, replica)
            if rebuilt is not None:
                rebuilt.misses = [m for m in rebuilt.misses if m[0] == "slo_one_request"]
                option = rebuilt
        # the count that would meet lies beyond what the SKU rents: the simulation's, searched on past it (or None)
        beyond = replicas_for_slo(ask.model, cfg, node, tp=tp, pp=pp, start=max(most, 1) + 1)
        simulated(ask, option, beyond[0] if beyond else None, searched=True)
        peak = option.estimate.latency["peak"] if option.estimate.latency else None
        option.misses.append(simulated_miss(cfg, peak))
        return option
    rented = found[0]
    if rented != option.replicas:
        rebuilt, _ = with_replicas(ask, offer, region, (tp, pp), rented, replica)
        if rebuilt is None:
            return None
        # the simulation decides the load the replicas carry: the steady state's peak misses no longer apply
        rebuilt.misses = [m for m in rebuilt.misses if m[0] == "slo_one_request"]
        option = rebuilt
    # the replicas the load needs, counted one by one, only for an option that is shown (`count_needs`): until then
    # the estimate reads the rented count, which nothing before the cut ranks or judges by
    option.needs = (node, (tp, pp), rented, per_server) if per_server > 1 else None
    if _meets_at_peak_simulated(ask, option, node) is True:
        option.deferred = rented  # the simulation at the offered load waits until the option is shown or tied
        return option
    simulated(ask, option, rented)
    if option.estimate.meets_slo is False and not option.misses:
        option.misses.append(simulated_miss(cfg, option.estimate.latency["peak"] if option.estimate.latency else None))
    return option


def count_needs(ask: Ask, option: ServingOption) -> None:
    """A shown option's serving.replicas_needed counted (`_load_needs`), where `_verify` left it to be: the search
    verifies many more options than it shows, and the count, a replica search of its own, ran for each (+22 % of the
    serving mix's server time). Settles the option first (its estimate at the offered load, which carries it)."""
    settle(ask, option)
    if option.needs is None:
        return
    (node, split, rented, per_server), option.needs = option.needs, None
    needed = _load_needs(ask_for(ask, option), node, split, rented, per_server)
    if needed != option.estimate.replicas_needed:
        option.estimate = replace(option.estimate, replicas_needed=needed)


def _load_needs(ask: Ask, node: Cluster, split: tuple[int, int], rented: int, per_server: int) -> int:
    """The replicas the load needs (serving.replicas_needed, as /estimate counts them: the fewest that meet the SLO at
    the peak, one by one), where `rented` is the fewest whole servers' replicas that do: those the servers hold
    beyond it are spare (review R8-3). Within one answer the simulations are shared, so /estimate's count costs few."""
    if per_server <= 1:
        return rented
    tp, pp = split
    found = replicas_for_slo(ask.model, ask.cfg, node, tp=tp, pp=pp)
    return min(rented, found[0]) if found else rented


def _meets_at_peak_simulated(ask: Ask, option: ServingOption, node: Cluster) -> bool | None:
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


def simulated(ask: Ask, option: ServingOption, needed: int | None = None, searched: bool = False) -> None:
    """The option's estimate at the offered load with its simulated latency (average and peak); `needed` the replicas
    that meet the SLO, the closed forms' where not given, unless `searched` (then None: none found)."""
    ask = ask_for(ask, option)
    if ask.cfg.requests_per_s is None or option.verified or option.estimate.max_concurrency < 1:
        return
    node = replica_cluster(option.offer, option.tp, option.pp)
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
