"""Out-of-sample validation: throughput and GPU-hours on published runs, fit set and held-out set apart.

Run: .venv/bin/python benchmarks/validation.py            (ours, as checked out)
     .venv/bin/python benchmarks/validation.py --write docs/validation.md
         (rewrites the out-of-sample section of the report). The baseline column is the estimator at commit
         7c1f6ff, before this validation set existed, on the same cases: measured by this script at commit
         63606fd with `--baseline 7c1f6ff` (its `app/` extracted with `git archive`, the cases run against it in
         a subprocess) and kept in BASELINE, because the case modules now build clusters with a field that
         commit's estimator does not have.

Cases: tests/estimator/validation_cases.py (each with its configuration and citation). For every case it prints
the published figure, ours and the error (ours / published - 1), and whether the published value lies inside
`performance.tokens_per_s_per_gpu_range` (throughput) or `performance.gpu_hours_range` (GPU-hours). The summary
gives median and worst |error|, coverage and the median half-width of the range (half the range over its
midpoint) per set. A case the estimator cannot express (it raises) is reported as n/a, not dropped silently.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path

if str(Path(__file__).resolve().parents[1]) not in sys.path:
    sys.path.append(str(Path(__file__).resolve().parents[1]))

from app.estimator.memory import estimate_memory, measured_bytes
from app.estimator.memory.band import memory_band
from app.estimator.performance import estimate_performance
from app.estimator.specs import GIB
from tests.estimator.memory_first_contact import MEMORY_FIRST_CONTACT
from tests.estimator.validation_cases import FRESH_SOURCES, GPU_HOURS, MEMORY, THROUGHPUT

FIRST_CONTACT_RECORD = (
    Path(__file__).resolve().parents[1] / "tests" / "estimator" / "data" / "memory_first_contact.json"
)
# memory sets as the report names them: every row looked at before a change to the model is fitted; the sources the
# first-contact record holds are out of sample (their error at the commit that added them is recorded)
MEMORY_SPLITS = {"fit": "fitted", "holdout": "seen, fitted"}


def _first_contact_sources() -> set[str]:
    return set(json.loads(FIRST_CONTACT_RECORD.read_text(encoding="utf-8"))["sources"])


@dataclass
class Row:
    label: str
    source: str
    split: str
    published: float
    ours: float | None
    low: float | None
    high: float | None

    @property
    def error(self) -> float | None:
        return None if self.ours is None else self.ours / self.published - 1.0

    @property
    def inside(self) -> bool | None:
        if self.low is None or self.high is None:
            return None
        return self.low <= self.published <= self.high

    @property
    def half_width(self) -> float | None:
        if self.low is None or self.high is None:
            return None
        return (self.high - self.low) / (self.high + self.low)


def throughput_rows() -> list[Row]:
    rows = []
    for case in THROUGHPUT:
        try:
            perf = estimate_performance(case.model, case.workload, case.plan, case.cluster).performance
        except ValueError as error:
            print(f"n/a {case.label}: {error}", file=sys.stderr)
            rows.append(Row(case.label, case.source, case.split, case.tokens_per_s_per_gpu, None, None, None))
            continue
        span = getattr(perf, "tokens_per_s_per_gpu_range", None) or (None, None)
        rows.append(
            Row(case.label, case.source, case.split, case.tokens_per_s_per_gpu, perf.tokens_per_s_per_gpu, *span)
        )
    return rows


def gpu_hours_rows() -> list[Row]:
    rows = []
    for case in GPU_HOURS:
        try:
            perf = estimate_performance(case.model, case.workload, case.plan, case.cluster).performance
        except ValueError as error:
            print(f"n/a {case.label}: {error}", file=sys.stderr)
            rows.append(Row(case.label, case.source, case.split, case.gpu_hours, None, None, None))
            continue
        span = getattr(perf, "gpu_hours_range", None) or (None, None)
        rows.append(Row(case.label, case.source, case.split, case.gpu_hours, perf.gpu_hours, *span))
    return rows


def memory_rows() -> list[Row]:
    """Every memory row, read as its source measured it, with the range (memory.per_gpu_gib_range, scaled from the
    gate figure to the reading). Splits as MEMORY_SPLITS names them: the rows tested or looked at before a change
    ("fit", "holdout") are fitted; "first contact" rows are the ones tests/estimator/memory_first_contact.py records."""
    rows = []
    first = _first_contact_sources()
    cases = [(c, "first contact" if c.source in first else MEMORY_SPLITS[c.split]) for c in MEMORY]
    cases += [(c, "first contact") for c in MEMORY_FIRST_CONTACT]
    for case, split in cases:
        try:
            # on the stage the source read where it names one (FirstContactCase.breakdown: Megatron-LM's last rank)
            staged = getattr(case, "breakdown", None)
            breakdown = (
                staged() if staged else estimate_memory(case.model, case.workload, case.plan, case.cluster).breakdown
            )
            read = measured_bytes(breakdown, case.plan, case.cluster, case.measured)
            band = memory_band(case.model, case.workload, case.plan, case.cluster, breakdown)
            scale = read / breakdown.total / GIB
            total, low, high = read / GIB, band.low * scale, band.high * scale
        except ValueError as error:
            print(f"n/a {case.label}: {error}", file=sys.stderr)
            total = low = high = None
        rows.append(Row(case.label, case.source, split, case.published_gib, total, low, high))
    return rows


def first_contact_lines() -> list[str]:
    """Per source: the error the estimator had on the rows when they were recorded (out of sample), beside the error
    now (fitted once any change followed them), the reading, and how many of these runs (all of them ran) the gate
    judged to fit at first contact."""
    record = json.loads(FIRST_CONTACT_RECORD.read_text(encoding="utf-8"))
    now = {r.label: r for r in memory_rows() if r.split == "first contact"}
    lines = [
        "| source | added in | rows | reading | first contact: median abs. error | signed median | worst | judged to "
        "fit | now (fitted): median abs. error | inside range now | median half-width |",
        "| --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for source, info in record["sources"].items():
        rows = [row for row in record["rows"] if row["source"] == source]
        errors = [row["first_contact_error"] for row in rows]
        current = [now[row["label"]] for row in rows if row["label"] in now]
        summary_now = summary(current)
        readings = ", ".join(sorted({row["reading"] for row in rows}))
        fits = sum(row["first_contact_fits"] for row in rows)
        lines.append(
            f"| {source} | {info['added_in'][:7]} | {len(rows)} | {readings} | "
            f"{statistics.median(map(abs, errors)):.1%} | {statistics.median(errors):+.1%} | "
            f"{max(errors, key=abs):+.1%} | {fits} of {len(rows)} | {summary_now['median |error|']} | "
            f"{summary_now['inside range']} | {summary_now['median half-width']} |"
        )
    errors = [row["first_contact_error"] for row in record["rows"]]
    current = list(now.values())
    fits = sum(row["first_contact_fits"] for row in record["rows"])
    summary_now = summary(current)
    lines.append(
        f"| **all** | | {len(errors)} | | {statistics.median(map(abs, errors)):.1%} | {statistics.median(errors):+.1%} "
        f"| {max(errors, key=abs):+.1%} | {fits} of {len(errors)} | {summary_now['median |error|']} | "
        f"{summary_now['inside range']} | {summary_now['median half-width']} |"
    )
    return lines


def summary(rows: list[Row]) -> dict[str, str]:
    errors = [abs(r.error) for r in rows if r.error is not None]
    inside = [r.inside for r in rows if r.inside is not None]
    widths = [r.half_width for r in rows if r.half_width is not None]
    sources = sorted({r.source for r in rows})
    return {
        "cases": f"{len(rows)} ({len(errors)} answered)",
        "sources": str(len(sources)),
        "median |error|": f"{statistics.median(errors):.1%}" if errors else "n/a",
        "worst |error|": f"{max(errors):.1%}" if errors else "n/a",
        "inside range": f"{sum(inside)} of {len(inside)} ({sum(inside) / len(inside):.0%})" if inside else "n/a",
        "median half-width": f"±{statistics.median(widths):.0%}" if widths else "n/a",
    }


def _fmt(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:,.0f}" if value >= 100 else f"{value:,.1f}"


def table(title: str, rows: list[Row], markdown: bool) -> list[str]:
    out = [f"### {title}", ""] if markdown else [title]
    head = ["case", "source", "set", "published", "ours", "error", "range", "inside"]
    if markdown:
        out += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        err = "n/a" if r.error is None else f"{r.error:+.1%}"
        span = "n/a" if r.low is None else f"{_fmt(r.low)}–{_fmt(r.high)}"
        inside = {None: "n/a", True: "yes", False: "no"}[r.inside]
        cells = [r.label, r.source, r.split, _fmt(r.published), _fmt(r.ours), err, span, inside]
        out.append("| " + " | ".join(cells) + " |" if markdown else "  " + " | ".join(cells))
    out.append("")
    splits = list(dict.fromkeys(r.split for r in rows))
    for split, part in (
        *((split, [r for r in rows if r.split == split]) for split in splits),
        *((label, [r for r in rows if r.split == "holdout" and r.source in sources]) for label, sources in FRESH),
    ):
        if part:
            text = ", ".join(f"{k} {v}" for k, v in summary(part).items())
            out.append(f"- **{split}**: {text}" if markdown else f"  {split}: {text}")
    out.append("")
    return out


ROOT = Path(__file__).resolve().parents[1]
BEGIN = "<!-- out-of-sample: generated by benchmarks/validation.py --write docs/validation.md -->"
END = "<!-- end of out-of-sample -->"


FRESH = tuple((f"holdout recorded {day}", sources) for day, sources in FRESH_SOURCES.items())


def summaries() -> dict[str, dict[str, dict[str, str]]]:
    out: dict[str, dict[str, dict[str, str]]] = {}
    for kind, rows in (("throughput", throughput_rows()), ("gpu_hours", gpu_hours_rows()), ("memory", memory_rows())):
        splits = list(dict.fromkeys(r.split for r in rows))
        out[kind] = {split: summary([r for r in rows if r.split == split]) for split in splits}
        for label, sources in FRESH:
            out[kind][label] = summary([r for r in rows if r.split == "holdout" and r.source in sources])
    return out


def baseline_summaries(revision: str) -> dict[str, dict[str, dict[str, str]]]:
    """The same summaries from the estimator at `revision` (its app/ extracted into a temporary folder)."""
    archive = subprocess.run(["git", "archive", revision, "app"], cwd=ROOT, capture_output=True, check=True).stdout
    with tempfile.TemporaryDirectory() as folder:
        with tarfile.open(fileobj=BytesIO(archive)) as tar:
            tar.extractall(folder, filter="data")
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([folder, str(ROOT)])}
        done = subprocess.run([sys.executable, __file__, "--json"], env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


INTRO = """## Out of sample: published runs the constants were not fitted to

Cases: `tests/estimator/validation_cases.py`, each with its configuration and citation. **fit**: the 24 throughput
runs the efficiency constants were calibrated on (`tests/estimator/perf_cases.py`) and the range was set against,
NeMo's BF16 and FP8 runs of Llama 3.1 8B, 70B and 405B on DGX H100 from NVIDIA's DGX Cloud Benchmarking recipes
(added as fit rows on 2026-12-01: the FP8 constant, the tuned end of the range and NeMo's point are set on them),
30 of the 58 throughput runs in all (52 %), plus the Llama 1 and Llama 2 GPU-hours of the papers' tables.
**holdout**: other sources, not looked at while fitting: NVIDIA's NeMo Megatron-Bridge and NeMo AutoModel benchmark
tables (H100 and B200, dense and MoE, FP8 and BF16, LoRA), MT-NLG 530B, OPT-175B, BLOOM-176B, LLaMA 65B and
TinyLlama for throughput; the Llama 3.1 model card, StarCoder, MPT-7B, DeepSeek-V3 and BLOOM for GPU-hours. The
Megatron-Bridge and AutoModel rows were seen before the changes of 2026-12-01, so fresh held-out rows were recorded
before them from publications no earlier case used: torchtitan's June 2025 async-TP benchmark (70B and 8B, BF16 and
Float8, FSDP × TP), Trainy's H200 torchtitan runs and the SmolLM3 and Phi-2 GPU-hours (before the FP8 and range
changes), NeMo 24.07's FP8 pre-training table (Llama 2 7B/13B/70B, Llama 3 8B/70B on DGX H100; before the stack
input). Just before those changes (commit 7f51b42, 30 fit and 23 held-out throughput runs), throughput read 6.3 % fit
/ 23.7 % held out at the median with 21 of 30 / 11 of 23 inside a ±19 % range, GPU-hours 15.3 % / 22.9 % with 5 of 7
/ 4 of 9 inside; the baseline column below is the older estimator on the older, smaller sets.

