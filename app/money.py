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


def bp_to_percent(discount_bp: int) -> Decimal:
    """2000 → Decimal('20'), 1250 → Decimal('12.5') (never exponent notation)."""
    percent = Decimal(discount_bp) / Decimal(100)
    return percent.quantize(Decimal(1)) if percent == percent.to_integral_value() else percent.normalize()
