"""Golden outputs of the training estimator: every figure, warning and assumption of estimate_memory, memory_breakdown,
the four measured readings and estimate_performance (ranges, goodput) over benchmarks/estimator.py's plan mix, a
seeded random mix of every plan lever, and (optionally) the inputs the estimator and planner tests pass.

A change meant to make the estimator faster must leave them identical: the reprs hold every float exactly (repr
round-trips), so equal files mean bit-identical outputs. Each input is evaluated twice, in order and then in reverse
order with every cache warm, and the two passes must agree: a per-shape cache keyed on too few fields shows up there.

Run:
  .venv/bin/python benchmarks/estimator_golden.py --record-tests /tmp/inputs.pickle   # once: the tests' inputs
  .venv/bin/python benchmarks/estimator_golden.py --inputs /tmp/inputs.pickle --write /tmp/golden.txt   # before
  .venv/bin/python benchmarks/estimator_golden.py --inputs /tmp/inputs.pickle --check /tmp/golden.txt   # after
"""

from __future__ import annotations

import argparse
import contextlib
import pickle
import random
import sys
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from estimator import plan_mix

import app.estimator.memory as memory_package
import app.estimator.memory.estimate as memory_estimate
import app.estimator.performance as performance
from app.estimator.hardware import get_gpu
from app.estimator.memory import MEASURED, estimate_memory, measured_bytes, memory_breakdown
from app.estimator.performance import estimate_performance
from app.estimator.presets import get_preset
from app.estimator.specs import Cluster, EstimatorError, LoraSpec, ModelSpec, Plan, Workload

Case = tuple[ModelSpec, Workload, Plan, Cluster]
ROOT = Path(__file__).resolve().parent.parent

MODELS = ("llama-3.1-8b", "qwen2.5-7b", "mixtral-8x7b", "deepseek-v2-lite", "gpt2-xl", "gemma-2-9b", "llama-3.1-70b")
GPUS = ("h100-80g-sxm", "a100-40g-sxm", "l40s-48g", "v100-32g-sxm", "b200-180g-sxm")


def _workloads() -> list[Workload]:
    lora, dropout = LoraSpec(rank=16), LoraSpec(rank=64, targets=("q", "v"), dropout=0.1)
    return [
        Workload(task="full_finetune", seq_len=4096, global_batch=256, tokens=1e9),
        Workload(task="pretrain", precision="fp8", seq_len=8192, global_batch=1024, tokens=1e11),
        Workload(task="continued_pretrain", seq_len=2048, global_batch=None, tokens=None),
        Workload(task="full_finetune", precision="fp32", optimizer="sgd", seq_len=1024, global_batch=64),
        Workload(task="full_finetune", mixed_precision=False, optimizer="adafactor", seq_len=2048, global_batch=30),
        Workload(task="full_finetune", optimizer="adamw_8bit", seq_len=512, global_batch=8, varied_lengths=True),
        Workload(task="lora", seq_len=4096, global_batch=64, tokens=1e8, lora=lora, varied_lengths=True),
        Workload(task="lora", optimizer="lion", seq_len=2048, global_batch=16, tokens=1e7, lora=dropout),
        Workload(task="qlora", seq_len=2048, global_batch=16, tokens=1e7, lora=lora),
        Workload(task="qlora", seq_len=4096, global_batch=32, lora=lora, paged_optimizer=False, kbit_upcast=False),
        Workload(task="qlora", precision="fp16", seq_len=1024, lora=LoraSpec(double_quant=False), varied_lengths=True),
        Workload(task="inference", seq_len=8192, tokens=1e8),
        Workload(task="inference", precision="fp8", kv_cache_precision="fp8", seq_len=32768, output_tokens=1024),
    ]


