"""Quote API shapes. Money is a decimal string with its ISO 4217 currency code, never a float.

Request bodies refuse unknown fields (`RequestModel`), except price fields a client may echo from
a recommendation (`IGNORED_PRICE_FIELDS`): those are dropped, because every figure on a quote is
computed by the server from the catalog at the moment the quote is issued.

A quote is the seller's document: `workload` and `plan` are the API's own workload and plan shapes
(`WorkloadIn`, `PlanIn` plus the recommendation's plan summary), with no free keys, so nothing a
customer sends can print under a label of its own; the stored workload is capped in size and depth
(a pasted config.json is its only free-form part).
"""

from __future__ import annotations

import json
from datetime import date, datetime
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, EmailStr, Field, StringConstraints, field_validator, model_validator

from app.catalog.schemas import TERM_DESCRIPTION, MoneyStr
from app.common.schemas import PrintedText, RequestModel, coded_error
from app.estimator.vocabulary import MAX_QUOTE_MONTHS, QuoteStatus, Term
from app.planner.schemas import PlanIn, WorkloadIn
from app.planner.word_schemas import code_params

Text200 = Annotated[str, StringConstraints(strip_whitespace=True, max_length=200), PrintedText]
MAX_WORKLOAD_JSON_BYTES = 8192  # a real config.json is 1-2 KB (DeepSeek-V3's, the largest shipped preset: ~1.7 KB)
MAX_WORKLOAD_DEPTH = 5  # containers: workload.model.hf_config.quantization_config.<a list> (4) in real configs
IGNORED_PRICE_FIELDS = frozenset(
    {
        "price",
        "prices",
        "unit_price",
        "monthly_price",
        "monthly_cost",
        "cost",
        "currency",
        "discount",
        "discount_percent",
        "subtotal",
        "discount_total",
        "total",
        "lines",
    }
)


class CustomerIn(RequestModel):
    name: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200), PrintedText] = Field(
        description="The customer's name, printed on the quote."
    )
    company: Text200 = Field(default="", description="Company, printed above the name; default empty.")
    email: EmailStr = Field(description="Where the seller answers about this quote.")


class PoolIn(RequestModel):
    """One pool of a disaggregated deployment: `replicas` SGLang servers of `tp` GPUs each (`gpus` = tp × replicas,
    as an option's `serving.pools` states it)."""

    tp: int = Field(ge=1, le=64, description="GPUs per replica (tensor-parallel degree, within one server).")
    replicas: int = Field(ge=1, le=65536, description="Replicas in the pool.")
    gpus: int = Field(ge=1, le=65536, description="GPUs of the pool: tp × replicas.")

    @model_validator(mode="after")
    def _gpus(self) -> PoolIn:
        if self.gpus != self.tp * self.replicas:
            raise coded_error("pool_gpus", expected=self.tp * self.replicas, gpus=self.gpus)
        return self


class PoolsIn(RequestModel):
    """A disaggregated deployment's two pools (`serving.disaggregated`), each on servers of its own."""

    prefill: PoolIn = Field(description="The pool that prefills prompts.")
    decode: PoolIn = Field(description="The pool that decodes, the KV of each prompt sent to it over the fabric.")


class QuotePlan(PlanIn):
    """The parallel plan a quote was made for: the API's plan, plus the summary a recommendation gives it.

    `time_to_train_hours` and its range are accepted, so that an option's `quote` body posts as is, but never
    kept: the quote recomputes the estimate on the SKU and quantity it rents, with the workload sent, and freezes
    that (time, GPU-hours, throughput, per-GPU memory and fit); a client's figure, agreeing or not, is dropped, as
    its prices are. Without a workload, a token count or parallel degrees there is no time to compute, and none
    is printed."""

    DERIVED: ClassVar[tuple[str, ...]] = ("time_to_train_hours", "time_to_train_hours_range", "summary")

    summary: str | None = Field(
        default=None,
        max_length=300,
        description="The recommendation's plan summary. Ignored: the quote words the summary from the plan's fields "
        "(app.quotes.plan_summary), as the recommendation does",
    )
    pools: PoolsIn | None = Field(
        default=None,
        description="A disaggregated serving option's prefill and decode pools (`options[].quote.plan.pools`), in "
        "place of dp/tp/pp/cp: the quote checks the quantity and add-ons against the servers they occupy",
    )
    time_to_train_hours: float | None = Field(
        default=None,
        gt=0,
        le=1e7,
        description="The recommendation's time to finish in hours (`options[].performance.time_to_train_hours`). "
        "Ignored: the quote recomputes it on the SKU and quantity quoted, with the workload sent, and states that",
    )
    time_to_train_hours_range: tuple[float, float] | None = Field(
        default=None,
        description="Its range in hours, [tuned stack, typical stack]. Ignored: recomputed with the time",
    )

    @model_validator(mode="after")
    def _pools_or_degrees(self) -> QuotePlan:
        stated = sorted({"dp", "tp", "pp", "cp", "ep"} & self.model_fields_set)
        if self.pools is not None and stated:
            raise coded_error("pools_or_degrees", stated=stated)
        return self

    @field_validator("time_to_train_hours_range")
    @classmethod
    def _hours_range(cls, value: tuple[float, float] | None) -> tuple[float, float] | None:
        if value is not None and not all(0 < hours <= 1e7 for hours in value):
            raise coded_error("hours_range")
        return value


