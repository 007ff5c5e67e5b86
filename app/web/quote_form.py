"""The quote request form that both wizards (training and serving) end in: the chosen option, the
SKU's add-ons to tick, the customer's name and the rental months."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError
from sqlalchemy.orm import Session

from app.catalog import repository as catalog_repository
from app.errors import InvalidInput
from app.i18n import Translator
from app.planner.schemas import OptionOut, RecommendIn, RecommendOut
from app.quotes import service as quotes_service
from app.quotes.schemas import QuoteCreate
from app.web.forms import pydantic_message

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


def quote_from_form(
    session: Session,
    request_in: RecommendIn,
    option: OptionOut,
    fields: dict[str, str],
    addons: list[str],
    t: Translator,
    validity_days: int,
) -> tuple[str | None, dict[str, str], dict[str, list[str]]]:
    """Issue the quote the posted form asks for on `option`: the printable quote's address (None
    when refused), with what was typed and the refusals by form field, in the page's language."""
    customer = {name: fields.get(name, "").strip() for name in QUOTE_FIELDS}
    errors: dict[str, list[str]] = {}
    data = _quote_data(request_in, option, customer, addons, errors, t)
    if data is not None:
        try:
            created = quotes_service.create_quote(session, data=data, validity_days=validity_days)
            return f"{created.quote.links.print}?lang={t.lang}", customer, errors
        except InvalidInput as exc:
            for err in exc.errors or [{"field": "", "message": exc.detail}]:
                errors.setdefault(_quote_field(str(err.get("field", ""))), []).append(str(err.get("message")))
    return None, customer, errors


def _quote_data(
    request_in: RecommendIn,
    option: OptionOut,
    customer: dict[str, str],
    addons: list[str],
    errors: dict[str, list[str]],
    t: Translator,
) -> QuoteCreate | None:
    months: int | None = None
    if customer["months"]:
        try:
            months = int(customer["months"])
        except ValueError:
            errors.setdefault("months", []).append(t("err_integer"))
            return None
    workload = request_in.model_dump(mode="json", exclude_defaults=True, exclude={"constraints"})
    plan = option.plan.model_dump(mode="json")
    # The estimate travels with the plan, so the quote document can say how long the job takes.
    performance = option.performance.model_dump(mode="json")
    for key in ("time_to_train_hours", "time_to_train_hours_range"):
        if performance.get(key) is not None:
            plan[key] = performance[key]
    try:
        return QuoteCreate.model_validate(
            {
                "sku_id": option.sku.id,
                "quantity": option.cost.units,
                "term": option.cost.term,
                "months": months,
                "addons": addons,
                "workload": workload,
                "plan": plan,
                "customer": {"name": customer["name"], "company": customer["company"], "email": customer["email"]},
            }
        )
    except ValidationError as exc:
        for err in exc.errors():
            loc = ".".join(str(part) for part in err.get("loc", ()))
            errors.setdefault(_quote_field(loc), []).append(pydantic_message(err, t))
        return None


def _quote_field(loc: str) -> str:
    name = loc.removeprefix("customer.").split(".")[0]
    return name if name in (*QUOTE_FIELDS, "addons") else "form"
