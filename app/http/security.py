"""Security headers on every response (pure ASGI).

The Content-Security-Policy allows no inline script. Swagger UI at /docs is served from our own
/static/swagger (see app/http/docs.py), so it needs no relaxation of the policy. Everything under
/admin (pages and API) is private to the signed-in user: `Cache-Control: no-store` keeps it out of
browser and proxy caches.
"""

from __future__ import annotations

from starlette.datastructures import MutableHeaders
from starlette.types import Message, Receive, Scope, Send

from app.http.asgi import HttpMiddleware

CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "frame-ancestors 'none'; base-uri 'self'; form-action 'self'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "strict-origin-when-cross-origin",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
}

PRIVATE_PREFIX = "/admin"


class SecurityHeadersMiddleware(HttpMiddleware):
    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        private = scope.get("path", "").startswith(PRIVATE_PREFIX)

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in SECURITY_HEADERS.items():
                    headers.setdefault(name, value)
                if private:
                    headers["Cache-Control"] = "no-store"
            await send(message)

        await self.app(scope, receive, send_with_headers)
