"""Rank rentable configurations for a workload. PURE: offers in, options out.

Each offer's configurations are searched (app/planner/search.py) and priced (app/planner/offers.py); the options
(app/planner/option.py) are ranked by the request's objective, balanced shows those that buy time, and the Pareto
list is drawn (app/planner/ranking.py: the objectives, right-sizing, "Offload last", ties).

With a deadline, an option whose estimate meets it but whose time range's slow end
(`time_to_train_hours_range`) does not carries the warning `deadline_within_range` with the figures. An option
whose range's slow end bills more months than its estimate carries `billing_within_range` with both totals.

A plan that leaves its GPUs nearly idle (app/planner/efficiency.py: MFU below 5 %, or exposed communication above
3 × its compute) is never ranked; it is a near miss (`inefficient`, with what would help) only while no option is
ranked, and it prunes nothing (`_Search._search`).
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any

from app.estimator.memory import host_load_params, host_ram_figures, host_ram_reserve_gib, memory_breakdown
from app.estimator.specs import GIB, Cluster, MemoryBreakdown, ModelSpec, Warning_, Workload
from app.estimator.vocabulary import MAX_QUOTE_MONTHS, TERM_MONTHS
from app.planner.availability import place
from app.planner.budget import past, search_deadline
from app.planner.edge import at_edge
from app.planner.efficiency import IDLE_CODES, inefficiency, needless_model_parallel
from app.planner.explain import SAID_BETTER_BY, batch_warnings, plan_warnings, training_offer_warnings
from app.planner.launch import launch_configs
from app.planner.levers import Levers, levers_params
from app.planner.misses import Miss, billing_warnings, budget_misses, range_billing_warnings, term_warnings
from app.planner.offers import (
    Configuration,
    Constraints,
    Offer,
    billed_months,
    configurations,
    excluded,
    price,
    with_alternatives,
)
from app.planner.option import Option, Recommendation, Rejection, RejectionCode
from app.planner.padded_band import may_exceed_advice, padded_band, pool_warning
from app.planner.pruning import Frontier, Point, Rules
from app.planner.ranking import (
    BALANCED_COST_CAP,
    MEANINGFUL_HOURS,
    PARETO_MIN_SAVING,
    RIGHT_SIZE_RATIO,
    pareto,
    rank,
    worth_showing,
)
from app.planner.search import (
    Evaluated,
    PlanSearch,
    batch_splits,
    cached_search_plans,
    default_global_batch,
)
from app.planner.speed_bounds import BoundCache, throughput_bound
from app.planner.stacks import as_launched, as_padded, fp8_levers_excluded, precision_run_as, stack_for


def recommend(
    model: ModelSpec,
    workload: Workload,
    offers: list[Offer],
    constraints: Constraints,
    *,
    micro_batch: int | None = None,
    levers: Levers | None = None,
    fp8_weights: bool = True,
) -> Recommendation:
    global_batch = default_global_batch(workload) if workload.task != "inference" else 0
    result = Recommendation([], [], [], [], global_batch)
    rejected: list[Rejection] = []
    progress: list[_OfferSearch] = []
    for offer in sorted(offers, key=lambda o: o.sku_id):
        left_out = excluded(offer, constraints) or fp8_levers_excluded(
            offer.gpu, offer.gpus_per_node, model, workload, levers
        )
        if left_out:
            rejected.append(Rejection(offer.sku_id, *left_out))
        else:
            progress.append(_OfferSearch(offer, list(configurations(offer, constraints))))
    search = _Search(model, workload, constraints, micro_batch, result, levers)
    search.fp8_weights = fp8_weights  # plan.fp8_params unstated: the megatron stack's FP8 account (stacks.as_run)
    search.run(progress)
    feasible: list[Option] = []
    for offer_search in progress:
        feasible.extend(offer_search.found)
        rejection = search.rejection(offer_search)
        if rejection is not None:
            rejected.append(rejection)
    result.rejected = sorted(rejected, key=lambda r: r.sku_id)
    ranked, misses = _split_by_constraints(feasible, constraints, workload)
    if ranked:  # a plan that idles its GPUs is a near miss only while nothing sensible exists
        misses = [o for o in misses if not _inefficient(o)]
    if constraints.deadline_days is not None:  # before the ranking, which reads them (Option.risks)
        for option in ranked:
            option.warnings = _unique(option.warnings + _deadline_warnings(option, constraints.deadline_days))
    result.pareto = pareto(ranked)
    ranked = rank(ranked, constraints.objective, deadline=constraints.deadline_days is not None)
    result.options = ranked[: constraints.limit]
    if constraints.objective == "balanced":
        result.options = worth_showing(ranked, result.pareto, constraints.limit)
    result.near_misses = _near_misses(misses, constraints, timed=bool(workload.tokens))
    for option in {id(o): o for o in result.options + result.near_misses + result.pareto}.values():
        _add_batch_warning(model, workload, option, constraints, global_batch)
    return result


def _near_misses(misses: list[Option], constraints: Constraints, *, timed: bool) -> list[Option]:
    """Options that miss the deadline or the budget: those that meet the deadline and miss only the budget first,
    the cheapest first (the smallest stretch of the budget); then those that miss the deadline, the closest to it
    first (the fastest is the one a customer can move the deadline to). Without a deadline, the cheapest first.
    pruning.Frontier keeps every configuration that could enter either order."""
    if constraints.deadline_days is None or not timed:
        return sorted(misses, key=lambda o: (o.sort_cost, o.sort_time, o.tie_key))[: constraints.limit]
    budget_only = [o for o in misses if all(code != "deadline" for code, _ in o.misses)]
    late = [o for o in misses if any(code == "deadline" for code, _ in o.misses)]
    budget_only.sort(key=lambda o: (o.sort_cost, o.sort_time, o.tie_key))
    late.sort(key=lambda o: (o.sort_time, o.sort_cost, o.tie_key))
    return (budget_only + late)[: constraints.limit]


def _add_batch_warning(
    model: ModelSpec, workload: Workload, option: Option, constraints: Constraints, global_batch: int
) -> None:
    """The batch hint costs one more estimate: only options shown get it."""
    sized = replace(workload, global_batch=global_batch) if workload.task != "inference" else workload
    cluster = _cluster(option.offer, option.config, constraints)
    found = batch_warnings(model, sized, option.evaluated.plan, cluster, option.evaluated.performance.performance)
    option.warnings = _unique(option.warnings + found)


@dataclass(slots=True)
class _OfferSearch:
    """One SKU's configurations and what their searches found."""

    offer: Offer
    configs: list[Configuration]
    found: list[Option] = field(default_factory=list)
    searches: dict[int, PlanSearch] = field(default_factory=dict)  # by index in `configs`
    skipped: list[int] = field(default_factory=list)  # provably outside every list shown (app.planner.pruning)
    started: bool = False
    unsearched: bool = False  # the time budget ran out before every configuration was looked at