What changed on 2026-12-01 and on what ground: the FP8 GEMM fraction (0.75 → 0.875 of the FP8 peak) is fitted to the
published FP8 / BF16 speed-ups on one stack each (torchtitan 8B 1.28x; NeMo on DGX H100 1.32x, 1.49x, 1.60x for 8B,
70B, 405B), which grow with model size where the old constant capped them near 1.3x; the tuned end of the range
(1.10x → 1.30x) is set on NeMo's DGX H100 runs in the fit set, which run 1.21-1.34x above the point (Transformer
Engine kernels and overlapped communication that the median tuned run does not have). A plan may now name its stack
(`plan.tuning`): `nemo` puts the point at 1.25x, the median of those six fit runs, `typical` at the range's low end;
the NeMo rows here (fit and held out) name it, every other row states none. NeMo 24.07's rows, recorded before the
factor existed, test it: they read 9-22 % low without it and -2 % to +14 % with it. The MPT-7B GPU-hours case had
assumed no activation checkpointing, a plan 40 GB does not hold (42 GiB by the memory model); llm-foundry's own
A100-40GB runs of MPT-7B checkpoint activations, and the case now does (corrected after its error was seen).
What still reads off, left as measured: the Qwen3-30B-A3B row of Megatron-Bridge's 25.11 table (5,275 tokens/s)
is a release-to-release low; the same tables give the same layout 10,494 in 25.09 and a like one (vp 12, GBS 1024)
9,058 in 26.02.01, which our 11,559 is 10-28 % above. NeMo's stack factor is measured on dense runs and not applied
to MoE, whose NeMo runs all sit below the point; no constant was set on this row. NeMo AutoModel's Llama 3.3 70B
LoRA (608 tokens/s, 17 % MFU) runs at a quarter of what NeMo's own Megatron LoRA recipe published for Llama 2 70B
on the same 8 H100 (2,621 in FP8, NeMo 24.07; FP8 explains at most 1.6x of that), so it sits at a typical stack,
below our range. MT-NLG (Megatron-DeepSpeed, 2021) reads 31-36 % high, at the typical end. Llama 3.1 8B's 1.46M
H100-hours imply 14 % MFU on 15T tokens, against 25 % for 70B and 35 % for 405B from the same card:
not a compute time any layout gives, and nothing was fitted to it.
Error = ours / published − 1. A range holds a case when
the published value lies in `performance.tokens_per_s_per_gpu_range` (throughput) or `performance.gpu_hours_range`
(GPU-hours); half-width = (high − low) / (high + low). Baseline: the estimator before these changes (commit
{baseline}), run on the same cases; it had no ranges, no goodput, and it could not express BLOOM's fabric (the API
answered 422 to every multi-node request without a bandwidth).

Memory, the history before first contact was recorded (what it called "held out" had been looked at: those rows are
fitted): `app/estimator/memory/` cites each term; its **fit** rows are the published peaks
the model was built and tested against (`tests/estimator/published_cases.py`: torchtune, torchtitan, litgpt's
config hub and its resource tables, the transformers optimisation guide). Its held-out rows are torchtitan's
December 2024 runs (FSDP × CP on Llama 3.1 8B; TP 8 × PP 8 × FSDP × CP on 405B), which no earlier test used, and
the "Hugging Face + FA2" column of Unsloth's context-length benchmark (QLoRA on Llama 3.1 8B and 3.3 70B: the
longest sequence that fits 12-80 GB, so the card is an upper bound on the peak). The torchtitan rows were looked
at before the rule for FSDP2 under a pipeline schedule was written (the 405B rows were 55-60 % low), but the rule
has no constant to tune: it follows torchtitan's source (weights not resharded after forward when PP is on,
gradients synced on the last micro-batch, fp32 reduce dtype).

