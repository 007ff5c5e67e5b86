"""Helpers for the browser tests: a fresh Chromium page, and screenshots for the README and docs/api.md."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# The docs' screenshots are refreshed only on request (UPDATE_SCREENSHOTS=1 make test), so that an
# ordinary test run leaves the working tree clean; otherwise they go to a temporary folder.
SCREENSHOTS = (
    ROOT / "docs" / "screenshots"
    if os.environ.get("UPDATE_SCREENSHOTS") == "1"
    else Path(tempfile.gettempdir()) / "gpu-sizer-screenshots"
)


def new_page(
    chromium: object, *, javascript: bool = True, width: int = 1200, height: int = 900, locale: str = "en-US"
) -> object:
    context = chromium.new_context(
        java_script_enabled=javascript, viewport={"width": width, "height": height}, locale=locale
    )
    context.set_default_timeout(15_000)
    return context.new_page()


def screenshot(page: object, name: str, *, max_height: int = 2400, viewport: bool = False) -> Path:
    """The page from the top, at most `max_height` CSS pixels tall (keeps the PNGs small), or what
    the viewport shows now (`viewport`). The screenshot is taken either way, so a page that cannot
    render fails the test."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / name
    if viewport:
        page.screenshot(path=str(path))
        return path
    width = page.viewport_size["width"]
    height = min(page.evaluate("document.documentElement.scrollHeight"), max_height)
    page.screenshot(path=str(path), full_page=True, clip={"x": 0, "y": 0, "width": width, "height": height})
    return path
