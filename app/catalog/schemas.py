"""Catalog API shapes. Money is a decimal string with its ISO 4217 currency code."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field

# Words the recommendation and the quote share, so both documents say the same thing.
TERM_DESCRIPTION = (
    "Rental term: monthly at the list price, or annual at the SKU's annual discount (billed in whole years)"
)

MoneyStr = Annotated[str, Field(pattern=r"^-?\d+(\.\d+)?$", examples=["2240.00"])]


class TermPriceOut(BaseModel):
    term: str = Field(examples=["annual"])
    discount_percent: str = Field(examples=["20"])
    monthly_effective: MoneyStr = Field(description="Monthly price per rental unit after the term discount")


class PriceOut(BaseModel):
    currency: str = Field(examples=["CNY"])
    unit: str = Field(description="What one price buys: 'card' or 'node' (a whole server)", examples=["card"])
    monthly_list: MoneyStr
    effective_from: str
    indicative: bool = Field(description="A reference price, final on consultation")
    terms: dict[str, TermPriceOut]
    summary: str = Field(
        description="The price and term discounts in words, made from the figures above on every request "
        "(never stored, so it cannot go stale)",
        examples=["CNY 2,800.00 per card per month; annual term 20% off: CNY 2,240.00 per card per month."],
    )


class ScheduledPriceOut(BaseModel):
    """A list price published to take effect later: rentals starting on or after `effective_from` are priced at it
    (`POST /recommend` and `POST /quotes` with such a `start_date`), the term discounts unchanged."""

    currency: str = Field(examples=["CNY"])
    monthly_list: MoneyStr
    effective_from: str


class GpuRef(BaseModel):
    id: str = Field(examples=["h100-80g-sxm"])
    name: str


class SkuColumnsOut(BaseModel):
    """A SKU's plain columns, as the public catalog and the admin API both show them."""

    id: str = Field(examples=["h100-80g-sxm-8x"])
    name: str
    rental_unit: str
    gpus_per_node: int
    card_counts: list[int]
    intra_node_link: str
    interconnect: str
    host_cpu: str
    host_ram_gib: int | None
    host_nvme: str
    network: str
    inter_node_fabric: str | None
    infiniband_addon: bool
    regions: list[str]
    notes: str


class SkuOut(SkuColumnsOut):
    gpu: GpuRef
    status: str
    version: int
    price: PriceOut | None
    next_price: ScheduledPriceOut | None = Field(
        description="The next list price already scheduled (null: none): what a rental from its date is priced at"
    )


class GpuOut(BaseModel):
    id: str
    name: str
    memory_gib: float
    usable_memory_gib: float
    hbm_bandwidth_gb_per_s: float
    peak_tflops: dict[str, float] = Field(description="Dense tensor-core peak per precision (fp32 = TF32)")
    intra_node_link: str
    nvlink_gb_per_s: float = Field(description="Per GPU, one direction; 0 without NVLink")
    pcie_gen: int
    offered: bool = Field(description="The catalog has an active SKU with this GPU")
    source: str
