"""The TLS context of the app's outgoing HTTPS requests (the Hugging Face Hub, webhook receivers): one a process.

Building one loads the CA bundle (certifi's, or SSL_CERT_FILE / SSL_CERT_DIR, as httpx reads them), about 30 ms of
CPU, which every httpx client made without one pays again: each config.json fetched from the Hub made its own. An
SSLContext may be shared by clients and threads (Python's `ssl` documentation: contexts hold settings and
certificates, each connection its own SSLSocket), so the first request builds it and the others reuse it.
"""

from __future__ import annotations

import functools
import ssl

import httpx


@functools.cache
def client_context() -> ssl.SSLContext:
    """httpx's default verifying context (certifi's bundle unless SSL_CERT_FILE or SSL_CERT_DIR names another)."""
    return httpx.create_ssl_context()