def _depth(value: Any) -> int:
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, depth = stack.pop()
        deepest = max(deepest, depth)
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return deepest


def _whole(value: Any) -> Any:
    """Integral floats as ints (a token count of 2e9 is kept as 2000000000): a quote carries no float it need not."""
    if isinstance(value, dict):
        return {key: _whole(child) for key, child in value.items()}
    if isinstance(value, list):
        return [_whole(child) for child in value]
    return int(value) if isinstance(value, float) and value.is_integer() else value


class QuoteCreate(RequestModel):
    """`quantity` counts cards for SKUs rented by the card (one of the SKU's `card_counts`: cards
    share one server) and whole servers (nodes) for the others."""

    model_config = ConfigDict(
        extra="forbid",
        allow_inf_nan=False,
        json_schema_extra={
            "examples": [
                {
                    "sku_id": "h100-80g-sxm-8x",
                    "quantity": 2,
                    "term": "annual",
                    "months": 12,
                    "addons": ["infiniband-400g"],
                    "workload": {"model": {"preset": "llama-3.1-70b"}, "task": "full_finetune", "seq_len": 1024},
                    "plan": {"tp": 8, "dp": 2, "zero_stage": 3},
                    "customer": {"name": "Li Wei", "company": "深圳算力科技", "email": "li.wei@example.com"},
                }
            ]
        },
    )

    sku_id: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=64)] = Field(
        description="The SKU to rent (an option's sku.id from POST /recommend, or GET /catalog/skus)."
    )
    quantity: int = Field(ge=1, le=1000, strict=True, description="Cards (SKUs rented by the card) or nodes")
    term: Term = Field(description=TERM_DESCRIPTION)
    months: int | None = Field(
        default=None,
        ge=1,
        le=MAX_QUOTE_MONTHS,
        strict=True,
        description="Rental length; default 1 (monthly) or 12 (annual). An annual term takes whole years. With a "
        "workload that has tokens, at least the months of the term that carry the job (the option's cost.months).",
    )
    addons: list[Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=64)]] = Field(
        default_factory=list,
        max_length=10,
        description="Add-on codes offered with the SKU (e.g. infiniband-400g); one priced on consultation is "
        "listed but not added to the total. Default none.",
    )
    region: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=64)] | None = Field(
        default=None,
        description="Where the servers are rented: one of the SKU's regions (an option's sku.region); default: "
        "not chosen, the quote lists every region the SKU is offered in.",
    )
    start_date: date | None = Field(
        default=None,
        description="The first day of the rental (YYYY-MM-DD), from today to a year ahead; default: today in the "
        "catalog's timezone (CATALOG_TIMEZONE). Where the admin tracks the SKU's units in the region, the quote holds "
        "its units from this day for its months (calendar months) while it is issued and valid, and for good once "
        "accepted; when they are not free the answer is 409 with code `capacity_taken`.",
    )
    workload: WorkloadIn | None = Field(
        default=None, description="What the recommendation was for (kept): the workload of POST /recommend"
    )
    plan: QuotePlan | None = Field(default=None, description="The chosen parallel plan (kept for the record)")
    customer: CustomerIn = Field(description="Who the quote is for.")

    @model_validator(mode="before")
    @classmethod
    def _drop_client_prices(cls, data: Any) -> Any:
        if isinstance(data, dict):
            return {key: value for key, value in data.items() if key not in IGNORED_PRICE_FIELDS}
        return data

    @field_validator("workload")
    @classmethod
    def _bounded_workload(cls, value: WorkloadIn | None) -> WorkloadIn | None:
        if value is None:
            return None
        stored = value.model_dump(mode="json", exclude_unset=True)
        if len(json.dumps(stored, ensure_ascii=False).encode()) > MAX_WORKLOAD_JSON_BYTES:
            raise coded_error("workload_too_large", limit=MAX_WORKLOAD_JSON_BYTES)
        if _depth(stored) > MAX_WORKLOAD_DEPTH:
            raise coded_error("workload_too_deep", limit=MAX_WORKLOAD_DEPTH)
        return value

    def stored_workload(self) -> dict[str, Any] | None:
        """The workload and plan as kept on the quote: what was sent, in the schema's own names."""
        return None if self.workload is None else _whole(self.workload.model_dump(mode="json", exclude_unset=True))

    def stored_plan(self, figures: dict[str, Any] | None = None) -> dict[str, Any] | None:
        """The plan as sent, less the figures a client may echo (QuotePlan.DERIVED), plus `figures`: the
        estimate the server recomputed on the SKU and quantity quoted (app.quotes.plan_check)."""
        if self.plan is None:
            return None
        return self.plan.model_dump(mode="json", exclude_unset=True, exclude=set(QuotePlan.DERIVED)) | (figures or {})


