"""How long one recommendation may search (PLANNER_TIME_BUDGET_MS; 0: no limit). PURE (standard library).

Checked between SKUs by the serving search (app.planner.serving), and before each SKU is started by
the training search (app.planner.recommend, which starts SKUs in the order of their cheapest
configuration): once the budget has passed, the SKUs left (for training, also those started without
a fitting plan yet) are not searched and are listed as rejected with code `time_budget`, and the
response says `stopped_early`, so a large catalog cannot hold a request (and its thread) for long.
"""

from __future__ import annotations

import time

_time_budget_s: float | None = None


def set_time_budget(milliseconds: int) -> None:
    global _time_budget_s
    _time_budget_s = milliseconds / 1000 if milliseconds > 0 else None


def search_deadline() -> float | None:
    """The monotonic moment a search that starts now must stop by; None without a budget."""
    return time.monotonic() + _time_budget_s if _time_budget_s is not None else None


def past(deadline: float | None) -> bool:
    return deadline is not None and time.monotonic() > deadline
