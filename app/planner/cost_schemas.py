"""What an option costs, on which SKU, against which public prices and when its capacity is free: the response
schemas of an option's `cost`, `sku`, `reference_prices` and `availability` (money as decimal strings)."""

from __future__ import annotations

from datetime import date
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

# One rounding rule, said where a client reads the figures (review R5-9: 2,474.99 × 12 = 29,699.88 against a total
# of 29,699.90): each figure is its own line priced by app.common.money.discounted_line, the discount rounded once.
MONTH_ROUNDED = (
    "One month of the line after the term discount, the discount rounded on that month; job_total and annual_total "
    "round it once on the whole line, so they may differ from this × months by a few minor units (docs/api.md)"
)


class SkuRefOut(BaseModel):
    id: str
    name: str
    gpu: str
    region: str


class ConvertedCostOut(BaseModel):
    """The cost in the request's currency, for a SKU priced in another: what options are ranked and budgeted
    by. The quote bills the SKU's own currency (the cost's other fields)."""

    currency: str
    rate: str = Field(description="Units of this currency one unit of the SKU's buys (the admin-set exchange rate)")
    monthly_list: str
    monthly_effective: str = Field(description=MONTH_ROUNDED)
    job_total: str | None
    annual_total: str


class TermCostOut(BaseModel):
    """The same units on the other term, for the same job."""

    term: str
    months: int | None = Field(description="Whole months of that term the job bills; null without tokens")
    job_total: str | None = Field(description="In `currency`, as a decimal string; null without tokens")


class CostOut(BaseModel):
    currency: str
    term: str
    units: int = Field(description="Cards or servers rented")
    monthly_list: str
    monthly_effective: str = Field(description=MONTH_ROUNDED)
    months: int | None = Field(description="Whole months of the term billed for the job")
    job_total: str | None
    annual_total: str = Field(description="Twelve months on the annual term, at its discount")
    used_hours: float | None = Field(default=None, description="The job's duration; null without tokens")
    billed_hours: float | None = Field(default=None, description="The billed months in hours (30-day months)")
    fabric_monthly: str | None = Field(
        default=None,
        description="The fabric add-on a multi-server option rents (InfiniBand), a month, included in monthly_list, "
        "monthly_effective and job_total; null when none is rented or it is priced on consultation",
    )
    fabric_on_consultation: bool = Field(
        default=False,
        description="The option joins its servers over a fabric add-on priced on consultation: every total here "
        "leaves it out (shown as '+ fabric on consultation'), and the option is `indicative`",
    )
    per_million_output_tokens: str | None = Field(
        default=None, description="Serving: monthly effective price per million output tokens at the offered load"
    )
    converted: ConvertedCostOut | None = Field(
        default=None, description="In the request's currency when the SKU is priced in another; null otherwise"
    )
    alternatives: list[TermCostOut] = Field(
        default_factory=list,
        description="The other term on the same units for the same job (a serving deployment: the same months); "
        "where it bills less the option warns `other_term_cheaper` with both totals",
    )
    note: str


class ReferencePriceOut(BaseModel):
    """The same GPU-hours at a comparable cloud instance's on-demand list price."""

    provider: str
    region: str
    instance_type: str
    gpu_variant: str = Field(description="Memory and form factor as its source states them, e.g. 80GB SXM5")
    usd_per_gpu_hour: str
    gpu_hours: str
    basis: str = Field(description="'job': the option's GPU-hours; 'month': its GPUs for 730 hours")
    total_usd: str
    total_converted: str | None = Field(description="In the catalog currency at the admin-set exchange rate")
    converted_currency: str | None
    data_date: str | None = Field(description="The day the price was read (ISO 8601 date); null if not recorded")
    confidence: str
    source: str = Field(description="The public price catalog it was read from: repository, path @ commit")
    same_variant: bool = Field(
        description="false: none of the option's form factor (SXM, PCIe) is priced; see gpu_variant"
    )


class AvailabilityOut(BaseModel):
    """What is free for an option in its region (docs/api.md, "Capacity")."""

    model_config = ConfigDict(populate_by_name=True)

    region: str
    free_units: int | None = Field(
        description="Units (cards or servers, as the SKU rents) free on every day of the option's rental from the "
        "start date; null: the region's units are not tracked (confirmed with the quote)"
    )
    from_: date | None = Field(
        alias="from",
        description="The first day the option's units are free for its whole rental: the start date when they are "
        "free; null when the region has fewer than it needs, or is not tracked",
    )
    status: Literal["available", "later", "unavailable", "not tracked"]
