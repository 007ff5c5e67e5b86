"""Structured logs: one JSON object per line on stderr for the `app` loggers."""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime

_STANDARD_ATTRS = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    """`{"time", "level", "logger", "message", ...extra}`; a traceback goes in `exc_info`, in the log only."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        entry.update({k: v for k, v in vars(record).items() if k not in _STANDARD_ATTRS})
        if record.exc_info:
            entry["exc_info"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


def configure_logging(level: str) -> None:
    """Idempotent: the `app` logger tree writes JSON lines to stderr at `level`."""
    logger = logging.getLogger("app")
    logger.setLevel(level.upper())
    if any(getattr(h, "_gpu_sizer", False) for h in logger.handlers):
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    handler._gpu_sizer = True  # type: ignore[attr-defined]
    logger.addHandler(handler)
    logger.propagate = False
