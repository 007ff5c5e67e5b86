"""A customer types a Hugging Face model id in the wizard, in headless Chromium, against a real server
whose HF_ENDPOINT is the local stand-in Hub (tests/hub_server.py), in English and in Chinese."""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import parse_qs, urlparse

import pytest

from app.estimator.presets import get_preset
from tests.hub_server import StandInHub, stand_in_hub
from tests.servers import LiveServerFactory
from tests.web.browser import screenshot

QWEN = get_preset("qwen2.5-7b")


@pytest.fixture(scope="module")
def hub_site(live_server_factory: LiveServerFactory) -> Iterator[tuple[str, StandInHub]]:
    with stand_in_hub() as hub, live_server_factory("hub", env={"HF_ENDPOINT": hub.url}) as server:
        yield server.base, hub


def _size(page, base: str, hf_id: str, lang: str) -> None:
    page.goto(f"{base}/?lang={lang}")
    page.check("#f-source-hub")
    assert page.is_visible("#f-hf_id") and not page.is_visible("#f-preset")
    page.fill("#f-hf_id", hf_id)
    page.fill("#f-tokens_b", "100M")
    with page.expect_navigation():
        page.click("form.wizard button[type=submit]")


def test_a_hub_id_typed_in_the_wizard_is_sized(hub_site: tuple[str, StandInHub], page) -> None:
    base, hub = hub_site
    _size(page, base, QWEN.hf_repo, "en")
    assert urlparse(page.url).path == "/results"
    assert parse_qs(urlparse(page.url).query)["hf_id"] == [QWEN.hf_repo]
    assert QWEN.hf_repo in page.inner_text("p.lead")
    assert page.locator("article.option").count() > 0
    assert f"/{QWEN.hf_repo}/resolve/main/config.json" in hub.hits
    screenshot(page, "results-hub-id.png")


def test_a_hub_refusal_is_shown_beside_the_field_in_chinese(hub_site: tuple[str, StandInHub], page) -> None:
    base, _hub = hub_site
    _size(page, base, "nobody/no-such-model", "zh")
    assert page.is_visible("#err-hf_id")
    assert "Hugging Face Hub 上没有模型 nobody/no-such-model" in page.inner_text("#err-hf_id")
    assert page.input_value("#f-hf_id") == "nobody/no-such-model"
    assert "Hugging Face 模型 ID" in page.inner_text("label[for=f-hf_id]")
