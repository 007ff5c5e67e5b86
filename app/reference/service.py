"""What the same GPU-hours would cost at a hyperscaler or a neocloud: the comparison a rental
company's sales team is asked for daily. Prices are USD; with an admin-set exchange rate the
total is also given in the catalog's currency."""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

from sqlalchemy.orm import Session

from app.reference import repository
from app.reference.models import MICROS, ExchangeRate, ReferencePrice

SEED_CSV = Path(__file__).parent / "data" / "cloud_prices.csv"
HOURS_PER_MONTH = 730  # the convention of the seed data's usd_per_month_730h column
CENT = Decimal("0.01")


@dataclass(frozen=True, slots=True)
class Comparison:
    provider: str
    region: str
    instance_type: str
    gpu_variant: str
    gpu_count: int
    usd_per_gpu_hour: Decimal
    gpu_hours: Decimal
    basis: str  # "job" (the option's GPU-hours) or "month" (its GPUs for 730 hours)
    total_usd: Decimal
    total_converted: Decimal | None
    converted_currency: str | None
    data_date: str | None  # the day the price was read (ISO 8601), None where none is recorded (published_date)
    confidence: str
    source: str  # the catalog file it was read from: repository, path @ commit
    same_variant: bool  # False: no instance of the option's form factor is priced; gpu_variant says which this is


def gpu_family(gpu_id: str) -> tuple[str, int]:
    """("h100", 80) for "h100-80g-sxm": comparable instances share the chip and its memory size."""
    family, memory = gpu_id.split("-")[:2]
    return family, int(memory.rstrip("g"))


# The form factors a GPU type id ends in (app/estimator/data/gpus.json: a100-40g-pcie, h100-80g-sxm) and a reference
# row states in its gpu_variant ("80GB SXM5", "80GB PCIe"): an SXM module runs at a higher power limit and joins its
# peers over NVLink, a PCIe card does neither, so one is priced apart from the other (a RunPod H100 PCIe is no price
# of an H100 SXM server).
FORM_FACTORS = ("sxm", "pcie")


def gpu_form_factor(gpu_id: str) -> str | None:
    """ "sxm" for "h100-80g-sxm", "pcie" for "a100-40g-pcie", None for a GPU sold in one form (l40s-48g)."""
    tail = gpu_id.split("-")[2:]
    return tail[0] if tail and tail[0] in FORM_FACTORS else None


def row_form_factor(row: ReferenceRow) -> str | None:
    """The form factor a reference row states in its variant or model, None where its source does not say."""
    stated = f"{row.gpu_variant} {row.gpu_model}".lower()
    return next((form for form in FORM_FACTORS if form in stated), None)


ISO_DATE = re.compile(r"\b(\d{4}-\d{2}-\d{2})\b")


def published_date(data_date: str) -> str | None:
    """The day a price was read, as ISO 8601, from the row's data_date, which may carry the research notes of how it
    was dated ("not recorded in file; snapshot read 2026-11-29 from the research index; …"): those stay in the
    admin's table, never in a customer's answer. None where the row records no date."""
    found = ISO_DATE.search(data_date)
    return found.group(1) if found else None


def clean_variant(gpu_variant: str) -> str:
    """The variant as a customer reads it: "40GB" for "40GB (variant not stated in catalog)" (a parenthesis with a
    note in it goes; a tag such as "(NVL)" stays)."""
    return re.sub(r"\s*\([^)]*\s[^)]*\)", "", gpu_variant).strip()


def _matches(row: ReferenceRow, family: str, memory_gb: int) -> bool:
    model = row.gpu_model.lower().replace(" ", "")
    return model.startswith(family) and "nvl" not in model and row.gpu_memory_gb == memory_gb


@dataclass(frozen=True, slots=True)
class ReferenceRow:
    """A reference price as plain data: a book outlives the session that read it (app.catalog.cache)."""

    provider: str
    region: str
    instance_type: str
    gpu_model: str
    gpu_variant: str
    gpu_memory_gb: int
    gpu_count: int
    hourly_micros: int
    data_date: str
    confidence: str
    source: str = ""

    @classmethod
    def of(cls, row: ReferencePrice) -> ReferenceRow:
        return cls(
            row.provider,
            row.region,
            row.instance_type,
            row.gpu_model,
            row.gpu_variant,
            row.gpu_memory_gb,
            row.gpu_count,
            row.hourly_micros,
            row.data_date,
            row.confidence,
            row.source,
        )


@dataclass(frozen=True, slots=True)
class Rate:
    quote: str  # currency
    rate_micros: int  # units of `quote` per USD, in millionths


