"""Helpers for the browser tests: a fresh Chromium page, and screenshots for the README."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "docs" / "screenshots"


def new_page(chromium: object, *, javascript: bool = True, width: int = 1200, height: int = 900,
             locale: str = "en-US") -> object:
    context = chromium.new_context(java_script_enabled=javascript, viewport={"width": width, "height": height},
                                   locale=locale)
    context.set_default_timeout(15_000)
    return context.new_page()


def screenshot(page: object, name: str, *, max_height: int = 2400) -> Path:
    """The page from the top, at most `max_height` CSS pixels tall (keeps the PNGs small)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / name
    width = page.viewport_size["width"]
    height = min(page.evaluate("document.documentElement.scrollHeight"), max_height)
    page.screenshot(path=str(path), full_page=True, clip={"x": 0, "y": 0, "width": width, "height": height})
    return path
