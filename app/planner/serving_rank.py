"""The serving options' order: the request's objective as a sort key (app/planner/serving.py). PURE."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

from app.planner.offers import Constraints
from app.planner.serving_option import ServingOption


def _compared_per_token(option: ServingOption) -> Decimal:
    """Monthly price in the compared currency per output token/s at the offered load (∝ cost per token). The
    rate is read to 3 significant figures: options that carry the same offered load tie, whatever the last
    digits of the load solver, and the next keys decide."""
    tokens = float(f"{option.estimate.output_tokens_per_s:.3g}")
    return option.cost.compared_monthly / Decimal(str(tokens)) if tokens > 0 else Decimal("Infinity")


def cost_key(option: ServingOption) -> tuple[Decimal, Decimal, bool, float, float, str, int]:
    """Lowest cost per million output tokens first (for an offered load every option carries the same tokens,
    so this is the cheapest; at a given concurrency, the same price buys the layout that produces more), then
    the lower monthly price, then at the same price the one whose price leaves nothing out (no fabric add-on priced
    on consultation: its real cost is higher), the larger capacity (headroom), the lower TPOT."""
    return (
        _compared_per_token(option),
        option.cost.compared_monthly,
        option.cost.fabric_on_consultation,
        -round(option.headroom, 3),
        option.estimate.tpot_ms,
        option.offer.sku_id,
        option.config.gpus,
    )


def fastest_key(option: ServingOption) -> tuple[float, float, Decimal, Decimal, str, int]:
    """objective "fastest": the lowest end-to-end latency of a request at the offered load (TTFT + the
    output's TPOTs, read to 3 significant figures), then the lower TTFT, then as the cheapest."""
    cheapest = cost_key(option)
    latency = float(f"{option.estimate.e2e_latency_ms:.3g}")
    return latency, option.estimate.ttft_ms, cheapest[0], cheapest[1], option.offer.sku_id, option.config.gpus


def ranking(constraints: Constraints) -> Callable[[ServingOption], Any]:
    """The sort key of the request's objective: "fastest" ranks by latency (fastest_key), else by cost (cost_key)."""
    return fastest_key if constraints.objective == "fastest" else cost_key
