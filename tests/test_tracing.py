"""The test harness itself: a thread's `sys.settrace` refused by CPython 3.11's install guard is tried again
(tests/tracing.py, installed by tests/conftest.py). CI lost two runs to threads that died in their bootstrap
on that refusal."""

from __future__ import annotations

import sys
import threading

import pytest

from tests import tracing

pytestmark = pytest.mark.skipif(sys.version_info >= (3, 12), reason="the guard exists on Python 3.11 only")


def _refused(times: int, monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """The real install, refused `times` times first; what it was finally given."""
    installed: list[object] = []
    left = [times]

    def settrace(function: object) -> None:
        if left[0]:
            left[0] -= 1
            raise RuntimeError(tracing.RACE)
        installed.append(function)

    monkeypatch.setattr(tracing, "_settrace", settrace)
    return installed


def test_a_thread_started_while_the_install_is_refused_still_runs_its_target(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What CI saw: threading's bootstrap calls sys.settrace when a hook is set (coverage sets one), and the
    refusal killed the thread before its target ran."""
    installed = _refused(2, monkeypatch)
    ran = threading.Event()
    previous = threading.gettrace()
    threading.settrace(print)
    try:
        thread = threading.Thread(target=ran.set)
        thread.start()
        thread.join(timeout=10)
    finally:
        threading.settrace(previous)  # type: ignore[arg-type]
    assert ran.is_set()
    assert installed == [print]


def test_any_other_error_is_raised_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    def settrace(function: object) -> None:
        raise RuntimeError("something else")

    monkeypatch.setattr(tracing, "_settrace", settrace)
    with pytest.raises(RuntimeError, match="something else"):
        sys.settrace(None)
