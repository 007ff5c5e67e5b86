"""`python -m app.entry.healthcheck`: the container's health check. It asks this server's /readyz (200 once
the app and its database answer) on 127.0.0.1:$PORT with a Host header that TRUSTED_HOSTS lets through,
and exits 0 or 1. Standard library only, so it costs a few milliseconds every interval (the slim image
has no curl, and importing the app would cost a second)."""

from __future__ import annotations

import os
import sys
import urllib.request


def probe_host(trusted_hosts: str) -> str:
    """The first host name TRUSTED_HOSTS lists exactly (a wildcard names none), else localhost."""
    names = [name.strip() for name in trusted_hosts.split(",") if name.strip() and "*" not in name]
    return names[0] if names else "localhost"


def main() -> int:
    url = f"http://127.0.0.1:{os.environ.get('PORT', '8000')}/readyz"
    request = urllib.request.Request(url, headers={"Host": probe_host(os.environ.get("TRUSTED_HOSTS", ""))})
    try:
        with urllib.request.urlopen(request, timeout=2) as response:
            return 0 if response.status == 200 else 1
    except OSError as exc:
        print(f"unhealthy: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
