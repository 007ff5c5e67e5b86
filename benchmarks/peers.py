"""Side by side on the published cases: published, ours, llm-analysis, DeepSpeed and accelerate estimators.

Run: .venv/bin/python benchmarks/peers.py   (creates .peers-venv with llm-analysis on first use)
     .venv/bin/python benchmarks/peers.py --markdown docs/validation.md   (also regenerates the validation report)
     .venv/bin/python benchmarks/peers.py --serving [--markdown docs/validation-serving.md]   (serving only)

Two tables: per-GPU MEMORY on the published peak-memory cases (tests/estimator/published_cases.py), below, and
training SPEED (tokens/s per GPU) on the 24 published runs of tests/estimator/perf_cases.py against llm-analysis
(benchmarks/_peers_perf.py says how llm-analysis is configured and how its tokens/s are derived).
`--serving`: SERVING throughput, latency and KV capacity on tests/estimator/serving_cases.py, fitted and held-out
errors of ours and llm-analysis in one table (benchmarks/_peers_serving.py).

Peers and what each one computes:
- llm-analysis 0.2.2 (PyPI, cli99/llm-analysis), run in its own venv: LLMAnalysis.training() total
  "(weight+op_state+grad+act)_memory_per_gpu" for pretraining / full fine-tuning, .inference()
  weights + KV cache + max(prefill, decode) activations for inference. It has no LoRA, QLoRA, offload or
  context parallelism, so LoRA rows are "n/a" and offload/CP rows are computed as if neither were used.
- DeepSpeed `estimate_zero2_model_states_mem_needs` / `estimate_zero3_model_states_mem_needs` (model states
  only, no activations), REIMPLEMENTED here from deepspeed/runtime/zero/stage_1_and_2.py and stage3.py
  (commit 38327e0) because installing deepspeed needs torch + CUDA:
    ZeRO-2: GPU = 2P + 18P/N (offload: 2P)   [before PR #5099: 4P + 16P/N]
    ZeRO-3: GPU = 4*largest_layer + 18P/N (offload optimizer: + 2P/N; offload params too: 4*largest_layer)
  Applies to pretraining / full fine-tuning with ZeRO-2/3 or FSDP; "n/a" elsewhere.
- Hugging Face accelerate `accelerate estimate-memory` (src/accelerate/commands/estimate.py), REIMPLEMENTED:
  training in float16/bfloat16 = max(model 2P·2, grads, Adam 8P) = 8P bytes for the whole model (no batch,
  no parallelism); inference = the model size in its dtype (2P bf16, 1P int8). "n/a" for LoRA.
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from _peers_env import PEER_REQUIREMENT, run_llm_analysis
from _peers_perf import performance_rows, print_performance, summarise
from _peers_serving import print_serving, serving_markdown, serving_rows
from _validation_doc import write_report

from app.estimator.memory import estimate_memory
from app.estimator.params import count_params
from app.estimator.specs import GIB
from tests.estimator.published_cases import PublishedCase, published_cases

Estimator = Callable[[PublishedCase], float | None]
TRAINING = ("pretrain", "full_finetune")


def ours(case: PublishedCase) -> float:
    return estimate_memory(case.model, case.workload, case.plan, case.cluster()).breakdown.total / GIB


def deepspeed(case: PublishedCase) -> float | None:
    """DeepSpeed's model-states estimators (see module docstring), GiB per GPU."""
    if case.workload.task not in TRAINING or case.plan.zero_stage < 2:
        return None
    counts = count_params(case.model)
    params, gpus = counts.total, case.plan.gpus
    if case.plan.zero_stage == 2:
        gpu = 2 * params if case.plan.offload != "none" else 2 * params + 18 * params / gpus
        return gpu / GIB
    largest = 4 * counts.largest_layer
    if case.plan.offload == "optimizer_and_params":
        return largest / GIB
    per_param = 2 if case.plan.offload == "optimizer" else 18
    return (largest + per_param * params / gpus) / GIB


