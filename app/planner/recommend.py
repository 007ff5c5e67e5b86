"""Rank rentable configurations for a workload. PURE: offers in, options out.

Objectives (documented in docs/estimator.md "Ranking"):
- cheapest: lowest job total (whole billed months of the term; monthly price without `tokens`),
  then faster.
- fastest: shortest time to train (highest throughput without `tokens`), then cheaper.
- balanced, with a deadline: the options that meet it, by what the customer pays, then time.
- balanced, without a deadline: lowest cost × max(time, MEANINGFUL_HOURS): halving the time is
  worth doubling the cost, but only while the job takes longer than a day: a job that finishes
  overnight either way gains nothing the customer can use from a bigger cluster, so below a day
  only the price counts. Options costing more than BALANCED_COST_CAP × the cheapest option are
  left out (`fastest` and the Pareto list still show them): balanced never leads with a cluster
  several times the price of one that finishes within a few times its time. Right-sizing: an option
  costing RIGHT_SIZE_RATIO × or more what another costs that finishes the job, even at the slow end of its
  time range, within the hours the dearer one's term bills anyway is ranked after every option without such
  a cheaper twin (a twin that bills one month at its estimate but two at its range's slow end is no twin): the
  customer pays for that term either way, and the dearer cluster only buys speed inside it (405B on
  1B tokens: 4 H100 servers for 111 h, not 14 for 17 h at 3.5 × the price).
Offload last (balanced and fastest): an option that offloads its model states to host RAM (`Plan.offload`) ranks
after every option that keeps them on the GPUs while the cheapest of those costs at most OFFLOAD_PREMIUM × what the
offloading option bills at the slow end of its time range (`Option.slow_cost`; "no offload where the states fit",
issue 32): offloaded steps are what no speed calibration run measured (the range's slow end is widened for them),
pinned host buffers of hundreds of GiB and PCIe traffic are what fails first, and an engineer rents the servers that
hold the states before streaming them (Llama 3.1 405B continued pre-training on 10B tokens: Megatron-LM TP 8 × PP 14
on 14 H100 servers for CNY 1,400,000, not ZeRO-3 with every state offloaded on 4 or 8 servers for 400,000-800,000,
which bill 800,000 at their slow end and which the speed model put 9 % faster a GPU). Where holding the states costs
more than that (405B on 1B tokens: 14 servers against 4 offloading ones that finish within their month even at the
slow end, 3.5 ×), or nothing holds them, or the objective is cheapest, offloading options rank as any other.
At equal cost (cheapest, balanced with a deadline) the option whose memory range's high end is within the limit
comes before one that carries `memory_may_exceed` (`Option.fits_high`), as it breaks the remaining ties of the rest;
an option at the edge of memory ranks at 4/3 of its cost and holds no states for "Offload last" (app/planner/edge.py).
Ties are broken by SKU id, then GPU count, so equal inputs always give the same order.

Balanced shows an option after the leader only if it buys time (`worth_showing`): one that costs as much
as an option already shown or on the Pareto list and takes longer, or costs more and takes as long or
longer, or costs more than one finishing within MEANINGFUL_HOURS, gains nothing the customer can use (8B
LoRA on 50M tokens on an annual term: one card for 3 h, not two or four for 1.6 or 0.8 h at two or four times
the price).
The rule reads only lists the pruning keeps exact (the ranked options cut at `limit`, the Pareto list); one it leaves
out makes room for the next ranked, so an offloading option ranked last ("Offload last") is not cut at `limit`.

With a deadline, an option whose estimate meets it but whose time range's slow end
(`time_to_train_hours_range`) does not carries the warning `deadline_within_range` with the figures. An option
whose range's slow end bills more months than its estimate carries `billing_within_range` with both totals.

A plan that leaves its GPUs nearly idle (app/planner/efficiency.py: MFU below 5 %, or exposed communication above
3 × its compute) is never ranked; it is a near miss (`inefficient`, with what would help) only while no option is
ranked, and it prunes nothing (`_Search._search`).

The Pareto list (cheapest first) keeps an option only when it saves at least
PARETO_MIN_SAVING of the previous point's time, and stops after the first point that finishes
within MEANINGFUL_HOURS: past it, more money buys no meaningful time.
"""

from __future__ import annotations

import heapq
import math
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from decimal import Decimal
from itertools import accumulate
from typing import Any, Literal

