"""A plan the search has sized and timed, and the search's rule for which of two is better. PURE: imports only the
estimator (the search, memory relief and the ranking share these)."""

from __future__ import annotations

from dataclasses import dataclass

from app.estimator.memory import MemoryEstimate
from app.estimator.performance import PerformanceEstimate
from app.estimator.specs import Cluster, MemoryBreakdown, Plan
from app.estimator.vocabulary import OFFLOADS, RECOMPUTES


@dataclass(frozen=True, slots=True)
class Relief:
    """What memory relief changed (app/planner/relief.py): the plan the search found first, whose memory range's high
    end crossed the limit (or the card), with that high end and its speed (tokens/s of the job) and time to train;
    `slow_months` (the relieved plan's, the first plan's) where the slow end of the relieved plan's time range bills
    more months than the first plan's did (the price holds at the estimate only); the stack that runs the first plan
    (the search's wider look may hold the same plan on a leaner stack's account: relief.py `_widened`)."""

    plan: Plan
    high: float  # bytes per GPU at the high end of its memory range
    throughput: float
    hours: float | None
    slow_months: tuple[int, int] | None = None
    stack: str | None = None  # the stack that runs the plan found first (stacks.stack_for)


@dataclass(frozen=True, slots=True)
class Evaluated:
    plan: Plan
    memory: MemoryEstimate
    performance: PerformanceEstimate
    relief: Relief | None = None  # the plan this one relieved, where memory relief turned a lever for the high end
    # where no plan with the standard loss fits and the search took the fused loss unasked (search.py `_fused_fit`):
    # the bytes per GPU of the leanest standard-loss plan it tried
    standard_loss_need: float | None = None

    @property
    def throughput(self) -> float:
        """Tokens per second of the whole job: what 'fastest' maximises within one configuration."""
        return throughput(self.performance)


def fits(memory: MemoryBreakdown, cluster: Cluster) -> bool:
    """The search's feasibility gate: `MemoryBreakdown.fits`, except that on a server whose host RAM is not known
    (where nothing is offloaded: `offloads`) loading the model does not gate the plan: the planner offers it with the
    host RAM it needs to confirm (recommend: warning `host_ram_unconfirmed`) rather than dropping the SKU."""
    if memory.fits:
        return True
    return cluster.host_ram_gib is None and memory.gpu_fits and not memory.host_ram


def throughput(estimate: PerformanceEstimate) -> float:
    perf = estimate.performance
    return perf.tokens_per_s if perf.tokens_per_s is not None else (perf.decode_tokens_per_s or 0.0)


def wins(speed: float, plan: Plan, best: Evaluated) -> bool:
    """Higher throughput wins; ties go to the simpler plan (fewer moving parts), deterministically."""
    if abs(speed - best.throughput) > 1e-9 * max(speed, best.throughput):
        return speed > best.throughput
    return plan_complexity(plan) < plan_complexity(best.plan)


def faster(a: Evaluated, b: Evaluated) -> bool:
    """`a` beats `b` by the search's own rule (throughput, then the simpler plan)."""
    return wins(a.throughput, a.plan, b)


def plan_complexity(plan: Plan) -> tuple[int, ...]:
    return (
        plan.tp * plan.pp,
        OFFLOADS.index(plan.offload),
        RECOMPUTES.index(plan.recompute),
        plan.zero_stage,
        -plan.micro_batch,
        plan.pp,
        plan.hybrid,
    )
