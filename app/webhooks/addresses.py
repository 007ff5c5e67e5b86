"""Which URLs a webhook may be sent to. A URL whose host resolves to a private, loopback, link-local,
unspecified, multicast or reserved address is refused (a webhook must not reach into the service's own
network: server-side request forgery) unless WEBHOOKS_ALLOW_PRIVATE is set. It is checked when an admin
registers the URL and again before each attempt, since what a name resolves to can change; the attempt then
connects to the address checked (`pinned`), its Host header and TLS server name those of the URL.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

import httpx

from app.common.errors import InvalidInput, refused
from app.text import messages

SCHEMES = ("http", "https")


class AddressRefused(Exception):
    """The URL is not one a webhook may be sent to: `code` says why (app/text/refusal_words.py), without the URL;
    the message is its English (a delivery's recorded error)."""

    def __init__(self, code: str) -> None:
        super().__init__(messages.refusal(code, {}))
        self.code = code


def _host_port(url: str) -> tuple[str, int]:
    if any(ch.isspace() or not ch.isprintable() for ch in url):
        raise AddressRefused("url_characters")
    try:
        parts = urlsplit(url)
        httpx.URL(url)  # what the worker will send to: a URL httpx refuses is refused now
    except (ValueError, httpx.InvalidURL, UnicodeError) as exc:
        raise AddressRefused("url_invalid") from exc
    if parts.scheme not in SCHEMES or not parts.hostname:
        raise AddressRefused("url_scheme")
    if parts.username or parts.password:
        raise AddressRefused("url_credentials")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:
        raise AddressRefused("url_port") from exc
    return parts.hostname, port


def refused_address(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])  # an IPv6 zone (fe80::1%eth0) names no other address
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return (
        ip.is_private
        or ip.is_loopback
        or ip.is_link_local
        or ip.is_unspecified
        or ip.is_multicast
        or ip.is_reserved
        or not ip.is_global
    )


def _check_resolved(infos: list[tuple[object, ...]]) -> None:
    addresses = {str(info[4][0]) for info in infos}  # type: ignore[index]
    if not addresses:
        raise AddressRefused("host_unresolved")
    if any(refused_address(address) for address in addresses):
        raise AddressRefused("host_private")


def check_url(url: str, *, allow_private: bool) -> None:
    """Raise InvalidInput naming `url` when it is not a URL a webhook may be sent to."""
    try:
        host, port = _host_port(url)
        if not allow_private:
            try:
                infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
            except (OSError, UnicodeError) as exc:
                raise AddressRefused("host_unresolved") from exc
            _check_resolved(list(infos))
    except AddressRefused as exc:
        raise refused(InvalidInput, exc.code, field="url") from exc


@dataclass(frozen=True, slots=True)
class Target:
    """Where one attempt connects: the URL with its host name replaced by the address just checked (so a
    name that resolves differently a moment later cannot redirect it), the Host header and TLS name kept."""

    url: str
    host_header: str | None = None
    sni_hostname: str | None = None


def pinned(url: str, address: str) -> Target:
    parts = urlsplit(url)
    host = parts.hostname or ""
    try:
        ipaddress.ip_address(host)
        return Target(url)  # already an address
    except ValueError:
        pass
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    literal = f"[{ip}]" if ip.version == 6 else str(ip)
    netloc = literal + (f":{parts.port}" if parts.port else "")
    host_header = host + (f":{parts.port}" if parts.port else "")
    return Target(
        urlunsplit(parts._replace(netloc=netloc)),
        host_header=host_header,
        sni_hostname=host if parts.scheme == "https" else None,
    )


async def target_now(url: str, *, allow_private: bool) -> Target:
    """At delivery time, on the event loop: where to connect, or AddressRefused when `url` may not be called
    now. With private addresses allowed, the name is left to httpx."""
    host, port = _host_port(url)
    if allow_private:
        return Target(url)
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise AddressRefused("host_unresolved") from exc
    _check_resolved(list(infos))
    return pinned(url, str(infos[0][4][0]))
