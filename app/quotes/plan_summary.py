"""A quote plan's `summary`, always worded by the server from the plan's own fields (a client's is dropped, as its
prices are): the planner's words for the same plan, so an option's quote body keeps its summary, and an edited one
never reaches the quote. A plan that states no parallel degrees nor pools has no layout to word: no summary."""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.planner.serving_mappers import serving_summary
from app.text.words import plan_summary

if TYPE_CHECKING:
    from app.planner.schemas import WorkloadIn
    from app.quotes.schemas import QuotePlan

DEGREES = frozenset({"dp", "tp", "pp", "cp"})


def stated(plan: QuotePlan | None) -> bool:
    """Whether the plan states a layout: parallel degrees, or a disaggregated deployment's pools."""
    return plan is not None and (plan.pools is not None or bool(DEGREES & plan.model_fields_set))


def server_summary(plan: QuotePlan | None, workload: WorkloadIn | None) -> str | None:
    """The summary the quote keeps for `plan` (None where it states no layout): the serving planner's for a serving
    workload (app.planner.serving_mappers.serving_summary), else the training plan's (app.text.words.plan_summary, as
    app.planner.explain.describe_plan words an option's)."""
    if plan is None or not stated(plan):
        return None
    if plan.pools is not None:
        return serving_summary(0, 0, 1, plan.pools.model_dump())
    if workload is not None and workload.task == "serving":
        return serving_summary(plan.dp, plan.tp, plan.pp, ep=plan.ep)
    fields = plan.model_dump(mode="json", exclude_unset=True, exclude={"summary", "pools"})
    return plan_summary(fields, "en")
