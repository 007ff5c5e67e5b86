"""Hostile bodies: /healthz and well-behaved clients while connections send crafted ~1 MiB JSON bodies as
fast as they can, against `python -m app serve --workers 2` on a fresh PostgreSQL database.

    .venv/bin/python benchmarks/hostile.py                     # 30 s per phase
    .venv/bin/python benchmarks/hostile.py --seconds 20        # a shorter run

Two phases in one run, on one server: the baseline (CLIENTS well-behaved clients and the /healthz probe
alone), then the same with HOSTILE connections sending the security review's bodies (bracket towers to an
unknown path and to the web accept form, a 300-digit integer among 340,000 objects to /estimate, a 1 MiB
string to /recommend, half a million zeros and a NaN to /quotes), back to back without waiting. Each
hostile request comes from an address of its own (X-Forwarded-For, trusted from 127.0.0.1), so neither the
rate limit nor the per-client body budget refuses it: what is measured is the bounded cost of each body
(`--hostile-address fixed` gives each connection one address instead, and the budget answers 429).
The rate limit is the default one (120 per minute and entry per client); each well-behaved client has its
own address and sends a request about every WELL_BEHAVED_PAUSE_S.

Passes (exit 0) when, with the hostile connections on, /healthz p99 < HEALTH_P99_MS and the well-behaved
clients see no error (no status >= 400, no transport error, no answer slower than HANG_S).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import multiprocessing
import os
import random
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from load import ROOT, _free_port, _fresh_database
from soak import health

sys.path.insert(0, str(ROOT))
from app.common.settings import normalise_database_url
from tests.quotes.helpers import a100_body

DEFAULT_DATABASE_URL = "postgresql://postgres@127.0.0.1:5432/wt_rel_a"
CLIENTS = 30
HOSTILE = 8
HEALTH_P99_MS = 100
HANG_S = 30
WELL_BEHAVED_PAUSE_S = 1.0  # 60 requests a minute per client: within the default limit of 120 per entry
JSON = {"content-type": "application/json"}


def hostile_bodies() -> list[tuple[str, bytes]]:
    """(path, body): the review's bodies, each about 1 MiB (MAX_BODY_BYTES), to the paths it sent them to."""
    towers = ("[" + ("[" * 30 + "]" * 30 + ",") * 17000 + "0]").encode()
    objects = ("[" + "{}," * 340_000 + "1" + "0" * 300 + "]").encode()
    string = json.dumps({"model": {"preset": "llama-2-7b"}, "task": "lora", "x": "a" * 1_000_000}).encode()
    zeros = ("[" + "0," * 500_000 + "NaN]").encode()
    return [
        ("/no-such-path", towers),
        ("/quote/x/accept", towers),
        ("/estimate", objects),
        ("/recommend", string),
        ("/quotes", zeros),
    ]


WELL_BEHAVED = [
    ("GET", "/catalog/skus", None),
    ("POST", "/estimate", {"model": {"preset": "llama-2-7b"}, "task": "lora", "hardware": {"gpu": "h100-80g-sxm"}}),
    ("POST", "/recommend", {"model": {"preset": "llama-2-7b"}, "task": "lora"}),
    ("POST", "/quotes", a100_body()),
    ("GET", "/catalog/gpus", None),
]


@dataclass
class Phase:
    name: str
    statuses: Counter = field(default_factory=Counter)
    latencies_ms: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    hostile: Counter = field(default_factory=Counter)
    hostile_bytes: int = 0
    health_ms: list[float] = field(default_factory=list)
    health_misses: int = 0


def _address(kind: str, n: int) -> str:
    return f"10.{kind}.{n // 250 % 250}.{n % 250}"


async def well_behaved(phase: Phase, base: str, number: int, deadline: float) -> None:
    rng = random.Random(number)
    headers = {"x-forwarded-for": f"10.1.0.{number}"}
    async with httpx.AsyncClient(base_url=base, timeout=HANG_S, headers=headers) as client:
        while time.monotonic() < deadline:
            method, path, body = rng.choice(WELL_BEHAVED)
            started = time.monotonic()
            try:
                response = await client.request(method, path, json=body)
                phase.statuses[f"{method} {path} {response.status_code}"] += 1
                if response.status_code >= 400:
                    phase.errors.append(f"{method} {path}: {response.status_code} {response.text[:120]}")
            except httpx.HTTPError as exc:
                phase.errors.append(f"{method} {path}: {type(exc).__name__}")
            phase.latencies_ms.append((time.monotonic() - started) * 1000)
            await asyncio.sleep(max(0.0, WELL_BEHAVED_PAUSE_S * rng.uniform(0.5, 1.5) - (time.monotonic() - started)))


