"""What can be rented and what it costs. PURE (standard library + the estimator's specs).

An `Offer` is a SKU as the search sees it; `configurations` yields the card and node counts it
can be rented in; `price` turns a configuration and a duration into money. Money is Decimal.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import date
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, Literal

from app.capacity.ledger import Hold
from app.common.money import discounted_line
from app.estimator.specs import GpuSpec
from app.estimator.vocabulary import TERM_MONTHS, Objective, RentalUnit, Term

DAYS_PER_BILLED_MONTH = 30  # a rental month, as the company bills it
# Line rate of one port of the fabrics a SKU may offer (the estimator applies measured efficiencies):
# InfiniBand NDR 400 Gb/s per port (50 GB/s line rate). A fabric add-on states its ports per server and their
# rate (catalog data, `FabricAddon.server_gbps`); one port is assumed only where the catalog states none.
FABRIC_GBPS = {"ib-ndr-400": 400.0, "ib-hdr-200": 200.0, "roce-200": 200.0, "roce-100": 100.0}


@dataclass(frozen=True, slots=True)
class Exchange:
    """The currency a request compares and budgets in, and what one unit of an offer's currency is worth
    in it (app.planner.market sets it per request from the admin-set exchange rates)."""

    currency: str
    rate: Decimal | None  # None: no exchange rate is known; the offer cannot be compared with the others
    quantum: Decimal = Decimal("0.01")  # the request currency's minor unit


@dataclass(frozen=True, slots=True)
class FabricAddon:
    """The catalog add-on that joins a SKU's servers over its inter-node fabric (the InfiniBand option): the
    speed of a plan over several servers assumes it, so their price and quote include it."""

    code: str
    name: str
    per_unit: RentalUnit  # what its quantity counts: servers ("node") or cards
    unit_monthly: Decimal | None  # a unit a month in the SKU's currency; None: priced on consultation
    ports_per_server: int | None = None  # the catalog's bandwidth: ports × Gb/s per port; None: not stated
    port_gbps: int | None = None

    @property
    def server_gbps(self) -> float | None:
        """Line rate into one server over all its ports, Gbit/s; None when the catalog states no bandwidth."""
        if self.ports_per_server is None or self.port_gbps is None:
            return None
        return float(self.ports_per_server * self.port_gbps)


@dataclass(frozen=True, slots=True)
class Offer:
    sku_id: str
    name: str
    gpu: GpuSpec
    regions: tuple[str, ...]
    rental_unit: RentalUnit
    gpus_per_node: int
    card_counts: tuple[int, ...]
    intra_node_link: str
    inter_node_fabric: str | None  # a fabric the SKU can be joined with (its own, or the fabric add-on's)
    host_ram_gib: float | None
    currency: str
    unit_monthly_list: Decimal  # per card or per node
    discount_bp: dict[Term, int] = field(default_factory=dict)
    indicative_price: bool = False
    fabric_addon: FabricAddon | None = None  # None: the fabric comes with the server (or there is none)
    availability: dict[str, int] | None = None  # units that exist per region (the inventory); None: not tracked
    holds: dict[str, tuple[Hold, ...]] = field(default_factory=dict)  # per region: what quotes and maintenance hold
    money_quantum: Decimal = Decimal("0.01")  # the currency's minor unit
    interconnect: str = ""  # the catalog's words for the link inside a server ("PCIe 4.0, no NVLink")
    network: str = ""  # the catalog's words for the network between servers
    host_nvme: str = ""  # the catalog's NVMe ("4x 3.84 TB NVMe"); "" when none is listed
    exchange: Exchange | None = None  # None: compared in its own currency

    @property
    def unconvertible(self) -> bool:
        """Priced in a currency no known exchange rate turns into the request's."""
        return self.exchange is not None and self.exchange.rate is None

    @property
    def may_span_nodes(self) -> bool:
        return self.inter_node_fabric is not None

    @property
    def inter_node_gbps(self) -> float | None:
        """Per-server injection bandwidth of the fabric joining its servers, Gbit/s: the fabric add-on's ports ×
        Gb/s as the catalog states them, else one port of the fabric; None where no fabric joins them."""
        if self.inter_node_fabric is None:
            return None
        stated = self.fabric_addon.server_gbps if self.fabric_addon is not None else None
        return stated if stated is not None else FABRIC_GBPS.get(self.inter_node_fabric)

    @property
    def fabric_on_consultation(self) -> bool:
        """The fabric is an add-on without a price: quoted, but left out of the totals."""
        return self.fabric_addon is not None and self.fabric_addon.unit_monthly is None


