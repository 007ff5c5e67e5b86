"""Training speed on the 24 published runs (tests/estimator/perf_cases.py): ours against llm-analysis.

Compared figure: tokens/s per GPU, the figure every case in perf_cases.py is stored as (measured by the source,
or derived from its published TFLOP/s or MFU with the FLOP formula that source used; the "published as" column
shows the source's own figure, recomputed from the stored tokens/s).

llm-analysis 0.2.2 (`LLMAnalysis.training()`, run in .peers-venv by `_llm_analysis_perf_runner.py`):
- GPU: its own configs by name (a100-sxm-80gb, h100-sxm-80gb; torchtitan's 96 GB HBM2e H100 runs as
  h100-sxm-80gb, same 989 TFLOPS dense peak, the only GPU figure its training latency uses).
- Model: a ModelConfig built from the same architecture (layers, heads, kv_heads, hidden, ffn, vocab);
  plan: tp, pp, dp, micro-batch, global batch, recompute (none/selective/full), ZeRO stage, flash attention.
- flops_efficiency: its default is `llm_analysis.constant.FLOPS_EFFICIENCY` = 1, which its README says "gives the
  lower bound of training or inference latency, as it assumes the peak hardware performance"; for training it
  suggests 0.5 ("literature reports up to 0.5 for large scale model training"). The compared column uses 0.5;
  the default is printed beside it.
- tokens/s per GPU is derived from its output: global_batch_size x seq_len / latency_per_iter / total_num_gpus.
  (latency_per_iter = gradient_accumulation_steps x FLOPs per micro-batch / (tp x pp x peak x efficiency):
  llm-analysis's training latency has no communication, pipeline-bubble or memory-bound term.)
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from _peers_env import PEER_REQUIREMENT, peers_python

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # the published runs live in the test package
    sys.path.insert(0, str(ROOT))

from app.estimator.performance import estimate_performance  # noqa: E402
from tests.estimator import perf_cases  # noqa: E402
from tests.estimator.perf_cases import CASES, Case  # noqa: E402
from tests.estimator.validation_cases import THROUGHPUT  # noqa: E402

PERF_RUNNER = Path(__file__).resolve().parent / "_llm_analysis_perf_runner.py"
LA_EFFICIENCY = 0.5  # llm-analysis README: "up to 0.5 for large scale model training"
LA_DEFAULT_EFFICIENCY = 1.0  # llm_analysis.constant.FLOPS_EFFICIENCY, used when none is passed
LA_GPU = {
    "a100-80g-sxm": "a100-sxm-80gb",
    "a100-40g-sxm": "a100-sxm-40gb",
    "h100-80g-sxm": "h100-sxm-80gb",
    "h100-96g-hbm2e": "h100-sxm-80gb",
}
# The four Megatron-LM README rows were added after the efficiency constants were fitted (performance.py docstring);
# the held-out runs of tests/estimator/validation_cases.py come from sources never used in fitting.
HELD_OUT: tuple[Case, ...] = tuple(
    Case(c.label, c.citation, c.model, c.workload, c.plan, c.cluster, c.tokens_per_s_per_gpu)
    for c in THROUGHPUT
    if c.split == "holdout"
)
OUT_OF_SAMPLE_SOURCES = (perf_cases.MEGATRON_README, *(c.source for c in HELD_OUT))


@dataclass
class PerfRow:
    case: Case
    published: float  # tokens/s per GPU
    published_as: str  # the source's own figure
    ours: float
    ours_mfu: float
    peer: float | None = None  # llm-analysis at LA_EFFICIENCY
    peer_default: float | None = None  # llm-analysis at its default efficiency
    why_na: str = ""
    notes: list[str] = field(default_factory=list)

    @property
    def out_of_sample(self) -> bool:
        return self.case.source in OUT_OF_SAMPLE_SOURCES

    def error(self, value: float | None) -> float | None:
        return None if value is None else value / self.published - 1


def _published_as(case: Case) -> str:
    """The figure the source printed, recomputed from the stored tokens/s with the source's FLOP formula."""
    seq, model = case.workload.seq_len, case.model
    if case.source == perf_cases.NARAYANAN:
        per_tflops = perf_cases._megatron_tokens(1.0, model, seq, True)
        return f"{case.tokens_per_s_per_gpu / per_tflops:.0f} TFLOP/s"
    if case.source in (perf_cases.MEGATRON_README, perf_cases.KORTHIKANTI):
        per_tflops = perf_cases._megatron_tokens(1.0, model, seq, False)
        return f"MFU {case.tokens_per_s_per_gpu / per_tflops / 312:.1%}"
    if case.source == perf_cases.LLAMA3:
        return f"MFU {case.tokens_per_s_per_gpu * perf_cases._llama_flops_per_token(seq) / 989.4e12:.0%}"
    return f"{case.tokens_per_s_per_gpu:.0f} tok/s"