def _clusters() -> list[Cluster]:
    out = []
    for gpu in GPUS:
        spec = get_gpu(gpu)
        out.append(Cluster(gpu=spec, gpus_per_node=8, nodes=1, host_ram_gib=1024.0))
        out.append(Cluster(gpu=spec, gpus_per_node=1, nodes=1))
        out.append(Cluster(gpu=spec, gpus_per_node=4, nodes=1, host_ram_gib=256.0, memory_headroom=0.1))
    h100 = get_gpu("h100-80g-sxm")
    out.append(Cluster(gpu=h100, gpus_per_node=8, nodes=4, inter_node_gbps=3200.0, inter_node_fabric="ib-ndr-400"))
    out.append(Cluster(gpu=h100, gpus_per_node=8, nodes=2, inter_node_gbps=100.0, host_ram_gib=2048.0))
    out.append(Cluster(gpu=get_gpu("a100-80g-sxm"), gpus_per_node=8, nodes=2, inter_node_fabric="eth-100"))
    out.append(Cluster(gpu=get_gpu("h100-80g-pcie"), gpus_per_node=2, nodes=1, intra_node_link="pcie5"))
    return out


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def _random_plan(rng: random.Random, model: ModelSpec, cluster: Cluster) -> Plan:
    gpus = cluster.gpus_per_node * cluster.nodes
    tp = rng.choice([d for d in _divisors(gpus) if d <= 8])
    pp = rng.choice([d for d in _divisors(gpus // tp) if d <= 8])
    cp = rng.choice([d for d in _divisors(gpus // (tp * pp)) if d <= 4]) if rng.random() < 0.2 else 1
    dp = gpus // (tp * pp * cp)
    if rng.random() < 0.05:  # a plan that does not fill the cluster (refused by the speed estimate)
        dp = max(1, dp // 2)
    ep = rng.choice([d for d in _divisors(model.experts) if d <= dp * tp] or [1]) if model.is_moe else 1
    zero = rng.choice((0, 1, 2, 3))
    offload = rng.choice(("none", "none", "optimizer", "optimizer_and_params" if zero == 3 else "none"))
    compiled = rng.random() < 0.3
    loss = rng.choice(("standard", "standard", "chunked", "fused", "compiled", "no_upcast"))
    flash = rng.random() < 0.85
    shard = rng.choice([d for d in _divisors(dp)]) if zero == 3 and rng.random() < 0.3 else None
    return Plan(
        dp=dp,
        tp=tp,
        pp=pp,
        cp=cp,
        ep=ep,
        zero_stage=zero,
        offload=offload,
        recompute=rng.choice(("none", "selective", "full")),
        sequence_parallel=tp > 1 and rng.random() < 0.7,
        flash_attention=flash,
        attention="flash" if flash else "eager",
        micro_batch=rng.choice((1, 2, 4, 8)),
        virtual_stages=rng.choice((1, 1, 2)) if pp > 1 else 1,
        chunked_loss=loss == "chunked",
        fused_loss=loss == "fused",
        compiled_loss=loss == "compiled" and compiled,
        no_upcast_loss=loss == "no_upcast",
        fp8_params=rng.random() < 0.1,
        activation_offload=rng.random() < 0.15,
        compiled=compiled,
        dp_shard=shard,
        tuning=rng.choice((None, None, "typical", "tuned", "nemo", "torchtitan", "trainer", "trainer_peft")),
        fp32_main_grads=rng.random() < 0.25,
        optimizer_in_backward=gpus == 1 and zero == 0 and rng.random() < 0.3,
        host_load=rng.choice(("none", "none", "every_rank", "local_rank_0")),
        fsdp_torch_adamw=zero == 3 and rng.random() < 0.3,
    )


def random_mix(count: int, seed: int = 1) -> list[Case]:
    """`count` plans over a few shared model, workload and cluster objects (so the per-context caches are shared)."""
    rng = random.Random(seed)
    models = [get_preset(p).model for p in MODELS]
    workloads, clusters = _workloads(), _clusters()
    out = []
    for _ in range(count):
        model, workload, cluster = rng.choice(models), rng.choice(workloads), rng.choice(clusters)
        plan = _random_plan(rng, model, cluster)
        if rng.random() < 0.02:  # an invalid plan now and then: its refusal is an output too
            plan = replace(plan, tp=rng.choice((0, 3, 7)))
        out.append((model, workload, plan, cluster))
    return out


def _error(exc: Exception) -> str:
    if isinstance(exc, EstimatorError):
        return f"EstimatorError({exc.code!r}, {exc.field!r}, {str(exc)!r}, {exc.params!r})"
    return f"{type(exc).__name__}({str(exc)!r})"


def _call(function: Callable[[], Any]) -> Any:
    try:
        return function()
    except Exception as exc:  # every refusal is an output to compare
        return _error(exc)


def outputs(case: Case) -> str:
    """One line: every output of the training estimator for `case`, in repr."""
    model, workload, plan, cluster = case
    memory = _call(lambda: estimate_memory(model, workload, plan, cluster))
    breakdown = _call(lambda: memory_breakdown(model, workload, plan, cluster))
    readings: Any = None
    if not isinstance(breakdown, str):
        readings = [_call(lambda m=m: measured_bytes(breakdown, plan, cluster, m)) for m in MEASURED]
    performance = _call(lambda: estimate_performance(model, workload, plan, cluster))
    return repr((memory, breakdown, readings, performance))


def cases(inputs: Path | None) -> Iterator[tuple[str, Case]]:
    for i, case in enumerate(plan_mix()):
        yield f"mix {i}", case
    for i, case in enumerate(random_mix(30_000)):
        yield f"random {i}", case
    if inputs is not None:
        for i, case in enumerate(pickle.loads(inputs.read_bytes())):
            yield f"tests {i}", case


def run(inputs: Path | None) -> tuple[list[str], list[str]]:
    """(each input's outputs in order, and the same read again in reverse order with every cache warm)."""
    named = list(cases(inputs))
    forward = [f"{name}: {outputs(case)}" for name, case in named]
    backward = [f"{name}: {outputs(case)}" for name, case in reversed(named)][::-1]
    return forward, backward


def order_dependent(forward: list[str], backward: list[str]) -> int:
    """How many inputs read differently with warm caches (printing the first few)."""
    mismatched = [i for i, (a, b) in enumerate(zip(forward, backward, strict=True)) if a != b]
    for i in mismatched[:5]:
        print(f"order-dependent output:\n  first pass {forward[i][:600]}\n  warm pass  {backward[i][:600]}")
    return len(mismatched)


def record_tests(target: Path, paths: list[str]) -> None:
    """Run `paths` under pytest with the estimator's entry points wrapped, and pickle every input they were given."""
    seen: dict[bytes, Case] = {}

    def wrap(function: Callable[..., Any]) -> Callable[..., Any]:
        def recording(model: Any, workload: Any, plan: Any, cluster: Any, *rest: Any, **kw: Any) -> Any:
            if all(isinstance(x, t) for x, t in zip((model, workload, plan, cluster), Case.__args__, strict=True)):
                with contextlib.suppress(Exception):  # an input that does not pickle is not replayed
                    seen.setdefault(pickle.dumps((model, workload, plan, cluster)), (model, workload, plan, cluster))
            return function(model, workload, plan, cluster, *rest, **kw)

        return recording

    for module in (memory_package, memory_estimate):
        module.estimate_memory = wrap(memory_estimate.estimate_memory)  # type: ignore[assignment]
        module.memory_breakdown = wrap(memory_estimate.memory_breakdown)  # type: ignore[assignment]
    performance.estimate_performance = wrap(performance.estimate_performance)  # type: ignore[assignment]
    code = pytest.main(["-q", "-p", "no:cacheprovider", "-m", "not slow and not browser and not postgres", *paths])
    target.write_bytes(pickle.dumps(list(seen.values())))
    print(f"pytest exit {code}; {len(seen)} distinct inputs recorded in {target}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--record-tests", type=Path, help="run the tests and pickle their inputs here")
    parser.add_argument("--tests", nargs="*", default=["tests/estimator", "tests/planner"])
    parser.add_argument("--inputs", type=Path, help="the tests' inputs, as --record-tests pickled them")
    parser.add_argument("--write", type=Path, help="write the golden outputs here")
    parser.add_argument("--check", type=Path, help="compare with golden outputs written before")
    args = parser.parse_args()
    if args.record_tests:
        record_tests(args.record_tests, args.tests)
        return
    lines, warm = run(args.inputs)
    failed = []
    if args.write:
        args.write.write_text("\n".join(lines) + "\n")
        print(f"{len(lines)} inputs written to {args.write}")
    if args.check:
        golden = args.check.read_text().splitlines()
        differ = [i for i, (a, b) in enumerate(zip(golden, lines, strict=False)) if a != b]
        for i in differ[:5]:
            print(f"differs:\n  golden {golden[i][:800]}\n  now    {lines[i][:800]}")
        if differ or len(golden) != len(lines):
            failed.append(f"{len(differ)} of {len(lines)} inputs differ ({len(golden)} golden lines)")
        else:
            print(f"{len(lines)} inputs: identical to {args.check}")
    mismatched = order_dependent(lines, warm)
    if mismatched:
        failed.append(f"{mismatched} of {len(lines)} inputs read differently with warm caches")
    if failed:
        sys.exit("; ".join(failed))


if __name__ == "__main__":
    main()
