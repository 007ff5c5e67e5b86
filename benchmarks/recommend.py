"""Latency of POST /recommend on the real server (one uvicorn worker, seeded SQLite catalog).

Prints p50/p95 of /recommend over a mix of workloads with max_nodes 16 (training/inference plan
search; and, separately, the serving deployment search of `task: "serving"`), the plans evaluated per
request and per second, and GET /healthz measured in the same run as the baseline. Three runs:
"cold" with the plan-search cache off (PLANNER_CACHE_SIZE=0: every request searches from scratch),
"warm" with the default cache (a repeated workload, e.g. the results page, its CSV export and
its quote form, reuses the searches; prices are still applied fresh), and "cold, large catalog":
a synthetic 40-SKU catalog over 4 regions (the 3 seeded SKUs and 37 more across 7 GPU types,
node and card rental, with and without an InfiniBand fabric) searched with max_nodes 64.
Targets: cold p95 <= 100 ms on the seeded catalog, <= 300 ms on the large one.

`--skus 500 --only-large` runs only the large catalog, with 500 SKUs, twice: plan cache off, and
the default cache (where the first request of each workload is the cold one). The planner's time
budget (PLANNER_TIME_BUDGET_MS, default 3 s) bounds each search; the run reports how many responses
said they stopped early (`stopped_early`, SKUs left in `rejected` with code `time_budget`), the
first request of each workload, and GET /healthz polled every 50 ms from a second client while the
searches run (one worker: does a long search hold the health check?).

    .venv/bin/python benchmarks/recommend.py [--rounds 5] [--skus 40] [--only-large] [--serving]

`--serving` times the serving requests alone; with `--baseline-tree DIR` it serves a second source tree beside
this one and sends each serving request to both in alternation (before and after in the same run), polling
/healthz of this tree meanwhile:

    rm -rf /tmp/base && mkdir /tmp/base && git archive main | tar -x -C /tmp/base
    .venv/bin/python benchmarks/recommend.py --serving --baseline-tree /tmp/base --rounds 5
    .venv/bin/python benchmarks/recommend.py --serving --baseline-tree /tmp/base --rounds 5 --only-large

Without `--serving`, `--baseline-tree` does the same with the training mix (MIX). `--tracked` gives both servers an
inventory on every SKU and region (TRACKED_UNITS units) and issues QUOTES_HELD quotes on each before timing, so
this tree counts what they hold (app.planner.availability) on every request:

    .venv/bin/python benchmarks/recommend.py --baseline-tree /tmp/base --tracked --rounds 5
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from decimal import Decimal
from pathlib import Path

import httpx

from app.catalog.models import GpuType, Sku, SkuAvailability, SkuPrice, TermDiscount
from app.db.engine import build_engine, build_sessionmaker

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
    {"model": {"preset": "llama-3.1-70b"}, "task": "serving",
     "serving": {"input_tokens": 1024, "output_tokens": 256, "concurrency": 64}},
    {"model": {"preset": "llama-3.1-405b"}, "task": "serving",  # no server holds it: pipelines across servers
     "serving": {"input_tokens": 1024, "output_tokens": 256, "requests_per_s": 2}},
]  # fmt: skip


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


LARGE_GPUS = (
    # (GPU type, name, link, cards per node, host RAM GiB, price per unit per month CNY, rented by)
    ("a100-40g-pcie", "NVIDIA A100 40GB PCIe", "pcie4", 8, 512, "2600.00", "card"),
    ("a100-80g-pcie", "NVIDIA A100 80GB PCIe", "pcie4", 8, 1024, "4200.00", "card"),
    ("a100-80g-sxm", "NVIDIA A100 80GB SXM", "nvlink3", 8, 1024, "28000.00", "node"),
    ("h100-80g-pcie", "NVIDIA H100 80GB PCIe", "pcie5", 8, 1024, "7000.00", "card"),
    ("h100-80g-sxm", "NVIDIA H100 80GB SXM", "nvlink4", 8, 2048, "95000.00", "node"),
    ("h200-141g-sxm", "NVIDIA H200 141GB SXM", "nvlink4", 8, 2048, "120000.00", "node"),
    ("l40s-48g", "NVIDIA L40S 48GB", "pcie4", 8, 512, "3000.00", "card"),
)
LARGE_REGIONS = ("shenzhen", "singapore", "los-angeles", "frankfurt")


def _large_catalog(database: Path, skus: int) -> None:
    """SKUs beside the seeded 3 up to `skus`: every GPU type in every region, node SKUs with and without
    a fabric, prices varied by region so the ranking has real choices."""
    engine = build_engine(f"sqlite:///{database}")
    with build_sessionmaker(engine)() as session:
        types = {t.slug: t for t in session.query(GpuType).all()}
        for index in range(max(skus - 3, 0)):
            slug, name, link, cards, ram, price, unit = LARGE_GPUS[index % len(LARGE_GPUS)]
            region = LARGE_REGIONS[(index // len(LARGE_GPUS)) % len(LARGE_REGIONS)]
            fabric = "ib-ndr-400" if unit == "node" and index % 2 == 0 else None
            gpu_type = types.get(slug) or GpuType(slug=slug, name=name)
            types[slug] = gpu_type
            sku = Sku(
                slug=f"bench-{slug}-{region}-{index}",
                name=f"{name} server in {region}",
                gpu_type=gpu_type,
                rental_unit=unit,
                gpus_per_node=cards,
                card_counts=[1, 2, 4, 8] if unit == "card" else [cards],
                intra_node_link=link,
                interconnect=link,
                host_cpu="",
                host_ram_gib=ram,
                host_nvme_tb="",
                network="10 Gbps",
                inter_node_fabric=fabric,
                infiniband_addon=fabric is not None,
                regions=[region],
                indicative_price=False,
                notes="",
                status="active",
            )
            session.add(sku)
            amount = int(Decimal(price) * 100 * (100 + 5 * (index % 5)) // 100)
            session.add(SkuPrice(sku=sku, amount_minor=amount, currency="CNY", note="benchmark"))
            session.add(TermDiscount(sku=sku, term="monthly", discount_bp=0))
            session.add(TermDiscount(sku=sku, term="annual", discount_bp=1500))
        session.commit()
    engine.dispose()


TRACKED_UNITS = 64  # per SKU and region: enough that the quotes below leave every option available
QUOTES_HELD = 12  # quotes issued before timing (--tracked), each holding one unit of a SKU


def _track_inventory(database: Path) -> None:
    """An inventory row on every SKU and region (the table exists in both trees)."""
    engine = build_engine(f"sqlite:///{database}")
    with build_sessionmaker(engine)() as session:
        for sku in session.query(Sku).all():
            for region in sku.regions:
                session.add(SkuAvailability(sku_pk=sku.id, region=region, units_available=TRACKED_UNITS))
        session.commit()
    engine.dispose()


def _hold_quotes(client: httpx.Client) -> None:
    """QUOTES_HELD quotes over the catalog's SKUs, one unit each (this tree holds their units)."""
    skus = [s for s in client.get("/catalog/skus").raise_for_status().json() if s.get("price")]
    for index in range(QUOTES_HELD):
        sku = skus[index % len(skus)]
        quantity = sku["card_counts"][0] if sku["rental_unit"] == "card" else 1
        body = {"sku_id": sku["id"], "quantity": quantity, "term": "monthly", "months": 1 + index % 3}
        client.post("/quotes", json=body | {"customer": {"name": "Bench", "email": "bench@example.org"}})