class QuoteLineOut(BaseModel):
    position: int
    kind: Literal["rental", "addon"]
    code: str
    description: str
    unit: str = Field(description="'card' or 'node'")
    quantity: int
    months: int
    unit_price: MoneyStr | None = Field(description="Monthly list price per unit; null: priced on consultation")
    discount_percent: str = Field(examples=["15"])
    discount: MoneyStr | None
    amount: MoneyStr | None = Field(description="After discount; null: priced on consultation, not in the total")
    note: str = ""


class QuoteNoteOut(BaseModel):
    code: str = Field(description="A note's stable code (app/text/note_words.py QUOTE_NOTES words it)")
    params: dict[str, Any] = code_params(
        "The figures and names its text carries; an amount is in `currency`, or in its own "
        "`<name>_currency` where it has one (price_at_start: today's price `current` in `current_currency`)",
    )


class CustomerOut(BaseModel):
    name: str
    company: str
    email: str


class QuoteLinks(BaseModel):
    self: str
    print: str
    pdf: str
    accept: str


class ReservationOut(BaseModel):
    region: str
    units: int = Field(description="Cards or servers, as the SKU rents")
    starts_on: date
    ends_on: date = Field(
        description="The day after the last one held: the start day `months` calendar months later (12 months: one "
        "year), whatever the months billed"
    )
    last_day: date = Field(description="The last day held (the day before `ends_on`), as the quote prints it")
    holding: bool = Field(description="Whether the units are held now: issued and valid, or accepted")


class QuoteOut(BaseModel):
    id: str = Field(description="Public id (192 random bits), used in the quote's URLs")
    number: str = Field(examples=["Q-2026-000123"])
    status: QuoteStatus
    created_at: datetime
    valid_until: datetime
    accepted_at: datetime | None = None
    cancelled_at: datetime | None = None
    currency: str = Field(examples=["CNY"])
    sku: dict[str, Any] = Field(description="The SKU as it was when the quote was issued")
    term: str
    months: int
    quantity: int
    unit: str
    discount_percent: str
    unit_list_price: MoneyStr = Field(description="Monthly list price per unit when issued")
    unit_effective_price: MoneyStr = Field(description="Monthly price per unit after the term discount")
    lines: list[QuoteLineOut]
    subtotal: MoneyStr
    discount_total: MoneyStr
    total: MoneyStr
    indicative: bool = Field(
        description="The total is not final: the catalog marks the price as indicative (final on consultation), or a "
        "fabric add-on on the quote is priced on consultation (fabric_on_consultation)"
    )
    fabric_on_consultation: bool = Field(
        default=False,
        description="A fabric add-on line (InfiniBand, RoCE) is priced on consultation: the total leaves it out and "
        "is shown as '+ fabric on consultation'",
    )
    notes: list[str]
    note_codes: list[QuoteNoteOut] = Field(
        default_factory=list,
        description="`notes` as codes with parameters, one for one (empty on a quote issued before they were kept)",
    )
    customer: CustomerOut
    workload: dict[str, Any] | None
    plan: dict[str, Any] | None
    catalog: dict[str, Any] = Field(description="Catalog versions the prices came from")
    start_date: date | None = Field(default=None, description="The rental's first day (null: quoted before dates)")
    reservation: ReservationOut | None = Field(
        default=None, description="The units the quote holds; null where the SKU's units in the region are not tracked"
    )
    estimator_version: str
    links: QuoteLinks


class QuoteList(BaseModel):
    items: list[QuoteOut]
    total: int
    limit: int
    offset: int


class QuotePage(BaseModel):
    """One page of GET /quotes: `next_cursor` fetches the next (None: this is the last)."""

    items: list[QuoteOut]
    limit: int
    next_cursor: str | None = Field(
        description="Pass as `cursor` for the next page (opaque; the same filters must be sent with it)"
    )
