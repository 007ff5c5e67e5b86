"""What an API key costs a request, over real HTTP: `python -m app serve --workers 2` on a fresh SQLite file (or
DATABASE_URL if set to PostgreSQL), one client, sequential requests. The same POST /recommend (answered from the
planner's cache after the first, so the key's work is most of the difference) alternates without and with a key,
measured in the same run; then GET /quotes pages through the key's quotes. Prints p50/p95 per call.

A key adds: the rate limiter's lookup of the key's HMAC (app.http.ratelimit), and the route's (app.delivery.deps), each
an indexed read on a connection of its own, and at most once a minute the last-used write.

    .venv/bin/python benchmarks/apikeys.py [--n 100]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from admin_api import ROOT, _cli, _port  # benchmarks/ is a folder of scripts, not a package

RECOMMEND = {"model": {"preset": "llama-3.1-8b"}, "task": "lora", "tokens": 1e8}
QUOTE = {"sku_id": "a100-40g-pcie-card", "quantity": 1, "term": "monthly", "months": 1}
SCOPES = ["recommend", "quotes:write", "quotes:read"]


def _timed(samples: dict[str, list[float]], name: str, call: Callable[[], httpx.Response]) -> httpx.Response:
    started = time.perf_counter()
    response = call()
    samples.setdefault(name, []).append((time.perf_counter() - started) * 1000)
    assert response.status_code < 300, (name, response.status_code, response.text[:300])
    return response


def _measure(base: str, token: str, n: int) -> dict[str, list[float]]:
    samples: dict[str, list[float]] = {}
    admin = {"Authorization": f"Bearer {token}"}
    body = {"name": "bench", "organisation": "Bench", "scopes": SCOPES, "rate_limit_per_minute": 100_000}
    key = httpx.post(f"{base}/admin/api/keys", json=body, headers=admin).json()["key"]
    keyed = {"Authorization": f"Bearer {key}"}
    with httpx.Client(base_url=base, timeout=60) as client:
        client.post("/recommend", json=RECOMMEND).raise_for_status()  # fills the planner's cache
        for _ in range(n):
            _timed(samples, "POST /recommend, anonymous", lambda: client.post("/recommend", json=RECOMMEND))
            _timed(
                samples, "POST /recommend, with a key", lambda: client.post("/recommend", json=RECOMMEND, headers=keyed)
            )
        for i in range(n):
            customer = {"name": "Bench", "company": f"Company {i % 7}", "email": f"buyer{i % 10}@example.com"}
            _timed(
                samples,
                "POST /quotes, with a key",
                lambda c=customer: client.post("/quotes", json={**QUOTE, "customer": c}, headers=keyed),
            )
        for _ in range(n // 10):
            cursor = None
            while True:
                params = {"limit": 20, **({"cursor": cursor} if cursor else {})}
                page = _timed(
                    samples, "GET /quotes (20 a page)", lambda p=params: client.get("/quotes", params=p, headers=keyed)
                )
                cursor = page.json()["next_cursor"]
                if cursor is None:
                    break
            _timed(
                samples,
                "GET /quotes?customer_email=…",
                lambda: client.get("/quotes", params={"customer_email": "buyer3@example.com"}, headers=keyed),
            )
    return samples


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=100)
    n = parser.parse_args().n
    folder = tempfile.mkdtemp(prefix="gpu-sizer-keys-bench-")
    env = {
        **os.environ,
        "DATABASE_URL": os.environ.get("DATABASE_URL", f"sqlite:///{folder}/bench.db"),
        "PORT": str(_port()),
        "LOG_LEVEL": "warning",
        "RATE_LIMIT_PER_MINUTE": "100000",  # both kinds of request go through the limiter, neither is refused
        "PLANNER_SEARCHES_PER_CLIENT": "0",  # one client address runs the whole mix: no per-client share
        "QUOTES_PER_MINUTE": "0",
    }
    _cli(["migrate"], env)
    _cli(["seed"], env)
    _cli(["create-admin", "bench@example.com", "--password-stdin"], env, "benchmark password\n")
    token = _cli(["create-token", "bench@example.com"], env).strip().splitlines()[-1]
    server = subprocess.Popen(
        [sys.executable, "-m", "app", "serve", "--workers", "2"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{env['PORT']}"
    try:
        for _ in range(300):
            try:
                if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        samples = _measure(base, token, n)
    finally:
        server.terminate()
        server.wait(timeout=20)
    print(f"database: {env['DATABASE_URL'].split('://')[0]}, 2 workers, sequential, n={n}")
    print(f"{'call':34} {'count':>5} {'p50 ms':>8} {'p95 ms':>8}")
    for name, values in samples.items():
        ordered = sorted(values)
        p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
        print(f"{name:34} {len(values):5d} {statistics.median(values):8.1f} {p95:8.1f}")
    baseline, keyed = (statistics.median(samples[f"POST /recommend, {k}"]) for k in ("anonymous", "with a key"))
    print(f"a key's cost on POST /recommend (p50, same run): {keyed - baseline:+.1f} ms")


if __name__ == "__main__":
    main()
