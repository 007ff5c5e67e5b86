"""What the same GPU-hours would cost at a hyperscaler or a neocloud: the comparison a rental
company's sales team is asked for daily. Prices are USD; with an admin-set exchange rate the
total is also given in the catalog's currency."""

from __future__ import annotations

import csv
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
    data_date: str
    confidence: str


def gpu_family(gpu_id: str) -> tuple[str, int]:
    """("h100", 80) for "h100-80g-sxm": comparable instances share the chip and its memory size."""
    family, memory = gpu_id.split("-")[:2]
    return family, int(memory.rstrip("g"))


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
        family, memory_gb = gpu_family(gpu_id)
        basis = "job" if gpu_hours is not None else "month"
        hours = Decimal(str(round(gpu_hours, 2))) if gpu_hours is not None else Decimal(gpus * HOURS_PER_MONTH)
        out = [_compare(row, hours, basis, self.rate) for row in self.rows if _matches(row, family, memory_gb)]
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


def _compare(row: ReferenceRow, hours: Decimal, basis: str, rate: Rate | None) -> Comparison:
    per_gpu_hour = (Decimal(row.hourly_micros) / MICROS / row.gpu_count).quantize(Decimal("0.0001"), ROUND_HALF_UP)
    total = (per_gpu_hour * hours).quantize(CENT, ROUND_HALF_UP)
    converted = (total * Decimal(rate.rate_micros) / MICROS).quantize(CENT, ROUND_HALF_UP) if rate else None
    return Comparison(
        row.provider,
        row.region,
        row.instance_type,
        row.gpu_variant,
        row.gpu_count,
        per_gpu_hour,
        hours,
        basis,
        total,
        converted,
        rate.quote if rate else None,
        row.data_date,
        row.confidence,
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
