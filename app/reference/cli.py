"""`python -m app set-exchange-rate USD CNY 7.10`: the rate reference prices are converted at."""

from __future__ import annotations

import argparse
from decimal import Decimal, InvalidOperation

from app.common.money import MoneyError, check_currency
from app.common.settings import Settings
from app.db.engine import build_engine, build_sessionmaker, check_connection
from app.reference.service import set_exchange_rate


def add_rate_command(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("set-exchange-rate", help="set how many QUOTE one BASE buys (e.g. USD CNY 7.10)")
    p.add_argument("base")
    p.add_argument("quote")
    p.add_argument("rate")
    p.add_argument("--by", default="cli", help="who sets it (kept with the rate)")
    p.add_argument("--note", default="")


def run_rate_command(args: argparse.Namespace, settings: Settings) -> int:
    try:
        base, quote = check_currency(args.base), check_currency(args.quote)
    except MoneyError as exc:
        print(f"error: {exc}")
        return 2
    try:
        rate = Decimal(args.rate)
    except InvalidOperation:
        rate = Decimal(0)
    if not rate.is_finite() or rate <= 0:
        print(f"error: rate {args.rate!r} must be a positive decimal number, e.g. 7.10")
        return 2
    engine = build_engine(settings.database_url)
    check_connection(engine)
    with build_sessionmaker(engine).begin() as session:
        set_exchange_rate(session, base=base, quote=quote, rate=rate, set_by=args.by, note=args.note)
    engine.dispose()
    print(f"exchange rate: 1 {base} = {rate} {quote}")
    return 0