from app.estimator.memory import host_load_params, host_ram_figures, host_ram_reserve_gib, memory_breakdown
from app.estimator.memory.band import MemoryBand
from app.estimator.specs import GIB, Cluster, MemoryBreakdown, ModelSpec, Warning_, Workload
from app.estimator.vocabulary import MAX_QUOTE_MONTHS, TERM_MONTHS, Objective
from app.planner.availability import Availability, place
from app.planner.budget import past, search_deadline
from app.planner.edge import at_edge, ranked_cost
from app.planner.efficiency import IDLE_CODES, inefficiency, needless_model_parallel
from app.planner.explain import SAID_BETTER_BY, batch_warnings, plan_warnings
from app.planner.launch import launch_configs
from app.planner.levers import Levers, levers_params
from app.planner.misses import Miss, billing_warnings, budget_misses, range_billing_warnings, term_warnings
from app.planner.offers import (
    Configuration,
    Constraints,
    Cost,
    Offer,
    billed_months,
    configurations,
    price,
    unconvertible,
    with_alternatives,
)
from app.planner.padded_band import may_exceed_advice, padded_band
from app.planner.pruning import Frontier, Point, Rules
from app.planner.search import (
    Evaluated,
    PlanSearch,
    SearchStats,
    batch_splits,
    cached_search_plans,
    default_global_batch,
)
from app.planner.speed_bounds import BoundCache, throughput_bound
from app.planner.stacks import Stack, as_launched, as_padded, fp8_levers_excluded, precision_run_as, stack_for

MEANINGFUL_HOURS = 24.0  # a job shorter than a day finishes overnight: speed below it buys nothing usable
BALANCED_COST_CAP = 4  # balanced shows no option costing more than 4 × the cheapest (without a deadline)
RIGHT_SIZE_RATIO = 2  # balanced ranks last an option costing 2 × one that finishes within its billed term
# An option holding its states on the GPUs ranks before one offloading them while it costs less than this many times
# as much (module docstring, "Offload last"): the right-sizing ratio, past which a dearer cluster already gives way.
OFFLOAD_PREMIUM = RIGHT_SIZE_RATIO
PARETO_MIN_SAVING = 0.2  # a Pareto point must cut the previous point's time by at least 20 %
# Why a SKU yields no option: excluded by a constraint, or no plan passes the feasibility gate (GPU memory within the
# headroom, host RAM within the reserve).
# "time_budget": not searched, because the request's time budget ran out first (app.planner.budget).
# "exchange_rate": priced in a currency no admin-set exchange rate turns into the request's, so it cannot be ranked
# or budgeted against the others.
# "batch_split": no data-parallel degree × micro-batch on the SKU's largest configuration divides the
# global batch (nor do tensor and pipeline parallel help): the batch, not the memory, is the obstacle.
# "levers_unsupported": no stack runs the request's memory levers together on any plan the SKU takes, where some
# stack runs the plan without them (app/planner/levers.py): the levers, not the memory, are the obstacle.
RejectionCode = Literal[
    "gpu_type",
    "region",
    "no_fabric",
    "gpu_memory",
    "host_ram",
    "batch_split",
    "kernels",
    "max_nodes",
    "time_budget",
    "exchange_rate",
    "levers_unsupported",
    "pp_speculative",  # serving: only a pipelined replica holds the model; the engine pipelines no speculation
]