async def hostile(phase: Phase, base: str, number: int, deadline: float, fixed_address: bool) -> None:
    bodies = itertools.cycle(hostile_bodies()[number % 5 :] + hostile_bodies()[: number % 5])
    counter = itertools.count(number * 1_000_000)
    async with httpx.AsyncClient(base_url=base, timeout=HANG_S) as client:
        while time.monotonic() < deadline:
            path, body = next(bodies)
            address = _address("2", number) if fixed_address else _address("3", next(counter))
            try:
                response = await client.post(path, content=body, headers={**JSON, "x-forwarded-for": address})
                phase.hostile[response.status_code] += 1
            except httpx.HTTPError as exc:
                phase.hostile[type(exc).__name__] += 1
            phase.hostile_bytes += len(body)


async def run_phase(name: str, base: str, seconds: float, hostile_connections: int, fixed_address: bool) -> Phase:
    phase = Phase(name)
    queue: multiprocessing.Queue = multiprocessing.Queue()
    probe = multiprocessing.Process(target=health, args=(base, seconds, queue, 10.0))
    probe.start()
    deadline = time.monotonic() + seconds
    tasks = [well_behaved(phase, base, n, deadline) for n in range(CLIENTS)]
    tasks += [hostile(phase, base, n, deadline, fixed_address) for n in range(hostile_connections)]
    await asyncio.gather(*tasks)
    phase.health_ms, phase.health_misses = queue.get(timeout=HANG_S + seconds)
    probe.join()
    return phase


def _p(values: list[float], q: int) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q / 100))] if ordered else float("nan")


def report(phase: Phase, seconds: float) -> None:
    answered = sum(phase.statuses.values())
    print(f"\n{phase.name}")
    print(
        f"  well-behaved: {CLIENTS} clients, {answered} requests ({answered / seconds:.1f}/s), "
        f"errors {len(phase.errors)}, p50 {_p(phase.latencies_ms, 50):.0f} ms, p99 {_p(phase.latencies_ms, 99):.0f} ms"
    )
    print(
        f"  /healthz: {len(phase.health_ms)} probes, misses {phase.health_misses}, "
        f"p50 {_p(phase.health_ms, 50):.1f} ms, p99 {_p(phase.health_ms, 99):.1f} ms, "
        f"max {max(phase.health_ms, default=0):.0f} ms"
    )
    if phase.hostile:
        sent = sum(phase.hostile.values())
        statuses = ", ".join(f"{status}: {n}" for status, n in sorted(phase.hostile.items(), key=str))
        print(
            f"  hostile: {sent} bodies ({sent / seconds:.1f}/s, {phase.hostile_bytes / seconds / 1e6:.2f} MB/s), "
            f"answers {statuses}"
        )
    for line in phase.errors[:10]:
        print(f"  ERROR {line}")


def _cli(args: list[str], env: dict[str, str], root: Path) -> None:
    subprocess.run([sys.executable, "-m", "app", *args], cwd=root, env=env, check=True, stdout=subprocess.DEVNULL)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30.0, help="length of each phase")
    parser.add_argument("--hostile", type=int, default=HOSTILE, help="hostile connections")
    parser.add_argument("--hostile-address", choices=["fresh", "fixed"], default="fresh")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--database-url", default=os.environ.get("HOSTILE_DATABASE_URL", DEFAULT_DATABASE_URL))
    parser.add_argument("--server-root", type=Path, default=ROOT, help="checkout whose app serves (another version)")
    args = parser.parse_args()
    database_url = normalise_database_url(args.database_url)
    _fresh_database(database_url)
    port = _free_port()
    env = {**os.environ, "DATABASE_URL": database_url, "PORT": str(port), "HOST": "127.0.0.1", "LOG_LEVEL": "error"}
    _cli(["migrate"], env, args.server_root)
    _cli(["seed"], env, args.server_root)
    process = subprocess.Popen(
        [sys.executable, "-m", "app", "serve", "--workers", str(args.workers)],
        cwd=args.server_root,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                if httpx.get(base + "/readyz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        fixed = args.hostile_address == "fixed"
        baseline = asyncio.run(run_phase("baseline (no hostile bodies)", base, args.seconds, 0, fixed))
        title = f"{args.hostile} hostile connections, {args.hostile_address} address per body"
        attacked = asyncio.run(run_phase(title, base, args.seconds, args.hostile, fixed))
    finally:
        process.terminate()
        process.wait(timeout=30)
    print(
        f"\nhostile bodies: serve --workers {args.workers} from {args.server_root}, PostgreSQL, "
        f"{args.seconds:.0f} s per phase"
    )
    report(baseline, args.seconds)
    report(attacked, args.seconds)
    passed = not attacked.errors and _p(attacked.health_ms, 99) < HEALTH_P99_MS and not attacked.health_misses
    print(f"\n{'PASS' if passed else 'FAIL'}: /healthz p99 < {HEALTH_P99_MS} ms and no well-behaved error under attack")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
