"""QLoRA on bitsandbytes before 0.43 (Workload.bnb_fp16_dequant): every weight was quantised from an fp16 copy
(bitsandbytes/nn/modules.py Params4bit.cuda `self.data.contiguous().half()`, dropped in 0.43.0 by dcfb6f81), so under
a bf16 compute dtype each matmul dequantises its matrix to fp16 and casts it to bf16 (autograd/_functions.py at
b5800d35, MatMul4Bit forward and backward `F.dequantize_4bit(B, state).to(A.dtype)`): two 16-bit copies of the
matrix at once, and a reserved pool of matrix-sized blocks cut by the matmul outputs
(app/estimator/memory/activations.py BNB_FP16_DEQUANT_POOL_COPIES, fitted on the rows below).

Published (modelscope/ms-swift docs/source_en/LLM/Benchmark.md at 46922151, one A100 80GB, bitsandbytes 0.41.3.post2,
auto_gptq 0.5.1, `swift sft` LoRA r=8 on c_attn at 1 x 2,048 tokens, GPU Memory (GiB) = torch.cuda.max_memory_reserved):
Qwen 7B / 14B / 72B with int4 (bnb) 23.85 / 30.05 / 74.87 GiB, with int4 (gptq) 19.21 / 23.30 / 54.86 GiB. The two
runs differ in the quantisation library only (same adapters, data, loss, checkpointing; both keep the embedding and
the head 16-bit): the differences, 4.64 / 6.75 / 20.01 GiB, are the lever's published figure.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.estimator.hardware import get_gpu
from app.estimator.memory import estimate_memory, measured_bytes
from app.estimator.specs import GIB, Cluster, LoraSpec, ModelSpec, Plan, Workload
from tests.estimator.memory_first_contact import QWEN1_7B, QWEN1_14B, QWEN1_72B

A100 = Cluster(gpu=get_gpu("a100-80g-sxm"))
# swift's own LoRA tuner without PEFT's k-bit preparation (kbit_upcast False), batches of one sample padded per batch
SWIFT_QLORA = Workload(
    task="qlora",
    seq_len=2048,
    global_batch=16,
    lora=LoraSpec(rank=8, alpha=32, targets=("q", "k", "v"), dropout=0.05),
    varied_lengths=True,
    kbit_upcast=False,
)
PLAN = Plan(micro_batch=1, recompute="full")


def _reading(model: ModelSpec, workload: Workload, measured: str) -> float:
    breakdown = estimate_memory(model, workload, PLAN, A100).breakdown
    return measured_bytes(breakdown, PLAN, A100, measured) / GIB


@pytest.mark.parametrize(
    ("model", "bnb", "gptq"),
    [(QWEN1_7B, 23.85, 19.21), (QWEN1_14B, 30.05, 23.30), (QWEN1_72B, 74.87, 54.86)],
    ids=["qwen-7b", "qwen-14b", "qwen-72b"],
)
def test_the_two_copy_dequantisation_keeps_a_pool_of_a_layers_size(model: ModelSpec, bnb: float, gptq: float) -> None:
    """With and without the lever on ms-swift's bitsandbytes rows: the reserved reading grows by the bnb - gptq
    difference within 10 % (fitted: 12 copies of a layer's matrices; per row 12.3 / 11.5 / 12.3)."""
    without = _reading(model, SWIFT_QLORA, "reserved")
    with_lever = _reading(model, replace(SWIFT_QLORA, bnb_fp16_dequant=True), "reserved")
    assert with_lever - without == pytest.approx(bnb - gptq, rel=0.10)


def test_the_pool_follows_a_layer_not_the_model() -> None:
    """7B to 72B: the published gap grows x4.31 (20.01 / 4.64); one layer's matrices grow x4.31 (872 / 202 M), the
    whole model's x10.8: the lever scales with the layer (within 5 % of the measured ratio)."""
    small = _reading(QWEN1_7B, replace(SWIFT_QLORA, bnb_fp16_dequant=True), "reserved") - _reading(
        QWEN1_7B, SWIFT_QLORA, "reserved"
    )
    large = _reading(QWEN1_72B, replace(SWIFT_QLORA, bnb_fp16_dequant=True), "reserved") - _reading(
        QWEN1_72B, SWIFT_QLORA, "reserved"
    )
    assert large / small == pytest.approx(20.01 / 4.64, rel=0.05)


def test_allocated_and_gate_count_only_the_second_copy() -> None:
    """The pool is cached blocks: torch.cuda.max_memory_allocated and the gate see only the fp16 copy beside its
    bf16 cast of the largest matrix at once: Qwen 7B's MLP matrix, 4,096 x 11,008, 2 bytes x 45.1 M = 0.084 GiB (the
    estimate counts q, k and v apart; Qwen's fused c_attn, 4,096 x 12,288, would be 0.094 GiB)."""
    on = replace(SWIFT_QLORA, bnb_fp16_dequant=True)
    second_copy = 4096 * 11008 * 2.0 / GIB
    assert _reading(QWEN1_7B, on, "allocated") - _reading(QWEN1_7B, SWIFT_QLORA, "allocated") == pytest.approx(
        second_copy, rel=0.01
    )
    gate_on = estimate_memory(QWEN1_7B, on, PLAN, A100).breakdown.total
    gate_off = estimate_memory(QWEN1_7B, SWIFT_QLORA, PLAN, A100).breakdown.total
    assert (gate_on - gate_off) / GIB == pytest.approx(second_copy, rel=0.01)


def test_no_pool_without_the_old_bitsandbytes_or_outside_qlora() -> None:
    """bitsandbytes 0.43 and later keep the weight's dtype (one copy), and a LoRA plan has no quantised matrix: the
    flag changes nothing there (fsdp_qlora's and universal-llm-trainer's rows ran bitsandbytes 0.43 or later)."""
    lora = replace(SWIFT_QLORA, task="lora")
    assert _reading(QWEN1_7B, replace(lora, bnb_fp16_dequant=True), "reserved") == pytest.approx(
        _reading(QWEN1_7B, lora, "reserved")
    )
