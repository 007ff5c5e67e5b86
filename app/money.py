"""Money: Decimal in code, integer minor units in storage, decimal strings in JSON.

Currency facts (which codes exist, how many minor digits) come from Babel's CLDR data
rather than a hand-kept table.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

from babel.numbers import get_currency_precision, list_currencies

_KNOWN = frozenset(list_currencies())


class MoneyError(ValueError):
    pass


def check_currency(code: str) -> str:
    code = code.upper()
    if code not in _KNOWN:
        raise MoneyError(f"unknown currency code {code!r}; use an ISO 4217 code such as CNY or USD")
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
