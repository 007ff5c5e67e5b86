"""Prometheus counters of the estimator and the planner, recorded by the services (the pure estimator and
search count into `SearchStats`; this module turns those counts into metrics). /metrics serves them with the
HTTP ones (app.http.metrics), summed over workers in multiprocess mode."""

from __future__ import annotations

from prometheus_client import Counter, Histogram

from app.planner.search import SearchStats

ESTIMATES = Counter("estimator_estimates_total", "Estimates answered", ["kind"])  # memory+speed, scaling
RECOMMENDATIONS = Counter(
    "planner_recommendations_total",
    "Recommendations computed",
    ["outcome"],  # options, near_misses_only, none
)
CONFIGURATIONS = Counter(
    "planner_configurations_total",
    "SKU × cards/nodes configurations searched",
    ["cache"],  # hit, miss
)
PLAN_EVALUATIONS = Counter("planner_plan_evaluations_total", "Plans evaluated by the search", ["kind"])
SEARCH_SECONDS = Histogram(
    "planner_search_duration_seconds",
    "Time of the plan search of one recommendation or plan-less estimate (pricing and response excluded)",
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5),
)


def record_search(stats: SearchStats, seconds: float, *, configurations: int = 1) -> None:
    PLAN_EVALUATIONS.labels("memory").inc(stats.memory_evaluations)
    PLAN_EVALUATIONS.labels("performance").inc(stats.performance_evaluations)
    CONFIGURATIONS.labels("hit").inc(stats.cached_configurations)
    CONFIGURATIONS.labels("miss").inc(max(0, configurations - stats.cached_configurations))
    SEARCH_SECONDS.observe(seconds)


def record_recommendation(options: int, near_misses: int) -> None:
    RECOMMENDATIONS.labels("options" if options else "near_misses_only" if near_misses else "none").inc()
