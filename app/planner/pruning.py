"""Which rentable configurations cannot change a recommendation, so need no plan search. PURE.

The recommendation searches configurations (SKU × card or node count) in order of the least they can
cost: the monthly price of the configuration times the fewest months its term bills
(`recommend._Search._floor`). When the configuration whose floor is X comes up, every configuration that
could cost less than X has been searched (or skipped by this rule), so the options cheaper than X are
all known. A configuration is skipped only when it provably appears in none of the lists a
recommendation shows: the ranked options, the near misses and the Pareto list (all cut at `limit`
or by their own rules in `app.planner.recommend`). Its option would cost at least X and take at
least `time_floor` (a speed bound no plan on it can beat, `speed_bounds.throughput_bound`).

- ranked, `cheapest` or `balanced` with a deadline (cost, then time): `limit` known ranked options
  cost less than X.
- ranked, `fastest` (time, then cost): `limit` known ranked options take less than its time floor.
- ranked, `balanced` without a deadline (cost × max(time, a day) among options within
  BALANCED_COST_CAP × the cheapest, the right-sizing rule first): X is above the cap (the cheapest
  option is known: it costs less than X), or `limit` known options score less than
  X × max(time floor, a day) and cost less than RIGHT_SIZE_RATIO × the cheapest (so no option can
  rank them last as oversized).
- near misses (budget-only misses by cost, then deadline misses by time, the closest first; without a
  deadline: cost, then time): it cannot miss (no deadline, within the budget), or `limit` known misses cost
  less than X and, with a deadline, `limit` known misses take less than its time floor.
- Pareto (cheapest first, each point PARETO_MIN_SAVING faster than the last, ending after the first
  point within MEANINGFUL_HOURS): the front of the options cheaper than X, which are all known,
  already ends within a day, or its last point is not PARETO_MIN_SAVING slower than the time floor.

Whether a configuration misses the budget is known before searching it (the monthly price; a job budget
is surely missed when the cost floor is above it, and may be missed otherwise); whether
it misses a deadline is not, so both lists are checked unless its time floor already misses it.
`tests/planner/test_pruning.py` compares the answers with and without this rule.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from dataclasses import dataclass, field
from decimal import Decimal

from app.estimator.vocabulary import Objective


@dataclass(frozen=True, slots=True)
class Point:
    """A found option as the lists rank it: what it costs (`Option.sort_cost`), its time
    (`Option.sort_time`), its hours (None without a token count) and whether it misses a constraint."""

    cost: Decimal
    time: float
    hours: float | None
    miss: bool


@dataclass(frozen=True, slots=True)
class Rules:
    objective: Objective
    ranked_by_cost: bool  # balanced with a deadline ranks by what the customer pays, then time
    deadline_hours: float | None  # None without a deadline or a token count: nothing misses it
    timed: bool  # a token count was given: options have hours (else `time` is seconds per million tokens)
    budget: Decimal | None  # the monthly budget, where it decides misses (no job budget given)
    limit: int
    cost_cap: int  # balanced: options above cost_cap × the cheapest are not ranked
    right_size_ratio: int  # balanced: an option right_size_ratio × dearer than a twin finishing in its term ranks last
    meaningful_hours: float  # balanced floors times at it; the Pareto list ends after a point within it
    pareto_min_saving: float
    total_budget: Decimal | None = None  # the job budget: a configuration whose cost floor is above it misses it


@dataclass(slots=True)
class Frontier:
    """The options found so far, and whether a configuration not yet searched could still matter.
    Kept sorted (costs, times, balanced scores, the Pareto walk) so that each question is a bisection:
    it is asked for every configuration, an option is added far less often."""

    rules: Rules
    miss_costs: list[Decimal] = field(default_factory=list)
    miss_times: list[float] = field(default_factory=list)
    ranked: list[Point] = field(default_factory=list)  # by (cost, time)
    ranked_costs: list[Decimal] = field(default_factory=list)
    ranked_times: list[float] = field(default_factory=list)
    scores: list[tuple[float, Decimal]] = field(default_factory=list)  # balanced (score, cost)
    walk: list[tuple[Point | None, bool]] | None = None  # Pareto state after each ranked prefix

    def add(self, point: Point) -> None:
        if point.miss:
            insort(self.miss_costs, point.cost)
            insort(self.miss_times, point.time)
            return
        insort(self.ranked, point, key=lambda p: (p.cost, p.time))
        insort(self.ranked_costs, point.cost)
        insort(self.ranked_times, point.time)
        insort(self.scores, (float(point.cost) * self._balanced(point), point.cost))
        self.walk = None

    def excludes(self, floor: Decimal, monthly: Decimal, time_floor: float) -> bool:
        """Whether a configuration costing at least `floor` (`monthly` a month) and taking at least
        `time_floor` appears in no list shown (module docstring)."""
        rules = self.rules
        budget_miss = rules.budget is not None and monthly > rules.budget
        budget_miss = budget_miss or (rules.total_budget is not None and floor > rules.total_budget)
        # within the job budget at its floor, it may still miss it once its time is known
        may_miss = budget_miss or rules.deadline_hours is not None or rules.total_budget is not None
        if may_miss and self._may_be_near_miss(floor, time_floor):
            return False
        if budget_miss:
            return True
        if rules.deadline_hours is not None and rules.deadline_hours < time_floor:
            return True  # it surely misses the deadline: only the near misses could show it
        return self._outranked(floor, time_floor) and self._off_pareto(floor, time_floor)

    def _may_be_near_miss(self, floor: Decimal, time_floor: float) -> bool:
        """Whether fewer than `limit` known misses come before it in the near misses' order: by cost (budget-only
        misses, and every miss without a deadline) or, with a deadline, by time (misses of the deadline)."""
        by_cost = bisect_left(self.miss_costs, floor) < self.rules.limit
        if self.rules.deadline_hours is None:
            return by_cost
        return by_cost or bisect_left(self.miss_times, time_floor) < self.rules.limit

    def _outranked(self, floor: Decimal, time_floor: float) -> bool:
        rules = self.rules
        if rules.objective == "cheapest" or (rules.objective == "balanced" and rules.ranked_by_cost):
            return bisect_left(self.ranked_costs, floor) >= rules.limit
        if rules.objective == "fastest":
            return bisect_left(self.ranked_times, time_floor) >= rules.limit
        if not self.ranked_costs or self.ranked_costs[0] >= floor:
            return False  # the cheapest ranked option is not known yet: neither is the cap
        cap = self.ranked_costs[0] * rules.cost_cap
        if floor > cap:
            return True
        right_sized = self.ranked_costs[0] * rules.right_size_ratio  # below it no option has a cheaper twin
        bound = float(floor) * (max(time_floor, rules.meaningful_hours) if rules.timed else time_floor)
        ahead = 0
        for score, cost in self.scores:
            if score >= bound:
                return False
            ahead += cost <= cap and cost < right_sized
            if ahead >= rules.limit:
                return True
        return False

    def _balanced(self, point: Point) -> float:
        return max(point.hours, self.rules.meaningful_hours) if point.hours is not None else point.time

    def _off_pareto(self, floor: Decimal, time_floor: float) -> bool:
        """The Pareto list of the ranked options cheaper than `floor` (all known) is a prefix of
        the whole list; an option costing `floor` or more joins it only if that prefix has not ended
        and the option is PARETO_MIN_SAVING faster than its last point."""
        if self.walk is None:
            self.walk = self._pareto_walk()
        last, ended = self.walk[bisect_left(self.ranked_costs, floor)]
        rules = self.rules
        if last is None:
            return False
        if ended or (last.hours is not None and last.hours <= rules.meaningful_hours):
            return True
        if last.hours is not None:
            return time_floor > last.time * (1 - rules.pareto_min_saving)
        return time_floor >= last.time

    def _pareto_walk(self) -> list[tuple[Point | None, bool]]:
        """ranking.pareto over the ranked options by (cost, time): after each prefix, the front's
        last point and whether the walk has stopped."""
        rules = self.rules
        states: list[tuple[Point | None, bool]] = [(None, False)]
        last: Point | None = None
        ended = False
        for point in self.ranked:
            if not ended and last is not None and point.hours is not None and last.hours is not None:
                if last.hours <= rules.meaningful_hours:
                    ended = True
                elif point.time > last.time * (1 - rules.pareto_min_saving):
                    states.append((last, ended))
                    continue
            if not ended and (last is None or point.time < last.time):
                last = point
            states.append((last, ended))
        return states