def _why_not_expressible(case: Case) -> str:
    if case.workload.precision == "fp8":
        return (
            "FP8 training: llm-analysis's 8-bit dtypes are int8 weight/activation quantisation "
            "(int8 peak, 8-bit weights), not an FP8 recipe with bf16 master weights"
        )
    if case.model.is_moe:
        return "MoE layout (expert parallelism, MoE layer subset) not expressible"
    if case.plan.cp > 1:
        return "context parallelism not modelled"
    if case.workload.task in ("lora", "qlora"):
        return "no LoRA in llm-analysis"
    if case.cluster.gpu.id not in LA_GPU:
        return f"no llm-analysis GPU config for {case.cluster.gpu.id}"
    return ""


def _peer_notes(case: Case) -> list[str]:
    notes = []
    if case.plan.pp > 1:
        notes.append(
            "no pipeline bubble in llm-analysis"
            + (
                f" (interleaving v={case.plan.virtual_stages} has no input there)"
                if case.plan.virtual_stages > 1
                else ""
            )
        )
    if case.model.mlp == "swiglu" or case.model.ffn != 4 * case.model.hidden:
        notes.append("llm-analysis counts MLP FLOPs as 16·b·s·h² whatever the FFN width and gating")
    if case.cluster.gpu.id == "h100-96g-hbm2e":
        notes.append("run as h100-sxm-80gb (same dense peak)")
    return notes


def mlp_flops_ratio(case: Case) -> float:
    """True forward MLP FLOPs (SwiGLU: 3 matrices, 6·b·s·h·ffn) over llm-analysis's 16·b·s·h²."""
    matrices = 3 if case.model.mlp == "swiglu" else 2
    return 2 * matrices * case.model.ffn / (16 * case.model.hidden)


def _request(case: Case) -> dict:
    model, plan, workload = case.model, case.plan, case.workload
    return {
        "id": case.label,
        "gpu": LA_GPU[case.cluster.gpu.id],
        "layers": model.layers,
        "heads": model.heads,
        "kv_heads": model.kv_heads,
        "hidden": model.hidden,
        "ffn": model.ffn,
        "vocab": model.vocab,
        "gated": model.mlp == "swiglu",
        "tp": plan.tp,
        "pp": plan.pp,
        "dp": plan.dp,
        "micro_batch": plan.micro_batch,
        "global_batch": workload.global_batch,
        "seq": workload.seq_len,
        "recompute": {"none": 0, "selective": 1, "full": 2}[plan.recompute],
        "zero": plan.zero_stage,
        "flash": plan.flash_attention,
    }


def _tokens_per_s_per_gpu(summary: dict | str) -> float | None:
    """global_batch_size x seq_len / latency_per_iter / total_num_gpus (llm-analysis's own output fields)."""
    if isinstance(summary, str):
        return None
    return summary["global_batch_size"] * summary["seq_len"] / summary["latency_per_iter"] / summary["total_num_gpus"]


def run_llm_analysis_perf(cases: list[Case]) -> dict[str, dict[str, dict | str]]:
    request = {"efficiencies": [LA_EFFICIENCY, None], "cases": [_request(case) for case in cases]}
    completed = subprocess.run(
        [str(peers_python()), str(PERF_RUNNER)], input=json.dumps(request), capture_output=True, text=True, check=False
    )
    if completed.returncode != 0:
        raise RuntimeError(f"llm-analysis perf runner failed:\n{completed.stderr[-2000:]}")
    return json.loads(completed.stdout.strip().splitlines()[-1])["results"]


def performance_rows() -> list[PerfRow]:
    rows = []
    for case in CASES + HELD_OUT:
        perf = estimate_performance(case.model, case.workload, case.plan, case.cluster).performance
        rows.append(
            PerfRow(
                case,
                case.tokens_per_s_per_gpu,
                _published_as(case),
                perf.tokens_per_s_per_gpu,
                perf.mfu_full_attention,  # the published MFUs count the full s×s matrix (Megatron-LM README)
                why_na=_why_not_expressible(case),
            )
        )
    expressible = [row.case for row in rows if not row.why_na]
    answers = run_llm_analysis_perf(expressible)
    for row in rows:
        if row.why_na:
            continue
        answer = answers[row.case.label]
        row.peer = _tokens_per_s_per_gpu(answer[str(LA_EFFICIENCY)])
        row.peer_default = _tokens_per_s_per_gpu(answer["None"])
        if row.peer is None:
            row.why_na = str(answer[str(LA_EFFICIENCY)])
        row.notes = _peer_notes(row.case)
    return rows