class _Search:
    """Configurations searched cheapest floor first, each hardware shape once per request, and those
    that cannot change the answer skipped (app.planner.pruning)."""

    def __init__(
        self,
        model: ModelSpec,
        workload: Workload,
        constraints: Constraints,
        micro_batch: int | None,
        result: Recommendation,
        levers: Levers | None = None,
    ) -> None:
        self.model, self.workload, self.constraints, self.levers = model, workload, constraints, levers
        self.micro_batch, self.result = micro_batch, result
        self.fp8_weights = True  # the megatron stack may keep an FP8 pretraining run's weights in FP8 (stacks.as_run)
        self.memo: dict[tuple[object, ...], PlanSearch] = {}  # same hardware in several SKUs or regions: once
        self.bounds: dict[tuple[object, ...], BoundCache] = {}  # speed bounds shared by one hardware shape
        self.launched: dict[str, Workload] = {}  # the workload as it runs on each GPU type (stacks.as_launched)
        timed = bool(workload.tokens)
        deadline_hours = constraints.deadline_days * 24 if constraints.deadline_days is not None and timed else None
        self.frontier = Frontier(
            Rules(
                objective=constraints.objective,
                ranked_by_cost=constraints.deadline_days is not None,
                deadline_hours=deadline_hours,
                timed=timed,
                budget=constraints.max_monthly_budget if constraints.max_total_budget is None else None,
                total_budget=constraints.max_total_budget,
                limit=constraints.limit,
                cost_cap=BALANCED_COST_CAP,
                right_size_ratio=RIGHT_SIZE_RATIO,
                meaningful_hours=MEANINGFUL_HOURS,
                pareto_min_saving=PARETO_MIN_SAVING,
            )
        )

    def run(self, progress: list[_OfferSearch]) -> None:
        """Configurations by their cost floor, refined once by their time floor (a heap: a refined floor
        only grows, so whatever is popped costs at least as little as everything still queued)."""
        queue: list[tuple[Decimal, int, int, Decimal, float | None]] = []
        for i, offer_search in enumerate(progress):
            for j, config in enumerate(offer_search.configs):
                floor, monthly = self._floor(offer_search.offer, config, None)
                queue.append((floor, i, j, monthly, None))
        heapq.heapify(queue)
        deadline = search_deadline()
        while queue:
            floor, i, j, monthly, time_floor = heapq.heappop(queue)
            offer_search = progress[i]
            if not offer_search.started:
                if past(deadline):
                    self.result.stopped_early = True
                    break
                offer_search.started = True
            config = offer_search.configs[j]
            if time_floor is None:
                if self.frontier.excludes(floor, monthly, 0.0):
                    offer_search.skipped.append(j)  # out of every list at any speed
                    continue
                time_floor = self._time_floor(offer_search.offer, config)
                if time_floor != math.inf and self._bills_more(time_floor):
                    refined, _monthly = self._floor(offer_search.offer, config, time_floor)
                    heapq.heappush(queue, (refined, i, j, monthly, time_floor))
                    continue
            if time_floor == math.inf or self.frontier.excludes(floor, monthly, time_floor):
                offer_search.skipped.append(j)  # nothing runs on it, or it changes no list shown
                continue
            self._search(offer_search, j)
        for offer_search in progress:
            done = len(offer_search.searches) + len(offer_search.skipped)
            offer_search.unsearched = done < len(offer_search.configs)
            if not offer_search.found and not offer_search.unsearched:
                self._search_skipped(offer_search)

    def _floor(self, offer: Offer, config: Configuration, time_floor: float | None) -> tuple[Decimal, Decimal]:
        """The least the configuration's option can cost (`Option.sort_cost`: the months billed for its
        time floor, at least the term's; the month without a token count), and its monthly price."""
        hours = (time_floor or 0.0) if self.workload.tokens else None
        cost = price(offer, config, self.constraints.term, hours)
        return cost.compared_total, cost.compared_monthly

    def _bills_more(self, time_floor: float) -> bool:
        """Whether the time floor bills more than the term's fewest months (else the floor stands)."""
        term = self.constraints.term
        return bool(self.workload.tokens) and billed_months(time_floor, term) > TERM_MONTHS[term]

    def _time_floor(self, offer: Offer, config: Configuration) -> float:
        """`Option.sort_time` no plan on the configuration can beat (hours, or s per million tokens); inf if none."""
        bound = throughput_bound(
            self.model,
            self._workload(offer),
            _cluster(offer, config, self.constraints),
            micro_batch=self.micro_batch,
            bound_cache=self._bound_cache(offer),
            levers=self.levers,
        )
        if bound == 0.0:
            return math.inf  # no shape divides the batch
        seconds_per_token = (1 - 1e-9) / bound  # a hair under: rounding must not lift the floor past the time
        if self.workload.tokens:
            return self.workload.tokens * seconds_per_token / 3600
        return 1e6 * seconds_per_token

    def _workload(self, offer: Offer) -> Workload:
        """The workload as it runs on the offer's GPU, one object per GPU type (the estimator's contexts are found
        by identity)."""
        found = self.launched.get(offer.gpu.id)
        if found is None:
            found = self.launched[offer.gpu.id] = as_launched(self.workload, offer.gpu, self.model)
        return found

    def _bound_cache(self, offer: Offer) -> BoundCache:
        key = (offer.gpu.id, offer.intra_node_link, offer.rental_unit, offer.gpus_per_node, offer.card_counts)
        return self.bounds.setdefault(key, BoundCache())

    def _search(self, offer_search: _OfferSearch, index: int) -> None:
        offer, config = offer_search.offer, offer_search.configs[index]
        self.result.configurations += 1
        hint = offer_search.found[-1].evaluated.plan if offer_search.found else None  # on fewer nodes
        workload = self._workload(offer)
        search, cached = cached_search_plans(
            self.model,
            workload,
            _cluster(offer, config, self.constraints),
            micro_batch=self.micro_batch,
            hint=hint,
            bound_cache=self._bound_cache(offer),
            memo=self.memo,
            levers=self.levers,
            fp8_weights=self.fp8_weights,
            deadline_hours=None if self.constraints.deadline_days is None else 24 * self.constraints.deadline_days,
        )
        offer_search.searches[index] = search
        stats = self.result.stats
        if cached:
            stats.cached_configurations += 1
        else:
            stats.memory_evaluations += search.stats.memory_evaluations
            stats.performance_evaluations += search.stats.performance_evaluations
        if search.best is not None:
            option = _option(
                self.model, workload, offer, config, search.best, self.constraints, self.result.global_batch
            )
            if workload is not self.workload:
                option.warnings = _unique(option.warnings + [precision_run_as(self.workload, workload, offer.gpu)])
            option.misses = _misses(option, self.constraints, workload)
            offer_search.found.append(option)
            # an inefficient plan is shown only while nothing sensible is, an offloading one may rank after every plan
            # that holds its states (`rank`, except cheapest), one at the edge above its cost: none may prune another
            offload_last = option.offloads and self.constraints.objective != "cheapest"
            if not _inefficient(option) and not offload_last and not option.edge:
                self.frontier.add(Point(option.sort_cost, option.sort_time, option.hours, bool(option.misses)))

    def _search_skipped(self, offer_search: _OfferSearch) -> None:
        """A SKU whose searched configurations found nothing: whether it fits at all decides whether
        it is rejected, so its skipped configurations are searched until one fits."""
        for index in sorted(offer_search.skipped):
            self._search(offer_search, index)
            if offer_search.found:
                return

    def rejection(self, offer_search: _OfferSearch) -> Rejection | None:
        offer = offer_search.offer
        if offer_search.found:
            return None
        if offer_search.unsearched:
            return Rejection(offer.sku_id, "time_budget")
        last = len(offer_search.configs) - 1
        config, searches = offer_search.configs[last], offer_search.searches.values()
        where = {"gpus": config.gpus, "gpu_name": offer.gpu.name, "nodes": config.nodes}
        if self.levers and not any(s.levers_run for s in searches) and any(s.levers_block for s in searches):
            host_ram = {"host_ram_unknown": True} if any(s.levers_need_host_ram for s in searches) else {}
            return Rejection(offer.sku_id, "levers_unsupported", where | levers_params(self.levers) | host_ram)
        closest = offer_search.searches.get(last)
        if closest is None or closest.closest_miss is None:  # no plan was even sized: is the batch the obstacle?
            cluster = _cluster(offer, config, self.constraints)
            if not batch_splits(self.model, self._workload(offer), cluster, self.micro_batch):
                return Rejection(offer.sku_id, "batch_split", where | {"global_batch": self.result.global_batch})
        return Rejection(offer.sku_id, *_no_fit_reason(offer, closest, self.constraints))