def _start_server(
    database: Path, port: int, cache_size: int, large_skus: int = 0, root: Path = ROOT, tracked: bool = False
) -> subprocess.Popen:
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{database}",
        "PORT": str(port),
        "LOG_LEVEL": "warning",
        "PLANNER_CACHE_SIZE": str(cache_size),
        "RATE_LIMIT_PER_MINUTE": "0",
        "PLANNER_SEARCHES_PER_CLIENT": "0",  # one client address runs the whole mix: no per-client share
    }
    for command in ("migrate", "seed"):
        subprocess.run([sys.executable, "-m", "app", command], cwd=root, env=env, check=True, capture_output=True)
    if large_skus:
        _large_catalog(database, large_skus)
    if tracked:
        _track_inventory(database)
    server = subprocess.Popen(
        [sys.executable, "-m", "app", "serve"], cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
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
    parser.add_argument("--skus", type=int, default=40, help="size of the synthetic large catalog")
    parser.add_argument("--only-large", action="store_true", help="run only the large catalog")
    parser.add_argument("--serving", action="store_true", help="time only the task=serving requests")
    parser.add_argument("--tracked", action="store_true", help="with --baseline-tree: inventory and held quotes")
    parser.add_argument(
        "--baseline-tree",
        type=Path,
        help="a second source tree (e.g. `git archive main | tar -x -C DIR`) served beside this one; "
        "the two servers take the serving mix in alternation, round by round, so both meet the same moments of a "
        "shared machine",
    )
    args = parser.parse_args()
    if args.baseline_tree:
        mix = SERVING_MIX if args.serving else MIX
        compare_serving(args.baseline_tree, args.rounds, args.skus if args.only_large else 0, mix, args.tracked)
        return
    runs = (
        ("cold (PLANNER_CACHE_SIZE=0)", 0, 0, 16),
        ("warm (default cache)", 1024, 0, 16),
        (f"cold, synthetic {args.skus}-SKU 4-region catalog", 0, args.skus, 64),
        (f"default cache, synthetic {args.skus}-SKU 4-region catalog", 1024, args.skus, 64),
    )
    for label, cache_size, large_skus, max_nodes in runs[2:] if args.only_large else runs[:3]:
        with tempfile.TemporaryDirectory() as tmp:
            port = _free_port()
            server = _start_server(Path(tmp) / "bench.db", port, cache_size, large_skus)
            try:
                print(f"== {label}")
                if args.serving:
                    run_serving(f"http://127.0.0.1:{port}", args.rounds)
                else:
                    run(f"http://127.0.0.1:{port}", args.rounds, max_nodes)
            finally:
                server.terminate()
                server.wait(timeout=10)


class _HealthPoller:
    """GET /healthz every 50 ms from its own client while the main loop runs its searches."""

    def __init__(self, base: str) -> None:
        self.base, self.latencies, self.failures = base, [], 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)

    def _poll(self) -> None:
        with httpx.Client(base_url=self.base, timeout=10) as client:
            while not self._stop.wait(0.05):
                started = time.perf_counter()
                try:
                    client.get("/healthz").raise_for_status()
                    self.latencies.append(time.perf_counter() - started)
                except httpx.HTTPError:
                    self.failures += 1

    def __enter__(self) -> _HealthPoller:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join()