@dataclass
class PerfSummary:
    ours_all: list[float]  # |error| over every case
    ours_shared: list[float]  # |error| where llm-analysis applies
    peer: list[float]
    peer_default: list[float]
    ours_out_of_sample: list[float]
    closer: int  # cases where ours is closer than llm-analysis at LA_EFFICIENCY
    closer_default: int
    shared: int
    not_closer: list[str]


def summarise(rows: list[PerfRow]) -> PerfSummary:
    shared = [row for row in rows if row.peer is not None]
    ours = {row.case.label: abs(row.error(row.ours)) for row in rows}
    return PerfSummary(
        ours_all=list(ours.values()),
        ours_shared=[ours[row.case.label] for row in shared],
        peer=[abs(row.error(row.peer)) for row in shared],
        peer_default=[abs(row.error(row.peer_default)) for row in shared],
        ours_out_of_sample=[ours[row.case.label] for row in rows if row.out_of_sample],
        closer=sum(ours[row.case.label] < abs(row.error(row.peer)) for row in shared),
        closer_default=sum(ours[row.case.label] < abs(row.error(row.peer_default)) for row in shared),
        shared=len(shared),
        not_closer=[row.case.label for row in shared if ours[row.case.label] >= abs(row.error(row.peer))],
    )


def stats(values: list[float]) -> str:
    return f"median |error| {statistics.median(values):6.1%}  max {max(values):6.1%}  (n={len(values)})"


def _cell(value: float | None, published: float) -> str:
    return "n/a" if value is None else f"{value:7.0f} ({value / published - 1:+.0%})"


def print_performance(rows: list[PerfRow]) -> None:
    print("\nTraining speed: tokens/s per GPU (error vs published); '+' = run added after the efficiency fit")
    print(
        f"llm-analysis: {PEER_REQUIREMENT} LLMAnalysis.training(), flops_efficiency {LA_EFFICIENCY} (its README's "
        f"figure for large-scale training; its default {LA_DEFAULT_EFFICIENCY:g} is the peak-hardware lower bound, "
        "shown in the last column);"
    )
    print("  its tokens/s per GPU = global_batch_size x seq_len / latency_per_iter / total_num_gpus")
    columns = ("ours", f"llm-a @{LA_EFFICIENCY:g}", f"llm-a @{LA_DEFAULT_EFFICIENCY:g}")
    names = " ".join(f"{name:>15s}" for name in columns)
    print(f"{'case':52s} {'published as':>14s} {'published':>9s} {names}")
    for row in rows:
        mark = "+" if row.out_of_sample else " "
        cells = " ".join(f"{_cell(v, row.published):>15s}" for v in (row.ours, row.peer, row.peer_default))
        print(f"{mark}{row.case.label:51s} {row.published_as:>14s} {row.published:9.0f} {cells}")
    print()
    summary = summarise(rows)
    print(f"ours                 {stats(summary.ours_all)} over all {len(rows)} runs")
    print(f"ours                 {stats(summary.ours_shared)} over the runs llm-analysis expresses")
    print(f"llm-analysis @{LA_EFFICIENCY:<5g}  {stats(summary.peer)}")
    print(f"llm-analysis @{LA_DEFAULT_EFFICIENCY:<5g}  {stats(summary.peer_default)}  (its default efficiency)")
    print(f"ours, out of sample  {stats(summary.ours_out_of_sample)} (Megatron-LM README rows, added after fitting)")
    print(
        f"ours closer than llm-analysis @{LA_EFFICIENCY:g} on {summary.closer} of {summary.shared} runs "
        f"(not on: {', '.join(summary.not_closer) or 'none'}); "
        f"closer than @{LA_DEFAULT_EFFICIENCY:g} on {summary.closer_default} of {summary.shared}"
    )
    for row in rows:
        if row.why_na:
            print(f"llm-analysis n/a on {row.case.label}: {row.why_na}")
    for note in sorted({note for row in rows for note in row.notes}):
        print(f"note: {note}")
    ratios = sorted({mlp_flops_ratio(row.case) for row in rows if row.case.model.mlp == "swiglu"})
    if ratios:
        print(f"note: the SwiGLU models here do {ratios[0]:.2f}-{ratios[-1]:.2f}x those MLP FLOPs (6·b·s·h·ffn)")
