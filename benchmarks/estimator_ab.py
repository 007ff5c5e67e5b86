"""CPU time per plan of estimate_memory and of estimate_memory + estimate_performance, this checkout against another
(a worktree of main, say), measured in one run: one worker process per checkout, each importing `app` from its own
tree, asked for a round in turn, round after round, so both meet the same moments of a shared machine; each side's
figure is its quickest round (time.process_time, the least disturbed by other processes).

Run: .venv/bin/python benchmarks/estimator_ab.py /work/wt/base [--rounds 15] [--repeats 3]
The plan mix is benchmarks/estimator.py's, with the per-shape caches warm as in its timed loops; the first pass over
it, every cache empty, is printed too (one sample per side: noisier).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from estimator import plan_mix

from app.estimator.memory import estimate_memory  # the worker's: PYTHONPATH names its checkout
from app.estimator.performance import estimate_performance

HERE = Path(__file__).resolve().parent


def worker(repeats: int) -> None:
    """Answer each line on stdin with one round's CPU seconds per plan, as JSON."""
    mix = plan_mix()
    cpu = time.process_time()
    for model, workload, plan, cluster in mix:
        estimate_memory(model, workload, plan, cluster)
        estimate_performance(model, workload, plan, cluster)
    cold = (time.process_time() - cpu) / len(mix)
    print(json.dumps({"cold": cold, "plans": len(mix)}), flush=True)
    for _ in sys.stdin:
        cpu = time.process_time()
        for _ in range(repeats):
            for model, workload, plan, cluster in mix:
                estimate_memory(model, workload, plan, cluster)
        memory = (time.process_time() - cpu) / repeats / len(mix)
        cpu = time.process_time()
        for _ in range(repeats):
            for model, workload, plan, cluster in mix:
                estimate_performance(model, workload, plan, cluster)
        performance = (time.process_time() - cpu) / repeats / len(mix)
        print(json.dumps({"memory": memory, "performance": performance}), flush=True)


def _start(tree: Path, repeats: int) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return subprocess.Popen(
        [sys.executable, str(Path(__file__).resolve()), "--worker", "--repeats", str(repeats)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        cwd="/",  # not a checkout: `app` comes from PYTHONPATH only
    )


def _ask(process: subprocess.Popen[str]) -> dict[str, float]:
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write("\n")
    process.stdin.flush()
    answer: dict[str, float] = json.loads(process.stdout.readline())
    return answer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base", type=Path, nargs="?", help="the other checkout's root (its `app` is imported)")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--repeats", type=int, default=3, help="passes over the mix per round and side")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.repeats)
        return
    if args.base is None:
        parser.error("give the other checkout's root")
    sides = {"base": args.base.resolve(), "this": HERE.parent}
    processes = {name: _start(tree, args.repeats) for name, tree in sides.items()}
    first = {}
    for name, process in processes.items():
        assert process.stdout is not None
        first[name] = json.loads(process.stdout.readline())
    best: dict[str, dict[str, float]] = {name: {"memory": 1e9, "performance": 1e9} for name in sides}
    for round_ in range(args.rounds):
        order = list(processes) if round_ % 2 == 0 else list(reversed(processes))
        for name in order:
            for key, value in _ask(processes[name]).items():
                best[name][key] = min(best[name][key], value)
    for process in processes.values():
        assert process.stdin is not None
        process.stdin.close()
        process.wait(timeout=30)
    print(f"plan mix: {first['this']['plans']} plans; quickest of {args.rounds} rounds of {args.repeats} passes each")
    for name, tree in sides.items():
        memory, performance = best[name]["memory"] * 1e6, best[name]["performance"] * 1e6
        print(
            f"{name:>4} ({tree}): memory {memory:.2f} us/plan, performance {performance:.2f} us/plan, both "
            f"{memory + performance:.2f} us/plan; first pass (caches empty) {first[name]['cold'] * 1e6:.1f} us/plan"
        )
    base, this = best["base"], best["this"]
    for key in ("memory", "performance"):
        print(f"{key}: {100 * (this[key] / base[key] - 1):+.1f} %")
    both = (this["memory"] + this["performance"]) / (base["memory"] + base["performance"])
    print(f"memory + performance: {100 * (both - 1):+.1f} %")


if __name__ == "__main__":
    main()