def accelerate(case: PublishedCase) -> float | None:
    """accelerate estimate-memory (see module docstring), GiB for the whole model."""
    params = count_params(case.model).total
    if case.workload.task in TRAINING:
        return 8 * params / GIB if case.workload.precision in ("bf16", "fp16") else 16 * params / GIB
    if case.workload.task == "inference":
        return params * (1 if case.workload.precision == "fp8" else 2) / GIB
    return None


def _llm_analysis_case(case: PublishedCase) -> dict | None:
    task, model, plan = case.workload.task, case.model, case.plan
    if task not in TRAINING and task != "inference":
        return None
    return {
        "id": case.id,
        "kind": "inference" if task == "inference" else "training",
        "layers": model.layers,
        "heads": model.heads,
        "kv_heads": model.kv_heads,
        "hidden": model.hidden,
        "ffn": model.expert_ffn or model.ffn,
        "vocab": model.vocab,
        "gated": model.mlp == "swiglu",
        "experts": model.experts,
        "top_k": model.experts_per_token,
        "gpu_mem_gb": 10_000,  # llm-analysis asserts when its estimate exceeds the card; we want the estimate
        "tp": plan.tp,
        "pp": plan.pp,
        "dp": plan.dp * plan.cp,
        "batch": plan.micro_batch,
        "seq": case.workload.seq_len,
        "recompute": {"none": 0, "selective": 1, "full": 2}[plan.recompute],
        "zero": plan.zero_stage,
        "flash": plan.flash_attention,
        "generate": 60,
        "weight_bits": 8 if case.workload.precision == "fp8" else 16,
    }


def llm_analysis_totals(cases: list[PublishedCase]) -> dict[str, float | str]:
    requests = [c for c in (_llm_analysis_case(case) for case in cases) if c is not None]
    answer = run_llm_analysis({"mode": "memory", "cases": requests})["totals_bytes"]
    return {key: value / GIB if isinstance(value, float | int) else value for key, value in answer.items()}


def _error(value: float | str | None, published: float) -> float | None:
    return (value - published) / published if isinstance(value, float | int) else None


def _cell(value: float | str | None, published: float) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, str):
        return "error"
    return f"{value:7.1f} ({_error(value, published):+.0%})"


def _beats_peers(mine: float, peers: list[float | None]) -> bool | None:
    applicable = [abs(p) for p in peers if p is not None]
    return None if not applicable else abs(mine) < min(applicable)


PEERS = ("ours", "llm-analysis", "DeepSpeed", "accelerate")


@dataclass
class MemoryRow:
    case: PublishedCase
    values: dict[str, float | str | None]  # GiB per GPU by estimator; a str is a peer's failure

    def error(self, name: str) -> float | None:
        return _error(self.values[name], self.case.published_gib)


@dataclass
class MemorySummary:
    errors: dict[str, list[float]]  # |error| over included cases where each applies
    wins: int
    losses: list[str]
    head_to_head: dict[str, tuple[list[float], list[float]]]  # peer -> (ours, peer) |errors| on shared cases


def memory_rows() -> list[MemoryRow]:
    cases = published_cases()
    la = llm_analysis_totals(cases)
    return [
        MemoryRow(
            case,
            {
                "ours": ours(case),
                "llm-analysis": la.get(case.id),
                "DeepSpeed": deepspeed(case),
                "accelerate": accelerate(case),
            },
        )
        for case in cases
    ]


