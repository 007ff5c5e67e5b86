"""What recommend() answers, as data. PURE: an option (a configuration, its fastest plan, its cost and warnings, and
the sort keys the ranking reads: app/planner/ranking.py), a rejection (a SKU's code and parameters; text:
app/text/messages.py) and the recommendation that holds them."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Literal

from app.estimator.memory.band import MemoryBand
from app.estimator.specs import Warning_
from app.planner.availability import Availability
from app.planner.evaluated import Evaluated
from app.planner.misses import Miss
from app.planner.offers import Configuration, Cost, Offer
from app.planner.search import SearchStats
from app.planner.stacks import Stack

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
    def risks(self) -> int:
        """How many of the risks the answer warns of the option runs: its memory range's high end crosses the limit
        (not `fits_high`), and the slow end of its time range misses the deadline its estimate meets
        (`deadline_within_range`). At equal cost the ranking puts the option with fewer first, then the faster
        (app/planner/ranking.py)."""
        late = any(warning.code == "deadline_within_range" for warning in self.warnings)
        return (not self.fits_high) + late

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
    """Why a SKU yields no option, as data: a code and its parameters (text: app/text/messages.py)."""

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
