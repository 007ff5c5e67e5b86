"""First-contact memory rows from PEFT's method comparison on MetaMathQA (source `peft-metamathqa`;
tests/estimator/memory_first_contact.py says how rows are kept, recorded and read). No earlier row used it: the
repository names huggingface/peft only for its library code, never this benchmark's result files.

  [peft-metamathqa] huggingface/peft method_comparison/MetaMathQA at 5d602fdbff04c33c1c4de55cda9d4ae1d7cb7e40, the
               result files results/<method>--llama-3.2-3B-<experiment>.json as last written by 51c2ff666 ("Update
               MetaMAthQA results (#3445)", runs of 2026-07-15: transformers 5.13.1, torch 2.13.0+cu130, peft
               0.19.2.dev0, one NVIDIA L40S, as each file's meta_info.system_info says). Each file is one run of
               run.py with default_training_params.json (stated in each file's run_info.train_config): Llama 3.2 3B
               (meta-llama/Llama-3.2-3B) loaded in bf16 (utils.py get_base_model `dtype=torch.bfloat16`, no
               quantisation), batch 4, max_seq_length 768, 5,000 steps with no gradient accumulation, use_gc False (no
               gradient checkpointing), compile False, use_amp False (no autocast), attn_implementation None
               (transformers' default, sdpa), torch.optim.AdamW on every trainable parameter (full fine-tuning: on the
               bf16 weights, no fp32 master; LoRA: PEFT's autocast_adapter_dtype True keeps the adapters in fp32),
               grad_norm_clip 1.0. The loss is transformers' ForCausalLMLoss on the model's bf16 logits, upcast to fp32
               (`outputs = model(**batch, num_items_in_batch=...)`, labels given), and run.py keeps `outputs` - the
               bf16 logits - alive through `backward()` (Plan.kept_logits_bytes 2). Batches are padded per batch
               (`tokenizer.pad`) from MetaMathQA samples of varied length, bucketed by length (BucketIterator, 20
               batches a bucket); run.py calls torch.cuda.empty_cache() every 10 steps.
               Rows (each file's run_info.peft_config): LoRA r=32 on q_proj and v_proj (PEFT's default for Llama),
               r=64 on the same, r=64 with rsLoRA (a scaling only), r=10 on gate/up/down_proj, and three LoRA variants
               modelled as LoRA with the same rank and targets (their adapters differ by a few million parameters of
               states, under 0.2 GB): BD-LoRA r=14 on the MLP (block-diagonal factors, 8.4 M trainable), MiCA r=32 and
               LoRA-FA r=32 (optimizer "lora-fa", A frozen) on q_proj and v_proj; and full fine-tuning. LoRA dropout 0.
               Reading: train_info.accelerator_memory_max = torch.cuda.max_memory_reserved() at the end of the run
               minus its value at start (utils.py log_results and init_accelerator: a 1 x 1 Linear, about 2 MiB),
               in bytes: reserved, converted to GiB here. The peak spans the whole run: the evaluations (no gradient,
               batch 50 generating to 800 tokens: bf16 weights and a KV cache of about 4.3 GiB) stay well below a
               training step without checkpointing, so the training peak is the one compared.
               Assumed (decided before any estimate was run): the longest batch is padded to the stated
               max_seq_length, 768 tokens (data.py: "with a token limit of 768 for query + response, we have to exclude
               all texts with length > 1304" characters - the filter is sized to that limit; the tokenizer also
               truncates there, get_tokenizer model_max_length). The run's mean is 210 tokens a sample (train total
               tokens 4,198,051 over 20,000 samples in the LoRA r=32 file), so its longest batch may be shorter than
               768: the rows may read below the modelled length. The L40S is the catalog's l40s-48g.
"""

from __future__ import annotations

from app.estimator.hardware import get_gpu
from app.estimator.presets import get_preset
from app.estimator.specs import GIB, Cluster, LoraSpec, Plan, Workload
from tests.estimator.memory_first_contact_row import FirstContactCase

SOURCE = "peft-metamathqa"
PEFT_METAMATHQA = (
    "huggingface/peft method_comparison/MetaMathQA/results/*--llama-3.2-3B-*.json at "
    "5d602fdbff04c33c1c4de55cda9d4ae1d7cb7e40 (written by 51c2ff666, 2026-07-20): Llama 3.2 3B bf16 on one L40S, batch "
    "4 x up to 768 tokens of MetaMathQA padded per batch, no gradient checkpointing, sdpa, torch AdamW; "
    "accelerator_memory_max = torch.cuda.max_memory_reserved() - start, bytes"
)

QV = ("q", "v")
MLP = ("gate", "up", "down")
# (experiment, LoRA rank and targets or None for full fine-tuning, what the variant changes, accelerator_memory_max)
ROWS = (
    ("lora/llama-3.2-3B-rank32", 32, QV, "", 22292725760),
    ("lora/llama-3.2-3B-rank64", 64, QV, "", 22552772608),
    ("lora/llama-3.2-3B-rank64-rslora", 64, QV, "; rsLoRA scaling", 22561161216),
    ("lora/llama-3.2-3B-rank10-target-mlp", 10, MLP, "", 24698159104),
    ("lora/llama-3.2-3B-rank14-target-mlp-bdlora", 14, MLP, "; BD-LoRA block-diagonal factors (8.4 M trainable)",
     24685576192),
    ("lora/llama-3.2-3B-rank32-mica", 32, QV, "; MiCA variant (5.5 M trainable)", 22244491264),
    ("lora/llama-3.2-3B-rank32-lorafa", 32, QV, "; LoRA-FA optimizer (A frozen, 3.7 M trainable)", 22240296960),
    ("full-finetuning/llama-3.2-3B-lr_0.00001", None, (), "", 38868615168),
)  # fmt: skip


def peft_metamathqa() -> list[FirstContactCase]:
    cases = []
    model = get_preset("llama-3.2-3b").model
    gpu = get_gpu("l40s-48g")
    for experiment, rank, targets, variant, published_bytes in ROWS:
        lora = None if rank is None else LoraSpec(rank=rank, targets=targets, dropout=0.0)
        cases.append(
            FirstContactCase(
                f"PEFT MetaMathQA {experiment}: Llama 3.2 3B "
                + ("full fine-tune" if lora is None else f"LoRA r={rank} on {'/'.join(targets)}")
                + f", batch 4 x 768, no checkpointing, 1 x {gpu.name}",
                SOURCE,
                PEFT_METAMATHQA,
                model,
                Workload(
                    task="full_finetune" if lora is None else "lora",
                    mixed_precision=False,  # bf16 weights, AdamW on them (LoRA adapters fp32: tiny)
                    seq_len=768,
                    global_batch=4,
                    lora=lora,
                    varied_lengths=True,  # tokenizer.pad per batch of MetaMathQA samples
                    # run.py's empty_cache every 10 steps, BucketIterator's buckets of 20 batches long to short
                    # (stated after first contact: transcription of the loop the docstring names)
                    cache_cleared_longest_first=True,
                ),
                Plan(micro_batch=4, recompute="none", attention="sdpa", kept_logits_bytes=2.0),
                Cluster(gpu=gpu),
                published_bytes / GIB,
                "reserved",
                "attention: sdpa (transformers default); loss: transformers ForCausalLMLoss (fp32 upcast), the bf16 "
                "logits kept by the loop through backward; no checkpointing; empty_cache every 10 steps" + variant,
            )
        )
    return cases
