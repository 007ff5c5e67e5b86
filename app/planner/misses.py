"""Why a configuration that fits is a near miss rather than an option, as codes with parameters (app/text/messages.py
words them in English and Chinese). PURE (the estimator's specs and the offers' costs)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Literal

from app.estimator.serving import ServingConfig
from app.estimator.specs import Performance, Warning_
from app.estimator.vocabulary import TERM_MONTHS
from app.planner.offers import Configuration, Constraints, Cost, Offer, cheaper_term, price

# Why a configuration that fits is a near miss rather than an option: training misses the deadline or the monthly
# budget or the job budget (`total_budget`); a serving deployment the budgets, its latency targets (already at one
# request, or at the peak load), the
# peak load itself (the replicas the SKU rents carry less), or the sequence length (a KV cache shorter than one);
# `kv_slots` / `kv_slots_wait`: more clients per replica (`concurrency`) than the sequences it runs, the others queue
# for a slot (with latency targets it misses, or without any);
# a training plan that leaves its GPUs nearly idle (`inefficient`, app/planner/efficiency.py), or splits a model whose
# states fit one GPU (`model_parallel_unneeded`, the same module), is shown only as a near
# miss, and only while nothing sensible exists; `capacity`: fewer units of the SKU are free in its region from the
# start date than the plan rents (app/planner/availability.py); `pp_speculative`: a serving deployment shown without
# the speculative decoding asked, since only a pipelined replica serves the model on the SKU and the engine runs no
# speculation across pipeline stages; `bf16_for_fp8`: a serving deployment in bf16 on a SKU rejected for the FP8 asked
# (its GPU has no FP8 kernels under the engine), shown since it meets the targets for less
# (app/planner/serving_sixteen_bit.py); `fp8_weights_bf16_math`: the same on FP8 weights kept with 16-bit math, where
# the engine runs FP8 weights weight-only through Marlin (app/planner/serving_weight_only.py).
MissCode = Literal[
    "deadline",
    "budget",
    "total_budget",
    "quote_months",
    "capacity",
    "inefficient",
    "model_parallel_unneeded",
    "slo_one_request",
    "slo_peak",
    "peak_load",
    "sequence_too_long",
    "max_nodes",
    "kv_slots",
    "kv_slots_wait",
    "pp_speculative",
    "bf16_for_fp8",
    "fp8_weights_bf16_math",
]
Miss = tuple[MissCode, dict[str, Any]]  # a code and its parameters, rendered to text by app/text/messages.py


def budget_params(cost: Cost, budget: Decimal) -> dict[str, Any]:
    """The parameters of a `budget` near miss: the monthly price in its own currency, converted into the
    request's when it differs, the job total and its billed months where the job has them, and the budget (in the
    request's currency)."""
    params: dict[str, Any] = {"monthly": str(cost.monthly_effective), "currency": cost.currency}
    if cost.converted:
        params["converted_monthly"] = str(cost.converted.monthly_effective)
    if cost.job_total is not None and cost.months is not None:
        # what the whole job costs beside the month: a dear month that finishes the job can cost less in all
        params |= {"job_total": str(cost.job_total), "months": cost.months}
    return params | {"budget": f"{budget:.2f}", "compared_currency": cost.compared_currency}


def budget_misses(cost: Cost, constraints: Constraints) -> tuple[list[Miss], list[Warning_]]:
    """The budget near misses of an option's cost, and the warning of a monthly price above the monthly budget
    that the job budget allows. A job budget (`max_total_budget`) is what the whole job may cost: when it is
    given, it decides, and the monthly budget only warns (`over_monthly_budget`), since a plan that bills one
    dear month can cost the customer less than one that bills three cheaper ones. Without it, the monthly
    budget decides, as before. The job's total is its billed months (or, without a token count, the fewest
    months its term bills: one, or twelve on the annual term)."""
    monthly, total = constraints.max_monthly_budget, constraints.max_total_budget
    over_monthly = monthly is not None and cost.compared_monthly > monthly
    if total is None:
        return ([("budget", budget_params(cost, monthly))] if over_monthly and monthly is not None else []), []
    params = total_budget_params(cost, total)
    if cost.compared_job_total > total:
        return [("total_budget", params)], []
    if not over_monthly or monthly is None:
        return [], []
    figures = {
        "monthly": str(cost.monthly_effective),
        "job_total": params["job_total"],
        "months": params["months"],
        "currency": cost.currency,
        "budget": f"{monthly:.2f}",  # as money reads: 100000.00, never 1E+5
        "total_budget": f"{total:.2f}",
        "compared_currency": cost.compared_currency,
    }
    return [], [Warning_("over_monthly_budget", figures)]


def total_budget_params(cost: Cost, budget: Decimal) -> dict[str, Any]:
    """The parameters of a `total_budget` near miss: the job total and its billed months in the price's currency,
    converted into the request's when it differs, and the job budget (in the request's currency)."""
    months = cost.months if cost.months is not None else TERM_MONTHS[cost.term]
    job_total = cost.job_total if cost.job_total is not None else cost.monthly_effective * months
    params: dict[str, Any] = {"job_total": str(job_total), "months": months, "currency": cost.currency}
    if cost.converted:
        params["converted_job_total"] = str(cost.compared_job_total)
    return params | {"budget": f"{budget:.2f}", "compared_currency": cost.compared_currency}


def term_warnings(cost: Cost) -> list[Warning_]:
    """`other_term_cheaper`: the other term bills this job less on the same units, with both totals (the 1.5B
    pre-training that bills 12 annual months for ¥26,880 where 4 monthly ones cost ¥11,200)."""
    other = cheaper_term(cost)
    if other is None or other.job_total is None or cost.job_total is None:
        return []
    params = {
        "term": cost.term,
        "months": cost.months,
        "job_total": str(cost.job_total),
        "other_term": other.term,
        "other_months": other.months,
        "other_total": str(other.job_total),
        "currency": cost.currency,
    }
    return [Warning_("other_term_cheaper", params)]


def slo_params(cfg: ServingConfig) -> dict[str, Any]:
    """The latency targets set (`slo_ttft_ms`, `slo_tpot_ms`): app/text/messages.py words them as `{slo}`."""
    targets = {"slo_ttft_ms": cfg.slo_ttft_ms, "slo_tpot_ms": cfg.slo_tpot_ms}
    return {name: value for name, value in targets.items() if value is not None}


TERM_WARN_RATIO = 2  # warn when the billed hours exceed twice the job's duration


def range_billing_warnings(offer: Offer, config: Configuration, cost: Cost, perf: Performance) -> list[Warning_]:
    """`billing_within_range`: the slow end of the time range bills more months than the estimate."""
    span = perf.time_to_train_hours_range
    if span is None or cost.months is None or cost.job_total is None:
        return []
    slow = price(offer, config, cost.term, span[1])
    if slow.months is None or slow.job_total is None or slow.months <= cost.months:
        return []
    names = {
        "months": cost.months,
        "slow_hours": span[1],
        "slow_months": slow.months,
        "job_total": str(cost.job_total),
        "slow_total": str(slow.job_total),
        "currency": cost.currency,
    }
    return [Warning_("billing_within_range", names)]


def billing_warnings(cost: Cost) -> list[Warning_]:
    if cost.used_hours is None or cost.billed_hours is None or cost.billed_hours <= TERM_WARN_RATIO * cost.used_hours:
        return []
    return [
        Warning_(
            "term_longer_than_job",
            {"months": cost.months, "billed_hours": cost.billed_hours, "used_hours": cost.used_hours}
            | {"term": cost.term, "share": cost.used_hours / cost.billed_hours},
        )
    ]