def _cluster(offer: Offer, config: Configuration, constraints: Constraints) -> Cluster:
    fabric = offer.inter_node_fabric if config.nodes > 1 else None
    return Cluster(
        gpu=offer.gpu,
        gpus_per_node=config.cards_per_node,
        nodes=config.nodes,
        intra_node_link=offer.intra_node_link,
        inter_node_gbps=offer.inter_node_gbps if fabric else None,
        host_ram_gib=offer.host_ram_gib,
        memory_headroom=constraints.memory_headroom,
        inter_node_fabric=fabric,
    )


def _no_fit_reason(
    offer: Offer, closest: PlanSearch | None, constraints: Constraints
) -> tuple[RejectionCode, dict[str, Any]]:
    """`gpu_memory` with the leanest plan's figures, `host_ram` when only the host RAM misses: the offload's figures,
    or the load's (`load_gib`, its `copies` of `model_gib`: Plan.host_load) where loading sets the host peak, on a
    node whose RAM is known or not (no `host_ram_gib`); without a measured plan, `gpu_memory` names the largest
    configuration alone."""
    largest = max(configurations(offer, constraints), key=lambda c: c.gpus)
    where: dict[str, Any] = {"gpus": largest.gpus, "gpu_name": offer.gpu.name, "nodes": largest.nodes}
    if closest is None or closest.closest_miss is None:
        return "gpu_memory", where
    memory = closest.closest_miss.breakdown
    if memory.gpu_fits and not memory.host_fits and memory.load_binds:
        ram = {} if offer.host_ram_gib is None else host_ram_figures(memory, offer.host_ram_gib)
        figures = host_load_params(memory) | ram  # GiB to 3 decimals, as the other figures; the copies a count
        return "host_ram", where | {key: round(value, 3) for key, value in figures.items()}
    if memory.gpu_fits and not memory.host_fits and offer.host_ram_gib:
        return "host_ram", where | {
            "offload_gib": _gib(memory.host_ram),
            "host_ram_gib": offer.host_ram_gib,
            "host_ram_limit_gib": _gib(memory.host_ram_limit or 0),
        }
    limit = memory.capacity if memory.limit is None else memory.limit
    return "gpu_memory", where | {
        "needed_gib": _gib(memory.total),
        "limit_gib": _gib(limit),
        "usable_gib": _gib(memory.capacity),
        "headroom": constraints.memory_headroom,
    }


