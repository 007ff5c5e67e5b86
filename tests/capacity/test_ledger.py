"""Counting units over dates (app.capacity.ledger): exact results on small hand-made holds."""

from __future__ import annotations

from datetime import date, timedelta

from app.capacity.ledger import Hold, add_months, free_units, held_peak, next_free, window

JAN = date(2027, 1, 1)


def _day(n: int) -> date:
    return JAN + timedelta(days=n)


def test_a_rental_holds_calendar_months_not_billed_30_day_months() -> None:
    assert window(JAN, 2) == (JAN, date(2027, 3, 1))
    assert window(date(2026, 12, 6), 12) == (date(2026, 12, 6), date(2027, 12, 6))  # the last day held: 2027-12-05
    assert add_months(date(2027, 1, 31), 1) == date(2027, 2, 28)  # a shorter month: its last day
    assert add_months(date(2027, 11, 15), 3) == date(2028, 2, 15)
    assert next_free(1, [Hold(JAN, date(2027, 12, 31), 1)], JAN, 0, 1, months=1) == date(2027, 12, 31)
    assert next_free(1, [Hold(JAN, date.max, 1)], JAN, 0, 1, months=1) is None


def test_the_peak_counts_only_holds_on_the_same_day() -> None:
    holds = [Hold(_day(0), _day(10), 2), Hold(_day(10), _day(20), 3), Hold(_day(5), _day(15), 1)]
    assert held_peak(holds, _day(0), _day(30)) == 4  # days 10-14: 3 + 1 (the first ended on day 10)
    assert held_peak(holds, _day(20), _day(30)) == 0
    assert free_units(5, holds, _day(0), _day(30)) == 1
    assert free_units(2, holds, _day(0), _day(30)) == 0  # never below zero


def test_next_free_is_the_first_day_the_units_stay_free_for_the_whole_rental() -> None:
    holds = [Hold(_day(0), _day(10), 2), Hold(_day(20), _day(40), 2)]
    assert next_free(3, holds, _day(0), 5, 1) == _day(0)
    assert next_free(3, holds, _day(0), 5, 2) == _day(10)  # days 10-14 have 3 free
    assert next_free(3, holds, _day(0), 15, 2) == _day(40)  # 15 days from day 10 run into the second hold
    assert next_free(3, holds, _day(0), 5, 4) is None  # more than exist


def test_a_hold_to_the_end_of_the_calendar_is_never_free_and_no_error() -> None:
    holds = [Hold(_day(0), date.max, 1)]
    assert next_free(1, holds, _day(0), 30, 1) is None