def _time_serving(client: httpx.Client, rounds: int) -> list[float]:
    serving = []
    for _ in range(rounds):
        for body in SERVING_MIX:
            started = time.perf_counter()
            client.post("/recommend", json=body).raise_for_status()
            serving.append(time.perf_counter() - started)
    return serving


def _print_serving(serving: list[float], what: str = "serving") -> None:
    s50, s95 = _percentile(serving, 0.5) * 1e3, _percentile(serving, 0.95) * 1e3
    print(f"POST /recommend {what}  requests={len(serving)}")
    print(f"  p50 {s50:7.1f} ms   p95 {s95:7.1f} ms   max {max(serving) * 1e3:7.1f} ms")


def run_serving(base: str, rounds: int) -> None:
    """The serving requests alone (warm-up once each, then `rounds` of the mix)."""
    with httpx.Client(base_url=base, timeout=60) as client:
        for body in SERVING_MIX:
            client.post("/recommend", json=body).raise_for_status()
        _print_serving(_time_serving(client, rounds))


def _cpu_s(server: subprocess.Popen) -> float:
    """CPU seconds (user + system) the server process has used so far (Linux /proc; clock ticks of 10 ms, so read
    over many requests: the mean per request is what is printed)."""
    fields = Path(f"/proc/{server.pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def compare_serving(
    baseline: Path, rounds: int, large_skus: int = 0, mix: list[dict] = SERVING_MIX, tracked: bool = False
) -> None:
    """The serving mix on the seeded catalog (or, with `--only-large`, the synthetic large one with max_nodes 64),
    plan cache off, against a baseline tree in the same run: each body goes to the baseline server, then to this
    one, round after round; GET /healthz of this server is polled every 50 ms meanwhile. Besides wall time, the
    CPU time each server used per request (a shared machine's load stretches the wall time, not the CPU time)."""
    what = "serving" if mix is SERVING_MIX else "training mix"  # named before the large catalog copies the mix
    if large_skus:
        mix = [body | {"constraints": body.get("constraints", {}) | {"max_nodes": 64}} for body in mix]
    with tempfile.TemporaryDirectory() as tmp:
        ports = {"baseline": _free_port(), "this tree": _free_port()}
        roots = {"baseline": baseline.resolve(), "this tree": ROOT}
        servers = {
            name: _start_server(Path(tmp) / f"{name}.db", ports[name], 0, large_skus, root=roots[name], tracked=tracked)
            for name in ports
        }
        times: dict[str, list[float]] = {name: [] for name in ports}
        cpu: dict[str, float] = dict.fromkeys(ports, 0.0)
        try:
            clients = {
                name: httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) for name, port in ports.items()
            }
            for client in clients.values() if tracked else ():
                _hold_quotes(client)
            for body in mix:  # warm-up, once each
                for client in clients.values():
                    client.post("/recommend", json=body).raise_for_status()
            with _HealthPoller(f"http://127.0.0.1:{ports['this tree']}") as health:
                for _ in range(rounds):
                    for body in mix:
                        for name, client in clients.items():
                            used = _cpu_s(servers[name])
                            started = time.perf_counter()
                            client.post("/recommend", json=body).raise_for_status()
                            times[name].append(time.perf_counter() - started)
                            cpu[name] += _cpu_s(servers[name]) - used
        finally:
            for server in servers.values():
                server.terminate()
                server.wait(timeout=10)
    catalog = f"synthetic {large_skus}-SKU catalog, max_nodes 64" if large_skus else "seeded catalog"
    held = f", every SKU tracked ({TRACKED_UNITS} units a region) with {QUOTES_HELD} quotes held" if tracked else ""
    print(f"== cold (PLANNER_CACHE_SIZE=0), {catalog}{held}, {rounds} rounds, alternating servers")
    for name, values in times.items():
        print(f"{name:>10}: ", end="")
        _print_serving(values, what)
        print(f"  server CPU time per request: mean {cpu[name] / len(values) * 1e3:7.1f} ms")
    h50, h99 = _percentile(health.latencies, 0.5) * 1e3, _percentile(health.latencies, 0.99) * 1e3
    print(
        f"GET /healthz (this tree, polled meanwhile)  p50 {h50:6.2f} ms  p99 {h99:6.2f} ms  failures {health.failures}"
    )


