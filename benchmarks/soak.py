"""Soak: mixed traffic with writes, hostile requests and a database outage against `serve --workers 2`
on a fresh PostgreSQL database; checks that nothing hangs, nothing fails but the outage's 503s, /healthz
stays quick, and every accepted quote is stored unchanged.

    .venv/bin/python benchmarks/soak.py                  # 50 clients, 300 s, 10 hostile requests/s
    .venv/bin/python benchmarks/soak.py --seconds 60     # a shorter run

- 50 clients, about 30 % writes: POST /quotes, POST /quotes/{id}/accept of their own quotes, admin edits
  through an API token (availability and SKU notes, with their versions: 409 on a lost race is expected);
  the rest /recommend, /estimate, /catalog/skus and GET /quotes/{id}.
- 10 hostile requests per second: 8 simultaneous accepts of one fresh quote, pasted configs with absurd
  counts, JSON nested 500 deep, NUL characters, non-finite numbers, a 2 MiB body.
- An outage from 40 % to 50 % of the run: the database refuses connections (ALLOW_CONNECTIONS false, and
  the server's sessions are terminated); answers then may be 503 with Retry-After, for the window plus
  OUTAGE_GRACE_S after it.
- /healthz polled every 100 ms from its own connection.
Passes (exit 0) when: 0 hangs (no answer within HANG_S), 0 responses 5xx other than 503 with Retry-After
inside the outage window, /healthz p99 < 200 ms, and every accepted quote reads back unchanged.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import random
import statistics
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

sys.path.insert(0, str(Path(__file__).resolve().parent))
from load import ROOT, _free_port, _fresh_database

sys.path.insert(0, str(ROOT))
from app.common.settings import normalise_database_url
from tests.hf_configs import QWEN15_MOE

DEFAULT_DATABASE_URL = "postgresql://postgres@127.0.0.1:5432/gpu_sizer_soak"
HANG_S = 30  # a request unanswered this long is a hang
OUTAGE_GRACE_S = 10  # after the database is back, pools reconnect (pre-ping) within this long
HEALTH_P99_MS = 200
OVERSIZE = "hostile: 2 MiB body"
PASSWORD = "soak-admin-password-2026-long"
CARD = "a100-40g-pcie-card"
QWEN_MOE = {**QWEN15_MOE, "num_hidden_layers": 1_000_000_000_000}  # hostile: an absurd layer count


@dataclass
class Soak:
    start: float
    outage: tuple[float, float]
    statuses: Counter = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)  # 5xx outside the outage, 5xx without Retry-After, hangs
    hangs: int = 0
    outage_503: int = 0
    health_ms: list[float] = field(default_factory=list)
    accepted: dict[str, dict] = field(default_factory=dict)  # public id -> the quote as accepted
    writes: int = 0  # client operations that write
    operations: int = 0  # client operations (an admin edit is a GET and a write)
    requests: int = 0

    def in_outage(self, sent: float, answered: float) -> bool:
        return sent <= self.outage[1] + OUTAGE_GRACE_S and answered >= self.outage[0]

    async def call(
        self, client: httpx.AsyncClient, kind: str, method: str, url: str, **kwargs
    ) -> httpx.Response | None:
        sent = time.monotonic()
        self.requests += 1
        try:
            response = await client.request(method, url, timeout=HANG_S, **kwargs)
        except httpx.TimeoutException:
            self.hangs += 1
            self.failures.append(f"{kind}: no answer within {HANG_S} s")
            return None
        except httpx.HTTPError as exc:
            if kind == OVERSIZE:  # answered 413 and closed the connection while the body was still going
                self.statuses[(kind, "closed")] += 1
            else:
                self.failures.append(f"{kind}: {type(exc).__name__}")
            return None
        answered = time.monotonic()
        self.statuses[(kind, response.status_code)] += 1
        if response.status_code >= 500:
            ok_outage = (
                response.status_code == 503 and response.headers.get("retry-after") and self.in_outage(sent, answered)
            )
            if ok_outage:
                self.outage_503 += 1
            else:
                self.failures.append(f"{kind}: {response.status_code} {response.text[:160]}")
        return response


def _quote_body(rng: random.Random) -> dict:
    return {
        "sku_id": CARD,
        "quantity": rng.choice([1, 2, 4]),
        "term": "monthly",
        "months": rng.randint(1, 6),
        "customer": {"name": "Soak", "company": "Bench Ltd", "email": "soak@example.com"},
    }


async def customer(soak: Soak, base: str, token: str, deadline: float, seed: int) -> None:
    rng = random.Random(seed)
    mine: list[str] = []
    admin = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(base_url=base) as client:
        while time.monotonic() < deadline:
            soak.operations += 1
            roll = rng.random()
            if roll < 0.15:
                soak.writes += 1
                r = await soak.call(client, "POST /quotes", "POST", "/quotes", json=_quote_body(rng))
                if r is not None and r.status_code == 201:
                    mine.append(r.json()["id"])
            elif roll < 0.25 and mine:
                soak.writes += 1
                public_id = mine.pop(rng.randrange(len(mine)))
                r = await soak.call(client, "POST /quotes/{id}/accept", "POST", f"/quotes/{public_id}/accept")
                if r is not None and r.status_code == 200:
                    soak.accepted[public_id] = r.json()
            elif roll < 0.30:
                soak.writes += 1
                await admin_edit(soak, client, admin, rng)
            elif roll < 0.55:
                body = {"model": {"preset": rng.choice(["llama-2-7b", "llama-2-13b"])}, "task": "lora", "tokens": 1e9}
                await soak.call(client, "POST /recommend", "POST", "/recommend", json=body)
            elif roll < 0.70:
                body = {
                    "model": {"preset": "llama-2-7b"},
                    "task": "lora",
                    "seq_len": 2048,
                    "micro_batch": 1,
                    "hardware": {"gpu": "h100-80g-sxm", "gpus_per_node": 8},
                }
                await soak.call(client, "POST /estimate", "POST", "/estimate", json=body)
            elif roll < 0.90 or not mine:
                await soak.call(client, "GET /catalog/skus", "GET", "/catalog/skus")
            else:
                await soak.call(client, "GET /quotes/{id}", "GET", f"/quotes/{rng.choice(mine)}")


async def admin_edit(soak: Soak, client: httpx.AsyncClient, headers: dict, rng: random.Random) -> None:
    sku = await soak.call(client, "GET /admin/api/skus/{id}", "GET", f"/admin/api/skus/{CARD}", headers=headers)
    if sku is None or sku.status_code != 200:
        return
    current = sku.json()
    if rng.random() < 0.5:
        region = current["regions"][0]
        row = next((a for a in current.get("availability", []) if a["region"] == region), None)
        body = {"units_available": rng.randint(0, 64), "version": row["version"] if row else None}
        url = f"/admin/api/skus/{CARD}/availability/{region}"
        await soak.call(client, "PUT availability", "PUT", url, json=body, headers=headers)
    else:
        body = {"version": current["version"], "notes": f"soak edit {rng.randint(0, 10**6)}"}
        await soak.call(
            client, "PATCH /admin/api/skus/{id}", "PATCH", f"/admin/api/skus/{CARD}", json=body, headers=headers
        )


def _deep(levels: int) -> dict:
    value: dict = {"name": "x"}
    for _ in range(levels):
        value = {"a": value}
    return value


async def hostile(soak: Soak, base: str, deadline: float, per_second: int) -> None:
    """About `per_second` hostile requests each second, several kinds in turn."""
    async with httpx.AsyncClient(base_url=base) as client:
        turn = 0
        while time.monotonic() < deadline:
            second = time.monotonic()
            turn += 1
            if turn % 2:
                r = await soak.call(client, "hostile: quote", "POST", "/quotes", json=_quote_body(random.Random(turn)))
                if r is not None and r.status_code == 201:
                    public_id = r.json()["id"]
                    accepts = [
                        soak.call(client, "hostile: concurrent accept", "POST", f"/quotes/{public_id}/accept")
                        for _ in range(per_second - 2)
                    ]
                    answers = await asyncio.gather(*accepts)
                    done = next((a for a in answers if a is not None and a.status_code == 200), None)
                    if done is not None:
                        soak.accepted[public_id] = done.json()
            else:
                model = {"hf_config": QWEN_MOE}
                calls = [
                    ("hostile: pasted config", "POST", "/recommend", {"json": {"model": model, "task": "lora"}}),
                    (
                        "hostile: deep json",
                        "POST",
                        "/quotes",
                        {"json": {**_quote_body(random.Random(0)), "x": _deep(500)}},
                    ),
                    (
                        "hostile: NUL",
                        "POST",
                        "/quotes",
                        {"json": {**_quote_body(random.Random(1)), "customer": {"name": "a\x00b", "email": "a@b.co"}}},
                    ),
                    (
                        "hostile: non-finite",
                        "POST",
                        "/recommend",
                        {"content": b'{"model": {"preset": "llama-2-7b"}, "task": "lora", "tokens": 1e400}'},
                    ),
                    (OVERSIZE, "POST", "/recommend", {"content": b"[" + b"1," * (1 << 20) + b"1]"}),
                    ("hostile: results link", "GET", "/results", {"params": {"hf_config": json.dumps(QWEN_MOE)}}),
                ]
                await asyncio.gather(
                    *(
                        soak.call(client, kind, method, url, headers={"content-type": "application/json"}, **kw)
                        for kind, method, url, kw in calls * 2
                    )
                )
            await asyncio.sleep(max(0.0, 1 - (time.monotonic() - second)))


def health(base: str, seconds: float, out: multiprocessing.Queue, timeout: float = 5.0) -> None:
    """Polls /healthz every 100 ms for `seconds`, each probe missing after `timeout` s; puts (latencies in ms, misses)
    on `out`. In a process of its own, so the load generator's busy event loop does not slow the probe."""
    latencies, misses = [], 0
    deadline = time.monotonic() + seconds
    with httpx.Client(base_url=base) as client:
        while time.monotonic() < deadline:
            started = time.monotonic()
            try:
                ok = client.get("/healthz", timeout=timeout).status_code == 200
            except httpx.HTTPError:
                ok = False
            latencies.append((time.monotonic() - started) * 1000)
            misses += not ok
            time.sleep(0.1)
    out.put((latencies, misses))


