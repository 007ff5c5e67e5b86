"""Counting units over dates. PURE (standard library only): the quote service and the planner both count with it.

A hold is (first day, day after the last, units). The units free over a window are the inventory less the most
units held on any one day of it: holds change only where one starts, so the peak is found at the window's first
day and at each start inside it.
"""

from __future__ import annotations

import calendar
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, timedelta

# A rental holds its units for the calendar months it is rented, from its start day to the same day n months later
# (12 months: one year), whatever it is billed: the planner bills 30-day months (app/planner/offers.py
# DAYS_PER_BILLED_MONTH), which would end an annual rental's hold 5 days early and let another quote take the
# server on day 361.


# The booking window: a rental starts from today up to the same day BOOKING_WINDOW_MONTHS calendar months later
# (a year ahead: 2026-12-06 to 2027-12-06), as far as the longest term the catalog sells, annual
# (app/estimator/vocabulary.py TERMS), plans ahead. /quotes and /recommend refuse a start_date beyond it, and a
# 409 capacity_taken names a next free date only within it.
BOOKING_WINDOW_MONTHS = 12


@dataclass(frozen=True, slots=True)
class Hold:
    starts_on: date
    ends_on: date  # exclusive
    units: int


def add_months(day: date, months: int) -> date:
    """The same day `months` calendar months later; the month's last day where it is shorter (31 Jan + 1: 28 Feb).
    Raises ValueError past the calendar's end."""
    years, month = divmod(day.month - 1 + months, 12)
    year = day.year + years
    if year > date.max.year:
        raise ValueError("past the end of the calendar")
    return date(year, month + 1, min(day.day, calendar.monthrange(year, month + 1)[1]))


def last_start(today: date) -> date:
    """The last day a rental may start on: the booking window's end (BOOKING_WINDOW_MONTHS from today)."""
    return add_months(today, BOOKING_WINDOW_MONTHS)


def window(start: date, months: int) -> tuple[date, date]:
    """The days a rental of `months` calendar months from `start` holds: [start, the same day `months` later), so
    the last day held is the day before (12 months from 2026-12-06: to 2027-12-05 included)."""
    return start, add_months(start, months)


def held_peak(holds: Iterable[Hold], start: date, end: date) -> int:
    """The most units the holds take on any one day of [start, end)."""
    inside = [h for h in holds if h.starts_on < end and h.ends_on > start]
    days = {start} | {h.starts_on for h in inside if h.starts_on > start}
    return max((sum(h.units for h in inside if h.starts_on <= day < h.ends_on) for day in days), default=0)


def free_units(total: int, holds: Iterable[Hold], start: date, end: date) -> int:
    """Units free on every day of [start, end): the inventory less the peak held (never below 0)."""
    return max(0, total - held_peak(holds, start, end))


def next_free(
    total: int, holds: Iterable[Hold], start: date, days: int, units: int, *, months: int | None = None
) -> date | None:
    """The first day on or after `start` from which `units` are free for `days` days (or, given `months`, for that
    many calendar months from that day, as `window`); None when the inventory never has that many (more units than
    exist, or holds without end)."""
    if units > total:
        return None
    listed = list(holds)
    # Free units rise only where a hold ends, so the first fitting day is the start or a hold's end.
    for day in sorted({start} | {h.ends_on for h in listed if h.ends_on > start}):
        try:
            end = window(day, months)[1] if months is not None else day + timedelta(days=days)
        except (ValueError, OverflowError):  # a hold to the end of the calendar: never free for that long
            return None
        if free_units(total, listed, day, end) >= units:
            return day
    return None  # pragma: no cover - after the last hold ends every unit is free


def overbooked_days(total: int, holds: Iterable[Hold], start: date) -> dict[date, int]:
    """The days from `start` on which the holds take more units than exist, with the units short then. Holds change
    only where one starts, so the days checked are `start` and each start after it: every overbooked stretch
    begins on one of them."""
    listed = [h for h in holds if h.ends_on > start]
    days = {start} | {h.starts_on for h in listed if h.starts_on > start}
    out = {}
    for day in sorted(days):
        held = sum(h.units for h in listed if h.starts_on <= day < h.ends_on)
        if held > total:
            out[day] = held - total
    return out