def _gib(value: float) -> float:
    return round(value / GIB, 3)


def _option(
    model: ModelSpec,
    workload: Workload,
    offer: Offer,
    config: Configuration,
    best: Evaluated,
    constraints: Constraints,
    global_batch: int,
) -> Option:
    perf = best.performance.performance
    hours = perf.time_to_train_hours
    cost = with_alternatives(offer, config, price(offer, config, constraints.term, hours))
    memory = best.memory.breakdown
    cluster = _cluster(offer, config, constraints)
    padded = as_padded(workload, best.plan, model)  # varied_lengths as the option's stack feeds its data
    if padded.varied_lengths and not workload.varied_lengths:  # the slack of the readings; the gate does not move
        memory = memory_breakdown(model, padded, best.plan, cluster)
    workload = padded
    band = padded_band(model, workload, best.plan, cluster, memory)
    exceed = may_exceed_advice(model, workload, best.plan, band, memory)
    pool = pool_warning(band, memory)
    warnings = _unique(
        best.memory.warnings
        + best.performance.warnings
        + ([exceed] if exceed else [])
        + ([pool] if pool else [])
        + plan_warnings(model, workload, best.plan, memory, perf)
        + training_offer_warnings(offer, config, workload)
        + billing_warnings(cost)
        + range_billing_warnings(offer, config, cost, perf)
        + budget_misses(cost, constraints)[1]
        + term_warnings(cost)
    )
    if offer.host_ram_gib is None and memory.host_peak > 0:
        # the catalog lists no host RAM for the server: the option stands, on the condition the warning names
        warnings = [w for w in warnings if w.code not in HOST_RAM_UNKNOWN] + [host_ram_unconfirmed(memory, config)]
    stack = stack_for(workload, best.plan, model)
    availability = place(offer, config, constraints, cost.months)
    region = availability.region
    return Option(
        offer=offer,
        config=config,
        region=region,
        evaluated=best,
        cost=cost,
        hours=hours,
        warnings=warnings,
        launch=launch_configs(
            stack,
            model,
            workload,
            best.plan,
            config.nodes,
            config.cards_per_node,
            global_batch,
            performance=perf,
            gpu=offer.gpu,
            memory=memory,
        ),
        availability=availability,
        stack=stack,
        band=band,
        edge=at_edge(memory, band),
    )


