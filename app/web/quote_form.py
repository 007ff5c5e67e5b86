"""The quote request form that both wizards (training and serving) end in: the chosen option, the
SKU's add-ons to tick, the customer's name and the rental months."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from fastapi.responses import Response
from pydantic import ValidationError
from sqlalchemy.orm import Session

from app.capacity.service import CapacityTaken
from app.catalog import repository as catalog_repository
from app.common.errors import InvalidInput, http_problem
from app.planner.schemas import OptionOut, RecommendIn, RecommendOut
from app.quotes import service as quotes_service
from app.quotes.plan_check import check_quote
from app.quotes.schemas import QuoteCreate
from app.text import messages
from app.text.field_words import pydantic_message
from app.text.i18n import Translator

QUOTE_FIELDS = ("name", "company", "email", "months")


@dataclass(frozen=True, slots=True)
class QuoteEntry:
    """The quote form as the customer left it: the option quoted, what was typed, why it was refused
    (by form field) and the add-ons ticked (None: the default ones)."""

    option: OptionOut
    customer: dict[str, str]
    errors: dict[str, list[str]] = field(default_factory=dict)
    chosen: list[str] | None = None

    @classmethod
    def blank(cls, option: OptionOut, *, chosen: list[str] | None = None) -> QuoteEntry:
        """A fresh form: nothing typed yet but the rental months the option bills (its quote body's: the whole
        months of its term that carry the job, which POST /quotes requires), else the term's fewest."""
        months = option.quote.months if option.quote is not None else 12 if option.cost.term == "annual" else 1
        return cls(option, {"months": str(months)}, chosen=chosen)


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


def option_problem(count: int, t: Translator) -> Response:
    """422 problem+json naming `option` and the ranks there are (1..count), for a client that is not a browser."""
    message = t("option_range", n=count) if count else t("option_none")
    return http_problem(422, f"option: {message}", errors=[{"field": "option", "message": message,
                        "type": "option_range", "ctx": {"min": 1, "max": count}}])  # fmt: skip


def default_addons(option: OptionOut, offered: list[tuple[str, str]]) -> list[str]:
    """The add-ons the option's own quote rents (the fabric a multi-server plan runs over): ticked by default."""
    wanted = option.quote.addons if option.quote is not None else []
    return [code for code, _ in offered if code in wanted]


def quote_form_context(
    session: Session, entry: QuoteEntry, state: list[tuple[str, str]], *, summary: str, results_path: str
) -> dict[str, Any]:
    """What web/quote.html shows: the option, what was typed (and why it was refused), the add-ons
    and the way back to the results (`results_path` with the wizard's `state`)."""
    option = entry.option
    sku = catalog_repository.get_sku_by_slug(session, option.sku.id)
    offered = active_addons(session, option.sku.id)
    return {
        "option": option,
        "state": state,
        "customer": entry.customer,
        "errors": entry.errors,
        "unit": sku.rental_unit if sku is not None else "node",
        "offered_addons": offered,
        "chosen_addons": entry.chosen if entry.chosen is not None else default_addons(option, offered),
        "summary": summary,
        "labels": {"name": "customer_name", "addons": "addons"},
        "results_url": f"{results_path}?{urlencode(state)}",
    }


def quote_from_form(
    session: Session,
    request_in: RecommendIn,
    option: OptionOut,
    fields: dict[str, str],
    addons: list[str],
    t: Translator,
    validity_days: int,
) -> tuple[str | None, QuoteEntry]:
    """Issue the quote the posted form asks for on `option`: the printable quote's address (None
    when refused), with the form as posted and its refusals by form field, in the page's language."""
    customer = {name: fields.get(name, "").strip() for name in QUOTE_FIELDS}
    errors: dict[str, list[str]] = {}
    data = _quote_data(request_in, option, customer, addons, errors, t)
    if data is not None:
        try:
            created = quotes_service.create_quote(
                session, data=data, validity_days=validity_days, check_plan=check_quote
            )
            return f"{created.quote.links.print}?lang={t.lang}", QuoteEntry(option, customer, errors, addons)
        except (InvalidInput, CapacityTaken) as exc:  # refused: shown on the form (a taken capacity, too)
            for err in exc.errors or [{"field": "", "message": exc.detail}]:
                code, message = str(err.get("type", "")), str(err.get("message"))
                if code in messages.QUOTE_CHECKS["en"]:  # worded in the page's language from its code
                    message = messages.quote_check(code, err.get("params") or {}, t.lang)
                elif code in messages.ESTIMATOR_ERRORS["en"]:  # the estimator's refusal, as /recommend words it
                    message = messages.estimator_text(code, err.get("params") or {}, t.lang)
                errors.setdefault(_quote_field(str(err.get("field", ""))), []).append(message)
    return None, QuoteEntry(option, customer, errors, addons)


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
    if option.serving is not None and option.quote is not None:  # as the API's quote body: the mode chosen
        workload = dict(option.quote.workload)  # ("auto" asks for either), and two pools are no dp x tp x pp
        if option.serving.pools:
            plan = dict(option.quote.plan)
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
                "start_date": request_in.constraints.start_date,
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