Eight held-out rows from two sources no earlier test used were added before any change to the memory model, and
their errors recorded first: the PEFT method comparison on MetaMathQA (Llama 3.2 3B on an L40S: LoRA r=32 and r=64
on q, v, r=10 on the MLP, full fine-tune; max reserved) and the PEFT accelerate guides (Llama 2 70B LoRA under
DeepSpeed ZeRO-3 on 8 GPUs, QLoRA under FSDP with and without parameter offload and under ZeRO-3 on 2 GPUs). Before
(commit 78a38ef's model): -12.0 %, -12.7 %, -14.6 %, +6.5 %; -18.5 %, -16.1 %, +50.5 % (offload), -18.4 %; the
held-out median over all 22 rows was 17.2 % (23.3 % over the 14 torchtitan and Unsloth rows alone).

Then the model changed, every change read from framework source, none tuned on these rows (commit 7fcb7c0):
the unfused cross-entropy holds 12 bytes per logit, not 10 (transformers `ForCausalLMLoss` upcasts the logits;
log_softmax saves its fp32 output and its backward meets nll_loss's fp32 gradient and makes another);
QLoRA through PEFT's `prepare_model_for_kbit_training`, as TRL's SFTTrainer runs it on one GPU, keeps the norms in
fp32, which puts the residual stream and the saved activations in fp32 (new input `kbit_upcast`, on by default for
qlora, off for torchtune, litgpt and sharded QLoRA, which skip it); a LoRA plan with parameters offloaded keeps only
the gathered units on the GPU; FSDP gathers QLoRA layers as stored, NF4. Rows seen before these changes: all of
them (torchtitan, Unsloth, PEFT). The Unsloth rows, 25-36 % under their card before, motivated reading the
transformers + PEFT path; they now read 8-30 % under the card (an upper bound), and their 48 GB row, where
Hugging Face + FA2 runs out of memory for 70B at any length, is what the estimate now says too. After: held-out
median 11.6 % over 22 rows (fit 5.9 %, was 8.1 %); torchtitan 8B FSDP × CP -3 to -4 % (was -13 %); PEFT method
comparison -8 to -11 % and +9 %. Then a `compiled` plan input (torch.compile: Inductor's min-cut partitioner
recomputes fused pointwise ops, so RMSNorm and the SwiGLU MLP save fewer tensors) was added and set on the runs
whose publications state torch.compile (torchtune's table, torchtitan's Table 2 and its December 2024 runs): it
takes 2.4 GiB off the torchtitan 8B rows (one recomputed layer's working set at 32,768 tokens), which now read
-6 to -7 %, and moves the held-out median to 12.3 %, the figure this report gives. Still low and not explained: the
PEFT guides' 70B rows (-17 to -24 %, -47 % with parameter offload; "memory consumed per GPU" read off the GPU
monitor, CUDA context and allocator reserve included) and torchtitan's 405B 4D rows (-13 to -23 %).

Then (2026-12-02) each held-out row is compared with the figure its source measured, not with the gate figure
(`measured_bytes` in `app/estimator/memory/`; the case's `measured` field): torchtitan's and PEFT's method
comparison report `torch.cuda.max_memory_reserved()`, the caching allocator's pool, which holds the cuBLAS workspaces
and the allocator's slack but not NCCL's channel buffers (NCCL allocates those itself), so "reserved" is the total
less those buffers on a multi-GPU plan; the PEFT accelerate guides read the GPU monitor and Unsloth's rows are the card
a run just fits, both the process's whole footprint, so "device" is the total plus the CUDA context (`gpus.json`:
nvidia-smi's total less the usable memory, 0.6 GiB on an H100, 1 GiB on an A100). No constant is new and none was set
on these rows; every held-out row had been seen before this change. The fit rows keep the gate figure, as they were
tested. Effect: held-out median 12.3 % → 12.1 % (fit unchanged, 5.9 %): the PEFT guides' 70B rows read -16 to -21 %
(-42 % with offload), Unsloth's -7 to -22 % under their card, torchtitan's rows 0.5 GiB lower (8B -7 %, 405B -14 to
-23 %). The goal (≤ 12 %) is not met: what remains is the PEFT guides' 70B rows and torchtitan's 405B 4D rows, whose
growth with CP (75 → 85 GiB at the same local sequence) nothing in the model follows. The planner keeps gating on the
total against the usable memory less the 5 % headroom: the CUDA context is already outside the usable memory and NCCL's
buffers are inside the total, so neither is counted twice.

Then (2026-12-03) a fifth held-out memory source that no earlier case used, its rows chosen and their errors recorded
before any change: fms-acceleration's A100 80GB benchmark table (IBM's fms-hf-tuning SFT runs of February 2025:
transformers 4.48, PEFT, bitsandbytes, FSDP over 2 GPUs, packed 4,096-token sequences, gradient checkpointing).
Every plain Trainer row was taken (full fine-tuning, LoRA and bitsandbytes QLoRA of Mistral 7B, Mixtral 8x7B and
Llama 2 70B that did not run out of memory: 19 rows); the rows of fms's own plugins (fused kernels, GPTQ) run code
we do not model and were left out, as was santacoder, whose 2,048 positions are below the packing length. The
table gives two readings per run, torch's allocated peak and nvidia-smi's; both were computed before one was
chosen, and both are reported. The allocated peak is the one compared, because the nvidia-smi reading moves with
the caching allocator's history: Mistral 7B full fine-tuning on 2 GPUs at batch 2 and 4 has the same allocated peak
(33.7 GiB) and reads 43.3 and 52.3 GiB on nvidia-smi. Against the allocated peak (`measured` "allocated": the
total less NCCL's buffers and the allocator's slack) the 19 rows read 4.3 % at the median; against nvidia-smi
("device") 13.8 %. No constant was changed. What they show: full fine-tuning at batch 8 reads +18 to +21 %,
because the Trainer's peak is the optimizer step (the allocated peak is the same at batch 4 and 8: weights,
gradients, AdamW states and one parameter-sized foreach temporary, exactly 67.5 GiB on one GPU and 33.7 on two),
while the estimate adds the gradients to the activation peak; that sum is right under gradient accumulation, where
gradients live through the next forward, and 18-21 % high at one micro-batch per step with gradients freed
(`zero_grad(set_to_none=True)`). Single-GPU QLoRA reads +11 to +19 % (the fp32 activations of
`prepare_model_for_kbit_training` are counted, as TRL's SFTTrainer runs it), Llama 2 70B QLoRA over 2 GPUs -22 %.
The same 19 runs publish the Trainer's tokens per second per GPU, added as held-out throughput rows on the same day
(after their memory had been seen; nothing set on them). Their stack is the Hugging Face Trainer, so they state
`Plan.tuning` "typical", the rule every row follows (the stack as the source names it): median 10.1 %, 14 of 19
inside the range. By task: full fine-tuning runs at the tuned point (-18 to -25 % against the typical end, 0 to +9 %
against the point), LoRA and QLoRA at the typical end (-15 to +10 %; the point would read +14 to +47 %): PEFT's
adapter matmuls, dropout and bitsandbytes' dequantisation cost more than the estimate's LoRA terms.

Then (2026-12-06) one speed point per stack and task, each calibrated on that stack's own runs
(`app/estimator/performance.py` `TUNING_SPEED`, the planner's `speed_point`): the median of published ÷ our point
over the stack's rows here, asserted by `tests/estimator/test_stack_speed_points.py`. torchtitan (the fsdp stack's
launch) 0.93 over its 10 runs (torchtitan's own, its June 2025 benchmark, Trainy's H200 runs; 0.73-0.99); the
Hugging Face Trainer (the deepspeed stack's launch) 0.98 for full training over fms-acceleration's 4 full
fine-tuning runs (0.92-1.00) and 0.78 for LoRA / QLoRA with PEFT over its 15 (0.68-0.95; it had been the typical
end, 0.75, for both); Megatron-LM stays the point (its 10 runs: 0.99). These rows now state their stack's point, as
the planner times them, and are in-sample for the factor. Before the change, on the same rows (commit 31797ad, which
recorded the six llm-foundry A100 rows of 4,096 and 8,192 tokens at first contact: median 6.6 %, -11 % to +33 %):
throughput 4.6 % fit / 8.8 % held out at the median, 28 of 30 / 48 of 53 inside the range; after: 4.1 % / 6.5 %,
28 of 30 / 48 of 53 (fms-acceleration 10.1 % → 4.9 %, torchtitan's June 2025 rows 5-37 % → 1-27 %). A100 dense
pre-training was checked at the same time and left where it is: llm-foundry's A100 rows at customers' sequence
lengths read 6.6 % at first contact (median -5 %, low rather than high), torchtitan's 64-A100 runs +1 % and -6 % at
its point, Megatron-LM's A100 runs 1-13 %. Meta's Llama 2 7B average, 2.0T tokens ÷ 184,320 A100-hours = 3,014
tokens/s per GPU (Touvron et al. 2023b, Table 2), is a whole run on Meta's clusters (A100-80GB at a 350 or 400 W
TDP, the same table), every restart included: it is the GPU-hours row below (ours 20 % under it, inside the
range), not a step rate of 8 GPUs. A plan on a GPU generation no run calibrated (Ada, Volta) has its range's slow
end widened by the spread of the fitted GEMM fractions (Hopper's 0.60 ÷ Ampere's 0.78), as MoE models and
offloaded states already were.

Then (2026-12-06, later) the ranges were made honest to the runs they are read against, on the rows above (no new
source; these rows are in-sample for both changes). (1) Each stack whose point is the median of its own runs
(torchtitan, the Trainer, the Trainer with PEFT: `STACK_CENTRED`) has its range move with that point, RANGE_LOW to
RANGE_HIGH of it; before, the range spanned the stacks around the unstated point, so the Trainer with PEFT's point sat
4 % above the slow end and 3 of its 15 runs (0.68-0.72 of the unstated point) were below it. (2) Pre-training on A100
has its own ends (`AMPERE_PRETRAIN_SLOWEST`, `AMPERE_PRETRAIN_FASTEST`): the A100 runs of 8-64 GPUs read 0.89-1.12x the
point, but whole runs on 384-3,360 A100s, every restart included, read 0.66-1.21x our estimate of them at their own
scale (StarCoder 0.66 on its card's 320,256 GPU-hours or 0.72 on its 512 GPUs for 24 days, MT-NLG 0.74-0.77, Llama 2
13B 0.77 and 7B 0.80, BLOOM 0.77; LLaMA 65B 1.21). The slow end is 0.67 of the point (every one of them but
StarCoder's lower reading, within the ±30 % median half-width the ranges are held to) and the fast end 1.22, not the
1.30 NeMo's H100 recipes set, so an 8 × A100 Llama 2 7B plan (4,292 tokens/s per GPU) reads 2,876-5,236 and holds
Meta's 3,014. Throughput inside the range: fit 28 of 30 → 28 of 30, held out 48 of 53 → 51 of 53 (fms-acceleration
18 of 19 → 19 of 19, MT-NLG at 3,360 GPUs now inside); GPU-hours 7 of 7 and 7 of 9 as before (StarCoder's 320,256
still outside); median half-widths ±27 % → ±29 % (throughput fit) and ±28-29 % → ±29-30 % (GPU-hours). Medians of
|error| do not move (the points do not).

Published GPU-hours include everything a run spent; ours are `performance.gpu_hours`, which add the goodput parts
(`app/estimator/goodput.py`: interruptions at Llama 3's rate, checkpoint saves at Young's interval, evaluation,
start-up) to the compute time.

| | set | cases | median abs. error, baseline | now | worst now | inside range | median half-width |
| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |
"""


FIRST_CONTACT_INTRO = """Each row of these sources was written down with its plan, card and the reading its source took
(`tests/estimator/memory_first_contact.py`), committed, and then run through the estimator as committed
(`benchmarks/memory_first_contact.py --record`), before any change it could motivate: the **first contact** error is
that run's (`tests/estimator/data/memory_first_contact.json`, with the commit; fms-acceleration's rows were recorded
so on 2026-12-03 and are the estimator of the commit that added them). That is the out-of-sample figure. Every later
figure on the same rows is **fitted**, and so is every other memory row in this report: the "fit" rows the model was
built against, and the rows earlier versions of this report called "held out" (torchtitan's December 2024 runs,
Unsloth, the PEFT guides and method comparison), which were looked at before the rules around them were written. The
range constants (`app/estimator/memory/band.py`) are fitted on all of these rows. "Judged to fit": every row is a
run that ran; the gate (the total within the card's usable memory less the 5 % headroom) said it fits."""


FIRST_CONTACT_CHANGES = """\
Changes after first contact (each makes the rows it touches fitted): eager attention keeps 6 bytes a score, not 2
(transformers' eager_attention_forward; ms-swift's Qwen-7B pair with and without flash attention, +19.97 GiB, was
the evidence: the row without checkpointing moved from -34 % to -5 %, the one with it from -30 % to -28 %), the
fused loss and FP8 parameters became plan inputs (Liger's kernel benchmark and torchao's float8 all-gather pair; no
first-contact row states either), and the range constants were set on all the rows above. Selective recompute became
torchtitan's op-level policy as its source writes it (torchtitan/distributed/activation_checkpoint.py: every other
matmul's output kept), where the model had kept every matmul output: torchao's H100 rows moved from +17 % to -4 %,
Trainy's from +73 % to +31 %, the B200 rows from +65 % to +36 %, and the fit rows of torchtitan's own table from +15
/ +21 % to -9 %. Megatron-Bridge's, torchtitan nvfp4.md's and torchao's Llama 4 MoE rows (recorded at 2acabef,
+2 to +50 %, all high) moved the model four ways: Megatron plans with FP8 parameters keep bf16 gradient buffers
(the Bridge and NeMo recipes' grad_reduce_in_fp32 False; the launch adds --grad-reduce-in-bf16) and Transformer
Engine's FP8 linears save their inputs in FP8 (Bridge's Llama 3 70B FP8 SFT rows from +2..+27 % to -11..+9 %); the
loss compiled with the model is a plan input (plan.loss "compiled", 4 bytes a logit, the default where compile is on:
Trainy's rows from +31 % to -3 %, the B200 rows from +36 % to +11 %); and the rows were stated as they ran
(transcription): torchtitan's 2026 configs run ChunkedLossWrapper (the fused loss: nvfp4.md's rows from +42..+50 %
to -5..-9 %), and torchtitan's 2025 compile compiled the loss (Trainy, B200, Llama 4 MoE). The range leans: QLoRA
wider both ways, expert-parallel plans wider above. What first contact shows and nothing has fixed: Hugging Face
Trainer LoRA under ms-swift reads 25-54 % low as sequences grow (the reserved pool of variable-length batches;
Qwen's own README, padded to fixed length, reads -1 to -16 % on the same models), torchtitan's Llama 4 Scout FSDP x
EP runs without checkpointing 32 % low (the MoE dispatch and grouped-GEMM buffers), and single-GPU QLoRA at 8k
tokens 20-35 % high (the fp32 activations of prepare_model_for_kbit_training).

Two sources recorded at bf5de6d (2026-12-06), before any change: AnswerDotAI/fsdp_qlora's March 2024 benchmarks
(19 rows: Llama 2 7B, Yi 34B, Llama 2 70B and Mistral 7B LoRA and bitsandbytes QLoRA r=64 on two 24 GB cards under
PyTorch FSDP1, DDP and CPU offload; max reserved, two rows max allocated) read 14.0 % at the median, every row low
but one (-34 % to +2 %), all 19 judged to fit, 17 inside the range; torchtune's README of 2024-03-28 (5 rows, Llama 2
7B, max reserved) read 48.1 % (-18 % to +91 %), 2 of 5 inside. One change followed, a plan input: the optimizer
stepped in the backward (Plan.optimizer_in_backward, torchtune's optimizer_in_bwd: one gradient held at a time),
which torchtune's low-memory full fine-tune runs (+91 % to +8 %). Left as they read: fsdp_qlora's rows under FSDP1
read low where the reserved pool runs above the allocated peak (1.96 and 1.06 GiB at batch 1 x 512 and x 2,048 in its
own LoRA pair, which the allocated readings match within 2 %; FSDP1 frees all-gathered parameters through
recordStream, which torchtitan's docs/fsdp.md names as why FSDP2's memory is lower and deterministic) and with CPU
offload (-24 to -30 %); torchtune's two FSDP rows read +48 % and +56 %, figures its README replaced two weeks later
(12.01 -> 22.9 GB and 14.17 -> 20.95 GB at fef3ed10d): 12.01 GB (11.2 GiB) is below the 12.6 GiB that bf16
weights, gradients and AdamW states of 6.7B parameters take on each of 4 GPUs.

What ms-swift's rows ran, read from its source at the commits that wrote them (97e4d198b, 4312aeb28): flash attention
on both families (Qwen's remote code with config.use_flash_attn; Yi through transformers' flash_attention_2), Hugging
Face gradient checkpointing with enable_input_require_grads, the Trainer's bf16 autocast (so Qwen's cross-entropy on
bf16 logits runs in fp32: the standard 12 bytes a logit), batches of one sample, and torch AdamW (adamw_torch). One
change followed: torch AdamW's foreach step makes one more copy of the second moment beside the states
(torch/optim/adamw.py `_multi_tensor_adamw`), which sets the peak where it outweighs the activations: the Qwen-7B
full fine-tune from -18.5 / -16.1 / -11.4 % to -1.6 / -1.9 / -2.5 % at 512 / 1,024 / 2,048 tokens, Qwen-1.8B's at 512
from -12.9 % to -4.2 %. Left as they read: the LoRA rows' pool. Every row at max_length <= 2,048 ran over the whole
dataset and every row above over 1,000 samples (scripts/benchmark/test_memory_time/run_single.py), and the reserved
pool of varied-length batches grows with the steps: Qwen-1.8B's full fine-tune reads 35.11 GiB at 2,048 tokens and
31.62 GiB at 4,096, which no count of one step gives; the Yi rows ran with the 'delete' truncation (samples longer than
max_length dropped: lengths spread below it).

Two changes of the cross-entropy's memory (2026-12-06), fitted on every row they touch. The 16-bit logits' block in
the reserved pool: the head's bf16 logits are freed before the backward, and PyTorch's caching allocator serves a
request only from a cached block at least its size (c10/cuda/CUDACachingAllocator.cpp `get_free_block`, best fit,
blocks of separate segments never merged), so the standard loss's fp32 gradients of the logits (4 bytes a logit) grow
the pool by a new segment while that 2-byte block stays cached: 2 bytes a logit more in the reserved and device
readings, not in the gate nor the allocated peak (transformers' ForCausalLMLoss and torchtitan's cross_entropy_loss
upcast with `.float()`; not the compiled, fused, chunked or 16-bit losses, not Megatron-LM's). torchao's H100 rows at
8,192 tokens moved from -4 % to 0 %, the source from 10.7 % to 7.9 %; ms-swift 12.3 % to 10.3 %, fsdp-qlora 14.0 % to
9.6 %, torchtune-2403 17.9 % to 16.2 %, qwen-readme 8.3 % to 8.0 %. And the loss on 16-bit logits is a plan input
(plan.loss "no_upcast", /estimate only: no stack this service launches runs it, so /recommend refuses it as
levers_unsupported): nn.CrossEntropyLoss on the bf16 logits outside autocast keeps the 16-bit log-probs and two 16-bit
gradients, 3 elements of the logits' dtype a logit (6 bytes; 12 where PEFT's k-bit preparation leaves the head fp32).
universal-llm-trainer's rows run it (every config at 9efd14b5 sets amp_training: False; src/trainer/trainer.py,
src/models/llama3.py call the model without labels and the criterion on its bf16 logits), so they now state it
(transcription, after first contact): its single-GPU LoRA rows moved from +2 ... +53 % to -11 ... +4 %, its QLoRA rows
(fp32 logits) stayed, the source from 12.0 % to 5.7 % (25.1 % with the block alone, the rows still stated with the
upcast loss). Left as they read: its FSDP CPU-offload rows (four runs on each card) at -21 to -48 %, -37 to +34 % at
first contact (what FSDP1 with CPUOffload keeps on the card is not the loss), the Qwen remote code's second 16-bit
copy of the logits (`shift_logits.contiguous()`, a 4-byte block, not 2), and the ms-swift LoRA rows' varied-length
pool.

One source recorded at fda69d4 (2026-12-06), before any change: Liger-Kernel's pull request #199 logs (20 rows:
Llama 3 8B, Mistral 7B, Gemma 7B, Qwen2 7B and Phi-3.5 mini full fine-tunes under the Hugging Face Trainer with
accelerate's FSDP on 4 GPUs, activation checkpointing, Alpaca padded per batch, each run with the Trainer's loss and
with Liger's fused kernels; max allocated and max reserved of each run) read 15.6 % at the median (signed -1.3 %,
-45.5 % to +27.6 %), all 20 judged to fit, 7 inside the range. Its allocated peaks read high without Liger (+11 to
+28 %) and right with it (-13 to +0.4 %), though Mistral's two runs peak at the same 34,547.9 MiB: the optimizer step,
not the loss, sets that peak. One change followed, on one GPU and under FSDP where the plan names the Trainer's torch
AdamW (Plan.fsdp_torch_adamw, stated on these rows and on fms-acceleration's FSDP rows after first contact): a step of
one micro-batch holds its gradients only from its backward on (autograd and FSDP's reduce-scatter make them there; the
Trainer's zero_grad frees them after each step), so the peak is the larger of the backward's start and the step with
its copy of v, not their sum (DeepSpeed ZeRO-3's flat gradient buffer, DDP's buckets, Megatron-LM's main grads and
gradient accumulation keep the sum). The source moved from 15.6 % to 12.8 % (allocated without Liger +3 to +19 %,
Mistral's pair +3.1 % both), fms-acceleration from 4.3 % to 3.1 % (its one-GPU Mistral 7B full fine-tune at batch 8
from +17.9 % to +0.3 %, its FSDP rows from +20.7 % to +3.1 %), PEFT's method comparison 6.8 % to 5.7 %,
universal-llm-trainer 5.7 % to 5.5 %; litgpt's TinyLlama full row now states its 8 micro-batches a step (global batch
32). A second change came from the same logs' per-step readings: Mistral 7B with Liger's fused loss (no logits) holds
34,547.8 MiB allocated at every step while its reserved pool reads 42,254 MiB after step 2, 45,388 after step 3 and
46,732 from step 4 on. torch's AdamW makes m and v in its first step, after the first batch's activations were freed,
and the caching allocator cuts them from those blocks (best fit, split); the states stay, so a batch of another length
takes new segments for its activations, and segments never merge. Where torch's AdamW steps a full fine-tune on one
GPU or under the Trainer's FSDP and batches vary in length, the reserved reading now keeps two more sets of the
activations other than the loss's (`activations.VARIED_LENGTH_ACTIVATION_SETS`); the allocated reading and the gate
do not move. The source moved from 12.8 % to 9.4 % fitted (inside the range 10 -> 15 of 20; its reserved rows with
Liger from -19 ... -48 % to -14 ... +8 %, Phi-3.5 mini with Liger -48.1 -> +7.9 %), with two rows worse: Qwen2 7B
with the Trainer's loss +6.2 -> +18.1 % reserved (its allocated peak reads +18.8 %) and ms-swift's Qwen 1.8B full
fine-tune at 8,192 tokens +18.8 -> +26.0 % (ms-swift stays at 10.3 %, its Qwen 7B full fine-tunes -0.7 ... -2.5 %). A
third change moves no row: the planner's DeepSpeed launch names no optimizer in ds_config without offload, so the
Trainer's torch AdamW steps the fp32 partitions and its copy of v now counts there (one ZeRO-3 sub-group of 1e9
elements at most). Left as they read: Phi-3.5 mini with Liger at 128 x 496 tokens (-18 % allocated), the bitsandbytes
QLoRA rows of ms-swift (-34 to -40 %: the pool reads 4.6 / 6.8 / 20.0 GiB above the same table's GPTQ int4 runs of
Qwen 7B / 14B / 72B, which neither the NF4 constants, the dequantised weights nor the 16-bit embeddings account for;
no cause found that a source states).

One source recorded at 67de5f5 (2026-12-06), before any change: torchtune's LoRA tutorial (docs/source/tutorials/
lora_finetune.rst at ff594c231; 4 rows: Llama 2 7B on 7B_lora_single_device, batch 2 of Alpaca cut at 512 tokens,
LoRA on Q and V or on every layer at rank 8 or 64; max reserved) read 3.7 % at the median, every row low (-3.2 to
-4.0 %), all 4 judged to fit. Nothing changed for it. One change followed on ms-swift's bitsandbytes rows, read from
the library's source: before 0.43.0 bitsandbytes quantised every weight from an fp16 copy (nn/modules.py
Params4bit.cuda `.half()`, dropped by dcfb6f81), so under swift's bf16 compute dtype each matmul dequantises its
matrix to fp16 and casts it (autograd/_functions.py MatMul4Bit `F.dequantize_4bit(B, state).to(A.dtype)`, forward
and backward): two 16-bit copies at once, the fp16 one freed before the matmul's output is asked for, so the caching
allocator cuts that output from the freed matrix-sized block. The rows state it (Workload.bnb_fp16_dequant; the
table's environment names bitsandbytes 0.41.3.post2); the allocated reading and the gate count the second copy, the
reserved reading a pool of 12 16-bit copies of one decoder layer's quantised matrices (activations.
BNB_FP16_DEQUANT_POOL_COPIES, FITTED on these three rows: 12.3 / 11.5 / 12.3). The gap to the same table's GPTQ rows
follows one layer's size, not the model's (x4.31 from 7B to 72B measured and a layer, x10.8 the model); three other
suspects were ruled out: the compute dtype was bf16, not bitsandbytes' fp32 default (swift/llm/utils/argument.py
`select_bnb` at cfcb67265: bnb_4bit_comp_dtype AUTO = dtype), the 16-bit embedding and head are the same in the GPTQ
runs, and a model of the allocator over bitsandbytes 0.41's load (fp16 copy on the card, then its packed out and
absmax) leaves 0.2 / 0.2 / 0.5 GiB of holes, not 4.6 / 6.8 / 20.0. The rows moved from -40.1 / -39.3 / -33.5 % to
-20.8 / -15.4 / -6.9 %, the source from 10.3 % to 9.7 % (fitted); what they still read low is the GPTQ rows' -26 /
-22 / -9 %, left as they read.

One source recorded at b70c8c3 (2026-12-06), before any change: pytorch/torchtitan issue #773, the Llama 3.1 405B
FSDP 8 x TP 8 x PP 8 run of its December 2024 benchmark under ScheduleInterleavedZeroBubble, without torch.compile,
Float8 or async TP (89.73 GiB max reserved): -40.5 %, judged to fit (stated as interleaved 1F1B, v 2; the estimator
has no zero-bubble schedule). One change followed, read from the schedules' source: torch.distributed.pipelining
keeps every micro-batch's last-stage output in `output_chunks` until `step()` returns (pytorch/pytorch #138504,
#159251), which torchtitan ran until it passed return_outputs=False (pytorch/torchtitan #1922, 2025-10-22), so a
plan input (Plan.pp_keeps_outputs, off for the plans the planner launches) adds the other micro-batches' 16-bit
logits, vocabulary-sharded by TP, to the last stage. Set on torchtitan's runs of December 2024 and January 2025:
the issue's row from -40.5 % to -35.8 %, the benchmark's 3D rows from -37 / -26 % to -30 / -21 % (1F1B /
interleaved); its 4D rows (-14 to -23 %) stay, their first stage holding more. The first stage's activations in
flight already match the schedules' warm-up counts (torch's ScheduleInterleaved1F1B and Megatron-LM:
(v - 1) p + 2 (p - 1) chunk forwards on rank 0; 1F1B p - 1). Left as they read: the rest of the 405B gap (21-36 %:
torch.compile, Float8 and async-TP buffers, and zero bubble's deferred weight gradients, none modelled), and the
3D pair's order (1F1B reads 10 GiB above interleaved; the activations in flight say the reverse).

One source recorded at f4ebb95 (2026-12-06), before any change: pytorch/torchtune's README "Optimization flags"
(1814feb17, PR #2003), Llama 3.2 3B on one A100 at batch 2 x 4,096, ten techniques added in turn, peak active memory
(read as allocated): 14.0 % at the median (+7.4 % signed, -23 % to +66 %), all 10 judged to fit, 6 inside. Three
changes followed. torchtune compiles only the per-chunk upcast and cross-entropy of its chunked loss
(torchtune/training/_compile.py `compile_loss`), whose graphs keep the 16-bit chunks and one chunk's gradient: 2.25
bytes a logit, not the eager chunks' 4 (its README rows of September 2024 state the compiled loss too): the table's
LoRA / QLoRA rows from +35 / +66 % to +15 / +29 %, optimizer-in-backward and offloading from +7 / +8 % to -0 / -0 %,
8-bit AdamW from -0 % to -10 %; the 2024-09 README rows from +7 / -8 / +4 % to +3 / -9 / -3 %. Qwen's Q-LoRA rows
state their loss on the fp16 logits (the Trainer runs no autocast under DeepSpeed: "deepspeed ... manage their own
half precision", transformers trainer.py; Qwen's remote code has no upcast of its own): at 8,192 tokens from +41 /
+26 / +29 % to -20 / -15 / -6 % (1.8B / 7B / 14B). DeepSpeed ZeRO-1/2 holds two 16-bit gradient buckets of
reduce_bucket_size elements through every backward, whatever the trainable parameters (stage_1_and_2.py `backward`;
5e8 by default, Qwen's ds_config_zero2.json 2e8: Plan.reduce_bucket_elements): Qwen's Q-LoRA rows from -23..+41 %
to -19..-3 %, all 24 inside (qwen-readme 42 of 42). Left as they read: the table's full fine-tune without
checkpointing after compile (-23 %: its non-chunked loss upcasts in the decoder, outside the compiled loss, which
the plan cannot say), with checkpointing (+21 %: the step's copy of v of torch's foreach AdamW, which the published
24.9 GiB, 1 GiB above the bf16 states, rules out: the run evidently stepped a fused AdamW), and the LoRA / QLoRA
rows, whose 8.5 / 4.6 GiB sit below the weights plus the 16-bit logits of 8,192 tokens (1.96 GiB) that any loss
over them holds.

Four under-estimates read again at their sources (2026-12-06), none changed: no source states a quantity to model.
torchao's Llama 4 Scout rows (-32 %) ran torchtitan, read at 92ed8b31 (2025-10-14; the README section is pytorch/ao
838dcebb1 of 2025-10-13): the loss is compiled (compile.components ["model", "loss"]; components/loss.py upcasts
inside the compiled function), the model returns 16-bit logits (models/llama4/model/model.py) and the step drops them
before the backward (train.py `del pred`), as the rows state. Their 13.2e9 logits a GPU make the compiled loss's 4
bytes a logit 49 GiB of the 99 GiB estimate; the published figure implies 7.8, where the eager loss would read +39 %,
and the other compiled-loss rows (Trainy, torchao's B200 rows: 1.1-2.1e9 logits) read -4 ... +13 % at 4. Inductor's
rewrite that keeps the cross-entropy's one-hot unmaterialised (fx_passes/post_grad.py `scatter_upon_const_tensor`)
has no size condition; the MoE blocks compile with fullgraph False (llama4/infra/parallelize.py `apply_compile`), and
counting their layers eager adds 10 GiB, not 46. fsdp_qlora's rows: train.py resets the peak after the FSDP wrap, so
the reserved peak starts from the pool loading and wrapping left, which the post gives for one row only ("about
3.72GiB (see reserved_after_model_wrap)", Llama-2 7B QLoRA, batch 1 x 512, estimated 3.30 GiB for the whole step);
the misses do not follow CPU offload (its QLoRA rows at batch 12 read -3 / -4 %, the Yi 34B run without offload reads
-15 %). torchtitan #773: torch's ScheduleInterleavedZeroBubble warms rank 0 up with (v - 1) p + (p - 1) chunk
forwards, not interleaved 1F1B's (v - 1) p + 2 (p - 1), and defers rank r's weight gradients by r steps
(torch/distributed/pipelining/schedules.py `_calculate_single_rank_operations`: multiply_factor 1,
num_1f1b_microbatches = rank); the issue's own Llama 3 8B PP 8 readings agree (rank 0 22.74 -> 20.57 GiB, rank 7
17.97 -> 22.23 GiB from interleaved to zero bubble). A zero-bubble schedule read from that source lowers the first
stage, which the estimate takes as worst; the 405B line names no rank, and what a later rank's deferred weight
gradients hold is not stated. ms-swift's Yi 6B rows (-31 / -37 % at 4,096 / 8,192 tokens) ran flash attention 2 (the
table's default --use_flash_attn true; swift/llm/utils/model.py sets config._attn_implementation) and grow 15.6 GiB
from 4,096 to 8,192 tokens where the estimate grows 8.0; the table's chatglm3-6b rows written in the same commit
(4312aeb28, not recorded here) jump alike (17.2 / 29.8 / 66.8 GiB), and that commit's 'delete' truncation spreads the
batch lengths up to max_length: the varied-length pool, modelled and fitted on Liger's rows.

One source recorded at c09ea58 (2026-12-06), before any change: atorch's Llama 2 7B table (intelligent-machine-
learning/dlrover atorch/examples/llama2/README.md at 3a442b728; A100 80GB, 4,096-token blocks, per-layer
checkpointing, flash attention; max allocated on rank 0) read 40.5 % at the median (signed -40.5 %, -55.7 % to +10.4
%), all 14 judged to fit, 6 inside the range. Its six DeepSpeed 3D rows (fp16 with fp32 master weights, ZeRO-1, TP x
PP up to 64 GPUs, micro-batch 8) read -6.2 to +10.4 %; its eight PyTorch FSDP rows (full and LoRA r=16, 8 to 64 GPUs,
batch 4) read 37 to 56 % low, and the gap does not shrink with the GPUs (LoRA 32.6 -> 29.8 GiB published, 14.6 ->
13.2 ours): 14 to 18 GiB at every GPU count, which no shard holds. Those runs keep fp32 parameters under
torch.autocast bf16 with no FSDP mixed-precision policy (fsdp_llama2.py: from_config, precision bf16_amp), which the
estimator cannot state; what that points to, not measured here: the residual stream, the checkpointed layer inputs
and the RMSNorm outputs stay fp32 beside the bf16 copies autocast makes for each matmul, the all-gathered units and
their unsharded gradients are fp32 (the root unit, embedding and head, is not wrapped apart), and the LoRA runs'
frozen base is fp32 (stated as 16-bit). One change followed, a plan input: fp32 parameters under autocast
(plan.fp32_params, /estimate only: no stack this service launches runs it), modelled from the mechanics of torch and
FSDP, not fitted to the rows: 4-byte weights and gradients with AdamW's m and v and no master copy (the parameters
are their own), FSDP's two gathered layers and its root unit (embedding, head, final norm), never freed after the
root's forward (torch/distributed/fsdp/_runtime_utils.py `_post_forward_reshard`), in fp32, the LoRA base in fp32,
the residual stream and checkpointed layer inputs in fp32 (norms and residual adds are not on autocast's
lower-precision list), one bf16 cast of a norm's output per trained projection, and the bf16 weight copies the
matmuls keep (aten autocast_mode.cpp `cached_cast` caches leaf parameters only, so under FSDP, whose unsharded
parameters are views, only the recomputed layer's and the head's). The eight FSDP rows state it since and are fitted
for it: -37 to -56 % -> -24 to -33 % (the source's median 40.5 % -> 25.4 %, the full run on 8 GPUs inside the range);
the LoRA rows' fall from 8 to 64 GPUs (2.77 GiB published) reads 2.7 GiB with it, the fp32 base's shard, and 1.4
without. The first-contact figure stays as recorded. What is left, 7-9 GiB at every GPU count, is not modelled: the
training loop keeps `outputs` through the backward (fsdp_llama2.py), so transformers' fp32 logits (`logits.float()`,
2 GiB at 4 x 4,096 x 32,000) are held beside the loss's buffers; the rest the source does not say. The whole
first-contact set's median is unchanged (8.3 %; 8.0 % with the fitted and seen rows, 286 in all).

One source recorded at ea5312c (2026-12-06), before any change: fms-acceleration's GraniteCausalLM table
(foundation-model-stack/fms-acceleration scripts/benchmarks/refs/a100_80gb_granite.csv at fc78b55b6; ibm/PowerLM-3b,
40 layers of 2304 with a tied 49,152-token head, through the same Hugging Face Trainer harness as the fms-acceleration
rows, with transformers 4.45.2 and accelerate 0.34.2: alpaca-cleaned packed to 4,096 tokens, flash attention 2,
gradient checkpointing, full fine-tune, LoRA r=16 on q, k, v, o and bitsandbytes QLoRA, one A100 at batch 4 and 8 and
two under FSDP1 at 2 and 4; max allocated, 12 rows) read 9.6 % at the median, every row high (+2.4 to +17.6 %; full
fine-tunes +2 to +9 %, LoRA +7 to +11 %, QLoRA +13 to +18 %), all 12 judged to fit and inside the range. What it
shows: the rows grow with the tokens by the checkpoints and the loss alone. From LoRA batch 4 to 8 on one GPU
(16,384 tokens) they grow 12.10 GiB, 793 KB a token; the 40 checkpointed inputs (2 x 2304 bytes) and the loss's 12
bytes for each of 49,152 logits make 774 KB, and the estimate, which adds the working set of the layer being
recomputed (97 KB), 871 KB. The two are never live together: the loss's buffers are freed by its own backward, and
the last checkpointed layer's forward is rerun only afterwards, inside that layer's backward (torch/utils/
checkpoint.py CheckpointFunction.backward). Taking the smaller of them out of the allocated reading only (the reserved
pool keeps both: the loss's requests are larger than every block the layers' forward left cached, CUDACachingAllocator
`get_free_block`) reads this table's twelve rows -1.2 to +4.6 % (median 0.9 %), Liger's allocated rows 7.7 -> 5.4 %,
torchtune-flags 13.7 -> 13.0 %, and the whole first-contact set 8.4 -> 8.0 % (220 of 253 inside the range, 217
before; all 298 memory rows 8.1 -> 7.9 %). Not made: it moves two sources the wrong way, where the double count stands
in for terms their rows do not state. fms-acceleration's 3.1 -> 5.4 %: its Llama 2 70B QLoRA over two GPUs -21.9 ->
-26.7 % (outside its test's 25 %) and its Mistral 7B FSDP rows -1 .. -2 -> -9 .. -16 % (that table ran transformers
4.48.1, whose ForCausalLMLoss, as quoted from that period, makes its fp32 upcast and a shifted contiguous copy while
the model's 16-bit logits stay referenced: 14 bytes a logit in the forward, which no plan states; not read at 4.48.1
here; its one-GPU LoRA and QLoRA rows, +4 .. +19 % now, read -7 .. -5 %); atorch's 25.4 -> 33.3 %: its FSDP rows
keep `outputs` through the backward (not modelled), and its DeepSpeed 3D rows (-6 .. +10 -> -21 .. -3 %) are stated
with the standard 12-byte loss, where atorch's vocab_parallel_cross_entropy, if it is the Megatron-style
vocabulary-parallel loss its name says (not read here), keeps the estimator's 4 bytes of a fused one. Those statements
come first; the change is one function (activations `_recompute_overlap`) and a breakdown field the allocated reading
subtracts.

Those statements, read at the code the rows ran (each cited in the case files), are made; the rows are fitted for
them and their first-contact figures stay as recorded. fms-acceleration (transformers 4.48.1, refs/requirements.txt):
ForCausalLMLoss at v4.48.1 makes `logits.float()` and `logits[..., :-1, :].contiguous()` while MistralForCausalLM holds
the head's 16-bit logits, 14 bytes a logit at log_softmax (plan.shift_copy_loss; 12 with an fp32 head; the Granite
table's 4.45.2 is not stated so). atorch's FSDP rows (transformers 4.31.0, atorch/requirements.txt): the loop keeps
`outputs`, whose LlamaForCausalLM logits are fp32, through the backward, 4 bytes a logit (plan.kept_logits_bytes).
atorch's 3D rows: `my_loss_func` upcasts and runs atorch's vocab_parallel_cross_entropy, a Megatron-LM fork that
saves the softmax and writes the gradient into it, 4 + 4 bytes a logit of the shard (plan.upcast_vocab_parallel_loss),
and DeepSpeed 0.10.0's pipeline engine keeps each micro-batch's fp16 output in the last stage's two buffers, never
freed by its backward (runtime/pipe/engine.py `_exec_backward_pass`), 2 x 2 bytes: 12 in all, as before, so those six
rows read as they did. With the double count still in: fms-acceleration 3.1 -> 5.3 % (one-GPU LoRA +4 .. +6 -> +8 ..
+11 %, the two-GPU rows -2 .. +2 -> +2 .. +6 %, Llama 2 70B QLoRA -21.6 -> -20.5 %), atorch 25.4 -> 20.0 % (FSDP -24
.. -33 -> -19 .. -27 %, 14 of 14 inside the range, 7 before), the first-contact set 8.4 -> 8.5 %, 217 -> 224 of 253
inside the range. With `_recompute_overlap` on top: fms-granite 0.9 %, fms-acceleration 5.0 %, atorch 27.9 % (its 3D
rows -21 .. -3 %), the set 7.9 %, 220 of 253; Llama 2 70B QLoRA over two GPUs reads -25.6 %, outside its test's 25 %,
and the 0.3 GiB it lacks is not in what that table states. The change is made (the allocated reading only: the gate,
the reserved and device readings and every plan's fit are as before): that row stays in its test as a strict expected
failure, about 11 GiB under its published peak with or without the overlap, the double count having hidden 1.5 GiB of
a gap nothing stated explains.

One source recorded at c67aeb7 (2026-12-06), before any change: Megatron-LM's release tests (NVIDIA/Megatron-LM
tests/functional_tests/test_cases at d98e8a64d: the model_config.yaml and golden values of gpt3_15b_8t_release and
three Mixtral releases; pre-training at 4,096 tokens, bf16 with the fp32 main-gradient buffer, the distributed
optimizer, Transformer Engine, no recompute, the 256k vocabulary; GPT 15B TP 8, Mixtral 8x7B TP 2 PP 4 EP 4 and TP 2
PP 4 VPP 8 EP 8 with expert TP 1, Mixtral 8x22B TP 2 PP 8 EP 8; DGX H100 and A100; max allocated as training.py logs
it, on the last rank; 8 rows). The GPU count is not published: the data-parallel size (16) was read off the same
files' steady allocated figure before any estimate. It read 28.7 % at the median, every row high (+1.9 to +135.7 %),
all 8 judged to fit, 2 inside the range. Term by term: the model states match the runs' steady allocated figure
(12.29 GiB against 12.36 on GPT 15B, 16.16 against 16.49 on Mixtral 8x7B EP 4; by construction of the data-parallel
size, so no check), and what is left is the stage the reading is taken on. The estimate is the worst pipeline stage,
the first, holding min(p, m) micro-batches with no recompute; the reading is the last rank (the tensorboard writer),
which holds one and the loss. Read on the last stage, the Mixtral rows are -2.6 to +3.8 % (EP 4: 24.3 GiB against
24.7 and 24.9; 8x22B: 27.2 against 26.6 and 26.2), the first-stage figures being +45 % and +133 %. Not changed: the
estimator's figure is the card that runs out first, which is what a plan needs; these rows stay as the first stage
reads them. Two terms were wrong, each by its code, and are changed (the rows they touch are fitted): the loss
counted 8 bytes a logit, atorch's fork of the vocabulary-parallel cross-entropy, whose out-of-place subtraction makes
a second fp32 tensor, where Megatron-LM's own upcasts inside and makes the softmax in place beside the head's
16-bit logits, 6 (megatron/core/tensor_parallel/cross_entropy.py; the megatron stack's plans under
Plan.upcast_vocab_parallel_loss; 0.98 GiB on GPT 15B), and the GPT 15B row stated an RMSNorm for the LayerNorm its
config names (--apply-layernorm-1p; 1.50 GiB of fp32 norm inputs): its two rows +12.3 / +11.4 -> +2.9 / +2.0 %,
nothing else moved. And the interleaved schedule's last stage held one micro-batch where it warms up (v-1) x p chunk
forwards (Megatron-LM schedules.py `get_pp_rank_microbatches`, torch.distributed.pipelining ScheduleInterleaved1F1B
alike): it now holds (v-1) x p + 1 chunks of 1/v of its layers. That moves torchtitan's 405B interleaved run
(torchtitan-773, -35.8 -> -33.8 %, its last stage now the worst) and no other row: on the VPP 8 row the last stage,
3.6 micro-batches with the loss, stays below the first (33.3 against 34.1 GiB allocated). That row's +3 % hides two
errors of about 6 GiB each: expert TP 1 under TP 2 is not a plan input, so the estimate shards the experts over TP
too and counts 12.2 GiB of states where the run holds 18.4 between steps, and the last stage's activations read
about 6 GiB over the 14.7 the run shows above that, which no term explains here. Left as they are: Transformer
Engine's attention output, which linear_proj saves as its input without the copy transformers makes (one q-width
element a token a layer counted twice, 0.75 GiB on GPT 15B, also inside Megatron's selective recompute), and its
fused norms, which keep no fp32 copy of an RMSNorm's input (0.25 GiB on the EP 4 last stage); both move the fitted
Megatron-Bridge rows. After: megatron-release 24.1 % (the first-stage readings), 4 of 8 inside; the first-contact set
7.9 %, 224 of 261 inside.

axolotl-examples and deepspeed-examples (added 2026-12-06; one change after them, the last below): 10 rows, first
contact 11.8 % median |error|, signed -7.7 %, all judged to fit, 7 of 10 inside the range. Four rows read more than
20 % off; three are explained by no framework's code found, so they stay as recorded. Llama 2 7B QLoRA of August 2023
(+21.9 %, read as the device): bitsandbytes before 0.43 (axolotl's requirements then: >=0.39.0) adds the fitted pool
of fp16 dequantised copies (activations.BNB_FP16_DEQUANT_POOL_COPIES, 4.5 GiB on this 7B) to the reserved and device
readings; without it the row reads -5 %. The pool is a fitted constant and this README's figure an "about 17 GB" with
no reading named, so nothing is refitted on it. Llama 3 70B QLoRA over FSDP with parameter offload on two 24 GB cards
(-63 %, 21 GB "Dual GPU" against 7.7 GiB): the estimate's weights are the root FSDP unit (embedding and head, 3.9 GiB)
with the gathered layers beside; axolotl's loader at that commit (utils/model_shard_quant.py
`load_sharded_model_quant`) quantises each weight on the GPU and moves it to the host (rank 0) or meta (the others)
and empties the cache, leaving nothing resident. Not found: the training step was not traced further, and "Dual GPU @
21GB" may name what the run needs of a 24 GB card rather than a measured peak. Olmo 3 7B QLoRA (-34.9 %): Cut
Cross-Entropy patches olmo3 at the pinned fork (axolotl-ai-cloud/ml-cross-entropy 242b245,
cut_cross_entropy/transformers/olmo3.py), so the loss is fused as stated; the same config on Ministral 8B reads -6 %.
Not found; the Olmo 3 shape here is remembered, not read from its config.json, and is the first suspect. DeepSpeed's
BF16 low-precision run (-24.7 %, 18.9 GiB allocated against 14.3): the master weights are not a second copy when the
module's partitions already have the master dtype (deepspeed/runtime/zero/stage3.py at edaa7221, 2026-08-22,
`_create_fp32_partitions` reuses fp16_partitioned_groups_flat; the engine casts the module to bf16 with bf16 enabled,
autocast or not: engine.py `_mixed_precision_dtypes`), so the states are the estimate's 8 bytes a parameter. Changed
after them: DeepSpeed's step builds the gradients it steps anew, whatever the optimizer. ZeRO-3 flattens each
sub-group's gradients (up to sub_group_size, 1e9 elements) into a new 16-bit tensor and casts it to the master's dtype
(stage3.py `_prepare_fp32_grad_for_sub_group`: `self.flatten(...).to(...)`, the same line at v0.14.0, v0.16.3,
v0.18.0 and edaa7221), beside the partitioned gradients it keeps: 6 bytes an element with an fp32 master, the bf16
copy alone (2) with a bf16 one; ZeRO-1/2 do the same with the whole partition (stage_1_and_2.py `step`). The estimate
had counted it only where torch's AdamW steps (the Trainer's), and then only its copy of v
(memory.states `_zero3_step_temp`, `_zero12_step`). The two bf16_master_weight rows, now fitted: the fp32-master
baseline from -14.3 % to +2.5 % (the rest is the two gathered layers, 0.75 GiB, that stage3.py `step` releases before
the sub-groups and the estimate keeps), the BF16 low-precision run from -24.7 % to -17.3 %, inside the range now (the
other 2.6 GiB not found). Under the Trainer's AdamW the sub-group's fp32 gradient stays beside AdamW's copy of v (4 + 4
bytes an element, where 4 had been counted): ms-swift-examples' four Qwen2.5-7B ZeRO-3 rows (recorded before this
change, fitted now) move from -21.5 / -11.8 / -17.7 / -9.7 % to -13.0 / -10.6 / -8.9 / -8.5 %. No other row moves (on
DeepSpeed's other rows the backward, not the step, sets the peak).

Then (2026-12-06) Transformer Engine's layers as Megatron-LM builds them, read at NVIDIA/Megatron-LM d98e8a64d and
NVIDIA/TransformerEngine d0067d0d (`app/estimator/memory/saved.py`), for every plan of the megatron stack, not fitted to
any row: the fused norms keep their 16-bit input and output (layernorm_linear.py `prepare_for_saving(inputmat, ...,
ln_out, mu, rsigma)`: no fp32 copy of an RMSNorm's input); the attention output is saved once, linear_proj's input
being the very tensor the attention kernel keeps (backends.py FusedAttnFunc `(q, k, v, out_f16)`, returned as a view;
linear.py `saved_inputmat = inputmat`), its own FP8 copy beside it under FP8; the fused SwiGLU keeps its input, the fc1
output, and linear_fc2 the product (fused_bias_swiglu.py, the MLP and the grouped experts alike): 3 ffn widths, not 4.
Under Megatron's core_attn recompute the checkpoint saves its inputs (tensor_parallel/random.py CheckpointFunction),
among them v, a view of linear_qkv's whole output, and the roped q and k, beside the fused norms' tensors, which the
estimate had taken for torchtitan's layer input and w2 output: with flash attention that recompute keeps one q and one
kv a token a layer more than none (without it TE copies v contiguous and linear_qkv's output is freed,
dot_product_attention/utils.py `get_qkv_layout`). Rows moved (fitted): GPT 15B +2.9 / +2.0 -> +0.0 / -0.8 %;
Megatron-Bridge's five core_attn rows +5.9, +8.8, -10.6, +1.2, +4.5 -> +8.8, +12.1, -8.8, +3.9, +7.4 % (median |error|
5.9 -> 8.8 %); the pipelined Mixtral rows' first stages +46 / +133 % -> +26 / +92 %; nothing else. And the reading's
stage: Megatron-LM makes its tensorboard writer on the last rank alone (megatron/training/global_vars.py
`_set_tensorboard_writer`: `args.rank == (args.world_size - 1)`; training.py `training_log` writes
mem-max-allocated-bytes through it; the golden values are read from those logs; ranks ordered tp-cp-ep-dp-pp, the
pipeline outermost, so the last stage). The release rows now compare on that stage (`memory.stage_breakdown`; the
row's `stage`), a fitted, like-for-like figure; their first contact stays the worst stage's as recorded, and the gate
and every plan's fit still read the worst stage. On the last stage the rows read -13.9 to 0.0 % (median |error| 4.7 %,
8 of 8 inside): Mixtral 8x7B EP 4 -6.7 / -7.6 %, VPP 8 -13.0 / -13.9 % (its last stage now the worst: the roughly
6 GiB of expert states that expert TP 1 holds unsharded, not a plan input, no longer hidden by the over-counted
activations), 8x22B -2.6 / -1.4 %. Read on the last stage with the earlier layers they had been -2.6 to +3.8 %
(median 2.2 %): the code-read terms make the fit worse here, and what the Mixtral last stages hold beside them is not
found in the code read. After: the first-contact set 7.9 %, 228 of 261 inside (the release rows' 4 of 8 -> 8 of 8).

ms-swift-examples (added 2026-12-06; nothing changed after them): 21 rows from ms-swift's example scripts and
Megatron-SWIFT's benchmark tables (`tests/estimator/memory_first_contact_swift.py`; each script's comment read as
swift's `memory(GiB)` log, max reserved), first contact 16.9 % median |error|, signed -12.0 %, 20 of 21 judged to fit,
13 of 21 inside the range: the estimate reads low. Six rows read more than 20 % off. Megatron-SWIFT's Qwen3-30B-A3B at
TP 4 x PP 2 x EP 4 (-73.3 %): ms-swift sets expert_tensor_parallel_size 1 (Megatron-SWIFT/Command-line-parameters.md),
so each rank holds whole experts (24 layers x 32 experts, 3.6B parameters at 18 bytes with no expert data
parallelism, about 61 GiB), while the estimate shards them over TP 4 as well (about 0.9B): expert TP is not a plan
input (the lead the Megatron-LM release rows already gave); with it the row would read about -13 %. The same model at
PP 2 x EP 8 x DP 8 on 16 A800 (-29.2 %) and the two EP 4 LoRA rows (-17.5 / -19.2 %), and the 7B at 32,768 tokens
(-20.3 %): Megatron's fused cross-entropy in its default native form upcasts the logits to fp32 and saves the fp32
exponentials for the backward (megatron/core/fusions/fused_cross_entropy.py at d98e8a64d `calculate_logits_max` ->
`.float()`, `ctx.save_for_backward(exp_logits, ...)`), the bytes of Megatron's unfused vocab-parallel loss, where the
rows were stated with the chunked loss of Megatron-Bridge's TE implementation; stated so (a row statement, not a term)
they would read -25.2, -12.5 / -14.2 and -15.4 %. What else the 30B-A3B run holds (about 15 GiB) was not found.
examples/megatron/pretrain.sh's 7B at TP 4 on 4 GPUs (-46.6 %, "4 * 80GiB"): the comment dates from the script's
first version (886ee4bed, 2025-03-22, before the scripts set expandable segments) and is not consistent with the
14B at TP 4 x DP 2 under the same recompute and length (64 GiB, -9.0 %), whose model states are larger: read as the
card rather than a peak; not explained. Two Trainer runs under DeepSpeed ZeRO-3 (Qwen2.5-7B packed to 8,192 with
Liger, -21.5 and -17.7 %): the estimate holds the states DeepSpeed's code gives (12 bytes a parameter over 4 ranks,
bf16 gradient partitions, one 1e9-element sub-group's fp32 step), and the 7-9 GiB beside them was not found in the
code read (candidates: the evaluation swift runs at its eval steps, with the whole logits, inside the same max
reserved; the caching allocator's pool without expandable segments). The unpacked batch-1 run at up to 8,192 tokens
(+24.6 %): the varied-length slack (memory VARIED_LENGTH_SLACK, 13.9 GiB here) is fitted on batches of several
samples; the run's own packed twin reads 54 GiB against its 52, so its longest sample or the slack is smaller than
stated. All stay as recorded.

Expert tensor parallel (2026-12-07; `Plan.expert_tp`, docs/estimator.md): the routed experts' own TP degree, which
Megatron-LM sets to the TP size when unset (megatron/training/arguments.py at d98e8a64) and ms-swift to 1
(swift/megatron/arguments/megatron_args.py at 3602360a), is a plan input; routed experts split over ep x expert TP
and their distributed-optimizer states over world / (pp x ep x expert TP). Read off the code, not fitted; the rows
whose source states or defaults it now state it and are fitted: the ms-swift-examples Megatron-SWIFT rows (ms-swift's
default 1; only the TP 4 MoE row moves, the rest run TP 1 or dense models) and the Megatron-LM release Mixtral VPP 8
run (--expert-tensor-parallel-size 1 in its model_config.yaml; the other release runs leave it unset). Rows moved:
Qwen3-30B-A3B TP 4 x PP 2 x EP 4 -73.3 % -> -13.4 % (inside), Mixtral 8x7B VPP 8 -13.0 / -13.9 % -> -1.1 / -2.1 %;
nothing else. After: megatron-release 1.8 % (was 4.7 %), ms-swift-examples 13.4 % (was 16.9 %, 14 of 21 inside); the
first-contact set's figures as recorded are unchanged.

hf-blog-ulysses (added 2026-12-07, recorded before the two changes below): the Hugging Face blog's Ulysses
sequence-parallelism benchmark (huggingface/blog ulysses-sp.md at 01d33d5c; `tests/estimator/
memory_first_contact_hf_ulysses.py`): Qwen3-4B under TRL's SFTTrainer with DeepSpeed ZeRO-3, the optimizer on the host
and gradient checkpointing on H100, one GPU at 8,192 tokens and SP 4 at 8,192 to 98,304 (SP read as context
parallelism of the same degree; "Peak Memory" GB read as max reserved GiB, the reading assumed). First contact 28.8 %
median |error|, signed -28.8 %, worst -55.9 %, 5 of 5 judged to fit, 2 of 5 inside the range: the error falls as the
sequence grows (-54.6 / -55.9 % at 8K, -28.8 % at 32K, -12.1 % at 64K, -3.3 % at 96K), a gap of about 42 GiB on one
GPU and 13 GiB a GPU at SP 4, 8K, that the estimate's offloaded states do not explain (with the fp32 master and the
moments on the GPU, 12 bytes a parameter, the 8K rows would read -8 to +4 %: the post may not have offloaded what it
says, or something of that size stays; not found). Nothing was changed for them.

Then (2026-12-07, not fitted to any row): a plan of the megatron stack that names no loss counts Megatron-LM's own
unfused vocab-parallel cross-entropy (6 bytes a logit: megatron/core/models/common/language_module/language_module.py
`compute_language_model_loss` at d98e8a64d), not the Trainer's 12; every validation row on that stack states its
loss, so no row moves (the planner's Megatron plans do). And DeepSpeed ZeRO-3's step temporaries take segments of
their own in the reserved pool (memory.breakdown STEP_BLOCKS): stage3.py at edaa7221 builds each 1e9-element
sub-group's flat gradient and its fp32 cast after the backward and steps nothing at initialisation, and the caching
allocator cannot serve them from the backward's layer-sized blocks; the standard loss's fp32 logit-sized blocks hold
them where they are the larger. Reserved and device readings only, DeepSpeed under the Trainer only. Rows moved
(fitted): ms-swift-examples' ZeRO-3 Liger rows -13.0 / -8.9 % -> -5.1 / -0.6 % at 8K, -10.6 / -8.5 % -> +5.6 / +8.1 %
at 16K, the 32B -9.5 % -> -4.9 % (its partition outsizes the freed init buffer, which the step reuses), its unpacked
micro-batch 8 row -0.3 % -> +12.1 % (outside the range now); its standard-loss ZeRO-3 rows do not move.

colossalchat (added 2026-12-07, recorded at 515465b before any change): ColossalChat's "Hardware Requirements"
(hpcaitech/ColossalAI applications/ColossalChat/examples/README.md at d888c378; `tests/estimator/
memory_first_contact_colossalchat.py`): Llama 2 7B on H800s under ColossalAI's LowLevelZero ZeRO-2 (bf16, HybridAdam,
with and without the optimizer on the host), 2,048-token dummy data, gradient checkpointing, flash attention 2,
transformers 4.39's in-model fp32 logits kept through the backward; SFT full fine-tune and LoRA, and SimPO stated as
a full fine-tune of both sequences of each pair; max allocated. First contact 13.8 % median |error|, signed +13.8 %,
-2.9 % to +43.5 %, 10 of 12 judged to fit (the two 2-GPU ZeRO-2 rows, 70.7 / 71.7 GiB measured, are refused at 74.3
/ 76.7), 5 of 12 inside the range. The 4-GPU rows read high (+12 to +44 %) and the 2-GPU ones right (-3 to +8 %);
the 4-GPU figures are not linear in the micro-batch (full fine-tune +14.3 GiB from 8 to 16 sequences, and the
offloaded run at 8 sequences a GPU reads less than the bf16 weights plus the checkpointed inputs and fp32 logits
that any such step holds), so nothing was changed for them. Not modelled: with coati's own LoRA and frozen
embeddings, transformers 4.39's reentrant checkpointing gives the decoder layers no gradient (only the head's
adapter trains).

Then (2026-12-07, read from transformers' code, not fitted): Gemma 2's final-logit soft-capping keeps the tanh output
for the backward (src/transformers/models/gemma2/modeling_gemma2.py at 006e8693, Gemma2ForCausalLM.forward: `logits /
cap`, `torch.tanh`, `* cap`), one more logits-sized tensor in the head's dtype beside the loss's on the last stage
(activations SOFTCAP_FAMILIES). Rows moved (fitted): universal-llm-trainer's Gemma 2 9B LoRA -10.5 % -> +4.2 %, its
full fine-tune over FSDP with CPU offload -33.7 / -32.6 % -> -18.8 / -17.4 %; the source 5.5 % -> 4.6 %. The same
table's Gemma 2 9B QLoRA, out of memory on the H100 and the A100 80GB and 89 GB on an RTX Pro 6000, was judged to fit
an 80 GB card (71.0 GiB): now 87.4 GiB, refused (tests/estimator/test_memory_softcap.py).

Then (2026-12-07, read from PyTorch's code, not fitted): FSDP1's CPU offload keeps each unit's reduce-scattered
gradient shard on the GPU beside its host copy until the backward ends (torch/distributed/fsdp/_runtime_utils.py at
3ade90a6 `_post_backward_hook`: `_saved_grad_shard`, copied to `_cpu_grad`; _flat_param.py at fe03cf69
`prepare_gradient_for_optim` deletes it in the post-backward callback), the rank's whole gradient partition in the
parameters' dtype, cut on the post-backward stream's pool; FSDP2's offload drops each shard after its copy. A plan
input (Plan.fsdp1; no stack this service launches runs FSDP1), which universal-llm-trainer's FSDP rows now state
(src/trainer/build.py wraps torch.distributed.fsdp.FullyShardedDataParallel). Rows moved (fitted): its full
fine-tunes over 2 GPUs with CPUOffload, Llama 2 13B -47.8 % -> -5.8 %, Gemma 2 9B -18.8 / -17.4 % -> -3.2 / -1.5 %,
Gemma 7B -20.9 % -> -3.1 %; the source 4.6 % -> 3.9 % (tests/estimator/test_memory_fsdp1_offload.py). Not this: its
Llama 3.1 70B LoRA over FSDP1 with offload (-29 %; the adapters' shards were counted already), fsdp_qlora's and
axolotl's QLoRA offload rows and atorch's FSDP rows (no offload).

automodel-ac and torchao-tutorial (added 2026-12-07, recorded at 0fd49d1 before any change): NeMo AutoModel's
gradient-checkpointing guide (NVIDIA-NeMo/Automodel docs/guides/gradient_checkpointing.md at b4733bdc; `tests/
estimator/memory_first_contact_automodel_ac.py`: Llama 3.2 1B bf16 with bf16 Adam at 8 x 2,048 on H100s, one GPU,
FSDP2 over 8, + checkpointing, + fused linear cross-entropy; max allocated) read 14.5 % median |error|, signed +2.8 %,
-31.5 % to +15.6 %, 4 of 4 judged to fit, 1 of 4 inside the range; torchao's float8 pre-training tutorial (pytorch/ao
docs/source/eager_tutorials/pretraining.rst at 36027d82; `tests/estimator/memory_first_contact_torchao_tutorial.py`:
torchtitan 775a486e, Llama 3 8B, FSDP 8, 1 x 8,192, compiled with its loss, op-level selective AC; bf16, float8
rowwise and tensorwise; max reserved) read +21.3 to +21.7 %, 3 of 3 judged to fit, none inside the range. Then (read
from AutoModel's code, fitted): its FSDP2 parallelizer checkpoints each layer's attention, MLP and both norms apart
(nemo_automodel/components/distributed/parallelizer.py at b4733bdc, DefaultParallelizationStrategy), so full
recompute keeps four hidden states a layer, not one: a plan input (Plan.checkpoint_regions; every stack this service
launches checkpoints whole layers), which the two checkpointed rows now state: -7.8 / -31.5 % -> +1.3 / +7.0 %, the
source 14.5 % -> 10.2 % (tests/estimator/test_memory_checkpoint_regions.py). Left as they read: AutoModel's two rows
without checkpointing (+13 / +16 %; Liger's RoPE, RMSNorm and SwiGLU kernels, patched in by its from_pretrained
default, save fewer tensors than the ops counted) and torchao's three (the plan of torchao's fitted B200 row, 33.71
GiB, +13 %): the estimate is 6.7 GiB above their reading, about torchtitan's fp32 gradient shards (3.7 GiB, were the
peak to hold none: made in the backward, set to None by zero_grad, but cut from the reduce-scatter stream's own pool)
and the attention outputs its op-level policy saves (2 GiB, not saved where SDPA picks cuDNN's kernel, which the
policy does not list) together; the sources do not say which holds, so nothing was changed for them.

litgpt-lora-tutorial (added 2026-12-07, recorded at b7fd4e1 before any change): lit-gpt's LoRA / QLoRA tutorial tables
of August 2023 (Lightning-AI/litgpt tutorials/finetune_lora.md at 064fd523, removed two months later; `tests/
estimator/memory_first_contact_litgpt_lora_tutorial.py`: finetune/lora.py, LoRA r=8 on q and v, StableLM 3B at 4 x
1,034 and Llama 2 7B at 1 x 1,304 tokens of Alpaca, no checkpointing, chunked head and cross-entropy, --precision
bf16-mixed or bf16-true, with and without bitsandbytes NF4; max allocated, decimal GB) read 13.2 % median |error|,
signed -13.2 %, -21.7 % to +1.0 %, 11 of 11 judged to fit, 11 of 11 inside the range. The 16-bit LoRA rows read
right (-5.2 to +1.0 %); every NF4 row reads low, bf16-true the most (-13 to -22 %), the pattern the fitted
litgpt-resource-tables NF4 rows show (-16 %). bitsandbytes before 0.44.0 saves every 4-bit linear's input for the
backward (bitsandbytes/autograd/_functions.py MatMul4Bit.forward `ctx.tensors = (A, B)`, dropped by 9e753741 "fix
QLoRA mem bug: delete useless buffered activation", #1270, first in 0.44.0), where a frozen 16-bit linear saves none:
the inputs of the linears that nothing else keeps (qkv and MLP inputs, MLP down-projection input) are 1.5 GiB on Llama
2 7B at 1 x 1,304 and 3.0 GiB on StableLM 3B at 4 x 1,034, against gaps of 1.7 and 3.0 GiB. Nothing was changed for
them on the branch that added them (a Workload lever for bitsandbytes before 0.44, beside bnb_fp16_dequant, would
state it). Seen after first contact, not stated by the rows: lit-gpt built the whole GPT inside its quantisation
context (lit_gpt/utils.py `quantization` swaps torch.nn.Linear), so the LM head was 4-bit too, 0.2 to 0.3 GiB less
weight than the rows model; stated, the NF4 rows would read lower still.

peft-metamathqa, after first contact (read from the harness at 5d602fdb, fitted): every row read high by the blocks
the estimate keeps for batches of varied length (VARIED_LENGTH_SLACK, and for the full fine-tune the AdamW
VARIED_LENGTH_ACTIVATION_SETS; without them the rows read -5 to -1 %), but the harness clears the pool before every
batch that can be longer than the one before: run.py calls torch.cuda.empty_cache() every
ACCELERATOR_EMPTY_CACHE_SCHEDULE = 10 steps, which releases every cached segment no live tensor holds
(CUDACachingAllocator.cpp `release_cached_blocks`), and utils.py BucketIterator yields each bucket of BUCKET_FACTOR =
20 batches sorted long to short (`torch.argsort(..., descending=True)`), so every bucket starts right after a clear
and each batch after it is cut from the longest one's blocks. A workload input (Workload.cache_cleared_longest_first;
no stack this service launches runs such a loop), which the source's rows now state (transcription): its LoRA rows
+14.4 ... +20.4 % -> -4.7 ... -0.9 %, its full fine-tune +22.7 % -> -3.7 %; the source 19.6 % -> 1.9 %, inside the
range 0 -> 8 of 8; no other row states it, so no other source moves; all rows 8.0 % -> 7.5 %, inside 278 -> 286 of
340 (tests/estimator/test_memory_cache_cleared.py). The AdamW states the first step cut from the first batch's blocks
stay through the clears, and their remainders are not counted (the full fine-tune's 1.4 GiB below its reading).

colossalchat, after first contact (read from hpcaitech/ColossalAI at d888c378, fitted): its rows ran ColossalAI's
LowLevelZero plugin, which the estimate read as DeepSpeed's ZeRO-2. Two differences, both in the plugin's code: its
reduce bucket is 12 Mi elements (low_level_zero_plugin.py `reduce_bucket_size_in_m: int = 12`), not DeepSpeed's two
buffers of 5e8 (1.8 GiB less in every row); and it keeps no gradient buffer between steps: the backward's hook clones
each 16-bit `.grad` into per-rank slices and frees it (bookkeeping/bucket_store.py `build_grad_in_bucket`), the
reduce-scatter leaves the rank's 16-bit partition in the gradient store, `step` casts it to the fp32 master's
gradient beside it (low_level_optim.py `grad.to(master_param.dtype)`) and `zero_grad` empties the store, which
ColossalChat's trainers call after every step (coati/trainer/sft.py; at v0.4.0, which its requirements.txt pins,
`step` empties the store after the cast). So with the optimizer on the GPU and one
micro-batch a step the peak is the larger of the backward's start (no gradients) and the step (the 16-bit and fp32
partitions, no activations), as for the Trainer's FSDP (`_grads_made_in_backward`); HybridAdam steps in place. A
plan input (Plan.low_level_zero; no stack this service launches runs it), which the source's rows now state
(transcription): its ZeRO-2 rows on the GPU +5.0 / +21.6 / +11.8 % (SFT) and +7.0 / +19.1 / +15.7 % (SimPO) -> -1.9
/ +2.5 / -2.5 % and -3.2 / +0.5 / +1.0 %; with the optimizer on the host (the bucket only) -2.9 / +43.5 / +8.4 / +8.8
% -> -11.1 / +33.9 / +1.2 / +3.8 %; the LoRA rows +28.7 / +29.5 % -> +19.9 / +20.8 % (tests/estimator/
test_memory_low_level_zero.py). The LoRA rows' remaining gap is their first-contact observation: coati's LoRA freezes
everything but the adapters (coati/models/lora.py `convert_to_lora_module`, every nn.Linear wrapped, the head's too),
and transformers 4.39.3's gradient_checkpointing_enable() checkpoints reentrantly and calls
enable_input_require_grads() only for a PEFT-loaded model, so no decoder layer's input requires grad; torch's
reentrant checkpoint runs the layer under no_grad and its output requires grad only where an input does, so the
layers keep nothing (no checkpoint, no recomputed layer) and only the head's adapter trains. A workload input
(Workload.decoder_without_graph, read for LoRA under full recompute), which the LoRA rows now state: +19.9 / +20.8 %
-> +0.6 / +1.6 % (tests/estimator/test_memory_decoder_without_graph.py). Both together: the source 13.7 % -> 2.2 %,
inside the range 5 -> 11 of 12; no other row states either; all rows 7.5 % -> 7.0 %, inside 286 -> 292 of 340. Left
as it reads: the 4-GPU SFT row with the optimizer on the host (+34 %: 18.96 GiB at micro-batch 8, below the 2-GPU
run's 21.93 at micro-batch 4, which more ranks cannot give with the weights whole on every rank).

torchtitan-165 (added 2026-12-07, recorded at 6a82d1e before any change): torchtitan's FSDP1 / FSDP2 parity runs of
March 2024 (pytorch/torchtitan commit 83c879f1, "Used per-parameter FSDP (#165)"; `tests/estimator/
memory_first_contact_torchtitan_fsdp2.py`: Llama 7B in the Llama 2 shape on 8 H100 of 95.04 GiB, minipile packed to
2,048 tokens, bf16 parameters over fp32 shards, fp32 reduce-scatter, torch AdamW foreach, the fp32 logits kept through
the backward; FSDP 8 at 8 x 2,048 eager and compiled under full or per-op selective AC, and FSDP 4 x TP 2 at 16 x 2,048;
peak active and peak reserved) read 6.2 % median |error|, signed -6.2 %, -49.5 % to +5.5 %, 13 of 15 judged to fit (the
two above 80 GB on the catalog's 80 GB H100 do not), 13 of 15 inside the range. The 1D rows read close: allocated +0.5
to +4.7 %, compiled reserved -10.7 % (no AC) to +5.5 %, eager reserved -9.4 to -16.2 %: those eager runs reserve 1.20 to
1.36 times their active peak where the estimate reserves 1.06 to 1.18 times, FSDP1 the more under SAC (-16.2 % against
FSDP2's -9.9 %), which FSDP1's recordStream-based all-gather memory would explain (torchtitan docs/fsdp.md: FSDP2
"achieves lower and deterministic GPU memory by avoiding `recordStream`"). The two 2D rows read half (-47.5 % active,
-49.5 % reserved): published, FSDP 4 x TP 2 at 16 x 2,048 takes 47.6 GiB active against 22.7 GiB for FSDP 8 at 8 x
2,048, though each GPU holds the same model states (sharded 8 ways either way), the same layer inputs (sequence parallel
halves 16 sequences) and half the vocabulary of twice the logits; the estimate adds 1.2 GiB for it. The stack reported
the excess as a defect within a week: torchtitan issue #191 (2024-04-04, "release blocking", closed), "FSDP2 incur
higher GPU memory usage in 2D compare to FSDP1", 16 GB more on Llama 13B at 2-way FSDP x 4-way TP with full AC too. A
defect of FSDP2 with tensor parallelism in the PyTorch of March 2024 (the issue is closed; the rows do not say which
fix), not a term of the plan: nothing was changed for it."""

# Median |error| of the estimator at 7c1f6ff (see the module docstring); it had no memory held-out rows run then.
BASELINE = {
    "throughput": {"fit": {"median |error|": "4.6%"}, "holdout": {"median |error|": "23.9%"}},
    "gpu_hours": {"fit": {"median |error|": "13.1%"}, "holdout": {"median |error|": "31.2% (6 of 7 answered)"}},
}


def markdown_section(baseline_rev: str | None) -> str:
    now = summaries()
    base = baseline_summaries(baseline_rev) if baseline_rev else BASELINE
    lines = [BEGIN, "", INTRO.replace("{baseline}", baseline_rev or "7c1f6ff").rstrip("\n")]
    for kind, title in (("throughput", "tokens/s per GPU"), ("gpu_hours", "GPU-hours"), ("memory", "peak GiB")):
        for split in now[kind]:
            row = now[kind].get(split)
            if row is None or row["cases"].startswith("0 "):
                continue
            was = base[kind][split]["median |error|"] if kind in base and split in base[kind] else "n/a"
            lines.append(
                f"| {title} | {split} | {row['cases']} | {was} | {row['median |error|']} | {row['worst |error|']} "
                f"| {row['inside range']} | {row['median half-width']} |"
            )
    lines.append("")
    lines += table("Training throughput, tokens/s per GPU", throughput_rows(), True)
    lines += table("GPU-hours of whole training runs", gpu_hours_rows(), True)
    lines += [
        "### Peak memory at first contact: the out-of-sample figure",
        "",
        FIRST_CONTACT_INTRO.rstrip("\n"),
        "",
        *first_contact_lines(),
        "",
        FIRST_CONTACT_CHANGES,
        "",
    ]
    lines += table(
        "Peak memory per GPU, GiB (first contact: the sources of the table above, at today's estimator; seen, fitted: "
        "torchtitan 2412, Unsloth, PEFT; fitted: the peaks the model was built and tested on)",
        memory_rows(),
        True,
    )
    lines += [END, ""]
    return "\n".join(lines)


def write(path: Path, section: str) -> None:
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    if BEGIN in text:
        start = text.index(BEGIN)
        end = text.find(END, start)
        text = text[:start] + section.rstrip("\n") + (text[end + len(END) :] if end >= 0 else "\n")
    else:
        text = text.rstrip("\n") + "\n\n" + section
    path.write_text(text, encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--markdown", action="store_true", help="print Markdown tables")
    parser.add_argument("--json", action="store_true", help="print only the summaries as JSON")
    parser.add_argument("--write", type=Path, help="rewrite the out-of-sample section of this Markdown file")
    parser.add_argument("--baseline", help="git revision whose estimator gives the baseline column")
    args = parser.parse_args()
    if args.json:
        print(json.dumps(summaries()))
        return
    if args.write:
        write(args.write, markdown_section(args.baseline))
        print(f"wrote {args.write}")
        return
    lines = table("Training throughput, tokens/s per GPU", throughput_rows(), args.markdown)
    lines += table("GPU-hours of whole training runs", gpu_hours_rows(), args.markdown)
    lines += table("Peak memory per GPU, GiB", memory_rows(), args.markdown)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
