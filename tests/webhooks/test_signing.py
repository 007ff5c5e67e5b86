"""Signing, secrets, refused addresses and the backoff: pure functions, checked against the Standard
Webhooks reference library."""

from __future__ import annotations

import asyncio
import base64
import random
from datetime import UTC, datetime

import pytest
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from app.common.errors import InvalidInput
from app.webhooks.addresses import AddressRefused, check_url, pinned, refused_address, target_now
from app.webhooks.service import Backoff, retry_delay_s
from app.webhooks.signing import headers, new_secret


def test_secrets_are_whsec_base64_of_32_random_bytes() -> None:
    secret = new_secret()
    assert secret.startswith("whsec_")
    assert len(base64.b64decode(secret.removeprefix("whsec_"))) == 32
    assert new_secret() != secret


def test_the_reference_library_verifies_our_signature_and_refuses_a_changed_body() -> None:
    secret, body = new_secret(), b'{"type":"quote.issued","data":{"total":"12.50"}}'
    signed = headers(secret=secret, message_id="msg_1", at=datetime.now(UTC), body=body)
    assert signed["webhook-signature"].startswith("v1,")
    assert Webhook(secret).verify(body, signed) == {"type": "quote.issued", "data": {"total": "12.50"}}
    with pytest.raises(WebhookVerificationError):
        Webhook(secret).verify(body.replace(b"12.50", b"1.25"), signed)
    with pytest.raises(WebhookVerificationError):
        Webhook(new_secret()).verify(body, signed)


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "10.1.2.3",
        "172.16.0.1",
        "192.168.1.1",
        "169.254.169.254",
        "0.0.0.0",
        "224.0.0.1",
        "::1",
        "fe80::1",
        "fc00::1",
        "::ffff:127.0.0.1",
        "100.64.0.1",
        "::",
    ],
)
def test_non_public_addresses_are_refused(address: str) -> None:
    assert refused_address(address)


@pytest.mark.parametrize("address", ["93.184.215.14", "8.8.8.8", "2606:4700:4700::1111"])
def test_public_addresses_pass(address: str) -> None:
    assert not refused_address(address)


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8000/hook",
        "https://169.254.169.254/latest/meta-data",
        "http://[::1]/x",
        "http://0.0.0.0/",
        "http://localhost/hook",
        "ftp://93.184.215.14/",
        "https://user:pw@93.184.215.14/",
        "not a url",
    ],
)
def test_check_url_refuses_with_a_422_naming_url(url: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        check_url(url, allow_private=False)
    assert caught.value.errors[0]["field"] == "url"
    assert url not in caught.value.detail  # the reason, not the URL (it may carry the receiver's token)


def test_allow_private_lets_loopback_through_but_not_other_schemes_nor_control_characters() -> None:
    check_url("http://127.0.0.1:9/hook", allow_private=True)
    for url in (
        "file:///etc/passwd",
        "http://127.0.0.1:9/a\nb",
        "http://127.0.0.1:9/a b",
        "http://[127.0.0.1]:9/",
    ):
        with pytest.raises(InvalidInput):
            check_url(url, allow_private=True)


def test_backoff_doubles_with_jitter_and_stops_at_the_cap() -> None:
    backoff, rng = Backoff(base_s=5, cap_s=3600, retry_for_s=86_400), random.Random(7)
    for attempt, full in [(1, 5), (2, 10), (3, 20), (10, 2560), (11, 3600), (40, 3600)]:
        delays = [retry_delay_s(attempt, backoff, rng) for _ in range(50)]
        assert all(full / 2 <= d <= full for d in delays), (attempt, min(delays), max(delays))
        assert max(delays) - min(delays) > full / 10  # jittered, not one value


@pytest.mark.parametrize(
    ("url", "address", "expected"),
    [
        (
            "https://hooks.example.com:8443/in?token=t",
            "93.184.215.14",
            ("https://93.184.215.14:8443/in?token=t", "hooks.example.com:8443", "hooks.example.com"),
        ),
        ("http://hooks.example.com/in", "2606:4700::1", ("http://[2606:4700::1]/in", "hooks.example.com", None)),
        ("https://93.184.215.14/in", "93.184.215.14", ("https://93.184.215.14/in", None, None)),
    ],
)
def test_an_attempt_connects_to_the_address_checked(url: str, address: str, expected: tuple) -> None:
    target = pinned(url, address)
    assert (target.url, target.host_header, target.sni_hostname) == expected


def test_at_delivery_a_public_address_passes_and_a_private_one_is_refused() -> None:
    assert asyncio.run(target_now("https://93.184.215.14/in", allow_private=False)).url == "https://93.184.215.14/in"
    with pytest.raises(AddressRefused):
        asyncio.run(target_now("http://127.0.0.1:9/in", allow_private=False))
    assert asyncio.run(target_now("http://127.0.0.1:9/in", allow_private=True)).url == "http://127.0.0.1:9/in"
