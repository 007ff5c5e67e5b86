"""Webhook deliveries against a slow receiver do not stall requests: /healthz latency while 100 events are
delivered to a receiver that answers each after 1 s, beside the same probe with no deliveries (the
baseline, same server, same run), and how long the 100 deliveries take.

    .venv/bin/python benchmarks/webhooks.py                                   # SQLite, 1 worker process
    .venv/bin/python benchmarks/webhooks.py --database-url postgresql://postgres@127.0.0.1/bench_webhooks \\
        --workers 2                                                           # a fresh PostgreSQL database

The server is `python -m app serve` with its in-process delivery workers (WEBHOOKS_CONCURRENCY requests in
flight per process). The 100 quotes are issued before the endpoint is registered, then their 100
`quote.issued` events are written in one transaction (app.quotes.events.emit, as the quote service does),
so what is measured beside the baseline is the delivering alone. The probe asks /healthz every 20 ms from a
process of its own. Passes (exit 0) when /healthz p99 stays under HEALTH_P99_MS while delivering.
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

import httpx

# tests.servers imports tests/conftest.py, which imports Starlette's TestClient (unused here); its deprecation
# notice (pyproject.toml's filterwarnings says why the tests let it through) is noise in this output.
warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient` is deprecated")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from load import _fresh_database  # noqa: E402

from app.common.settings import normalise_database_url  # noqa: E402
from app.db.engine import build_engine, build_sessionmaker  # noqa: E402
from app.quotes import events, repository  # noqa: E402
from tests.quotes.helpers import a100_body  # noqa: E402
from tests.servers import app_cli, free_port, running_server  # noqa: E402
from tests.webhooks.receiver import receiving  # noqa: E402

EVENTS = 100
RECEIVER_DELAY_S = 1.0
HEALTH_P99_MS = 50.0
PROBE_EVERY_S = 0.02


def probe(base: str, seconds: float, out: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    latencies, misses = [], 0
    deadline = time.monotonic() + seconds
    with httpx.Client(base_url=base) as client:
        while time.monotonic() < deadline:
            started = time.monotonic()
            try:
                misses += client.get("/healthz", timeout=5).status_code != 200
            except httpx.HTTPError:
                misses += 1
            latencies.append((time.monotonic() - started) * 1000)
            time.sleep(PROBE_EVERY_S)
    out.put((latencies, misses))


def _start_probe(base: str, seconds: float) -> tuple[multiprocessing.Process, multiprocessing.Queue]:  # type: ignore[type-arg]
    context = multiprocessing.get_context("spawn")
    out = context.Queue()
    process = context.Process(target=probe, args=(base, seconds, out))
    process.start()
    return process, out


def _finish(process: multiprocessing.Process, out: multiprocessing.Queue) -> tuple[list[float], int]:  # type: ignore[type-arg]
    latencies, misses = out.get(timeout=600)
    process.join(timeout=10)
    return latencies, misses


def _p(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def _line(name: str, latencies: list[float], misses: int) -> str:
    return (
        f"{name:<28}{len(latencies):>8}{_p(latencies, 50):>9.1f}{_p(latencies, 99):>9.1f}"
        f"{max(latencies):>9.1f}{misses:>8}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database-url", help="a PostgreSQL URL (the database is dropped and created); default SQLite")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=20.0, help="probe length of each phase")
    args = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="bench-webhooks-")
    url = normalise_database_url(args.database_url) if args.database_url else f"sqlite:///{folder}/bench.db"
    if args.database_url:
        _fresh_database(url)
    env = {
        "DATABASE_URL": url,
        "PORT": str(free_port()),
        "ENV": "dev",
        "RATE_LIMIT_PER_MINUTE": "0",
        "QUOTES_PER_MINUTE": "0",
        "WEBHOOKS_ALLOW_PRIVATE": "true",  # the receiver is on 127.0.0.1
        "WEBHOOKS_POLL_S": "0.2",
    }
    for step in (["migrate"], ["seed"]):
        app_cli(step, env)
    app_cli(["create-admin", "bench@example.com", "--password-stdin"], env, "a long enough bench secret\n")
    token = app_cli(["create-token", "bench@example.com"], env).stdout.split()[-1]
    with receiving(delay_s=RECEIVER_DELAY_S) as receiver, running_server(env, workers=args.workers) as base:
        with httpx.Client(base_url=base, timeout=30) as client:
            ids = [client.post("/quotes", json=a100_body()).json()["id"] for _ in range(EVENTS)]
            baseline = _finish(*_start_probe(base, args.seconds))
            created = client.post(
                "/admin/api/webhooks",
                json={"url": receiver.url, "events": ["quote.issued"]},
                headers={"Authorization": f"Bearer {token}"},
            )
            receiver.secret = created.json()["secret"]
        engine = build_engine(url)
        started_probe = _start_probe(base, args.seconds)
        time.sleep(1.0)  # the probe runs before the events exist
        started = time.monotonic()
        with build_sessionmaker(engine).begin() as session:
            for public_id in ids:
                quote = repository.get_by_public_id(session, public_id)
                assert quote is not None
                events.emit(session, quote, "quote.issued")
        receiver.wait_for(EVENTS, timeout_s=600)
        delivered_s = time.monotonic() - started
        during = _finish(*started_probe)
        engine.dispose()
    header = f"{'/healthz':<28}{'probes':>8}{'p50 ms':>9}{'p99 ms':>9}{'max ms':>9}{'misses':>8}"
    database = "PostgreSQL" if args.database_url else "SQLite"
    print(f"webhooks: {EVENTS} events, receiver answering in {RECEIVER_DELAY_S:.0f} s, {database}, ", end="")
    print(f"{args.workers} worker process(es)")
    print(header)
    print(_line("baseline (no deliveries)", *baseline))
    print(_line("while delivering", *during))
    copies = max(receiver.delivered().values())
    print(f"{EVENTS} deliveries completed in {delivered_s:.1f} s ", end="")
    print(f"(each event received at most {copies}x; bad signatures: {receiver.bad_signatures})")
    passed = _p(during[0], 99) < HEALTH_P99_MS and during[1] == 0
    print(f"{'PASS' if passed else 'FAIL'}: /healthz p99 while delivering < {HEALTH_P99_MS:.0f} ms")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