def _stopped(responses: list[dict]) -> str:
    skipped = [sum(r["code"] == "time_budget" for r in result["rejected"]) for result in responses]
    stopped = sum(result["stopped_early"] for result in responses)
    return (
        f"stopped early (time budget): {stopped} of {len(responses)} responses; SKUs not searched per response: "
        f"median {statistics.median(skipped):.0f}, max {max(skipped)}"
    )


def run(base: str, rounds: int, max_nodes: int = 16) -> None:
    mix = [body | {"constraints": body.get("constraints", {}) | {"max_nodes": max_nodes}} for body in MIX]
    with httpx.Client(base_url=base, timeout=60) as client, _HealthPoller(base) as poller:
        first, firsts = [], []
        for body in mix:  # the first request of each workload: nothing of it in the plan cache yet
            started = time.perf_counter()
            response = client.post("/recommend", json=body)
            first.append(time.perf_counter() - started)
            firsts.append(response.raise_for_status().json())
        for body in SERVING_MIX:  # warm-up: imports, caches of per-model quantities
            client.post("/recommend", json=body).raise_for_status()
        serving = _time_serving(client, rounds)
        health, latencies, evaluations, results = [], [], [], []
        for _ in range(rounds):
            for body in mix:
                started = time.perf_counter()
                client.get("/healthz").raise_for_status()
                health.append(time.perf_counter() - started)
                started = time.perf_counter()
                response = client.post("/recommend", json=body)
                latencies.append(time.perf_counter() - started)
                response.raise_for_status()
                results.append(response.json())
                search = results[-1]["search"]
                evaluations.append(search["memory_evaluations"] + search["performance_evaluations"])
    total_s = sum(latencies)
    p50, p95 = _percentile(latencies, 0.5) * 1e3, _percentile(latencies, 0.95) * 1e3
    h50 = _percentile(health, 0.5) * 1e3
    print(f"POST /recommend  requests={len(latencies)}  workloads={len(MIX)}  max_nodes={max_nodes}  one worker")
    print(f"  p50 {p50:7.1f} ms   p95 {p95:7.1f} ms   max {max(latencies) * 1e3:7.1f} ms")
    print(
        f"  plan evaluations per request: median {statistics.median(evaluations):.0f}, "
        f"max {max(evaluations)}; per second: {sum(evaluations) / total_s:,.0f}"
    )
    print(f"  {_stopped(results)}")
    f50, f95 = _percentile(first, 0.5) * 1e3, _percentile(first, 0.95) * 1e3
    print(f"first request of each workload  p50 {f50:7.1f} ms   p95 {f95:7.1f} ms   max {max(first) * 1e3:7.1f} ms")
    print(f"  the very first after start (catalog cache built): {first[0] * 1e3:.0f} ms; {_stopped(firsts)}")
    _print_serving(serving)
    print(f"GET /healthz     p50 {h50:7.2f} ms   (baseline, same run)")
    print(f"  ratio /recommend p50 / /healthz p50 = {p50 / h50:.0f}x")
    polled = poller.latencies
    print(
        f"GET /healthz polled during the searches: {len(polled)} requests, {poller.failures} failed; "
        f"p50 {_percentile(polled, 0.5) * 1e3:.1f} ms  p99 {_percentile(polled, 0.99) * 1e3:.1f} ms  "
        f"max {max(polled) * 1e3:.1f} ms"
    )


if __name__ == "__main__":
    main()
