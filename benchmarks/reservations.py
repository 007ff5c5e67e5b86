"""Reservations under a burst: 200 concurrent POST /quotes against a small inventory on PostgreSQL.

    .venv/bin/python benchmarks/reservations.py                       # 200 requests, 5 servers, 2 workers
    .venv/bin/python benchmarks/reservations.py --requests 100 --units 3

Creates (or empties) its own PostgreSQL database (--database-url; never the tests' `test` database), migrates and
seeds it, gives the H100 server SKU an inventory of --units servers in singapore, starts `python -m app serve
--workers 2` (rate limits off: one client address sends the whole burst), and sends the burst twice from as many
threads, all released together: first for singapore (tracked: each quote holds one or two servers, so most are
refused 409 capacity_taken), then, as the baseline measured in the same run, the same burst for los-angeles (no
inventory figure: nothing is counted or held). Prints the answers by status, the servers issued against the
inventory (oversold must be 0), the 5xx count of the reservations burst (must be 0) and p50/p99 latency of each
burst. Exits 1 when anything is oversold or the reservations burst has a 5xx answer.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.common.settings import normalise_database_url  # noqa: E402

DEFAULT_DATABASE_URL = "postgresql://postgres@127.0.0.1:5432/gpu_sizer_reservations"
H100 = "h100-80g-sxm-8x"
BARRIER_TIMEOUT_S = 60  # every thread is released together, or the run fails instead of hanging


def _fresh_database(url: str) -> None:
    parsed = make_url(url)
    if parsed.database in (None, "test", "postgres"):
        raise SystemExit(f"refusing to empty the database {parsed.database!r}: name a scratch database of its own")
    server = create_engine(parsed.set(database="postgres"), isolation_level="AUTOCOMMIT")
    with server.connect() as connection:
        connection.execute(text(f'DROP DATABASE IF EXISTS "{parsed.database}" WITH (FORCE)'))
        connection.execute(text(f'CREATE DATABASE "{parsed.database}"'))
    server.dispose()


def _drop_database(url: str) -> None:
    parsed = make_url(url)
    server = create_engine(parsed.set(database="postgres"), isolation_level="AUTOCOMMIT")
    with server.connect() as connection:
        connection.execute(text(f'DROP DATABASE IF EXISTS "{parsed.database}" WITH (FORCE)'))
    server.dispose()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _prepare(url: str, units: int) -> None:
    env = {**os.environ, "DATABASE_URL": url, "LOG_LEVEL": "warning"}
    for command in ("migrate", "seed"):
        subprocess.run([sys.executable, "-m", "app", command], cwd=ROOT, env=env, check=True, capture_output=True)
    engine = create_engine(url)
    with engine.begin() as connection:
        connection.execute(
            text(
                "INSERT INTO sku_availability (sku_id, region, units_available, updated_at, version) "
                "SELECT id, 'singapore', :units, now(), 1 FROM skus WHERE slug = :slug"
            ),
            {"units": units, "slug": H100},
        )
    engine.dispose()


def _serve(url: str, port: int, workers: int) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "DATABASE_URL": url,
        "PORT": str(port),
        "HOST": "127.0.0.1",
        "LOG_LEVEL": "warning",
        "RATE_LIMIT_PER_MINUTE": "0",
    }
    command = [sys.executable, "-m", "app", "serve", "--workers", str(workers)]
    server = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(300):
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return server
        except httpx.TransportError:
            time.sleep(0.1)
    server.kill()
    raise SystemExit("the server did not start")


def _burst(base: str, count: int, region: str) -> list[tuple[int, float, int]]:
    """(status, seconds, servers asked) of `count` quotes sent at once, one or two servers each."""
    barrier = threading.Barrier(count, timeout=BARRIER_TIMEOUT_S)

    def post(index: int) -> tuple[int, float, int]:
        quantity = 1 + index % 2
        body = {"sku_id": H100, "quantity": quantity, "term": "monthly", "months": 1, "region": region}
        body["customer"] = {"name": f"Client {index}", "email": f"client{index}@example.org"}
        with httpx.Client(base_url=base, timeout=120) as client:
            barrier.wait()
            started = time.perf_counter()
            status = client.post("/quotes", json=body).status_code
            return status, time.perf_counter() - started, quantity

    with ThreadPoolExecutor(max_workers=count) as pool:
        return list(pool.map(post, range(count)))


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _report(label: str, answers: list[tuple[int, float, int]]) -> int:
    statuses = Counter(status for status, _s, _q in answers)
    latencies = [seconds for _status, seconds, _q in answers]
    errors = sum(n for status, n in statuses.items() if status >= 500)
    p50, p99 = _percentile(latencies, 0.5) * 1e3, _percentile(latencies, 0.99) * 1e3
    print(f"{label}: {dict(sorted(statuses.items()))}  5xx {errors}  p50 {p50:.0f} ms  p99 {p99:.0f} ms")
    return errors


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--database-url", default=os.environ.get("RESERVATIONS_DATABASE_URL", DEFAULT_DATABASE_URL))
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--units", type=int, default=5, help="servers of the inventory in singapore")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    url = normalise_database_url(args.database_url)
    _fresh_database(url)
    try:
        _prepare(url, args.units)
        port = _free_port()
        server = _serve(url, port, args.workers)
        try:
            base = f"http://127.0.0.1:{port}"
            tracked = _burst(base, args.requests, "singapore")
            baseline = _burst(base, args.requests, "los-angeles")
        finally:
            server.terminate()
            server.wait(timeout=20)
        engine = create_engine(url)
        with engine.connect() as connection:
            held = connection.execute(text("SELECT coalesce(sum(units), 0) FROM reservations")).scalar_one()
        engine.dispose()
    finally:
        _drop_database(url)
    issued = sum(quantity for status, _s, quantity in tracked if status == 201)
    oversold = max(0, issued - args.units)
    print(
        f"{args.requests} concurrent POST /quotes, {args.workers} workers, PostgreSQL, inventory {args.units} servers"
    )
    errors = _report("  tracked region (singapore)        ", tracked)
    baseline_errors = _report("  baseline, untracked (los-angeles) ", baseline)
    print(f"  servers issued {issued} of {args.units} (held in reservations: {held}); oversold {oversold}")
    print(f"  5xx answers to the reservations burst: {errors}")
    if baseline_errors:
        print(
            "  (the baseline's 503s + Retry-After: every one of its quotes is written, so they queue on the quote "
            "number's lock and the threads past the request's lock budget, DB_LOCK_TIMEOUT_MS; a refused quote of the "
            "reservations burst is answered before it queues there)"
        )
    sys.exit(1 if oversold or errors or held != issued else 0)


if __name__ == "__main__":
    main()