def memory_summary(rows: list[MemoryRow]) -> MemorySummary:
    errors: dict[str, list[float]] = {name: [] for name in PEERS}
    head_to_head: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in PEERS[1:]}
    wins, losses = 0, []
    for row in rows:
        if not row.case.included:
            continue
        for name in PEERS:
            err = row.error(name)
            if err is not None:
                errors[name].append(abs(err))
                if name != "ours":
                    head_to_head[name][0].append(abs(row.error("ours")))
                    head_to_head[name][1].append(abs(err))
        verdict = _beats_peers(row.error("ours"), [row.error(n) for n in PEERS[1:]])
        if verdict:
            wins += 1
        elif verdict is False:
            losses.append(row.case.id)
    return MemorySummary(errors, wins, losses, head_to_head)


def print_memory(rows: list[MemoryRow]) -> MemorySummary:
    names = " ".join(f"{name:>15s}" for name in PEERS)
    print("GiB per GPU (error vs published); '*' = reported only, see why_excluded in published_cases.py")
    print(f"{'case':44s} {'published':>9s} {names}")
    for row in rows:
        pub = row.case.published_gib
        mark = " " if row.case.included else "*"
        cells = " ".join(f"{_cell(row.values[name], pub):>15s}" for name in PEERS)
        print(f"{mark}{row.case.id:43s} {pub:9.1f} {cells}")
    summary = memory_summary(rows)
    print()
    for name, values in summary.errors.items():
        if values:
            print(
                f"{name:13s} median |error| {statistics.median(values):6.1%}  max {max(values):6.1%}  "
                f"over {len(values)} included cases where it applies"
            )
    for name, (mine, theirs) in summary.head_to_head.items():
        if mine:
            print(
                f"on the {len(mine)} included cases {name} applies to: ours median {statistics.median(mine):.1%} "
                f"max {max(mine):.1%}, {name} median {statistics.median(theirs):.1%} max {max(theirs):.1%}"
            )
    for row in rows:
        if isinstance(row.values["llm-analysis"], str):
            print(f"llm-analysis failed on {row.case.id}: {row.values['llm-analysis']}")
    print(
        f"ours below every applicable peer on {summary.wins} included cases; "
        f"not on: {', '.join(summary.losses) or 'none'}"
    )
    print(
        f"peers: {PEER_REQUIREMENT} (subprocess in .peers-venv); DeepSpeed and accelerate formulas reimplemented "
        "(see docstring) because both packages need torch"
    )
    return summary


# The serving report's sections from this heading on are written by hand, source by source, as each first-contact
# source is recorded (benchmarks/serving_first_contact.py): regenerating the table keeps them as they are.
HAND_KEPT_HEADING = "\n## First contact: "


def _hand_kept(text: str) -> str:
    """The hand-written tail of an existing serving report (from HAND_KEPT_HEADING), with its leading blank line."""
    at = text.find(HAND_KEPT_HEADING)
    return "" if at < 0 else text[at:]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memory-only", action="store_true", help="print only the memory table")
    parser.add_argument("--performance", action="store_true", help="print only the training-speed table")
    parser.add_argument(
        "--markdown",
        metavar="PATH",
        help="also write the validation report (e.g. docs/validation.md) and its SVG scatter plots next to it",
    )
    parser.add_argument("--serving", action="store_true", help="print only the serving table (see _peers_serving.py)")
    args = parser.parse_args(argv)
    if args.serving:
        rows = serving_rows()
        print_serving(rows)
        if args.markdown:
            path = Path(args.markdown)
            kept = _hand_kept(path.read_text(encoding="utf-8")) if path.exists() else ""
            path.write_text(serving_markdown(rows) + kept, encoding="utf-8")
            print(f"\nwrote {args.markdown}")
        return
    mem = memory_rows() if not args.performance or args.markdown else None
    perf = performance_rows() if not args.memory_only or args.markdown else None
    if mem is not None and not args.performance:
        print_memory(mem)
    if perf is not None and not args.memory_only:
        print_performance(perf)
    if args.markdown:
        written = write_report(Path(args.markdown), mem, memory_summary(mem), perf, summarise(perf))
        print(f"\nwrote {', '.join(str(path) for path in written)}")


if __name__ == "__main__":
    main()
