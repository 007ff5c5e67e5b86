"""Standard Webhooks signing (https://www.standardwebhooks.com/), by its reference implementation, the
`standardwebhooks` package: `webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">`.

Secrets are `whsec_` and the base64 of 32 random bytes (the spec allows 24 to 64), the format the
reference verifiers take as they are.
"""

from __future__ import annotations

import base64
import secrets
from datetime import datetime

from standardwebhooks.webhooks import Webhook

SECRET_PREFIX = "whsec_"
SECRET_BYTES = 32  # Standard Webhooks: "between 24 bytes (192 bits) and 64 bytes (512 bits)"


def new_secret() -> str:
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode()


def new_message_id() -> str:
    return "msg_" + secrets.token_urlsafe(18)


def headers(*, secret: str, message_id: str, at: datetime, body: bytes) -> dict[str, str]:
    """The three headers of one attempt, signed at `at` (each attempt is signed afresh: receivers refuse a
    timestamp more than five minutes off their clock)."""
    return {
        "webhook-id": message_id,
        "webhook-timestamp": str(int(at.timestamp())),
        "webhook-signature": Webhook(secret).sign(message_id, at, body),
        "content-type": "application/json",
    }