@dataclass(slots=True)
class Option:
    offer: Offer
    config: Configuration
    region: str
    evaluated: Evaluated
    cost: Cost
    hours: float | None
    warnings: list[Warning_]
    launch: dict[str, Any]
    availability: Availability  # its region's units free from the start date (app.planner.availability)
    stack: Stack | None = None
    rank: int | None = None
    misses: list[Miss] = field(default_factory=list)
    band: MemoryBand | None = None  # the peak's readings and range (memory_band), for the response and the ranking
    edge: bool = False  # at the edge of GPU memory (app/planner/edge.py): ranked at EDGE_PREMIUM of its cost

    @property
    def fits_high(self) -> bool:
        """The high end of the memory range is within the limit too (no `memory_may_exceed`): at equal cost the
        ranking puts such an option first."""
        if self.band is None:
            return True
        memory = self.evaluated.memory.breakdown
        limit = memory.capacity if memory.limit is None else memory.limit
        return self.band.high <= limit

    @property
    def sort_time(self) -> float:
        """Hours to train, or seconds per million tokens when no token count was given."""
        if self.hours is not None:
            return self.hours
        return 1e6 / max(self.evaluated.throughput, 1e-9)

    @property
    def sort_cost(self) -> Decimal:
        """The job total (the monthly price without a token count) in the request's currency."""
        return self.cost.compared_total

    @property
    def offloads(self) -> bool:
        """The plan keeps model states in host RAM (`Plan.offload`): ranked after an option that holds them
        (`rank`, "Offload last") and pruning no configuration (`_Search._search`)."""
        return self.evaluated.plan.offload != "none"

    @property
    def slow_cost(self) -> Decimal:
        """`sort_cost` at the slow end of the time range: the months it bills there (`billing_within_range`)."""
        for warning in self.warnings:
            if warning.code == "billing_within_range":
                params = warning.params
                return self.sort_cost * Decimal(params["slow_total"]) / Decimal(params["job_total"])
        return self.sort_cost

    @property
    def tie_key(self) -> tuple[str, int]:
        return (self.offer.sku_id, self.config.gpus)


@dataclass(slots=True)
class Rejection:
    """Why a SKU yields no option, as data: a code and its parameters (text: app/messages.py)."""

    sku_id: str
    code: RejectionCode
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class Recommendation:
    options: list[Option]
    near_misses: list[Option]
    rejected: list[Rejection]
    pareto: list[Option]
    global_batch: int
    stats: SearchStats = field(default_factory=SearchStats)
    configurations: int = 0
    stopped_early: bool = False  # the time budget ran out: some SKUs were not searched (rejected: time_budget)


def recommend(
    model: ModelSpec,
    workload: Workload,
    offers: list[Offer],
    constraints: Constraints,
    *,
    micro_batch: int | None = None,
    levers: Levers | None = None,
) -> Recommendation:
    global_batch = default_global_batch(workload) if workload.task != "inference" else 0
    result = Recommendation([], [], [], [], global_batch)
    rejected: list[Rejection] = []
    progress: list[_OfferSearch] = []
    for offer in sorted(offers, key=lambda o: o.sku_id):
        excluded = _excluded(offer, constraints) or fp8_levers_excluded(
            offer.gpu, offer.gpus_per_node, model, workload, levers
        )
        if excluded:
            rejected.append(Rejection(offer.sku_id, *excluded))
        else:
            progress.append(_OfferSearch(offer, list(configurations(offer, constraints))))
    search = _Search(model, workload, constraints, micro_batch, result, levers)
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
    result.pareto = pareto(ranked)
    ranked = rank(ranked, constraints.objective, deadline=constraints.deadline_days is not None)
    result.options = ranked[: constraints.limit]
    if constraints.objective == "balanced":
        result.options = worth_showing(ranked, result.pareto, constraints.limit)
    if constraints.deadline_days is not None:
        for option in result.options:
            option.warnings = _unique(option.warnings + _deadline_warnings(option, constraints.deadline_days))
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


