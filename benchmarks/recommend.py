"""Latency of POST /recommend on the real server (one uvicorn worker, seeded SQLite catalog).

Prints p50/p95 of /recommend over a mix of workloads with max_nodes 16 (training/inference plan
search; and, separately, the serving deployment search of `task: "serving"`), the plans evaluated per
request and per second, and GET /healthz measured in the same run as the baseline. Two runs:
"cold" with the plan-search cache off (PLANNER_CACHE_SIZE=0: every request searches from scratch)
and "warm" with the default cache (a repeated workload, e.g. the results page, its CSV export and
its quote form, reuses the searches; prices are still applied fresh).

    .venv/bin/python benchmarks/recommend.py [--rounds 5]
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
GPT3_175B = {"layers": 96, "hidden": 12288, "heads": 96, "ffn": 49152, "vocab": 50257, "mlp": "gelu"}
MIX = [
    {"model": {"preset": "llama-2-7b"}, "task": "lora", "tokens": 1e8},
    {"model": {"preset": "llama-2-7b"}, "task": "full_finetune", "tokens": 1e9},
    {"model": {"preset": "llama-2-13b"}, "task": "full_finetune", "tokens": 1e9},
    {"model": {"preset": "llama-3-8b"}, "task": "qlora", "tokens": 1e8},
    {"model": {"preset": "llama-2-70b"}, "task": "full_finetune", "tokens": 1e9},
    {"model": {"preset": "llama-2-70b"}, "task": "qlora", "tokens": 1e8},
    {"model": {"preset": "mixtral-8x7b"}, "task": "lora", "tokens": 1e9},
    {"model": {"preset": "qwen2.5-7b"}, "task": "inference", "seq_len": 4096, "micro_batch": 16},
    {"model": GPT3_175B, "task": "pretrain", "tokens": 3e11, "constraints": {"deadline_days": 90}},
    {"model": {"params": 3e10}, "task": "pretrain", "tokens": 1e11},
]
# task "serving": SKU x TP x replicas for an offered load within latency targets (no plan cache involved).
SERVING_MIX = [
    {"model": {"preset": "llama-3.1-8b"}, "task": "serving",
     "serving": {"input_tokens": 1024, "output_tokens": 256, "requests_per_s": 10, "slo": {"tpot_ms": 60}}},
    {"model": {"preset": "llama-3.1-70b"}, "task": "serving", "weights": "fp8", "precision": "fp8",
     "serving": {"input_tokens": 2000, "output_tokens": 500, "requests_per_s": 20,
                 "slo": {"ttft_ms": 2000, "tpot_ms": 50}}},
    {"model": {"preset": "mixtral-8x7b"}, "task": "serving",
     "serving": {"input_tokens": 512, "output_tokens": 512, "requests_per_s": 5, "engine": "sglang"}},
    {"model": {"preset": "qwen2.5-72b"}, "task": "serving", "weights": "int4",
     "serving": {"input_tokens": 4000, "output_tokens": 300, "requests_per_s": 3, "slo": {"tpot_ms": 40}}},
]  # fmt: skip


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _start_server(database: Path, port: int, cache_size: int) -> subprocess.Popen:
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{database}",
        "PORT": str(port),
        "LOG_LEVEL": "warning",
        "PLANNER_CACHE_SIZE": str(cache_size),
        "RATE_LIMIT_PER_MINUTE": "0",
    }
    for command in ("migrate", "seed"):
        subprocess.run([sys.executable, "-m", "app", command], cwd=ROOT, env=env, check=True, capture_output=True)
    server = subprocess.Popen(
        [sys.executable, "-m", "app", "serve"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    for _ in range(200):
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return server
        except httpx.TransportError:
            time.sleep(0.05)
    server.kill()
    raise SystemExit("server did not start")


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    for label, cache_size in (("cold (PLANNER_CACHE_SIZE=0)", 0), ("warm (default cache)", 1024)):
        with tempfile.TemporaryDirectory() as tmp:
            port = _free_port()
            server = _start_server(Path(tmp) / "bench.db", port, cache_size)
            try:
                print(f"== {label}")
                run(f"http://127.0.0.1:{port}", args.rounds)
            finally:
                server.terminate()
                server.wait(timeout=10)


def run(base: str, rounds: int) -> None:
    with httpx.Client(base_url=base, timeout=60) as client:
        for body in MIX + SERVING_MIX:  # warm-up: imports, caches of per-model quantities
            client.post("/recommend", json=body).raise_for_status()
        serving = []
        for _ in range(rounds):
            for body in SERVING_MIX:
                started = time.perf_counter()
                client.post("/recommend", json=body).raise_for_status()
                serving.append(time.perf_counter() - started)
        health, latencies, evaluations = [], [], []
        for _ in range(rounds):
            for body in MIX:
                started = time.perf_counter()
                client.get("/healthz").raise_for_status()
                health.append(time.perf_counter() - started)
                started = time.perf_counter()
                response = client.post(
                    "/recommend", json=body | {"constraints": body.get("constraints", {}) | {"max_nodes": 16}}
                )
                latencies.append(time.perf_counter() - started)
                response.raise_for_status()
                search = response.json()["search"]
                evaluations.append(search["memory_evaluations"] + search["performance_evaluations"])
    total_s = sum(latencies)
    p50, p95 = _percentile(latencies, 0.5) * 1e3, _percentile(latencies, 0.95) * 1e3
    h50 = _percentile(health, 0.5) * 1e3
    print(f"POST /recommend  requests={len(latencies)}  workloads={len(MIX)}  max_nodes=16  one worker")
    print(f"  p50 {p50:7.1f} ms   p95 {p95:7.1f} ms   max {max(latencies) * 1e3:7.1f} ms")
    print(
        f"  plan evaluations per request: median {statistics.median(evaluations):.0f}, "
        f"max {max(evaluations)}; per second: {sum(evaluations) / total_s:,.0f}"
    )
    s50, s95 = _percentile(serving, 0.5) * 1e3, _percentile(serving, 0.95) * 1e3
    print(f"POST /recommend task=serving  requests={len(serving)}  workloads={len(SERVING_MIX)}")
    print(f"  p50 {s50:7.1f} ms   p95 {s95:7.1f} ms   max {max(serving) * 1e3:7.1f} ms")
    print(f"GET /healthz     p50 {h50:7.2f} ms   (baseline, same run)")
    print(f"  ratio /recommend p50 / /healthz p50 = {p50 / h50:.0f}x")


if __name__ == "__main__":
    main()
