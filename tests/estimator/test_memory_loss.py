"""The unfused cross-entropy's bytes per logit and parameter offload under LoRA/QLoRA, from the framework source.

Unfused loss (transformers `ForCausalLMLoss` in src/transformers/loss/loss_utils.py upcasts the logits with
`logits.float()` and calls `nn.functional.cross_entropy`; torchtitan's `cross_entropy_loss` does the same on its fp32
output): log_softmax saves its fp32 output for the backward; in the backward, nll_loss's gradient (a dense fp32
tensor the size of the logits) and log_softmax's gradient of the logits (another) exist beside that saved output:
4 + 4 + 4 = 12 bytes per logit at the start of the backward, when every saved activation is still held. Before
this was counted the estimate charged 10 (16-bit logits + fp32 log-probs + one fp32 gradient); the 16-bit logits are
gone by then (the HF Trainer's `compute_loss` drops the model output before `backward`, torchtitan `del pred`).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.estimator.hardware import get_gpu
from app.estimator.memory import estimate_memory
from app.estimator.notes import Note
from app.estimator.presets import get_preset
from app.estimator.specs import GIB, Cluster, EstimatorError, LoraSpec, Plan, Workload

LLAMA31_8B = get_preset("llama-3.1-8b").model
LLAMA2_70B = get_preset("llama-2-70b").model
H100 = Cluster(gpu=get_gpu("h100-80g-sxm"))


def test_unfused_loss_holds_twelve_bytes_per_logit_chunked_four() -> None:
    workload = Workload(task="full_finetune", seq_len=8192)
    plan = Plan(micro_batch=1, recompute="full")
    unfused = estimate_memory(LLAMA31_8B, workload, plan, H100).breakdown.activations
    chunked = estimate_memory(LLAMA31_8B, workload, replace(plan, chunked_loss=True), H100).breakdown.activations
    # 8,192 tokens x 128,256 logits x (12 - 4) bytes = 7.8 GiB
    assert unfused - chunked == pytest.approx(8192 * 128256 * 8)


def test_lora_with_parameters_offloaded_keeps_only_gathered_units_on_the_gpu() -> None:
    """FSDP CPUOffload(offload_params=True) / ZeRO-3 offload_param: the frozen base lives in host RAM and each unit is
    brought to the GPU for its all-gather (PEFT docs accelerate/fsdp.md: Llama 2 70B QLoRA on 2 GPUs reads 35.6 GB per
    GPU without and 19.6 GB with CPU offload). Before, a LoRA plan kept its whole shard of base weights on the GPU."""
    workload = Workload(task="qlora", seq_len=2048, lora=LoraSpec(rank=8), paged_optimizer=False)
    plan = Plan(dp=2, zero_stage=3, micro_batch=2, recompute="full")
    cluster = Cluster(gpu=get_gpu("a100-80g-sxm"), gpus_per_node=2, host_ram_gib=1024)
    kept = estimate_memory(LLAMA2_70B, workload, plan, cluster).breakdown
    moved = estimate_memory(LLAMA2_70B, workload, replace(plan, offload="optimizer_and_params"), cluster).breakdown
    assert kept.weights / GIB > 15
    assert moved.weights / GIB < 2  # two gathered layers (embedding or head: 32,000 x 8,192 x 2 bytes = 0.5 GiB)
    assert moved.host_ram > kept.weights  # the shard went to host RAM, on each of the 2 GPUs


def test_peft_kbit_training_keeps_qlora_activations_in_fp32() -> None:
    """PEFT prepare_model_for_kbit_training (TRL's SFTTrainer on one GPU) leaves the norms fp32; LlamaRMSNorm returns
    `weight * x.to(input_dtype)` and bitsandbytes Linear4bit returns its input's dtype, so the residual stream and
    the saved activations are fp32: twice the checkpointed layer inputs. The weights are unchanged (TRL casts the
    embedding and head back to bf16). Before, every QLoRA estimate counted 16-bit activations (the Unsloth
    README's "Hugging Face + FA2" rows read 25-34 % below the card they fill)."""
    qlora = Workload(task="qlora", seq_len=8192, lora=LoraSpec(rank=32), paged_optimizer=False)
    plan = Plan(recompute="full", chunked_loss=True)  # leaves the per-logit loss term out of the comparison
    hf = estimate_memory(LLAMA31_8B, qlora, plan, H100)
    other = estimate_memory(LLAMA31_8B, replace(qlora, kbit_upcast=False), plan, H100)
    logits = 8192 * 128256 * 4
    assert hf.breakdown.activations - logits == pytest.approx(2 * (other.breakdown.activations - logits))
    assert hf.breakdown.weights == other.breakdown.weights
    assert any("prepare_model_for_kbit_training" in n.text for n in hf.assumptions)
    assert Note("kbit_upcast") in hf.assumptions and Note("kbit_upcast") not in other.assumptions


def test_kbit_upcast_is_for_qlora_only() -> None:
    with pytest.raises(EstimatorError) as raised:
        estimate_memory(LLAMA31_8B, Workload(task="lora", kbit_upcast=True), Plan(), H100)
    assert raised.value.field == "kbit_upcast"


def test_torch_compile_saves_fewer_tensors_per_layer() -> None:
    """torch.compile's min-cut partitioner (torch/_functorch/partitioners.py) recomputes fused pointwise ops in the
    backward: per layer and token an RMSNorm keeps its 16-bit input, not an fp32 copy (2 norms: 2 x 4,096 fewer
    elements), and the SwiGLU MLP keeps gate and up, not SiLU's output and the product (2 x 14,336 fewer)."""
    workload = Workload(task="full_finetune", seq_len=2048)
    plan = Plan(micro_batch=1, chunked_loss=True)
    eager = estimate_memory(LLAMA31_8B, workload, plan, H100).breakdown.activations
    compiled = estimate_memory(LLAMA31_8B, workload, replace(plan, compiled=True), H100).breakdown.activations
    assert eager - compiled == pytest.approx(2048 * 32 * (2 * 4096 + 2 * 14336) * 2)


def test_sharded_qlora_skips_the_kbit_preparation_by_default() -> None:
    """TRL's SFTTrainer does not call prepare_model_for_kbit_training for QLoRA sharded by FSDP / ZeRO-3
    (`is_sharded_qlora`, TRL PR #1416), so such a plan's activations stay 16-bit unless the request says otherwise."""
    qlora = Workload(task="qlora", seq_len=2048, lora=LoraSpec(rank=8), paged_optimizer=False)
    plan = Plan(dp=2, zero_stage=3, micro_batch=2, recompute="full")
    cluster = Cluster(gpu=get_gpu("a100-80g-sxm"), gpus_per_node=2)
    sharded = estimate_memory(LLAMA2_70B, qlora, plan, cluster).breakdown
    plain = estimate_memory(LLAMA2_70B, replace(qlora, kbit_upcast=False), plan, cluster).breakdown
    upcast = estimate_memory(LLAMA2_70B, replace(qlora, kbit_upcast=True), plan, cluster).breakdown
    assert sharded.activations == plain.activations < upcast.activations
    one_gpu = estimate_memory(LLAMA2_70B, qlora, replace(plan, dp=1), cluster).breakdown
    assert one_gpu.activations == upcast.activations