# The estimator's warnings that a plan needs host RAM the server does not list: an option replaces them with the
# condition it is offered on (`host_ram_unconfirmed`).
HOST_RAM_UNKNOWN = ("host_load_unknown", "host_ram_unknown")


def host_ram_unconfirmed(memory: MemoryBreakdown, config: Configuration) -> Warning_:
    """`host_ram_unconfirmed`: the host RAM per server the plan needs (its host peak plus the reserve the estimator
    keeps for the OS, the processes and their data loaders: app.estimator.memory.host_ram_reserve_gib), on a server
    whose host RAM the catalog does not list. Whole GiB, rounded up."""
    host_gib = memory.host_peak / GIB
    needed = math.ceil(min_host_ram_gib(host_gib, config.cards_per_node))
    params = {"host_gib": round(host_gib, 3), "needed_gib": needed, "loading": memory.load_binds}
    return Warning_("host_ram_unconfirmed", params)


def min_host_ram_gib(peak_gib: float, gpus_on_node: int) -> float:
    """The least host RAM whose share left after the reserve holds `peak_gib` (the reserve grows slower than the RAM,
    so what is left grows with it: bisection)."""
    low, high = peak_gib, 2 * peak_gib + 1024.0
    for _ in range(60):
        mid = (low + high) / 2
        if mid - host_ram_reserve_gib(mid, gpus_on_node) >= peak_gib:
            high = mid
        else:
            low = mid
    return high


