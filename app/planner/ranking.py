"""How options rank (`rank`), which of them balanced shows (`worth_showing`), and the Pareto list (`pareto`). PURE.

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
At equal cost (cheapest, balanced with a deadline) the option that runs fewer of the risks the answer warns of comes
first (`Option.risks`): a memory range whose high end crosses the limit (`memory_may_exceed`), a time range whose slow
end misses the deadline the estimate meets (`deadline_within_range`); it breaks the remaining ties of the rest too.
So one that fits at the high end comes before one that may exceed, but not when it buys that by risking the deadline
(review R9: Llama 3.1 70B FP8 pre-training on 1T tokens within 60 days put 20 H100 servers for 59.7 days, slow end
80, before 40 servers for 27.5 days, slow end 37, at the same CNY 4,000,000, because the 40 may exceed memory at the
high end of their range);
an option at the edge of memory ranks at 4/3 of its cost and holds no states for "Offload last" (app/planner/edge.py).
Ties are broken by SKU id, then GPU count, so equal inputs always give the same order.

Balanced shows an option after the leader only if it buys time (`worth_showing`): one that costs as much
as an option already shown or on the Pareto list and takes longer, or costs more and takes as long or
longer, or costs more than one finishing within MEANINGFUL_HOURS, gains nothing the customer can use (8B
LoRA on 50M tokens on an annual term: one card for 3 h, not two or four for 1.6 or 0.8 h at two or four times
the price).
The rule reads only lists the pruning keeps exact (the ranked options cut at `limit`, the Pareto list); one it leaves
out makes room for the next ranked, so an offloading option ranked last ("Offload last") is not cut at `limit`.

The Pareto list (cheapest first) keeps an option only when it saves at least
PARETO_MIN_SAVING of the previous point's time, and stops after the first point that finishes
within MEANINGFUL_HOURS: past it, more money buys no meaningful time.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable
from decimal import Decimal
from itertools import accumulate

from app.estimator.vocabulary import Objective
from app.planner.edge import ranked_cost
from app.planner.option import Option

MEANINGFUL_HOURS = 24.0  # a job shorter than a day finishes overnight: speed below it buys nothing usable
BALANCED_COST_CAP = 4  # balanced shows no option costing more than 4 × the cheapest (without a deadline)
RIGHT_SIZE_RATIO = 2  # balanced ranks last an option costing 2 × one that finishes within its billed term
# An option holding its states on the GPUs ranks before one offloading them while it costs less than this many times
# as much (module docstring, "Offload last"): the right-sizing ratio, past which a dearer cluster already gives way.
OFFLOAD_PREMIUM = RIGHT_SIZE_RATIO
PARETO_MIN_SAVING = 0.2  # a Pareto point must cut the previous point's time by at least 20 %


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
        ordered = sorted(options, key=lambda o: (id(o) in last, cost[id(o)], o.risks, o.sort_time, o.tie_key))
    elif objective == "fastest":
        ordered = sorted(options, key=lambda o: (id(o) in last, o.sort_time, cost[id(o)], o.risks, o.tie_key))
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
                o.risks,
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
