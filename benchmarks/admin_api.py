"""Admin API latency over real HTTP: `python -m app serve --workers 2` on a fresh SQLite file (or
DATABASE_URL if set to PostgreSQL), one client, sequential requests. Prints p50/p95 per call.

    .venv/bin/python benchmarks/admin_api.py [--n 50]
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
SKU = "a100-40g-pcie-card"


def _cli(args: list[str], env: dict[str, str], stdin: str = "") -> str:
    done = subprocess.run(
        [sys.executable, "-m", "app", *args], cwd=ROOT, env=env, input=stdin, capture_output=True, text=True, check=True
    )
    return done.stdout


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _timed(samples: dict[str, list[float]], name: str, call) -> httpx.Response:
    started = time.perf_counter()
    response = call()
    samples.setdefault(name, []).append((time.perf_counter() - started) * 1000)
    assert response.status_code < 300, (name, response.status_code, response.text[:300])
    return response


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=50)
    n = parser.parse_args().n
    folder = tempfile.mkdtemp(prefix="gpu-sizer-admin-bench-")
    env = {
        **os.environ,
        "DATABASE_URL": os.environ.get("DATABASE_URL", f"sqlite:///{folder}/bench.db"),
        "PORT": str(_port()),
        "LOG_LEVEL": "warning",
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
    samples: dict[str, list[float]] = {}
    try:
        for _ in range(200):
            try:
                if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}) as client:
            for i in range(n):
                _timed(samples, "GET /admin/api/skus", lambda: client.get("/admin/api/skus"))
                version = _timed(samples, "GET /admin/api/skus/{id}", lambda: client.get(f"/admin/api/skus/{SKU}"))
                body = {"version": version.json()["version"], "notes": f"bench {i}"}
                _timed(
                    samples, "PATCH /admin/api/skus/{id}", lambda b=body: client.patch(f"/admin/api/skus/{SKU}", json=b)
                )
                # a price names the SKU's version, which the PATCH just moved on by one
                price = {"amount": f"{2800 + i}.00", "currency": "CNY", "version": body["version"] + 1}
                _timed(
                    samples,
                    "POST /admin/api/skus/{id}/prices",
                    lambda p=price: client.post(f"/admin/api/skus/{SKU}/prices", json=p),
                )
                _timed(samples, "GET /catalog/skus", lambda: client.get("/catalog/skus"))
                _timed(samples, "GET /admin/api/audit", lambda: client.get("/admin/api/audit"))
            for _ in range(max(5, n // 5)):
                doc = _timed(samples, "GET /admin/api/catalog/export", lambda: client.get("/admin/api/catalog/export"))
                _timed(
                    samples,
                    "POST /admin/api/catalog/import",
                    lambda d=doc.json(): client.post("/admin/api/catalog/import", json=d),
                )
        login = {"email": "bench@example.com", "password": "benchmark password"}
        for _ in range(5):
            with httpx.Client(base_url=base) as browser:
                page = browser.get("/admin/login").text
                csrf = page.split('name="csrf_token" value="', 1)[1].split('"', 1)[0]
                started = time.perf_counter()
                response = browser.post("/admin/login", data={**login, "csrf_token": csrf})
                samples.setdefault("POST /admin/login (argon2id verify)", []).append(
                    (time.perf_counter() - started) * 1000
                )
                assert response.status_code == 303
    finally:
        server.terminate()
        server.wait(timeout=20)
    print(f"database: {env['DATABASE_URL'].split('://')[0]}, 2 workers, sequential, n={n}")
    print(f"{'call':44} {'count':>5} {'p50 ms':>8} {'p95 ms':>8}")
    for name, values in samples.items():
        ordered = sorted(values)
        p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
        print(f"{name:44} {len(values):5d} {statistics.median(values):8.1f} {p95:8.1f}")


if __name__ == "__main__":
    main()
