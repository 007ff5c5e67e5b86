"""First-contact memory rows from ColossalChat's training benchmark (source `colossalchat`;
tests/estimator/memory_first_contact.py says how rows are kept, recorded and read). A source new to the repository: no
earlier row comes from hpcaitech/ColossalAI, from its LowLevelZero (ZeRO-2) plugin or from an H800.

  [colossalchat] hpcaitech/ColossalAI applications/ColossalChat/examples/README.md at
               d888c3787c38e6cd3a00193a1cac4939dd56a377 (2024-07-10, "add benchmark for sft, dpo, simpo, orpo. Add
               benchmarking result"), section "Hardware Requirements", written by the benchmark scripts the same commit
               adds (applications/ColossalChat/benchmarks/benchmark_sft.py, benchmark_dpo.py and their .sh): "We tested
               the VRAM consumption on a dummy dataset with a sequence length of 2048. In all experiments, we use H800
               GPUs with 80GB VRAM and enable gradient checkpointing and flash attention." The model is Llama-2-7b-hf
               (benchmark_sft.sh PRETRAINED_MODEL_PATH; the README's PPO paragraph: "llama2-7B-hf"), loaded in bf16
               with attn_implementation "flash_attention_2" (benchmark_sft.py, --mixed_precision default bf16).
               Plugins: "zero2" = LowLevelZeroPlugin(stage=2, precision bf16) and "zero2_cpu" the same with
               cpu_offload=True (the optimizer and its fp32 master on the host), optimizer HybridAdam (Adam, fp32
               states), gradient accumulation 1. Data: DummyLLMDataset (benchmarks/dummy_dataset.py), every sample
               2,048 tokens (one length). Gradient checkpointing: transformers' gradient_checkpointing_enable() on the
               model (requirements.txt pins transformers 4.39.3), each decoder layer's input kept. The loss: SFT calls
               the model with labels (coati/trainer/sft.py `outputs = self.model(..., labels=...)`), so transformers
               4.39.3's LlamaForCausalLM upcasts the logits to fp32 in the model (`logits = logits.float()`) and runs
               CrossEntropyLoss on a shifted copy; `outputs`, which holds those fp32 logits, stays alive through
               `self.booster.backward(loss)` (Plan.kept_logits_bytes 4, as the atorch rows under transformers 4.31).
               LoRA (--lora_rank): coati/models/lora.py `convert_to_lora_module` wraps every nn.Linear, lm_head
               included, in a LoraLinear with bf16 adapters (dropout 0), and marks only the adapters trainable; the
               head's adapter is not a target the estimator states (modelled as every linear layer of the decoder).

               SimPO rows (benchmark_dpo.py with --disable_reference_model --length_normalization, the script's
               zero2_cpu / zero2 plugins as above, no LoRA): the trainer runs the chosen and rejected sequences of each
               pair as one batch (coati/trainer/dpo.py `self.model(input_ids=torch.cat([chosen_input_ids,
               reject_input_ids]), ...)`), so "micro batch size=4" is 8 sequences of 2,048 tokens; its loss is a
               log_softmax of the model's fp32 logits gathered at the labels (coati/models/utils.py
               `_log_probs_from_logits`), kept as `actor_all_logits` through the backward. Modelled as full fine-
               tuning of twice the pairs with the standard loss (the estimator has no preference loss).

               The reading: each script ends with `coordinator.print_on_master(f"Max CUDA memory usage:
               {torch.cuda.max_memory_allocated()/1024**2:.2f} MB")` (benchmark_sft.py, benchmark_dpo.py): allocated,
               MiB on rank 0, never reset, converted to GiB here.

               Observation, not modelled at first contact (stated since, Workload.decoder_without_graph):
               transformers 4.39.3's gradient_checkpointing_enable() defaults to the
               reentrant checkpoint (`{"use_reentrant": True}`) and calls enable_input_require_grads() only for a
               PEFT-loaded model, so with coati's own LoRA (frozen embeddings) the decoder layers' inputs do not require
               gradients and the adapters inside them get none; only the head's adapter trains, and the backward
               stops at the head.
"""

from __future__ import annotations

