"""Admin API shapes. Money is a decimal string with its ISO 4217 code; discounts are percent strings.

Write bodies forbid unknown fields, so a typo ("nmae") is a 422 naming the field instead of a
silent no-op. Every edit of an existing row carries the `version` it was based on.
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Annotated, Any, ClassVar, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints, computed_field

from app.catalog.schemas import MoneyStr, SkuColumnsOut
from app.common.schemas import PriceCurrency, money_pattern
from app.estimator.vocabulary import RentalUnit, SkuStatus, Term

Slug = Annotated[str, StringConstraints(strip_whitespace=True, pattern=r"^[a-z0-9][a-z0-9-]{0,63}$")]
Line = Annotated[str, StringConstraints(strip_whitespace=True, max_length=200)]
# Lengths follow the columns (skus.intra_node_link / inter_node_fabric VARCHAR(32), host_nvme_tb 100).
LinkSlug = Annotated[str, StringConstraints(strip_whitespace=True, pattern=r"^[a-z0-9][a-z0-9-]{0,31}$")]
Nvme = Annotated[str, StringConstraints(strip_whitespace=True, max_length=100)]
Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]
Version = Annotated[int, Field(ge=1, strict=True, description="The version this edit was based on")]
Inventory = Annotated[
    int,
    Field(
        ge=0,
        le=1_000_000,
        strict=True,
        description="Units (cards or servers, as the SKU rents) that exist in the region: the inventory. What is free "
        "on a day is this less the maintenance holds and the units issued and accepted quotes hold then",
    ),
]
Ports = Annotated[int, Field(ge=1, le=64, strict=True)]
PortGbps = Annotated[int, Field(ge=1, le=3200, strict=True)]
Source = Annotated[str, StringConstraints(strip_whitespace=True, max_length=1000)]
MAX_AMOUNT = Decimal("1000000000")


def _utc(moment: datetime) -> datetime:
    """SQLite gives naive datetimes back: they are UTC; the API always says so (RFC 3339 with offset)."""
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


UtcDateTime = Annotated[datetime, AfterValidator(_utc)]


def _percent(value: str) -> str:
    number = Decimal(value)
    if number > 90:
        raise ValueError("a term discount is between 0 and 90 percent")
    return value


def _amount(value: str) -> str:
    if Decimal(value) <= 0:
        raise ValueError('must be a positive amount such as "2800.00"')
    if Decimal(value) >= MAX_AMOUNT:
        raise ValueError(f"must be below {MAX_AMOUNT} per month")
    return value


Percent = Annotated[
    str,
    StringConstraints(strip_whitespace=True, pattern=r"^\d{1,2}(\.\d{1,2})?$"),
    AfterValidator(_percent),
    Field(description="Discount in percent, 0 to 90, at most two decimals", examples=["20"]),
]
Amount = Annotated[
    str,
    StringConstraints(strip_whitespace=True, pattern=money_pattern(12, 4)),
    AfterValidator(_amount),
    Field(description="Monthly list price per rental unit, a positive decimal string", examples=["2800.00"]),
]
CardCounts = Annotated[list[Annotated[int, Field(ge=1, le=64, strict=True)]], Field(min_length=1, max_length=16)]
Regions = Annotated[list[Slug], Field(min_length=1, max_length=32)]
Discounts = Annotated[dict[Term, Percent], Field(description='Per-term discount, e.g. {"annual": "20"}')]


# What each field of an admin body means (units, currency, defaults), said once for the models that share
# it (a SKU's fields in SkuCreate, SkuPatch and the catalog document's SkuDoc); a field's own description,
# where it has one, wins. Read by `_describe_fields` into the OpenAPI schema.
SKU_FIELD_DOCS: dict[str, str] = {
    "id": "Stable SKU id used by the public API (lower-case letters, digits, '-'), e.g. h200-141g-sxm-8x",
    "name": "The SKU's name as customers read it, e.g. '8x H200 141G SXM NVSwitch server'",
    "gpu": "GPU type id, e.g. h100-80g-sxm (GET /catalog/gpus lists them)",
    "rental_unit": "What one unit of the price rents: card (single GPUs of a shared server) or node (a whole server)",
    "gpus_per_node": "GPUs in one server, 1 to 64",
    "card_counts": "For rental_unit card: the card counts offered (e.g. [1, 2, 4]); for node: [gpus_per_node]",
    "intra_node_link": "Link between the GPUs of one server (app/estimator/data/interconnects.json): pcie4, nvlink3, "
    "nvlink4, …",
    "interconnect": "The same link in words, as the catalog shows it, e.g. 'NVLink + NVSwitch 900 GB/s'; default empty",
    "host_cpu": "The server's CPUs in words, e.g. '2x Intel Xeon Platinum 8480+ (112 cores)'; default empty",
    "host_ram_gib": "The server's RAM in GiB (offload is planned within it); null (default) when unknown: no offload",
    "host_nvme": "Local NVMe storage in words, e.g. '8x 15.36 TB NVMe'; default empty",
    "network": "Internet connectivity in words, e.g. '10 Gbps BGP'; default empty",
    "inter_node_fabric": "Fabric joining servers for multi-node jobs (interconnects.json), e.g. ib-ndr-400; null "
    "(default): single-server only",
    "infiniband_addon": "The inter-node fabric is an add-on priced on consultation; default false",
    "regions": 'Region ids where the SKU is offered, e.g. ["shenzhen"]',
    "indicative_price": "The list price is indicative (final on consultation); quotes say so; default false",
    "notes": "Free text shown with the SKU; never restate prices or discounts here (they are generated from the "
    "data); default empty",
    "price": "The first list price (monthly, per rental unit)",
    "discounts": 'Discount per term in percent, 0 to 90, e.g. {"annual": "20"}; a term left out has none',
    "status": "active (on sale, default) or retired (off the catalog; issued quotes stay valid)",
    "prices": "The price history, each with its effective_from (oldest first); prices not yet here are appended",
    "availability": "Units that exist per region (the inventory quotes hold units of); a region left out is "
    "'on request', not tracked",
    "addons": "Options sold with the SKU, e.g. the InfiniBand fabric",
    "version": "The version this edit was based on (from GET /admin/api/skus/{id}); a stale one is a 409",
}
PRICE_FIELD_DOCS: dict[str, str] = {
    "amount": 'Monthly list price per rental unit, a positive decimal string, e.g. "2800.00"',
    "currency": "ISO 4217 currency code, e.g. CNY",
    "effective_from": "When the price takes effect (default: now), RFC 3339; without an offset (a bare date "
    "2027-02-01 is its midnight, or 2027-02-01T09:00:00) in the catalog's timezone, CATALOG_TIMEZONE, so a price "
    "dated a day prices a rental starting that day; never in the past for an existing SKU",
    "note": "Why the price changed, kept in the history and the audit log; default empty",
    "terms": 'Also set the term discounts in percent, e.g. {"annual": "20"}',
    "version": "The SKU's current version, required (a stale one is a 409): a price never overwrites unseen",
}
ADDON_FIELD_DOCS: dict[str, str] = {
    "code": "The add-on's id within its SKU, e.g. ib-ndr-400",
    "name": "The add-on's name on quotes, e.g. 'InfiniBand NDR 400G'",
    "amount": "Monthly price per per_unit, a decimal string; null (default): on consultation, left out of totals",
    "currency": "ISO 4217 currency code, e.g. CNY",
    "per_unit": "What the price is per: card or node",
    "status": "active (offered, default) or retired",
    "ports_per_server": "A fabric add-on's network ports per server (1-64), e.g. 8 for one 400G NIC per GPU; "
    "null (default) for an add-on that is not a fabric; given with port_gbps",
    "port_gbps": "Line rate of one port in Gbit/s (1-3200), e.g. 400 for InfiniBand NDR; null with "
    "ports_per_server. The estimator and the planner size the traffic between servers with ports x Gb/s",
    "bandwidth_source": "Where the bandwidth figure comes from (a datasheet, the data centre); default empty. "
    "Editing an add-on, the bandwidth fields left out keep their values",
    "version": "The add-on's current version; null when the add-on is new (a stale one is a 409)",
}


def _describe_fields(schema: dict[str, Any], model: type[BaseModel]) -> None:
    docs: dict[str, str] = {}
    for klass in reversed(model.__mro__):
        docs.update(getattr(klass, "field_docs", {}))
    for name, definition in schema.get("properties", {}).items():
        if not definition.get("description") and name in docs:
            definition["description"] = docs[name]


class StrictModel(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra=_describe_fields)
    field_docs: ClassVar[dict[str, str]] = {}


class PriceIn(StrictModel):
    field_docs = PRICE_FIELD_DOCS

    amount: Amount
    currency: PriceCurrency
    effective_from: datetime | None = Field(
        default=None,
        description="When the price takes effect (default: now); without an offset (a bare date is its midnight) in "
        "the catalog's timezone, CATALOG_TIMEZONE; never in the past",
    )
    note: Annotated[str, StringConstraints(strip_whitespace=True, max_length=500)] = ""


class PriceCreate(PriceIn):
    """A new list price; the old ones stay as history. `terms` also sets the term discounts. `version`, the SKU's
    current version, is required, as for PATCH (review R4-9: without it a price silently overwrote another admin's)."""

    terms: Discounts | None = None
    version: Version


class SkuFields(StrictModel):
    field_docs = SKU_FIELD_DOCS

    name: Name
    gpu: Slug = Field(description="GPU type id, e.g. h100-80g-sxm")
    rental_unit: RentalUnit
    gpus_per_node: int = Field(ge=1, le=64, strict=True)
    card_counts: CardCounts
    intra_node_link: LinkSlug = Field(examples=["nvlink4"])
    interconnect: Line = ""
    host_cpu: Line = ""
    host_ram_gib: int | None = Field(default=None, ge=1, le=1_000_000, strict=True)
    host_nvme: Nvme = ""
    network: Line = ""
    inter_node_fabric: LinkSlug | None = None
    infiniband_addon: bool = False
    regions: Regions
    indicative_price: bool = False
    notes: Annotated[str, StringConstraints(max_length=4000)] = ""


class SkuCreate(SkuFields):
    id: Slug = Field(description="Stable SKU id used by the public API", examples=["h200-141g-sxm-8x"])
    price: PriceIn
    discounts: Discounts = Field(default_factory=dict)


class SkuPatch(StrictModel):
    """Only the fields sent change. `version` is the one the edit was based on: stale → 409."""

    field_docs = SKU_FIELD_DOCS

    version: Version
    name: Name | None = None
    gpu: Slug | None = None
    rental_unit: RentalUnit | None = None
    gpus_per_node: int | None = Field(default=None, ge=1, le=64, strict=True)
    card_counts: CardCounts | None = None
    intra_node_link: LinkSlug | None = None
    interconnect: Line | None = None
    host_cpu: Line | None = None
    host_ram_gib: int | None = Field(default=None, ge=1, le=1_000_000, strict=True)
    host_nvme: Nvme | None = None
    network: Line | None = None
    inter_node_fabric: LinkSlug | None = None
    infiniband_addon: bool | None = None
    regions: Regions | None = None
    indicative_price: bool | None = None
    notes: Annotated[str, StringConstraints(max_length=4000)] | None = None
    discounts: Discounts | None = None


class VersionIn(StrictModel):
    field_docs = SKU_FIELD_DOCS

    version: Version


class AvailabilityIn(StrictModel):
    units_available: Inventory
    version: Version | None = Field(default=None, description="null when the region has no figure yet")
    force: bool = Field(
        default=False,
        description="true: save it even though quotes then hold more units than exist (409 `overbooked` "
        "otherwise), e.g. a server broke; the capacity page shows the units overbooked",
    )


class AddonBandwidth(StrictModel):
    """A fabric add-on's bandwidth per server: `ports_per_server` × `port_gbps`, both or neither (the service
    says which one is missing)."""

    field_docs = ADDON_FIELD_DOCS

    ports_per_server: Ports | None = None
    port_gbps: PortGbps | None = None
    bandwidth_source: Source = ""


class AddonIn(AddonBandwidth):
    """An option sold with the SKU, monthly per `per_unit`; `amount` null: priced on consultation. A fabric
    add-on (InfiniBand, RoCE) states its bandwidth: `ports_per_server` × `port_gbps`."""

    name: Name
    amount: Amount | None = None
    currency: PriceCurrency
    per_unit: RentalUnit
    status: SkuStatus = "active"
    version: Version | None = Field(default=None, description="null when the add-on is new")


class PriceOut(BaseModel):
    id: int
    amount: MoneyStr
    currency: str
    effective_from: UtcDateTime
    created_at: UtcDateTime
    created_by: str
    note: str
    in_force: bool = Field(description="The price the public catalog shows now")


class AvailabilityOut(BaseModel):
    region: str
    units_available: int
    version: int
    updated_at: UtcDateTime


class AddonOut(BaseModel):
    code: str
    name: str
    amount: MoneyStr | None
    currency: str
    per_unit: str
    status: str
    ports_per_server: int | None = Field(description="A fabric's ports per server; null: not a fabric")
    port_gbps: int | None = Field(description="Gbit/s per port; null: not a fabric")
    bandwidth_source: str
    version: int


class SkuAdminOut(SkuColumnsOut):
    gpu: str
    status: SkuStatus
    indicative_price: bool
    version: int
    discounts: dict[str, str] = Field(description="Per-term discount in percent")
    current_price: PriceOut | None
    prices: list[PriceOut] = Field(description="The whole price history, oldest first")
    availability: list[AvailabilityOut]
    addons: list[AddonOut]
    updated_at: UtcDateTime


class FieldChange(BaseModel):
    field: str = Field(description="Dotted path of the field, e.g. price.amount or discounts_bp.annual")
    before: Any = Field(description="Its value before the change; null when it did not exist")
    after: Any = Field(description="Its value after the change; null when it was removed")


def audit_changes(before: dict[str, Any] | None, after: dict[str, Any] | None) -> list[FieldChange]:
    """What an audit entry changed, field by field (nested objects by dotted path, in the entry's order)."""

    def flat(value: Any, prefix: str = "") -> dict[str, Any]:
        if isinstance(value, dict) and value:
            out: dict[str, Any] = {}
            for key, child in value.items():
                out.update(flat(child, f"{prefix}{key}."))
            return out
        return {prefix.rstrip("."): value} if prefix else {}

    old, new = flat(before or {}), flat(after or {})
    fields = [*old, *(key for key in new if key not in old)]
    return [
        FieldChange(field=key, before=old.get(key), after=new.get(key))
        for key in fields
        if old.get(key) != new.get(key)
    ]


class AuditOut(BaseModel):
    id: int
    at: UtcDateTime
    actor: str
    via: str
    action: str
    entity_type: str
    entity_id: str
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    client_addr: str

    @computed_field(description="The fields this entry changed, with their values before and after")  # type: ignore[prop-decorator]
    @property
    def changes(self) -> list[FieldChange]:
        return audit_changes(self.before, self.after)


class AuditPage(BaseModel):
    total: int
    limit: int
    offset: int
    items: list[AuditOut]


# --- catalog export / import -------------------------------------------------------------------


class GpuTypeDoc(StrictModel):
    id: Slug = Field(description="GPU type id; the estimator must know it (GET /catalog/gpus), e.g. h200-141g-sxm")
    name: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=128)] = Field(
        description="Its name, e.g. NVIDIA H200 141GB SXM"  # gpu_types.name
    )


