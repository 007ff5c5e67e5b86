"""The assumption sentences an estimate states, per (workload, plan) kind; shared by every plan that states the same."""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

from app.estimator.memory.states import MASTER_BYTES, STATE_FP32_BYTES
from app.estimator.vocabulary import LORA_TASKS


class _WorkloadKey(NamedTuple):
    """What the sentences read of the workload (the estimate's cache key, positional: see estimate_memory)."""

    task: str
    precision: str
    mixed: bool
    optimizer: str
    paged: bool
    nf4_bytes: float
    upcast: bool


class _PlanKey(NamedTuple):
    """What the sentences read of the plan (the estimate's cache key, positional: see estimate_memory)."""

    zero: int
    offload: str
    recompute: str
    flash: bool
    pipelined: bool
    activation_offload: bool
    fp32_grads: bool
    host_load: str
    compiled: bool
    paged: bool
    upcast: bool


@lru_cache(maxsize=1024)
def _assumptions(
    workload_key: tuple[str, str, bool, str, bool, float, bool],
    plan_key: tuple[int, str, str, bool, bool, bool, bool, str, bool, bool, bool],
) -> tuple[str, ...]:
    """The sentences, from plain tuples (the hot path builds them; named here, where they are read once)."""
    w, p = _WorkloadKey(*workload_key), _PlanKey(*plan_key)
    out = ["Bytes per GPU for the worst pipeline stage; capacity is the card's usable memory (CUDA context excluded)."]
    out.extend(_states_sentences(w, p))
    if w.task != "inference":
        out.extend(_training_sentences(w, p))
    if p.pipelined:
        out.append("1F1B: the first stage holds min(pp, micro-batches) in flight; the last stage holds the logits.")
    out.append(
        "other = cuBLAS workspaces 0.25 GiB + NCCL buffers 0.5 GiB (multi-GPU) + 5% allocator fragmentation "
        "of activations."
    )
    return tuple(out)


def _states_sentences(w: _WorkloadKey, p: _PlanKey) -> list[str]:
    """How the model states are held: inference weights, LoRA / QLoRA, Megatron-LM's, mixed or pure precision."""
    task, precision, mixed, optimizer = w.task, w.precision, w.mixed, w.optimizer
    if task == "inference":
        return [
            "Inference: weights + KV cache (K and V per layer, kv heads × head_dim) + one layer's prefill "
            "working set and fp32 last-token logits."
        ]
    if task in LORA_TASKS:
        out = _lora_sentences(w)
    elif mixed and precision != "fp32" and p.fp32_grads:
        owned = MASTER_BYTES + STATE_FP32_BYTES[optimizer]  # what the distributed optimizer shards
        out = [
            f"Mixed precision {optimizer}, as Megatron-LM runs it: 16-bit weights + an fp32 main-gradient buffer + "
            f"fp32 master and {optimizer} states ({2 + 4 + owned:g} B/param; 6 + {owned:g}/d with the distributed "
            "optimizer, Megatron-LM dist_optimizer docs)."
        ]
    elif mixed and precision != "fp32":
        state = STATE_FP32_BYTES[optimizer]
        out = [
            f"Mixed precision {optimizer}: 16-bit weights + 16-bit grads + fp32 master + {state:g} B of {optimizer} "
            f"states ({2 + 2 + MASTER_BYTES + state:g} B/param; ZeRO §3.1 counts 16 for Adam)."
        ]
    else:
        out = [f"Pure {precision} training: weights, grads and {optimizer} states in the training dtype."]
    if w.paged:
        out.append(
            "Paged optimizer (QLoRA §3): its states are evicted to host RAM while activations need the card and "
            "paged back for the step, so the peak counts the larger of the two, not both."
        )
    return out


def _lora_sentences(w: _WorkloadKey) -> list[str]:
    task, nf4_bytes = w.task, w.nf4_bytes
    constants = f"{nf4_bytes * 8 - 4:.3g} bit/param of {'double-' if nf4_bytes < 0.55 else ''}quantised constants"
    base = f"NF4 + {constants} (QLoRA §3)" if task == "qlora" else "16-bit"
    adapters = "16-bit adapters and grads with fp32 states (QLoRA eq. 5)" if task == "qlora" and w.mixed else ""
    out = [
        f"{task}: frozen base in {base}; adapters r·(d_in+d_out) train with their own grads and states"
        + (f": {adapters}." if adapters else ".")
    ]
    if w.upcast:
        out.append(
            "PEFT prepare_model_for_kbit_training (TRL SFTTrainer, the QLoRA recipe): fp32 norms put the residual "
            "stream and the saved activations in fp32 (kbit_upcast=false: torchtune, litgpt, Unsloth; off by "
            "default for QLoRA sharded by ZeRO-3 / FSDP)."
        )
    return out


def _training_sentences(w: _WorkloadKey, p: _PlanKey) -> list[str]:
    """Activations, ZeRO sharding and what offload and loading put in host RAM."""
    zero, offload = p.zero, p.offload
    out = [
        f"Activations counted per saved tensor (Korthikanti et al. 2022 method), recompute={p.recompute}, "
        f"flash_attention={p.flash}; unfused loss: fp32 log-probs + two fp32 gradients per logit."
    ]
    if zero:
        out.append(
            f"ZeRO stage {zero} shards over dp × cp (with hybrid sharding, dp_shard × cp), routed experts over "
            f"dp × cp / ep; offload={offload}."
        )
    else:
        out.append(
            "ZeRO stage 0: every data-parallel rank holds the whole weights, gradients and optimizer states of "
            f"its tp × pp part (routed experts split over ep); offload={offload}."
        )
    mixed = w.mixed and w.precision != "fp32"
    if zero == 2 and not p.pipelined and mixed and w.task not in LORA_TASKS:
        out.append(
            "ZeRO-2 gradients are fp32 shards (FSDP2 keeps them in the fp32 parameter dtype); DeepSpeed's 16-bit "
            "partition beside its fp32 copy at the step is counted where it outweighs the freed activations."
        )
    if w.optimizer == "adafactor" and zero >= 1:
        out.append(
            "Adafactor on ZeRO's flat 1-D partitions cannot factor its second moment (transformers "
            "Adafactor._get_options): a full fp32 v per parameter."
        )
    if zero >= 2 and p.pipelined:
        out.append(
            "Pipeline with sharded gradients: the reduce-scatter waits for the last micro-batch, so the stage's "
            "gradients stay whole in fp32 through the step (torch.distributed.pipelining, torchtitan)."
        )
    if p.activation_offload:
        out.append(
            "Activation offload: saved activations wait in host RAM (counted in host_ram); the GPU holds two "
            "layers' worth, the one in use and the one in flight over PCIe."
        )
    if p.compiled:
        out.append(
            "torch.compile (compile): counted in the activations only, as fused pointwise ops recomputed in the "
            "backward save fewer tensors (none fewer under selective recompute, which recomputes them already); its "
            "speed-up is not modelled (the speed is the eager model's) and compile is otherwise passed to the launch."
        )
    if p.host_load != "none":
        ranks = "every rank on the node" if p.host_load == "every_rank" else "local rank 0 of each node"
        out.append(
            f"Loading: {ranks} holds the whole model as loaded in host RAM before ZeRO-3 shards it "
            "(host_load_gib); the host RAM gate counts the larger of that and the offloaded states."
        )
    return out