from app.estimator.presets import get_preset
from app.estimator.specs import GIB, Cluster, LoraSpec, Plan, Workload
from tests.estimator.memory_first_contact_row import FirstContactCase
from tests.estimator.validation_cases import H800

SOURCE = "colossalchat"
COLOSSALCHAT = (
    "hpcaitech/ColossalAI applications/ColossalChat/examples/README.md at d888c3787c38e6cd3a00193a1cac4939dd56a377, "
    "'Hardware Requirements' (Llama-2-7b-hf, H800 80GB, dummy data of 2,048 tokens, gradient checkpointing, flash "
    "attention 2, LowLevelZero ZeRO-2 bf16, HybridAdam; benchmarks/benchmark_sft.py and benchmark_dpo.py print "
    "torch.cuda.max_memory_allocated() / 1024**2 MB)"
)
LLAMA2_7B = get_preset("llama-2-7b").model
# (method, plugin, GPUs, micro batch, LoRA rank or 0, published MiB)
ROWS = (
    ("SFT", "zero2_cpu", 2, 4, 0, 22457.98),
    ("SFT", "zero2", 2, 4, 0, 72390.95),
    ("SFT", "zero2_cpu", 4, 8, 0, 19412.77),
    ("SFT", "zero2", 4, 8, 0, 43446.31),
    ("SFT", "zero2", 4, 16, 0, 58082.30),
    ("SFT", "zero2", 4, 8, 8, 21167.73),
    ("SFT", "zero2", 4, 8, 32, 21344.17),
    ("SimPO", "zero2_cpu", 2, 4, 0, 25705.26),
    ("SimPO", "zero2", 2, 4, 0, 73375.04),
    ("SimPO", "zero2_cpu", 4, 8, 0, 36709.36),
    ("SimPO", "zero2", 4, 4, 0, 44330.90),
    ("SimPO", "zero2", 4, 8, 0, 56086.12),
)


def colossalchat() -> list[FirstContactCase]:
    cases = []
    for method, plugin, gpus, micro, rank, published_mib in ROWS:
        sequences = micro * (2 if method == "SimPO" else 1)  # SimPO: chosen and rejected in one batch
        lora = LoraSpec(rank=rank, alpha=1, targets=("all-linear",)) if rank else None
        tuned = f"LoRA r={rank}" if rank else ("full fine-tune" if method == "SFT" else "SimPO, no reference model")
        cases.append(
            FirstContactCase(
                f"ColossalChat {method} Llama 2 7B {tuned}, {plugin} x {gpus} H800, micro-batch {micro} x 2048",
                SOURCE,
                COLOSSALCHAT,
                LLAMA2_7B,
                Workload(
                    task="lora" if rank else "full_finetune",
                    seq_len=2048,
                    global_batch=sequences * gpus,
                    lora=lora,
                    varied_lengths=False,
                    # coati's LoRA freezes the embedding and transformers 4.39.3 checkpoints reentrantly without
                    # enable_input_require_grads (the docstring's observation; stated after first contact)
                    decoder_without_graph=bool(rank),
                ),
                Plan(
                    dp=gpus,
                    zero_stage=2,
                    offload="optimizer" if plugin == "zero2_cpu" else "none",
                    micro_batch=sequences,
                    recompute="full",
                    kept_logits_bytes=4.0,  # `outputs` / `actor_all_logits`: the fp32 logits, kept through backward
                    # LowLevelZeroPlugin(stage=2): its bucket and gradient store (stated after first contact:
                    # transcription of the plugin the docstring names)
                    low_level_zero=True,
                ),
                Cluster(gpu=H800, gpus_per_node=8),
                round(published_mib * 2**20 / GIB, 3),
                "allocated",
                "attention: flash-attn 2; loss: transformers 4.39 LlamaForCausalLM (fp32 logits from the model, kept "
                "through the backward)"
                + ("; SimPO log-probs (modelled as the standard loss on both sequences)" if method == "SimPO" else "")
                + "; ColossalAI LowLevelZero ZeRO-2"
                + (" with the optimizer on the host" if plugin == "zero2_cpu" else ""),
            )
        )
    return cases
