"""Side by side on the published cases: published, ours, llm-analysis, DeepSpeed and accelerate estimators.

Run: .venv/bin/python benchmarks/peers.py   (creates .peers-venv with llm-analysis on first use)

Peers and what each one computes:
- llm-analysis 0.2.2 (PyPI, cli99/llm-analysis), run in its own venv: LLMAnalysis.training() total
  "(weight+op_state+grad+act)_memory_per_gpu" for pretraining / full fine-tuning, .inference()
  weights + KV cache + max(prefill, decode) activations for inference. It has no LoRA, QLoRA, offload or
  context parallelism, so LoRA rows are "n/a" and offload/CP rows are computed as if neither were used.
- DeepSpeed `estimate_zero2_model_states_mem_needs` / `estimate_zero3_model_states_mem_needs` (model states
  only, no activations), REIMPLEMENTED here from deepspeed/runtime/zero/stage_1_and_2.py and stage3.py
  (commit 38327e0, as read in ESTIMATOR-NOTES.md) because installing deepspeed needs torch + CUDA:
    ZeRO-2: GPU = 2P + 18P/N (offload: 2P)   [before PR #5099: 4P + 16P/N]
    ZeRO-3: GPU = 4*largest_layer + 18P/N (offload optimizer: + 2P/N; offload params too: 4*largest_layer)
  Applies to pretraining / full fine-tuning with ZeRO-2/3 or FSDP; "n/a" elsewhere.
- Hugging Face accelerate `accelerate estimate-memory` (src/accelerate/commands/estimate.py), REIMPLEMENTED:
  training in float16/bfloat16 = max(model 2P·2, grads, Adam 8P) = 8P bytes for the whole model (no batch,
  no parallelism); inference = the model size in its dtype (2P bf16, 1P int8). "n/a" for LoRA.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable

from _peers_env import PEER_REQUIREMENT, run_llm_analysis

from app.estimator.memory import estimate_memory
from app.estimator.params import count_params
from app.estimator.published_cases import PublishedCase, published_cases
from app.estimator.specs import GIB

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
        "id": case.id, "kind": "inference" if task == "inference" else "training", "layers": model.layers,
        "heads": model.heads, "kv_heads": model.kv_heads, "hidden": model.hidden,
        "ffn": model.expert_ffn or model.ffn, "vocab": model.vocab, "gated": model.mlp == "swiglu",
        "experts": model.experts, "top_k": model.experts_per_token,
        "gpu_mem_gb": 10_000,  # llm-analysis asserts when its estimate exceeds the card; we want the estimate
        "tp": plan.tp, "pp": plan.pp, "dp": plan.dp * plan.cp, "batch": plan.micro_batch,
        "seq": case.workload.seq_len, "recompute": {"none": 0, "selective": 1, "full": 2}[plan.recompute],
        "zero": plan.zero_stage, "flash": plan.flash_attention, "generate": 60,
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


def main() -> None:
    cases = published_cases()
    la = llm_analysis_totals(cases)
    names = " ".join(f"{name:>15s}" for name in ("ours", "llm-analysis", "DeepSpeed", "accelerate"))
    header = f"{'case':44s} {'published':>9s} {names}"
    print("GiB per GPU (error vs published); '*' = reported only, see why_excluded in published_cases.py")
    print(header)
    errors: dict[str, list[float]] = {"ours": [], "llm-analysis": [], "DeepSpeed": [], "accelerate": []}
    wins, losses = 0, []
    for case in cases:
        pub = case.published_gib
        row = {"ours": ours(case), "llm-analysis": la.get(case.id), "DeepSpeed": deepspeed(case),
               "accelerate": accelerate(case)}
        mark = " " if case.included else "*"
        cells = " ".join(f"{_cell(row[name], pub):>15s}" for name in row)
        print(f"{mark}{case.id:43s} {pub:9.1f} {cells}")
        if not case.included:
            continue
        for name, value in row.items():
            err = _error(value, pub)
            if err is not None:
                errors[name].append(abs(err))
        verdict = _beats_peers(_error(row["ours"], pub), [_error(row[n], pub) for n in row if n != "ours"])
        if verdict:
            wins += 1
        elif verdict is False:
            losses.append(case.id)
    print()
    for name, values in errors.items():
        if values:
            print(f"{name:13s} median |error| {statistics.median(values):6.1%}  max {max(values):6.1%}  "
                  f"over {len(values)} included cases where it applies")
    for case_id, value in la.items():
        if isinstance(value, str):
            print(f"llm-analysis failed on {case_id}: {value}")
    print(f"ours below every applicable peer on {wins} included cases; not on: {', '.join(losses) or 'none'}")
    print(f"peers: {PEER_REQUIREMENT} (subprocess in .peers-venv); DeepSpeed and accelerate formulas reimplemented "
          "(see docstring) because both packages need torch")


if __name__ == "__main__":
    main()