@dataclass(frozen=True, slots=True)
class Constraints:
    term: Term = "monthly"
    max_monthly_budget: Decimal | None = None
    max_total_budget: Decimal | None = None  # the job's whole bill (app.planner.misses.budget_misses)
    deadline_days: float | None = None
    gpu_types: tuple[str, ...] = ()
    regions: tuple[str, ...] = ()
    max_nodes: int = 16
    require_infiniband: bool = False
    objective: Objective = "balanced"
    limit: int = 5
    memory_headroom: float = 0.05  # share of each card's usable memory a plan leaves free
    start_date: date | None = None  # the rental's first day (app.planner.availability); None: today


@dataclass(frozen=True, slots=True)
class Configuration:
    cards_per_node: int
    nodes: int

    @property
    def gpus(self) -> int:
        return self.cards_per_node * self.nodes


@dataclass(frozen=True, slots=True)
class Converted:
    """A cost in the request's currency, for an offer priced in another (the quote bills the original)."""

    currency: str
    rate: Decimal  # units of `currency` per unit of the offer's
    monthly_list: Decimal
    monthly_effective: Decimal
    job_total: Decimal | None
    annual_total: Decimal


@dataclass(frozen=True, slots=True)
class TermCost:
    """The same units on another term for the same job: its billed months and job total (in the price's currency;
    `compared_total` in the request's). None without a token count (the job's months are not known)."""

    term: Term
    months: int | None
    job_total: Decimal | None
    compared_total: Decimal | None


@dataclass(frozen=True, slots=True)
class Cost:
    currency: str
    term: Term
    units: int
    monthly_list: Decimal
    monthly_effective: Decimal
    months: int | None  # billed months for the job; None without a token count
    job_total: Decimal | None
    annual_total: Decimal  # a year on the annual term, whatever term was asked: the upsell figure
    used_hours: float | None = None  # the job's duration; None without a token count
    billed_hours: float | None = None  # the billed months in hours (30-day months)
    converted: Converted | None = None  # in the request's currency when the offer is priced in another
    fabric_monthly: Decimal = Decimal(0)  # the fabric add-on, a month, inside monthly_list/effective and job_total
    fabric_on_consultation: bool = False  # the servers are joined over an add-on priced on consultation: not in totals
    alternatives: tuple[TermCost, ...] = ()  # the other term on the same units (with_alternatives)

    @property
    def compared_currency(self) -> str:
        """The currency options are ranked and budgeted in."""
        return self.converted.currency if self.converted else self.currency

    @property
    def compared_monthly(self) -> Decimal:
        return self.converted.monthly_effective if self.converted else self.monthly_effective

    @property
    def compared_total(self) -> Decimal:
        """The job total (the monthly price without a token count), in the compared currency."""
        job_total = self.converted.job_total if self.converted else self.job_total
        return job_total if job_total is not None else self.compared_monthly

    @property
    def compared_job_total(self) -> Decimal:
        """What the job bills at least, in the compared currency: its job total, or without a token count the
        fewest months its term bills (one month, or twelve on the annual term)."""
        job_total = self.converted.job_total if self.converted else self.job_total
        return job_total if job_total is not None else self.compared_monthly * TERM_MONTHS[self.term]


def configurations(offer: Offer, constraints: Constraints) -> Iterator[Configuration]:
    """Card counts for SKUs rented by the card; whole servers, several only where a fabric joins them."""
    if offer.rental_unit == "card":
        for cards in offer.card_counts:
            yield Configuration(cards, 1)
        return
    max_nodes = constraints.max_nodes if offer.may_span_nodes else 1
    for nodes in range(1, max_nodes + 1):
        yield Configuration(offer.gpus_per_node, nodes)


def rented_units(offer: Offer, config: Configuration) -> int:
    return config.gpus if offer.rental_unit == "card" else config.nodes


def billed_months(hours: float, term: Term) -> int:
    """Whole months of the chosen term: a 41-day job on a monthly term bills 2 months, on an
    annual term 12."""
    months = max(1, math.ceil(hours / 24 / DAYS_PER_BILLED_MONTH - 1e-9))
    per_term = TERM_MONTHS[term]
    return per_term * math.ceil(months / per_term)


def _money(amount: Decimal, quantum: Decimal) -> Decimal:
    return amount.quantize(quantum, rounding=ROUND_HALF_UP)


def _rental(offer: Offer, units: int, months: int, term: Term) -> Decimal:
    """What renting `units` for `months` of `term` costs after its discount (the quote's rental line amount)."""
    bp = offer.discount_bp.get(term, 0)
    return discounted_line(offer.unit_monthly_list, units, months, bp, offer.money_quantum)[2]


def joins_nodes(config: Configuration) -> bool:
    """A training configuration over several servers runs over their fabric (one job, one set of collectives)."""
    return config.nodes > 1


def fabric_units(offer: Offer, config: Configuration) -> int:
    """The fabric add-on's quantity: one per server joined (or per card, as the catalog prices it)."""
    addon = offer.fabric_addon
    return config.gpus if addon is not None and addon.per_unit == "card" else config.nodes


