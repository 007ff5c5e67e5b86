"""The rate limiter counts in fixed one-minute windows aligned to the clock (app/ratelimit/service.py): a test that
counts a burst to its 429 must start it far enough from the window's end that the whole burst lands in one window,
or a burst begun at hh:mm:59.98 is counted in two and reads [401, 401, 401]."""

from __future__ import annotations

import time

from app.ratelimit.service import WINDOW_S


def away_from_window_edge(margin_s: float) -> None:
    """Sleep into the next window when fewer than `margin_s` seconds are left of this one."""
    into = time.time() % WINDOW_S
    if into > WINDOW_S - margin_s:
        time.sleep(WINDOW_S - into + 0.1)
