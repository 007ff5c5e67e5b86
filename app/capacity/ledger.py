"""Counting units over dates. PURE (standard library only): the quote service and the planner both count with it.

A hold is (first day, day after the last, units). The units free over a window are the inventory less the most
units held on any one day of it: holds change only where one starts, so the peak is found at the window's first
day and at each start inside it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, timedelta

# A billed month is 30 days (app/planner/offers.py DAYS_PER_BILLED_MONTH: the planner bills 30-day months), so a
# quote for n months holds its units for 30 × n days from its start.
DAYS_PER_MONTH = 30


@dataclass(frozen=True, slots=True)
class Hold:
    starts_on: date
    ends_on: date  # exclusive
    units: int


def window(start: date, months: int) -> tuple[date, date]:
    """The days a rental of `months` billed months from `start` holds: [start, start + 30 × months)."""
    return start, start + timedelta(days=DAYS_PER_MONTH * months)


def held_peak(holds: Iterable[Hold], start: date, end: date) -> int:
    """The most units the holds take on any one day of [start, end)."""
    inside = [h for h in holds if h.starts_on < end and h.ends_on > start]
    days = {start} | {h.starts_on for h in inside if h.starts_on > start}
    return max((sum(h.units for h in inside if h.starts_on <= day < h.ends_on) for day in days), default=0)


def free_units(total: int, holds: Iterable[Hold], start: date, end: date) -> int:
    """Units free on every day of [start, end): the inventory less the peak held (never below 0)."""
    return max(0, total - held_peak(holds, start, end))


def next_free(total: int, holds: Iterable[Hold], start: date, days: int, units: int) -> date | None:
    """The first day on or after `start` from which `units` are free for `days` days; None when the inventory never
    has that many (more units than exist, or holds without end)."""
    if units > total:
        return None
    listed = list(holds)
    # Free units rise only where a hold ends, so the first fitting day is the start or a hold's end.
    for day in sorted({start} | {h.ends_on for h in listed if h.ends_on > start}):
        if day > date.max - timedelta(days=days):  # a hold to the end of the calendar: never free for that long
            return None
        if free_units(total, listed, day, day + timedelta(days=days)) >= units:
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