def _set_connections(database_url: str, allowed: bool) -> None:
    name = make_url(database_url).database
    engine = create_engine(make_url(database_url).set(database="postgres"), isolation_level="AUTOCOMMIT")
    with engine.connect() as connection:
        connection.execute(text(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS {str(allowed).lower()}'))
        if not allowed:
            connection.execute(
                text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = :d"), {"d": name}
            )
    engine.dispose()


async def outage(soak: Soak, database_url: str) -> None:
    await asyncio.sleep(max(0.0, soak.outage[0] - time.monotonic()))
    await asyncio.to_thread(_set_connections, database_url, False)
    await asyncio.sleep(max(0.0, soak.outage[1] - time.monotonic()))
    await asyncio.to_thread(_set_connections, database_url, True)


def _cli(args: list[str], env: dict[str, str], stdin: str = "") -> str:
    done = subprocess.run(
        [sys.executable, "-m", "app", *args], cwd=ROOT, env=env, input=stdin, capture_output=True, text=True, check=True
    )
    return done.stdout


def _check_accepted(soak: Soak, base: str) -> list[str]:
    problems = []
    with httpx.Client(base_url=base, timeout=30) as client:
        for public_id, accepted in soak.accepted.items():
            now = client.get(f"/quotes/{public_id}")
            if now.status_code != 200:
                problems.append(f"{public_id}: {now.status_code}")
                continue
            stored = now.json()
            for key in ("number", "status", "accepted_at", "total", "lines"):
                if stored.get(key) != accepted.get(key):
                    problems.append(f"{public_id}: {key} was {accepted.get(key)!r}, now {stored.get(key)!r}")
    return problems


def _p(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] if len(values) > 1 else values[0]


async def soak_run(base: str, token: str, database_url: str, seconds: float, clients: int, hostile_rate: int) -> Soak:
    start = time.monotonic()
    soak = Soak(start, (start + 0.4 * seconds, start + 0.5 * seconds))
    deadline = start + seconds
    results: multiprocessing.Queue = multiprocessing.Queue()
    probe = multiprocessing.Process(target=health, args=(base, seconds, results))
    probe.start()
    await asyncio.gather(
        *(customer(soak, base, token, deadline, seed) for seed in range(clients)),
        hostile(soak, base, deadline, hostile_rate),
        outage(soak, database_url),
    )
    soak.health_ms, misses = await asyncio.to_thread(results.get)
    probe.join()
    soak.failures += ["/healthz: no 200 within 5 s"] * misses
    return soak


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=300.0)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--hostile-per-second", type=int, default=10)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--database-url", default=os.environ.get("SOAK_DATABASE_URL", DEFAULT_DATABASE_URL))
    args = parser.parse_args()
    database_url = normalise_database_url(args.database_url)
    _fresh_database(database_url)
    port = _free_port()
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "PORT": str(port),
        "HOST": "127.0.0.1",
        "LOG_LEVEL": "error",
        "RATE_LIMIT_PER_MINUTE": "0",  # the soak is one client address: the limit would answer for it
        "PLANNER_SEARCHES_PER_CLIENT": "0",  # one client address runs the whole mix: no per-client share
    }
    _cli(["migrate"], env)
    _cli(["seed"], env)
    _cli(["create-admin", "soak@example.com", "--password-stdin"], env, PASSWORD + "\n")
    token = _cli(["create-token", "soak@example.com"], env).split()[-1]
    process = subprocess.Popen(
        [sys.executable, "-m", "app", "serve", "--workers", str(args.workers)],
        cwd=ROOT,
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
        soak = asyncio.run(soak_run(base, token, database_url, args.seconds, args.clients, args.hostile_per_second))
        problems = _check_accepted(soak, base)
    finally:
        process.terminate()
        process.wait(timeout=30)
    p99 = _p(soak.health_ms, 99)
    print(
        f"\nsoak: {args.clients} clients + {args.hostile_per_second} hostile/s, {args.seconds:.0f} s, "
        f"{args.workers} workers, PostgreSQL; outage {0.4 * args.seconds:.0f}-{0.5 * args.seconds:.0f} s"
    )
    print(
        f"requests {soak.requests} ({soak.requests / args.seconds:.1f}/s); client operations {soak.operations}, "
        f"writes {soak.writes / max(1, soak.operations):.0%} of them"
    )
    print(
        f"hangs {soak.hangs}; failures (5xx but the outage's 503 + Retry-After, errors): {len(soak.failures)}; "
        f"outage 503s {soak.outage_503}"
    )
    print(
        f"/healthz: {len(soak.health_ms)} probes, p50 {_p(soak.health_ms, 50):.1f} ms, p99 {p99:.1f} ms, "
        f"max {max(soak.health_ms):.0f} ms"
    )
    print(f"accepted quotes {len(soak.accepted)}, changed or missing afterwards: {len(problems)}")
    for (kind, status), n in sorted(soak.statuses.items(), key=str):
        print(f"  {kind:<32} {status}  {n}")
    for line in (soak.failures + problems)[:20]:
        print(f"  FAIL {line}")
    return 0 if not soak.failures and not problems and p99 < HEALTH_P99_MS else 1


if __name__ == "__main__":
    sys.exit(main())
