"""The two verification snippets of docs/integrations.md run as printed: each accepts a delivery signed by the
service and refuses one whose body changed."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.webhooks.signing import headers, new_secret

DOC = Path(__file__).resolve().parents[2] / "docs" / "integrations.md"
# the Webhooks section's two Python blocks (the sections before it have their own)
RECEIVER, STDLIB = re.findall(
    r"```python\n(.*?)```", DOC.read_text(encoding="utf-8").split("## Webhooks", 1)[1], re.DOTALL
)[:2]


def _signed(secret: str) -> tuple[bytes, dict[str, str]]:
    body = json.dumps(
        {
            "type": "quote.issued",
            "data": {"number": "Q-2026-000001", "status": "issued", "total": "16800.00", "currency": "CNY"},
        }
    ).encode()
    return body, headers(secret=secret, message_id="msg_doc", at=datetime.now(UTC), body=body)


def test_the_standard_library_snippet_verifies() -> None:
    namespace: dict[str, Any] = {}
    exec(STDLIB, namespace)
    secret = new_secret()
    body, signed = _signed(secret)
    assert namespace["verified"](secret, signed, body) is True
    assert namespace["verified"](secret, signed, body.replace(b"16800", b"1680")) is False
    assert namespace["verified"](new_secret(), signed, body) is False


def test_the_fastapi_receiver_verifies(monkeypatch: pytest.MonkeyPatch) -> None:
    secret = new_secret()
    monkeypatch.setenv("GPU_SIZER_WEBHOOK_SECRET", secret)
    namespace: dict[str, Any] = {}
    exec(RECEIVER, namespace)
    body, signed = _signed(secret)
    with TestClient(namespace["app"]) as client:
        assert client.post("/hooks/gpu-sizer", content=body, headers=signed).status_code == 200
        assert client.post("/hooks/gpu-sizer", content=body + b" ", headers=signed).status_code == 400
