"""What an estimate says about torch AdamW's step (app/estimator/memory/assumptions.py `with_step_notes`): which phase
sets the peak where the gradients are made in the backward (breakdown `_grads_made_in_backward`), and the share of the
step's temporary copy of v that `other` holds beyond the `other_buffers` formula. These test the notes against the
breakdown they describe (the figures themselves are validated in test_memory_grads_in_backward.py and
test_memory_adamw_step.py); and the warning `no_fit_zero3` is held to the total it is about."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from app.estimator.hardware import get_gpu
from app.estimator.memory import MemoryEstimate, estimate_memory
from app.estimator.presets import get_preset
from app.estimator.specs import GIB, Cluster, Plan, Workload
from app.text import messages

H100 = Cluster(gpu=get_gpu("h100-80g-sxm"), gpus_per_node=1)
CUBLAS_GIB, FRAGMENTATION = 0.25, 0.05  # the other_buffers note's formula on one GPU (no NCCL buffers)


def _estimate(preset: str, micro_batch: int, global_batch: int) -> tuple[dict[str, dict], MemoryEstimate]:
    workload = Workload(task="full_finetune", tokens=1e8, global_batch=global_batch)
    plan = Plan(dp=1, zero_stage=0, recompute="none", micro_batch=micro_batch)
    estimate = estimate_memory(get_preset(preset).model, workload, plan, H100)
    return {note.code: dict(note.params) for note in estimate.assumptions}, estimate


def test_zero_gradients_are_explained_by_the_backward_start() -> None:
    """Llama 3.2 1B, one H100, micro-batch 8 = global batch 8: gradients 0.0, which the estimate now explains: the
    backward's start (49.02 GiB of activations) outweighs the step (2.30 GiB of gradients and AdamW's 4.60 GiB copy
    of v)."""
    notes, estimate = _estimate("llama-3.2-1b", 8, 8)
    b = estimate.breakdown
    assert b.gradients == 0.0
    phase = notes["peak_backward_start"]
    assert "peak_optimizer_step" not in notes and "adamw_step_other" not in notes
    assert phase["activations_gib"] == pytest.approx(b.activations / GIB, abs=0.01)
    assert phase["grads_gib"] == pytest.approx(2.30, abs=0.01)  # 1.24B parameters × 2 bytes
    assert phase["activations_gib"] >= phase["grads_gib"] + phase["temp_gib"]
    english = next(note.text for note in estimate.assumptions if note.code == "peak_backward_start")
    assert "gradients reads 0" in english and "2.30 GiB" in english
    assert "梯度显示为 0" in messages.note("peak_backward_start", phase, "zh")


def test_other_names_adamw_step_temporary_with_its_size() -> None:
    """Llama 3.2 3B, micro-batch 1: other read 3.09 GiB against the other_buffers formula's 0.73; the difference is
    AdamW's step temporary beyond the freed activations, now a note with its size, and the optimizer step sets the
    peak: gradients + the activations' blocks + other's share = gradients + the temporary."""
    notes, estimate = _estimate("llama-3.2-3b", 1, 1)
    b = estimate.breakdown
    formula = CUBLAS_GIB + FRAGMENTATION * b.activations / GIB
    step = notes["adamw_step_other"]
    assert step["step_gib"] == pytest.approx(b.other / GIB - formula, abs=0.01)
    assert step["step_gib"] == pytest.approx(2.36, abs=0.01)
    phase = notes["peak_optimizer_step"]
    assert phase["grads_gib"] + phase["temp_gib"] == pytest.approx(
        (b.gradients + b.activations) / GIB + step["step_gib"], abs=0.02
    )
    assert "2.36 GiB" in messages.note("adamw_step_other", step, "zh")


def test_accumulated_gradients_get_no_phase_note() -> None:
    """Four micro-batches a step keep the first ones' gradients through the next ones' activations: no phase note."""
    notes, _estimate_ = _estimate("llama-3.2-1b", 2, 8)
    assert "peak_backward_start" not in notes and "peak_optimizer_step" not in notes


def test_no_fit_zero3_names_the_total_it_is_about() -> None:
    """Llama 3.2 3B at micro-batch 4 on one H100 totals 82.51 GiB; `no_fit_zero3` said 88.5 GiB needed (ZeRO-3 over
    one GPU, which holds its gradients)."""
    _notes, estimate = _estimate("llama-3.2-3b", 4, 4)
    warning = next(w for w in estimate.warnings if w.code == "no_fit_zero3")
    assert warning.params["needed_gib"] == pytest.approx(estimate.breakdown.total / GIB)
    assert warning.params["total_gib"] == pytest.approx(estimate.breakdown.total / GIB)
    assert "needs 82.5 GiB on its one GPU (its total)" in messages.warning(warning.code, warning.params)


def test_no_fit_zero3_names_the_gates_total_and_zero3s_figure_each_as_what_it_is(client: TestClient) -> None:
    """Review R6 (run m11_8b_fft_1gpu): Llama 3.1 8B full fine-tuning on one A100 80G at micro-batch 1 with full
    recompute totals 150.0 GiB (`per_gpu_gib.total`, the gate's figure: AdamW's step temporaries in `other`), and
    `no_fit_zero3` said "123.9 GiB per GPU needed ... even with ZeRO-3 over all 1 GPUs" (ZeRO-3's twin). It names
    the plan's total now, and on one GPU says ZeRO-3 shards nothing; over several GPUs it names both readings."""
    body = {"model": {"preset": "llama-3.1-8b"}, "task": "full_finetune", "seq_len": 2048}
    one = {"hardware": {"sku": "a100-80g-sxm-8x", "gpus_per_node": 1}, "plan": {"micro_batch": 1, "recompute": "full"}}
    response = client.post("/estimate", json=body | one)
    assert response.status_code == 200, response.text
    out = response.json()
    warning = next(w for w in out["warnings"] if w["code"] == "no_fit_zero3")
    total = out["memory"]["per_gpu_gib"]["total"]
    assert warning["params"]["total_gib"] == pytest.approx(total, abs=0.01)
    assert f"needs {total:.1f} GiB on its one GPU (its total)" in warning["message"]
    assert "over all 1 GPUs" not in warning["message"] and "123.9" not in warning["message"]
    assert "About 2 GPUs of this type would hold the sharded model states" in warning["message"]
    zh = messages.warning(warning["code"], warning["params"], "zh")
    assert f"{total:.1f} GiB（其总量）" in zh
    # several GPUs, the plan's own total above ZeRO-3's: both, each named
    params = warning["params"] | {"gpus": 2, "total_gib": 150.0, "needed_gib": 123.9}
    text = messages.warning("no_fit_zero3", params)
    assert "the plan needs 150.0 GiB per GPU (its total)" in text and "ZeRO-3 over all 2 GPUs would need 123.9" in text


@pytest.mark.parametrize("zero", [1, 2, 3])
def test_the_trainers_adamw_under_deepspeed_is_named_in_other(zero: int) -> None:
    """Llama 3.1 8B over 8 H100 at 1 x 128 under the Trainer's DeepSpeed (Plan.tuning trainer): AdamW's copy of v on
    the fp32 partitions (one ZeRO-3 sub-group at most, beside its fp32 gradient) beyond the freed activations (and
    ZeRO-1/2's gradient buckets, freed with them) is the part of `other` above its formula (0.25 GiB cuBLAS + 0.5 GiB
    NCCL + 5 % of the activations) and the buckets."""
    workload = Workload(task="full_finetune", seq_len=128, tokens=1e8, global_batch=8)
    plan = Plan(dp=8, zero_stage=zero, micro_batch=1, recompute="none", tuning="trainer")
    cluster = Cluster(gpu=get_gpu("h100-80g-sxm"), gpus_per_node=8)
    estimate = estimate_memory(get_preset("llama-3.1-8b").model, workload, plan, cluster)
    b = estimate.breakdown
    code = "zero3_step_other" if zero == 3 else "adamw_step_other"  # ZeRO-3 names its sub-group copies with v's
    step = next(dict(n.params) for n in estimate.assumptions if n.code == code)
    formula = CUBLAS_GIB + 0.5 + FRAGMENTATION * b.activations / GIB
    # ZeRO-1/2: DeepSpeed's gradient buckets are named apart (`deepspeed_buckets`: two of 5e8 bf16 elements)
    buckets = next((dict(n.params)["bucket_gib"] for n in estimate.assumptions if n.code == "deepspeed_buckets"), 0.0)
    assert buckets == (pytest.approx(2 * 5e8 * 2 / GIB, abs=0.005) if zero < 3 else 0.0)
    assert step["step_gib"] == pytest.approx(b.other / GIB - formula - buckets, abs=0.01)
    if zero == 3:  # one sub-group of 1e9 of the 1.0e9 elements a GPU owns: its fp32 gradient and AdamW's copy of v
        assert step["elements"] == pytest.approx(1e9)
        assert step["temp_gib"] == pytest.approx(8e9 / GIB, abs=0.005)