def _unique(warnings: list[Warning_]) -> list[Warning_]:
    """Each code once, and no generic warning beside its measured twin (explain.SAID_BETTER_BY)."""
    codes = {warning.code for warning in warnings}
    first: dict[str, Warning_] = {}
    for warning in warnings:
        if SAID_BETTER_BY.get(warning.code) not in codes:
            first.setdefault(warning.code, warning)
    return list(first.values())


def _split_by_constraints(
    options: list[Option], constraints: Constraints, workload: Workload
) -> tuple[list[Option], list[Option]]:
    ranked: list[Option] = []
    misses: list[Option] = []
    for option in options:
        option.misses = _misses(option, constraints, workload)
        (misses if option.misses else ranked).append(option)
    return ranked, misses


def _inefficient(option: Option) -> bool:
    return any(code in IDLE_CODES for code, _params in option.misses)


def _misses(option: Option, constraints: Constraints, workload: Workload) -> list[Miss]:
    idle = inefficiency(option.evaluated.performance.performance, workload.task, option.config.nodes)
    idle = idle or needless_model_parallel(option.evaluated.plan, option.evaluated.memory.breakdown, workload)
    reasons: list[Miss] = [idle] if idle is not None else []
    if constraints.deadline_days is not None and option.hours is not None:
        days = option.hours / 24
        if days > constraints.deadline_days:
            params = {
                "days": round(days, 3),
                "hours": round(option.hours, 2),
                "deadline_days": constraints.deadline_days,
            }
            reasons.append(("deadline", params))
    months = option.cost.months
    if months is not None and months > MAX_QUOTE_MONTHS:  # POST /quotes rents no more: its body would not post
        reasons.append(("quote_months", {"months": months, "max_months": MAX_QUOTE_MONTHS}))
    if option.availability.short:  # fewer units free from the start date than the plan rents
        reasons.append(("capacity", option.availability.miss_params(option.offer.sku_id, option.offer.rental_unit)))
    budget, _warnings = budget_misses(option.cost, constraints)
    return reasons + budget


def _deadline_warnings(option: Option, deadline_days: float) -> list[Warning_]:
    """`deadline_within_range`: the estimate meets the deadline, the slow end of its range does not."""
    span = option.evaluated.performance.performance.time_to_train_hours_range
    deadline_hours = deadline_days * 24
    if option.hours is None or span is None or option.hours > deadline_hours or span[1] <= deadline_hours:
        return []
    return [
        Warning_(
            "deadline_within_range",
            {"days": option.hours / 24, "deadline_days": deadline_days, "slow_days": span[1] / 24},
        )
    ]