class PriceDoc(StrictModel):
    field_docs = PRICE_FIELD_DOCS

    amount: Amount
    currency: PriceCurrency
    effective_from: datetime
    note: Annotated[str, StringConstraints(max_length=500)] = ""


class AvailabilityDoc(StrictModel):
    region: Slug = Field(description="Region id, e.g. shenzhen")
    units_available: Inventory


class AddonDoc(AddonBandwidth):
    code: Slug
    name: Name
    amount: Amount | None = None
    currency: PriceCurrency
    per_unit: RentalUnit
    status: SkuStatus = "active"


class SkuDoc(SkuFields):
    id: Slug
    status: SkuStatus = "active"
    prices: Annotated[list[PriceDoc], Field(min_length=1, max_length=1000)]
    discounts: Discounts = Field(default_factory=dict)
    availability: Annotated[list[AvailabilityDoc], Field(max_length=64)] = Field(default_factory=list)
    addons: Annotated[list[AddonDoc], Field(max_length=64)] = Field(default_factory=list)


class CatalogDoc(StrictModel):
    """The whole catalog, to move it between environments. Import upserts by id, appends prices
    that are not there yet (history is never deleted) and sets discounts, availability and add-ons."""

    format: Literal["gpu-sizer-catalog"] = Field(
        default="gpu-sizer-catalog", description="Always gpu-sizer-catalog (the default)"
    )
    schema_version: Literal[1] = Field(default=1, description="The document's layout version: 1 (the default)")
    exported_at: datetime | None = Field(
        default=None,
        description="When it was exported (RFC 3339); catalog changes made here since then are a 409 unless "
        "?force=true; null (default): no such check",
    )
    gpu_types: Annotated[list[GpuTypeDoc], Field(max_length=200)] = Field(
        default_factory=list, description="GPU types to create if missing (at most 200); default none"
    )
    skus: Annotated[list[SkuDoc], Field(max_length=500)] = Field(description="The SKUs, upserted by id (at most 500)")


class ImportReport(BaseModel):
    gpu_types_created: list[str]
    skus_created: list[str]
    skus_updated: list[str]
    skus_unchanged: list[str]
    prices_added: int
