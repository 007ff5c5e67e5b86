"""Quote API shapes. Money is a decimal string with its ISO 4217 currency code, never a float.

Request bodies refuse unknown fields (`RequestModel`), except price fields a client may echo from
a recommendation (`IGNORED_PRICE_FIELDS`): those are dropped, because every figure on a quote is
computed by the server from the catalog at the moment the quote is issued.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, EmailStr, Field, StringConstraints, field_validator, model_validator

from app.api.schemas import RequestModel
from app.catalog.schemas import MoneyStr

Text200 = Annotated[str, StringConstraints(strip_whitespace=True, max_length=200)]
MAX_FREEFORM_KEYS = 64
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
    name: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]
    company: Text200 = ""
    email: EmailStr


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
                    "workload": {"model": "llama-3-70b", "task": "full-finetune"},
                    "plan": {"tp": 8, "pp": 2, "dp": 1},
                    "customer": {"name": "Li Wei", "company": "深圳算力科技", "email": "li.wei@example.com"},
                }
            ]
        },
    )

    sku_id: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=64)]
    quantity: int = Field(ge=1, le=1000, strict=True, description="Cards (SKUs rented by the card) or nodes")
    term: Literal["monthly", "annual"]
    months: int | None = Field(
        default=None,
        ge=1,
        le=60,
        strict=True,
        description="Rental length; default 1 (monthly) or 12 (annual). An annual term takes whole years.",
    )
    addons: list[Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=64)]] = Field(
        default_factory=list, max_length=10
    )
    workload: dict[str, Any] | None = Field(default=None, description="What the recommendation was for (kept)")
    plan: dict[str, Any] | None = Field(default=None, description="The chosen parallel plan (kept for the record)")
    customer: CustomerIn

    @model_validator(mode="before")
    @classmethod
    def _drop_client_prices(cls, data: Any) -> Any:
        if isinstance(data, dict):
            return {key: value for key, value in data.items() if key not in IGNORED_PRICE_FIELDS}
        return data

    @field_validator("workload", "plan")
    @classmethod
    def _small_object(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is not None and len(value) > MAX_FREEFORM_KEYS:
            raise ValueError(f"at most {MAX_FREEFORM_KEYS} keys")
        return value


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


class CustomerOut(BaseModel):
    name: str
    company: str
    email: str


class QuoteLinks(BaseModel):
    self: str
    print: str
    pdf: str
    accept: str


class QuoteOut(BaseModel):
    id: str = Field(description="Public id (192 random bits), used in the quote's URLs")
    number: str = Field(examples=["Q-2026-000123"])
    status: Literal["issued", "accepted", "cancelled", "expired"]
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
    indicative: bool = Field(description="The catalog marks the price as indicative (final on consultation)")
    notes: list[str]
    customer: CustomerOut
    workload: dict[str, Any] | None
    plan: dict[str, Any] | None
    catalog: dict[str, Any] = Field(description="Catalog versions the prices came from")
    estimator_version: str
    links: QuoteLinks


class QuoteList(BaseModel):
    items: list[QuoteOut]
    total: int
    limit: int
    offset: int
