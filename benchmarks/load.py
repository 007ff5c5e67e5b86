"""Load test: a mixed workload from concurrent clients against a multi-worker server on PostgreSQL.

    .venv/bin/python benchmarks/load.py                     # 50 clients, 60 s, 2 workers (the README's figures)
    .venv/bin/python benchmarks/load.py --clients 20 --duration 10
    .venv/bin/python benchmarks/load.py --url http://127.0.0.1:8000   # an already running server

Without --url it creates (or empties) the PostgreSQL database named by --database-url, migrates and
seeds it, starts `python -m app serve --workers N` on a free loopback port (rate limiting left on,
with a limit no single benchmark client reaches, so its database round trip is measured too), runs
the load, and stops the server. Endpoints the server does not have (per its OpenAPI schema) are
skipped with a note. Prints requests/s, p50/p95/p99 per endpoint and the error count; exits 1 on errors.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import socket
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.common.settings import normalise_database_url  # noqa: E402

DEFAULT_DATABASE_URL = "postgresql://postgres@127.0.0.1:5432/gpu_sizer_load"
MODELS = ["llama-2-7b", "llama-3-8b", "llama-2-13b", "llama-3-70b"]


@dataclass(frozen=True)
class Endpoint:
    name: str
    method: str
    path: str  # as in the OpenAPI schema: the endpoint is skipped when the server lacks it
    weight: int
    expected: tuple[int, ...]
    body: object = None


def _recommend_body(rng: random.Random) -> dict:
    return {
        "model": {"preset": rng.choice(MODELS[:3])},
        "task": rng.choice(["lora", "full_finetune"]),
        "seq_len": rng.choice([2048, 4096]),
        "tokens": 1e9,
    }


def _estimate_body(rng: random.Random) -> dict:
    return {
        "model": {"preset": rng.choice(MODELS)},
        "task": rng.choice(["lora", "inference"]),
        "seq_len": 2048,
        "micro_batch": 1,
        "hardware": {"gpu": rng.choice(["h100-80g-sxm", "a100-80g-sxm"]), "gpus_per_node": 8},
        "plan": {"tp": 8},
    }


def _quote_body(rng: random.Random) -> dict:
    return {
        "sku_id": "h100-80g-sxm-8x",
        "quantity": rng.randint(1, 4),
        "term": rng.choice(["monthly", "annual"]),
        "customer": {"name": "Load Test", "company": "Bench Ltd", "email": "load@example.com"},
    }


ENDPOINTS = [
    Endpoint("POST /recommend", "POST", "/recommend", 3, (200,), _recommend_body),
    Endpoint("POST /estimate", "POST", "/estimate", 3, (200,), _estimate_body),
    Endpoint("GET /catalog/skus", "GET", "/catalog/skus", 2, (200,)),
    Endpoint("GET /catalog/gpus", "GET", "/catalog/gpus", 1, (200,)),
    Endpoint("POST /quotes", "POST", "/quotes", 1, (201,), _quote_body),
]


@dataclass
class Results:
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    samples: dict[str, str] = field(default_factory=dict)


async def _client(base_url: str, endpoints: list[Endpoint], deadline: float, results: Results, seed: int) -> None:
    rng = random.Random(seed)
    weights = [e.weight for e in endpoints]
    async with httpx.AsyncClient(base_url=base_url, timeout=30) as client:
        while time.perf_counter() < deadline:
            endpoint = rng.choices(endpoints, weights)[0]
            body = endpoint.body(rng) if callable(endpoint.body) else None
            started = time.perf_counter()
            try:
                response = await client.request(endpoint.method, endpoint.path, json=body)
                ok = response.status_code in endpoint.expected
                failure = f"{response.status_code} {response.text[:200]}"
            except httpx.HTTPError as exc:
                ok, failure = False, f"{type(exc).__name__}: {exc}"
            results.latencies[endpoint.name].append(time.perf_counter() - started)
            if not ok:
                results.errors[endpoint.name] += 1
                results.samples.setdefault(endpoint.name, failure)


def _percentile(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] if len(values) > 1 else values[0]


def report(results: Results, seconds: float, skipped: list[str], clients: int, workers: int | None) -> int:
    total = sum(len(v) for v in results.latencies.values())
    errors = sum(results.errors.values())
    where = f"{workers} workers" if workers else "the given server"
    print(
        f"\n{clients} clients, {seconds:.0f} s, {where}: {total} requests, {total / seconds:.1f} req/s, {errors} errors"
    )
    print(f"{'endpoint':<22}{'requests':>9}{'req/s':>8}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}{'errors':>8}")
    for name, values in results.latencies.items():
        ms = [v * 1000 for v in values]
        print(
            f"{name:<22}{len(ms):>9}{len(ms) / seconds:>8.1f}{_percentile(ms, 50):>9.0f}{_percentile(ms, 95):>9.0f}"
            f"{_percentile(ms, 99):>9.0f}{results.errors[name]:>8}"
        )
    for name in skipped:
        print(f"{name:<22}  skipped: the server has no such endpoint yet")
    for name, sample in results.samples.items():
        print(f"first error on {name}: {sample}")
    return 1 if errors else 0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _fresh_database(url: str) -> None:
    parsed = make_url(url)
    admin = create_engine(parsed.set(database="postgres"), isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'DROP DATABASE IF EXISTS "{parsed.database}" WITH (FORCE)'))
        connection.execute(text(f'CREATE DATABASE "{parsed.database}"'))
    admin.dispose()


def start_server(database_url: str, workers: int) -> tuple[subprocess.Popen, str]:
    port = _free_port()
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "PORT": str(port),
        "HOST": "127.0.0.1",
        "ENV": "dev",
        "LOG_LEVEL": "warning",
        "RATE_LIMIT_PER_MINUTE": "1000000",
        "PLANNER_SEARCHES_PER_CLIENT": "0",  # one client address runs the whole mix: no per-client share
        "QUOTES_PER_MINUTE": "0",  # every client here is one address: the per-client quote limit would answer
    }
    for step in ("migrate", "seed"):
        subprocess.run([sys.executable, "-m", "app", step], cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)
    process = subprocess.Popen(
        [sys.executable, "-m", "app", "serve", "--workers", str(workers)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base_url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            if httpx.get(base_url + "/readyz", timeout=2).status_code == 200:
                return process, base_url
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    process.terminate()
    raise SystemExit("the server did not become ready")


async def run(base_url: str, clients: int, duration: float) -> tuple[Results, list[str], float]:
    paths = httpx.get(base_url + "/openapi.json", timeout=10).json()["paths"]
    present = [e for e in ENDPOINTS if e.method.lower() in paths.get(e.path, {})]
    skipped = [e.name for e in ENDPOINTS if e not in present]
    results = Results()
    started = time.perf_counter()
    deadline = started + duration
    await asyncio.gather(*(_client(base_url, present, deadline, results, seed) for seed in range(clients)))
    return results, skipped, time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--duration", type=float, default=60.0, help="seconds")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--database-url", default=os.environ.get("LOAD_DATABASE_URL", DEFAULT_DATABASE_URL))
    parser.add_argument("--url", help="load an already running server instead of starting one")
    args = parser.parse_args()
    process = None
    base_url = args.url
    if base_url is None:
        database_url = normalise_database_url(args.database_url)
        _fresh_database(database_url)
        process, base_url = start_server(database_url, args.workers)
    try:
        cpu = time.process_time()
        results, skipped, seconds = asyncio.run(run(base_url, args.clients, args.duration))
        cpu = time.process_time() - cpu
        print(f"load generator: {cpu:.1f} CPU-s in {seconds:.0f} s ({cpu / seconds:.0%} of one core, same machine)")
    finally:
        if process is not None:
            process.terminate()
            process.wait(timeout=30)
    return report(results, seconds, skipped, args.clients, None if args.url else args.workers)


if __name__ == "__main__":
    sys.exit(main())
