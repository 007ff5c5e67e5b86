"""`sys.settrace` that waits its turn: every thread the tests start survives coverage's trace hook on Python 3.11.

Under `make test` (pytest --cov) coverage installs a hook with `threading.settrace`, so each new thread calls
`sys.settrace` in its bootstrap, before its target runs. CPython 3.11 refuses that call with
RuntimeError("Cannot install a trace function while another trace function is being installed") while another
thread's call is in flight (a process-wide guard in _PyEval_SetTrace, python/cpython#98257; Python code run inside
that window, such as the audit hook of tests/conftest.py, can let the GIL pass to another thread). The thread then
dies before its target runs: a webhook receiver's request thread, or the PDF pool's manager thread, whose pool then
failed every rendering ("Unexpected error within the Pool"). CI lost a run to each.

`tests/servers.released_together` and `tests/webhooks/receiver.py` start threads one at a time for this reason;
threads started by libraries (pebble's pool, uvicorn, anyio) cannot be made to, hence this wrapper. Python 3.12
replaced the guard (PEP 669 monitoring), so the wrapper is installed on 3.11 only."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

RACE = "Cannot install a trace function while another trace function is being installed"
RETRY_S = 0.001  # the other thread's call takes microseconds; sleeping releases the GIL so it can finish
ATTEMPTS = 5_000  # 5 s of retries at most, then the refusal is raised as before

_settrace = sys.settrace


def settrace_waiting(function: Callable[..., Any] | None) -> None:
    """`sys.settrace(function)`, tried again while another thread's call is in flight. Installing the same
    function again is idempotent, so trying again is safe whatever the refused call left."""
    for _ in range(ATTEMPTS - 1):
        try:
            return _settrace(function)
        except RuntimeError as exc:
            if str(exc) != RACE:
                raise
        time.sleep(RETRY_S)
    return _settrace(function)


def install() -> None:
    if sys.version_info < (3, 12):
        sys.settrace = settrace_waiting
