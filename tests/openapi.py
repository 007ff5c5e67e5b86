"""The app's OpenAPI document, built once a process for each set of settings (a second or two of CPU each): the tests
that read it, and the parametrisations that walk it while their modules are collected (by every worker of
`make test-fast`), share one. Read it; never change it."""

from __future__ import annotations

import functools
from typing import Any

from app.common.settings import Settings
from app.entry.main import create_app


def openapi_document(**overrides: Any) -> dict[str, Any]:
    """The document of an app on `Settings(database_url="sqlite://", env="test", **overrides)`."""
    return _document(tuple(sorted(overrides.items())))


@functools.cache
def _document(overrides: tuple[tuple[str, Any], ...]) -> dict[str, Any]:
    return create_app(Settings(database_url="sqlite://", env="test", **dict(overrides))).openapi()
