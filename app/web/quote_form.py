"""The quote request form that both wizards (training and serving) end in: the chosen option, the
SKU's add-ons to tick, the customer's name and the rental months."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from app.catalog import repository as catalog_repository
from app.planner.schemas import OptionOut, RecommendOut

QUOTE_FIELDS = ("name", "company", "email", "months")


def active_addons(session: Session, sku_slug: str) -> list[tuple[str, str]]:
    """The SKU's active add-ons as (code, name), for the quote form's checkboxes."""
    sku = catalog_repository.get_sku_by_slug(session, sku_slug)
    if sku is None:
        return []
    return [(a.code, a.name) for a in catalog_repository.addons_for_sku(session, sku.id) if a.status == "active"]


def find_option(result: RecommendOut, raw: str | None) -> OptionOut | None:
    """The option ranked `raw` (the `option` query or form field); None when there is none."""
    try:
        rank = int(raw or "")
    except ValueError:
        return None
    return next((o for o in result.options if o.rank == rank), None)


def default_addons(option: OptionOut, offered: list[tuple[str, str]]) -> list[str]:
    """A plan over several servers needs the fabric add-on the planner warned about: ticked by default."""
    needs_fabric = any(w.code == "fabric_priced_on_request" for w in option.warnings)
    return [code for code, _ in offered if needs_fabric and option.nodes > 1 and "infiniband" in code]


def quote_form_context(
    session: Session,
    option: OptionOut,
    state: list[tuple[str, str]],
    *,
    customer: dict[str, str],
    errors: dict[str, list[str]],
    chosen: list[str] | None,
    summary: str,
    results_url: str,
) -> dict[str, Any]:
    """What web/quote.html shows: the option, what was typed (and why it was refused), the add-ons
    (`chosen` None: the default ones) and the way back to the results."""
    sku = catalog_repository.get_sku_by_slug(session, option.sku.id)
    offered = active_addons(session, option.sku.id)
    return {
        "option": option,
        "state": state,
        "customer": customer,
        "errors": errors,
        "unit": sku.rental_unit if sku is not None else "node",
        "offered_addons": offered,
        "chosen_addons": chosen if chosen is not None else default_addons(option, offered),
        "summary": summary,
        "labels": {"name": "customer_name", "addons": "addons"},
        "results_url": results_url,
    }