def fabric_monthly(offer: Offer, config: Configuration, joined: bool) -> Decimal:
    """What the fabric add-on costs a month when the servers are joined; 0 when the fabric comes with the
    server, is priced on consultation (a quote leaves it out of its total too) or is not used. A quote prices
    an add-on line at its unit price × quantity × months, without the term's discount."""
    addon = offer.fabric_addon
    if not joined or addon is None or addon.unit_monthly is None:
        return Decimal(0)
    return addon.unit_monthly * fabric_units(offer, config)


def price(offer: Offer, config: Configuration, term: Term, hours: float | None, *, joined: bool | None = None) -> Cost:
    """`joined`: the servers work as one over the SKU's fabric (its add-on is rented); default: several servers."""
    units = rented_units(offer, config)
    joined = joins_nodes(config) if joined is None else joined
    fabric = fabric_monthly(offer, config, joined)
    monthly_list = _money(offer.unit_monthly_list * units, offer.money_quantum) + fabric
    # app.common.money.discounted_line: the term's discount off the line's subtotal, rounded once, as a quote's line
    monthly_effective = _rental(offer, units, 1, term) + fabric
    months = billed_months(hours, term) if hours is not None else None
    job_total = _rental(offer, units, months, term) + fabric * months if months is not None else None
    # the same rule, so the upsell figure is what an annual quote of the same units totals
    annual_total = _rental(offer, units, 12, "annual") + fabric * 12
    billed_hours = months * DAYS_PER_BILLED_MONTH * 24.0 if months is not None else None
    converted = convert(offer, monthly_list, monthly_effective, job_total, annual_total)
    return Cost(
        offer.currency,
        term,
        units,
        monthly_list,
        monthly_effective,
        months,
        job_total,
        annual_total,
        used_hours=hours,
        billed_hours=billed_hours,
        converted=converted,
        fabric_monthly=fabric,
        fabric_on_consultation=joined and offer.fabric_on_consultation,
    )


def with_alternatives(offer: Offer, config: Configuration, cost: Cost, *, joined: bool | None = None) -> Cost:
    """`cost` with the other term's price of the same units for the same job (`Cost.alternatives`): the job's hours
    billed in whole months of that term. Only options get it: the search prices far more configurations."""
    others = []
    for term in TERM_MONTHS:
        if term == cost.term:
            continue
        other = price(offer, config, term, cost.used_hours, joined=joined)
        compared = other.compared_total if other.job_total is not None else None
        others.append(TermCost(term, other.months, other.job_total, compared))
    return replace(cost, alternatives=tuple(others))


def cheaper_term(cost: Cost) -> TermCost | None:
    """The other term when it bills this job less (in the request's currency), else None."""
    if cost.job_total is None:
        return None
    cheaper = [a for a in cost.alternatives if a.compared_total is not None and a.compared_total < cost.compared_total]
    return min(cheaper, key=lambda a: a.compared_total or Decimal(0), default=None)


def convert(
    offer: Offer, monthly_list: Decimal, monthly_effective: Decimal, job_total: Decimal | None, annual_total: Decimal
) -> Converted | None:
    """The amounts in the request's currency, each rounded to its minor unit; None when no conversion applies."""
    exchange = offer.exchange
    if exchange is None or exchange.rate is None or exchange.currency == offer.currency:
        return None
    rate, quantum = exchange.rate, exchange.quantum
    return Converted(
        exchange.currency,
        rate,
        _money(monthly_list * rate, quantum),
        _money(monthly_effective * rate, quantum),
        _money(job_total * rate, quantum) if job_total is not None else None,
        _money(annual_total * rate, quantum),
    )


def unconvertible(offer: Offer) -> dict[str, Any]:
    """The parameters of an `exchange_rate` rejection: the SKU's currency and the request's."""
    return {"currency": offer.currency, "target": offer.exchange.currency if offer.exchange else offer.currency}


# Why the request's constraints leave an offer out before any search: rejection codes (app/planner/option.py
# RejectionCode), the same for training and serving.
ExclusionCode = Literal["gpu_type", "region", "no_fabric", "exchange_rate"]


def excluded(offer: Offer, constraints: Constraints) -> tuple[ExclusionCode, dict[str, Any]] | None:
    """The code and parameters of the constraint that leaves `offer` out (a GPU type or region not asked for, no
    fabric where one is required, a price no exchange rate converts), else None. The one place training and serving
    filter offers (app.planner.recommend, app.planner.serving.offer_region)."""
    if constraints.gpu_types and offer.gpu.id not in constraints.gpu_types:
        return "gpu_type", {"gpu_type": offer.gpu.id, "requested": list(constraints.gpu_types)}
    if constraints.regions and not set(offer.regions) & set(constraints.regions):
        return "region", {"regions": list(offer.regions), "requested": list(constraints.regions)}
    if constraints.require_infiniband and not offer.may_span_nodes:
        return "no_fabric", {}
    if offer.unconvertible:
        return "exchange_rate", unconvertible(offer)
    return None