@dataclass(frozen=True, slots=True)
class ReferenceBook:
    """The reference prices and the exchange rate in force."""

    rows: tuple[ReferenceRow, ...]
    rate: Rate | None

    def compare(self, *, gpu_id: str, gpus: int, gpu_hours: float | None, limit: int = 6) -> list[Comparison]:
        """The same GPU-hours at the instances of the option's GPU: its chip, memory and form factor (SXM or PCIe);
        where none of that form factor is priced, those of another or an unstated one, each marked same_variant
        False (its gpu_variant says which)."""
        family, memory_gb = gpu_family(gpu_id)
        basis = "job" if gpu_hours is not None else "month"
        hours = Decimal(str(round(gpu_hours, 2))) if gpu_hours is not None else Decimal(gpus * HOURS_PER_MONTH)
        rows = [row for row in self.rows if _matches(row, family, memory_gb)]
        form = gpu_form_factor(gpu_id)
        same = [row for row in rows if form is None or row_form_factor(row) == form]
        chosen, is_same = (same, True) if same else (rows, False)
        out = [_compare(row, hours, basis, self.rate, same_variant=is_same) for row in chosen]
        return sorted(out, key=lambda c: (c.usd_per_gpu_hour, c.provider, c.instance_type))[:limit]


@dataclass(frozen=True, slots=True)
class ExchangeRates:
    """The exchange rates in force: units of `quote` one `base` buys, per (base, quote) pair as an admin set it."""

    pairs: dict[tuple[str, str], Decimal]

    def rate(self, source: str, target: str) -> Decimal | None:
        """Units of `target` one unit of `source` buys: 1 for the same currency, else the pair as set, its
        inverse, or across a base both are quoted against (USD→CNY and USD→EUR give EUR→CNY); None when no
        rate is known."""
        if source == target:
            return Decimal(1)
        if (source, target) in self.pairs:
            return self.pairs[source, target]
        if (target, source) in self.pairs:
            return 1 / self.pairs[target, source]
        for (base, quote), to_target in sorted(self.pairs.items()):
            if quote == target and (base, source) in self.pairs:
                return to_target / self.pairs[base, source]
        return None


def build_rates(session: Session) -> tuple[ExchangeRates, datetime | None]:
    """The rates in force now, and when a scheduled rate will change them (a catalog cache builder)."""
    now = datetime.now(UTC)
    pairs: dict[tuple[str, str], Decimal] = {}
    for row in repository.rates_in_force(session, at=now):
        pairs.setdefault((row.base, row.quote), Decimal(row.rate_micros) / MICROS)
    return ExchangeRates(pairs), repository.next_any_rate_change(session, after=now)


def build_book(session: Session, currency: str) -> tuple[ReferenceBook, datetime | None]:
    """The book in force now, and when a scheduled exchange rate will replace its rate (None: not planned)."""
    now = datetime.now(UTC)
    found = repository.latest_rate(session, "USD", currency, at=now) if currency != "USD" else None
    rate = Rate(found.quote, found.rate_micros) if found else None
    next_change = repository.next_rate_change(session, "USD", currency, after=now) if currency != "USD" else None
    return ReferenceBook(tuple(ReferenceRow.of(row) for row in repository.list_prices(session)), rate), next_change


def _compare(row: ReferenceRow, hours: Decimal, basis: str, rate: Rate | None, *, same_variant: bool) -> Comparison:
    per_gpu_hour = (Decimal(row.hourly_micros) / MICROS / row.gpu_count).quantize(Decimal("0.0001"), ROUND_HALF_UP)
    total = (per_gpu_hour * hours).quantize(CENT, ROUND_HALF_UP)
    converted = (total * Decimal(rate.rate_micros) / MICROS).quantize(CENT, ROUND_HALF_UP) if rate else None
    return Comparison(
        row.provider,
        row.region,
        row.instance_type,
        clean_variant(row.gpu_variant),
        row.gpu_count,
        per_gpu_hour,
        hours,
        basis,
        total,
        converted,
        rate.quote if rate else None,
        published_date(row.data_date),
        row.confidence,
        row.source,
        same_variant,
    )


def set_exchange_rate(session: Session, *, base: str, quote: str, rate: Decimal, set_by: str, note: str = "") -> None:
    if rate <= 0:
        raise ValueError("an exchange rate must be positive")
    repository.add(
        session,
        ExchangeRate(
            base=base.upper(),
            quote=quote.upper(),
            rate_micros=int((rate * MICROS).to_integral_value(ROUND_HALF_UP)),
            set_by=set_by,
            note=note,
        ),
    )


def seed_reference_prices(session: Session) -> int:
    """Insert the shipped snapshot's rows that are missing; never touches rows an admin edited."""
    created = 0
    with SEED_CSV.open(newline="", encoding="utf-8") as handle:
        for line in csv.DictReader(handle):
            if repository.find_price(session, line["provider"], line["region"], line["instance_type"]):
                continue
            repository.add(session, _row(line))
            created += 1
    return created


# The seed CSV's columns the table keeps as they are; _row types or combines the others.
TEXT_COLUMNS = (
    "provider",
    "region",
    "instance_type",
    "gpu_model",
    "gpu_variant",
    "pricing_type",
    "data_date",
    "confidence",
    "notes",
)


def _row(line: dict[str, str]) -> ReferencePrice:
    hourly = Decimal(line["price_usd_per_hour"])
    return ReferencePrice(
        **{column: line[column] for column in TEXT_COLUMNS},
        gpu_memory_gb=int(line["gpu_memory_gb"]),
        gpu_count=int(line["gpu_count"]),
        currency="USD",
        hourly_micros=int(hourly * MICROS),
        source=f"{line['source_repo']} {line['source_path']} @ {line['source_commit']}",
    )
