"""Browser-test fixtures: Debian's Chromium driven by Playwright, against `live_server` (tests/conftest.py:
one real server per test module on a throwaway SQLite database, migrated and seeded by the CLI).

Playwright never downloads a browser here: it launches /usr/bin/chromium (`make browser` installs
it). Without it the browser tests skip, or fail under CI=true.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.web.browser import new_page

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def chromium() -> Iterator[object]:
    if not os.access(CHROMIUM, os.X_OK):
        message = f"{CHROMIUM} is missing: run `make browser` (apt-get install chromium)"
        if os.environ.get("CI") == "true":
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield browser
        browser.close()


@pytest.fixture()
def page(chromium: object) -> Iterator[object]:
    page = new_page(chromium)
    yield page
    page.context.close()


@pytest.fixture()
def page_no_js(chromium: object) -> Iterator[object]:
    page = new_page(chromium, javascript=False)
    yield page
    page.context.close()
