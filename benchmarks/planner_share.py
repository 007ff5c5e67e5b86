"""One client's burst of plan searches against everyone else: another client's /estimate and /healthz while one
address keeps BURST expensive /recommend bodies in flight, with the planner's share per client off (the baseline,
PLANNER_SEARCHES_PER_CLIENT=0) and on (its default), each on a fresh `python -m app serve --workers 2`.

    .venv/bin/python benchmarks/planner_share.py                 # 15 s per phase
    .venv/bin/python benchmarks/planner_share.py --seconds 30

The burst comes from one address (X-Forwarded-For 10.9.0.1, which uvicorn trusts from 127.0.0.1) and sends each
body as soon as the last answered, varying `tokens` so no answer is cached; the other client (10.9.0.2) sends a
small /estimate every LIGHT_PAUSE_S; /healthz is polled every HEALTH_PAUSE_S. The rate limit is the default. Review
R6-1 measured the baseline's effect by hand: the other client's 10 ms /estimate at 6.5 s median, /healthz p99 1 s.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

if str(Path(__file__).resolve().parents[1]) not in sys.path:
    sys.path.append(str(Path(__file__).resolve().parents[1]))

from tests.http.examples import ESTIMATE_BODY

ROOT = Path(__file__).resolve().parents[1]
BURST = 20
LIGHT_PAUSE_S = 0.2
HEALTH_PAUSE_S = 0.1
HEAVY = {"model": {"preset": "llama-3.1-405b"}, "task": "pretrain", "seq_len": 8192, "constraints": {"max_nodes": 64}}
LIGHT = ESTIMATE_BODY  # a small /estimate: one LoRA step of a 7B model on one H100


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _phase(base: str, seconds: float) -> dict[str, list[float] | dict[int, int]]:
    deadline = time.monotonic() + seconds
    light: list[float] = []
    health: list[float] = []
    heavy: dict[int, int] = {}
    counter = iter(range(10**9))

    async def burst(client: httpx.AsyncClient) -> None:
        while time.monotonic() < deadline:
            body = {**HEAVY, "tokens": 1e12 + next(counter)}
            response = await client.post("/recommend", json=body, headers={"x-forwarded-for": "10.9.0.1"})
            heavy[response.status_code] = heavy.get(response.status_code, 0) + 1
            if response.status_code == 429:
                await asyncio.sleep(float(response.headers.get("retry-after", "1")))

    async def timed(samples: list[float], pause: float, call: object) -> None:
        while time.monotonic() < deadline:
            start = time.perf_counter()
            response = await call()  # type: ignore[operator]
            samples.append((time.perf_counter() - start) * 1e3)
            assert response.status_code == 200, response.text
            await asyncio.sleep(pause)

    limits = httpx.Limits(max_connections=BURST + 4)
    async with httpx.AsyncClient(base_url=base, timeout=120, limits=limits) as client:
        await asyncio.gather(
            *(burst(client) for _ in range(BURST)),
            timed(
                light,
                LIGHT_PAUSE_S,
                lambda: client.post("/estimate", json=LIGHT, headers={"x-forwarded-for": "10.9.0.2"}),
            ),
            timed(health, HEALTH_PAUSE_S, lambda: client.get("/healthz")),
        )
    return {"light": light, "health": health, "heavy": heavy}


def _p(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] if len(values) > 1 else values[0]


def _serve(share: int, seconds: float) -> dict[str, list[float] | dict[int, int]]:
    with tempfile.TemporaryDirectory() as tmp:
        port = _free_port()
        env = {
            **os.environ,
            "DATABASE_URL": f"sqlite:///{tmp}/share.db",
            "PORT": str(port),
            "HOST": "127.0.0.1",
            "LOG_LEVEL": "error",
            "PLANNER_SEARCHES_PER_CLIENT": str(share),
        }
        for args in (["migrate"], ["seed"]):
            subprocess.run(
                [sys.executable, "-m", "app", *args], cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL
            )
        server = subprocess.Popen(
            [sys.executable, "-m", "app", "serve", "--workers", "2"],
            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        base = f"http://127.0.0.1:{port}"
        try:
            for _ in range(600):
                try:
                    if httpx.get(base + "/readyz", timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                time.sleep(0.1)
            return asyncio.run(_phase(base, seconds))
        finally:
            server.terminate()
            server.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=15.0)
    args = parser.parse_args()
    print(f"one address keeps {BURST} /recommend searches in flight; serve --workers 2, SQLite, {args.seconds:.0f} s")
    for title, share in (("baseline, no share (PLANNER_SEARCHES_PER_CLIENT=0)", 0), ("share on (2 per client)", 2)):
        found = _serve(share, args.seconds)
        light, health, heavy = found["light"], found["health"], found["heavy"]
        assert isinstance(light, list) and isinstance(health, list) and isinstance(heavy, dict)
        print(f"\n{title}")
        print(
            f"  other client's /estimate  n={len(light):4d}  p50 {_p(light, 50):8.1f} ms  p95 {_p(light, 95):8.1f} ms"
        )
        print(
            f"  /healthz                  n={len(health):4d}  p50 {_p(health, 50):8.1f} ms  "
            f"p99 {_p(health, 99):8.1f} ms"
        )
        print(f"  the burst's answers       {dict(sorted(heavy.items()))}")


if __name__ == "__main__":
    main()
