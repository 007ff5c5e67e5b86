"""Why a configuration that fits is a near miss rather than an option, as codes with parameters (app/messages.py
words them in English and Chinese). PURE (the estimator's specs and the offers' costs)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Literal

from app.estimator.serving import ServingConfig
from app.planner.offers import Cost

# Why a configuration that fits is a near miss rather than an option: training misses the deadline or the monthly
# budget; a serving deployment the budget, its latency targets (already at one request, or at the peak load), the
# peak load itself (the replicas the SKU rents carry less), or the sequence length (a KV cache shorter than one);
# a training plan that leaves its GPUs nearly idle (`inefficient`, app/planner/efficiency.py) is shown only as a near
# miss, and only while nothing sensible exists.
MissCode = Literal[
    "deadline",
    "budget",
    "quote_months",
    "inefficient",
    "slo_one_request",
    "slo_peak",
    "peak_load",
    "sequence_too_long",
]
Miss = tuple[MissCode, dict[str, Any]]  # a code and its parameters, rendered to text by app/messages.py


def budget_params(cost: Cost, budget: Decimal) -> dict[str, Any]:
    """The parameters of a `budget` near miss: the monthly price in its own currency, converted into the
    request's when it differs, and the budget (in the request's currency)."""
    params: dict[str, Any] = {"monthly": str(cost.monthly_effective), "currency": cost.currency}
    if cost.converted:
        params["converted_monthly"] = str(cost.converted.monthly_effective)
    return params | {"budget": str(budget), "compared_currency": cost.compared_currency}


def slo_params(cfg: ServingConfig) -> dict[str, Any]:
    """The latency targets set (`slo_ttft_ms`, `slo_tpot_ms`): app/messages.py words them as `{slo}`."""
    targets = {"slo_ttft_ms": cfg.slo_ttft_ms, "slo_tpot_ms": cfg.slo_tpot_ms}
    return {name: value for name, value in targets.items() if value is not None}