def _excluded(offer: Offer, constraints: Constraints) -> tuple[RejectionCode, dict[str, Any]] | None:
    if constraints.gpu_types and offer.gpu.id not in constraints.gpu_types:
        return "gpu_type", {"gpu_type": offer.gpu.id, "requested": list(constraints.gpu_types)}
    if constraints.regions and not set(offer.regions) & set(constraints.regions):
        return "region", {"regions": list(offer.regions), "requested": list(constraints.regions)}
    if constraints.require_infiniband and not offer.may_span_nodes:
        return "no_fabric", {}
    if offer.unconvertible:
        return "exchange_rate", unconvertible(offer)
    return None


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
    warnings = _unique(
        best.memory.warnings
        + best.performance.warnings
        + ([exceed] if exceed else [])
        + plan_warnings(model, workload, offer, config, best.plan, memory, perf)
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


def _offload_last(options: list[Option], objective: Objective) -> set[int]:
    """The options (ids) that offload their states while an option holding them on the GPUs costs at most
    OFFLOAD_PREMIUM × what they bill at the slow end of their time range: they rank after every option that holds
    them (module docstring, "Offload last"), one at the edge of memory (edge.py) aside. `cheapest`: price alone."""
    if objective == "cheapest":
        return set()
    held = min((o.sort_cost for o in options if not o.offloads and not o.edge), default=None)
    if held is None:
        return set()
    return {id(o) for o in options if o.offloads and held <= o.slow_cost * OFFLOAD_PREMIUM}


def rank(options: list[Option], objective: Objective, *, deadline: bool = False) -> list[Option]:
    if not options:
        return []
    last = _offload_last(options, objective)
    cost = {id(o): ranked_cost(o.sort_cost, o.edge) for o in options}  # EDGE_PREMIUM of it at the edge (edge.py)
    if objective == "cheapest" or (objective == "balanced" and deadline):
        ordered = sorted(options, key=lambda o: (id(o) in last, cost[id(o)], not o.fits_high, o.sort_time, o.tie_key))
    elif objective == "fastest":
        ordered = sorted(options, key=lambda o: (id(o) in last, o.sort_time, cost[id(o)], not o.fits_high, o.tie_key))
    else:
        cap = min(o.sort_cost for o in options if id(o) not in last) * BALANCED_COST_CAP
        capped = [o for o in options if o.sort_cost <= cap]
        oversized = _oversized(capped)
        ordered = sorted(
            capped,
            key=lambda o: (
                id(o) in last,
                id(o) in oversized,
                float(cost[id(o)]) * _balanced_time(o),
                cost[id(o)],
                not o.fits_high,
                o.sort_time,
                o.tie_key,
            ),
        )
    for index, option in enumerate(ordered, start=1):
        option.rank = index
    return ordered


def worth_showing(ranked: list[Option], front: list[Option], limit: int) -> list[Option]:
    """Up to `limit` ranked options, without those after the leader that buy no time over a cheaper one among the first
    `limit`, those ranked before them or the Pareto list `front` (module docstring), ranks renumbered."""
    kept: list[Option] = []
    for index, option in enumerate(ranked):
        references = {id(o): o for o in ranked[: max(limit, index + 1)] + front}.values()
        if len(kept) < limit and (index == 0 or not _gains_nothing(option, references)):
            kept.append(option)
    for index, option in enumerate(kept, start=1):
        option.rank = index
    return kept


def _gains_nothing(option: Option, references: Iterable[Option]) -> bool:
    for other in references:
        if other.sort_cost == option.sort_cost and other.sort_time < option.sort_time:
            return True  # slower at the same price
        if other.sort_cost >= option.sort_cost:
            continue
        if other.sort_time <= option.sort_time:
            return True  # as long or longer, at a higher price
        if other.hours is not None and other.hours <= MEANINGFUL_HOURS:
            return True  # the cheaper one finishes within a day: the speed buys nothing usable
    return False


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


def _slow_hours(option: Option) -> float:
    """The slow end of the option's time range (a typical stack), its point without a range."""
    span = option.evaluated.performance.performance.time_to_train_hours_range
    return span[1] if span is not None else option.hours or 0.0


def _oversized(options: list[Option]) -> set[int]:
    """ids of the options that cost RIGHT_SIZE_RATIO × or more what another costs which finishes the job,
    even at the slow end of its range, within the hours the dearer one bills anyway (its term): balanced
    ranks them after the others."""
    timed = sorted((o for o in options if o.hours is not None), key=_slow_hours)
    hours = [_slow_hours(o) for o in timed]
    cheapest_within: list[Decimal] = list(accumulate((o.sort_cost for o in timed), min))
    out = set()
    for option in timed:
        billed = option.cost.billed_hours
        within = bisect_right(hours, billed) if billed is not None else 0
        if within and cheapest_within[within - 1] * RIGHT_SIZE_RATIO <= option.sort_cost:
            out.add(id(option))
    return out


def _balanced_time(option: Option) -> float:
    """Hours to train, floored at a day; without a token count, the time per million tokens."""
    return max(option.hours, MEANINGFUL_HOURS) if option.hours is not None else option.sort_time


def pareto(options: list[Option]) -> list[Option]:
    """Options no other option beats on both cost and time, cheapest first, while more money still
    buys meaningful time (module docstring)."""
    front: list[Option] = []
    for option in sorted(options, key=lambda o: (o.sort_cost, o.sort_time, o.tie_key)):
        if front and option.hours is not None and front[-1].hours is not None:
            if front[-1].hours <= MEANINGFUL_HOURS:
                break
            if option.sort_time > front[-1].sort_time * (1 - PARETO_MIN_SAVING):
                continue
        if not front or option.sort_time < front[-1].sort_time:
            front.append(option)
    return front
