"""First-contact memory rows from NeMo AutoModel's gradient-checkpointing guide (source `automodel-ac`;
tests/estimator/memory_first_contact.py says how rows are kept, recorded and read). No earlier row used it: the
repository names NVIDIA-NeMo/Automodel only for the throughput of docs/performance-summary.md
(tests/estimator/validation_cases.py AUTOMODEL), never a memory figure of it.

  [automodel-ac] NVIDIA-NeMo/Automodel docs/guides/gradient_checkpointing.md as written by b4733bdc18cc ("feat:
               gradient checkpointing (#289)", 2025-09-18; the same table, unchanged, is docs/guides/
               gradient-checkpointing.mdx at 36044ad3d139 of 2026-08-22), "Example Memory Savings (H100-80GB,
               Llama-3.2-1B)": Baseline 53.03, + FSDP (dp_size=8) 47.59, + Gradient Checkpointing 33.06, + LC-CE 7.30,
               and a last row "FSDP + LC-CE + Checkpointing" 7.30, which is the fourth row again (each row adds its
               technique to the one above): four runs, four rows. "Measurements taken with local batch size = 8,
               sequence len = 2048, AdamW, PyTorch 2.8"; "Peak memory reported by torch.cuda.max_memory_allocated()
               averaged across DP ranks". The unit: the same page shows the last run's log line as "mem 7.30 GiB", and
               the recipe logs torch.cuda.max_memory_allocated() / 1024**3 as "mem {:.2f} GiB", reset every step
               (nemo_automodel/recipes/llm/train_ft.py at b4733bdc): allocated, GiB.
               Stated by the code of that commit (the llama3_2 recipes, examples/llm_finetune/llama3_2/
               llama3_2_1b_squad.yaml, and the library): meta-llama/Llama-3.2-1B loaded by
               NeMoAutoModelForCausalLM.from_pretrained with torch_dtype "auto" (the checkpoint's bf16) and
               attn_implementation "flash_attention_2" (falling back to sdpa: neither keeps s x s scores);
               torch.optim.Adam on the bf16 parameters (bf16 moments, no fp32 master, the default foreach step).
               One GPU: FSDP2Manager skips parallelisation at world size 1 and casts the model to bf16
               (distributed/fsdp2.py `parallelize`),
               with activation checkpointing through HF gradient_checkpointing_enable; eight GPUs: FSDP2 fully_shard
               with MixedPrecisionPolicy(param_dtype, reduce_dtype, output_dtype all bf16): bf16 shards, bf16
               gradients; with activation_checkpointing each decoder layer's self_attn, mlp, input_layernorm and
               post_attention_layernorm are wrapped in checkpoint_wrapper one by one (distributed/parallelizer.py
               DefaultParallelizationStrategy), so the inputs of those four regions - about four hidden states a layer
               - stay saved, where the estimator's full recompute keeps one: modelled as Plan.recompute "full", the
               checkpointed rows may read above the estimate. Stated since first contact, which read them -7.8 % and
               -31.5 % with one region a layer: Plan.checkpoint_regions 4 (fitted).
               The loss: MaskedCrossEntropy (loss/masked_ce.py, fp32_upcast True: `logits.float()`, then
               F.cross_entropy) on the model's bf16 logits; the loop keeps `out` - those logits - alive through
               `backward()` (`_forward_backward_step`: `out = model(**batch)`, the loss, then `.backward()` in the same
               scope: Plan.kept_logits_bytes 2). LC-CE: FusedLinearCrossEntropy on `out.hidden_states[-1]` with
               `model(logits_to_keep=1, ...)`, no logits of the sequence (Plan.fused_loss).
               Assumed (decided before any estimate was run): the baseline ran on one GPU (it is the row before "+
               FSDP (dp_size=8)", and one GPU is the only layout without FSDP in that recipe family); every batch is 8 x
               2,048 tokens (the stated sequence length; SQuAD samples are shorter, so the runs padded or packed to it:
               one length); the card is the catalog's H100 80GB SXM. Not modelled, named in `levers`: from_pretrained's
               default use_liger_kernel True patches Liger's RoPE, RMSNorm and SwiGLU kernels into the model (they save
               fewer activations than torch's ops: the no-checkpointing rows may read below the estimate).
"""

from __future__ import annotations

from app.estimator.hardware import get_gpu
from app.estimator.presets import get_preset
from app.estimator.specs import Cluster, Plan, Workload
from tests.estimator.memory_first_contact_row import FirstContactCase

SOURCE = "automodel-ac"
AUTOMODEL_AC = (
    "NVIDIA-NeMo/Automodel docs/guides/gradient_checkpointing.md at b4733bdc18cc39d01ba215c87c8fad36ecf0ee70 "
    "(2025-09-18), 'Example Memory Savings (H100-80GB, Llama-3.2-1B)': local batch 8 x 2048, Adam, bf16; Max GPU Mem "
    "= torch.cuda.max_memory_allocated() / 2**30 averaged over DP ranks"
)

# (technique added, GPUs, activation checkpointing, LC-CE, Max GPU Mem)
ROWS = (
    ("baseline", 1, False, False, 53.03),
    ("+ FSDP (dp_size=8)", 8, False, False, 47.59),
    ("+ gradient checkpointing", 8, True, False, 33.06),
    ("+ LC-CE", 8, True, True, 7.30),
)


def automodel_ac() -> list[FirstContactCase]:
    cases = []
    model = get_preset("llama-3.2-1b").model
    gpu = get_gpu("h100-80g-sxm")
    for technique, gpus, checkpointing, fused, published in ROWS:
        cases.append(
            FirstContactCase(
                f"NeMo AutoModel Llama 3.2 1B full fine-tune {technique}: "
                + ("1 GPU" if gpus == 1 else f"FSDP2 x {gpus}")
                + (", full AC" if checkpointing else ", no AC")
                + (", LC-CE" if fused else "")
                + ", batch 8 x 2048, H100",
                SOURCE,
                AUTOMODEL_AC,
                model,
                Workload(
                    task="full_finetune",
                    mixed_precision=False,  # bf16 weights, gradients and Adam moments
                    seq_len=2048,
                    global_batch=8 * gpus,
                    varied_lengths=False,
                ),
                Plan(
                    dp=gpus,
                    zero_stage=3 if gpus > 1 else 0,
                    micro_batch=8,
                    recompute="full" if checkpointing else "none",
                    fused_loss=fused,
                    kept_logits_bytes=0.0 if fused else 2.0,
                    # attention, MLP and both norms checkpointed apart (module docstring); stated after first contact
                    # (fitted: the record keeps -7.8 % and -31.5 %, read with one region a layer)
                    checkpoint_regions=4 if checkpointing else 1,
                    # torch.optim.Adam's default foreach step on FSDP2 shards, gradients made in the backward and
                    # set to None by zero_grad
                    fsdp_torch_adamw=gpus > 1,
                ),
                Cluster(gpu=gpu, gpus_per_node=gpus),
                published,
                "allocated",
                "attention: flash-attn 2; loss: "
                + (
                    "FusedLinearCrossEntropy (cut cross-entropy, no logits)"
                    if fused
                    else "MaskedCrossEntropy, fp32 upcast of the bf16 logits the loop keeps through backward"
                )
                + "; Liger RoPE / RMSNorm / SwiGLU kernels (from_pretrained default)"
                + ("; FSDP2 bf16 mixed precision" if gpus > 1 else ""),
            )
        )
    return cases
