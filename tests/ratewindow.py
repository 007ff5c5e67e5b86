"""The rate limiter counts in fixed one-minute windows aligned to the clock (app/ratelimit/service.py): a test that
counts a burst to its 429 must start it far enough from the window's end that the whole burst lands in one window,
or a burst begun at hh:mm:59.98 is counted in two and reads [401, 401, 401]. A test of an app in its own process pins
the limiter's clock to a window's start (`pin_to_window_start`); one of a server in another process waits for the
next window when this one is nearly over (`away_from_window_edge`)."""

from __future__ import annotations

import time
from types import SimpleNamespace

import pytest

from app.ratelimit import service
from app.ratelimit.service import WINDOW_S


def away_from_window_edge(margin_s: float) -> None:
    """Sleep into the next window when fewer than `margin_s` seconds are left of this one."""
    into = time.time() % WINDOW_S
    if into > WINDOW_S - margin_s:
        time.sleep(WINDOW_S - into + 0.1)


def pin_to_window_start(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run this process's rate limiter on a clock that reads one second into the current window now and then moves at
    the real pace: a burst sent in this process lands in one window, and no test sleeps into the next (waiting up to
    15 s a test, when the window was nearly over, was the fast suite's longest wait)."""
    shift = (time.time() // WINDOW_S) * WINDOW_S + 1 - time.time()
    clock = SimpleNamespace(time=lambda: time.time() + shift, monotonic=time.monotonic)
    monkeypatch.setattr(service, "time", clock)
