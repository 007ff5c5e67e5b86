"""Money: Decimal in code, integer minor units in storage, decimal strings in JSON.

Currency facts (which codes exist, how many minor digits) come from Babel's CLDR data
rather than a hand-kept table.
"""

from __future__ import annotations

from datetime import date
from decimal import ROUND_HALF_UP, Decimal
from functools import cache

from babel.core import get_global
from babel.numbers import get_currency_precision, get_territory_currencies, list_currencies

_KNOWN = frozenset(list_currencies())


class MoneyError(ValueError):
    pass


def check_currency(code: str) -> str:
    code = code.upper()
    if code not in _KNOWN:
        raise MoneyError(f"unknown currency code {code!r}; use an ISO 4217 code such as CNY or USD")
    return code


@cache
def _tender_on(day: date) -> frozenset[str]:
    """The currencies legal tender in some territory on `day`, from CLDR's supplemental currency data (Babel's
    `get_territory_currencies`, tender only): not ISO 4217's codes for no currency (XXX), testing (XTS), precious
    metals (XAU, XAG, XPT, XPD), funds and units of account (XDR, XBA…XBD, XSU, XUA), nor withdrawn currencies (DEM)."""
    territories = get_global("territory_currencies")
    return frozenset(code for t in territories for code in get_territory_currencies(t, day, tender=True))


def check_tender(code: str) -> str:
    """A currency a price or budget can be in (review R5-10: a price in XXX, ISO 4217's "no currency", was accepted):
    a known code that is legal tender today; MoneyError otherwise."""
    code = check_currency(code)
    if code not in _tender_on(date.today()):
        raise MoneyError(
            f"{code!r} is no currency in use today (ISO 4217 also codes funds, metals, tests, no currency and "
            "withdrawn currencies); use one that is legal tender, such as CNY or USD"
        )
    return code


def exponent(currency: str) -> int:
    return get_currency_precision(check_currency(currency))


def quantum(currency: str) -> Decimal:
    return Decimal(1).scaleb(-exponent(currency))


def to_minor(amount: Decimal, currency: str) -> int:
    """Exact conversion; refuses amounts with more digits than the currency has."""
    places = exponent(currency)
    scaled = amount.scaleb(places)
    if scaled != scaled.to_integral_value():
        raise MoneyError(f"{amount} has more than {places} decimal places for {currency}")
    return int(scaled)


def from_minor(minor: int, currency: str) -> Decimal:
    return Decimal(minor).scaleb(-exponent(currency)).quantize(quantum(currency))


def round_money(amount: Decimal, currency: str) -> Decimal:
    return amount.quantize(quantum(currency), rounding=ROUND_HALF_UP)


def apply_discount(amount: Decimal, discount_bp: int, currency: str) -> Decimal:
    return round_money(amount * (Decimal(10000 - discount_bp) / Decimal(10000)), currency)


def discounted_line(
    unit_price: Decimal, units: int, months: int, discount_bp: int, step: Decimal
) -> tuple[Decimal, ...]:
    """(gross, discount, amount) of a rented line: the ONE rule /recommend's cost and a quote's lines are priced by
    (app.planner.offers.price, app.quotes.service.line_amounts), so an option and its quote agree to the cent.

    A finance team reads a line as "subtotal, n % off, total": the term's discount is taken off the line's subtotal
    (unit list price × units × months), rounded once to the currency's minor unit `step`, half up as `round_money`
    rounds everywhere else; the amount is the subtotal less that discount. Rounding the discounted unit price first
    and multiplying it out drifts from the stated percentage by up to units × months × half a cent
    (33,333.33 × 12 at 12.5 % took 50,000.04 off instead of 50,000.00)."""
    gross = unit_price * units * months
    discount = (gross * Decimal(discount_bp) / Decimal(10000)).quantize(step, rounding=ROUND_HALF_UP)
    return gross, discount, gross - discount


def bp_to_percent(discount_bp: int) -> Decimal:
    """2000 → Decimal('20'), 1250 → Decimal('12.5') (never exponent notation)."""
    percent = Decimal(discount_bp) / Decimal(100)
    return percent.quantize(Decimal(1)) if percent == percent.to_integral_value() else percent.normalize()
