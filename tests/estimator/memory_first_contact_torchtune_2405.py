"""First-contact memory rows from torchtune's README table of May 2024 (source `torchtune-2405`;
tests/estimator/memory_first_contact.py says how rows are kept, recorded and read). The table no earlier row used: the
README's first table with a batch of 4 at a stated sequence length, and with Llama 2 70B rows.

Why this source: the task that added it asked for Lightning-AI/litgpt's config_hub/finetune/README.md, which the
repository already uses (tests/estimator/published_cases.py [litgpt]: its seven 1x A10G rows; [litgpt-resource-tables]:
tutorials/resource-tables.md), so, as the task said, another measured source not yet used was taken instead.

  [torchtune-2405] pytorch/torchtune README.md at 0217d44c2e1e372b34628767745c1f6538086a81 (PR #955, 2024-05-09,
               "Update readme table"), the table "captures the peak memory usage and training speed for recipes in
               torchtune" (the same table, unchanged, through ca0a6de40 of 2024-09-03): Llama2-7B on RTX 4090s at
               "Batch Size = 4, Seq Length = 2048" (QLoRA on one card "uses torch compile"; LoRA on one and on two;
               full fine-tune on one, which "uses PagedAdamW from bitsandbytes", and on four) and Llama2-70B on 8 A100s
               at "Batch Size = 4, Seq Length = 4096" (LoRA; full fine-tune with PagedAdamW). Stated by the table: the
               model, the method, the cards and their count, the batch, the sequence length, compile for QLoRA and
               PagedAdamW for the starred full fine-tunes.
               Stated by the recipe configs of that commit (recipes/configs/llama2/*.yaml), one per row: QLoRA
               7B_qlora_single_device (torchtune's NF4 via torchao, LoRA r=8 alpha 16 on q, k, v, output_proj and the
               MLP, torch AdamW, gradient accumulation 16, activation checkpointing); LoRA 7B_lora_single_device (r=8 on
               q and v, gradient accumulation 64, checkpointing) and 7B_lora for FSDP on two (the same LoRA, gradient
               accumulation 32); full fine-tune 7B_full_low_memory on one (bitsandbytes PagedAdamW, optimizer_in_bwd
               True, gradient accumulation 1, checkpointing) and 7B_full for FSDP on four (torch AdamW, checkpointing);
               70B_lora (r=16 alpha 32 on q, k and v, gradient accumulation 1, checkpointing). Every config: dtype bf16
               (weights, gradients, adapters and optimizer states bf16, no fp32 master, no autocast) and
               nn.CrossEntropyLoss on the decoder's fp32 output (torchtune/modules/transformer.py `self.output(h)
               .float()`: the standard loss's fp32 logits); attention through F.scaled_dot_product_attention (flash
               kernels, no s x s scores). The QLoRA recipe compiles the model only (recipes/lora_finetune_single_device
               .py `utils.wrap_compile(model)`), not the loss.
               Assumed (decided before any estimate was run): every batch is the stated length (one length: no
               config of that commit packs or pads to 2,048 - alpaca_dataset's max_seq_len is 512 and Alpaca's samples
               run to 1,304 tokens - so the benchmark's data is not the config's; the setting the table names is the
               one modelled); 7B_lora's enable_activation_checkpointing is False, but 4 x 2,048 tokens of Llama 2 7B
               keep more activations without checkpointing than the 16.2 GB read, so that row is modelled with it on;
               the 70B full fine-tune has no config at that commit (70B_full.yaml came later): full_finetune_distributed
               with llama2_70b, FSDP over the 8 GPUs, bitsandbytes PagedAdamW, checkpointing on, gradient accumulation
               1; the A100s are the 80 GB ones (70.4 GB read); the card of the one- and two-GPU 7B rows is the catalog's
               RTX 4090 (the figures compared do not depend on the card; the fit judgement does).
               The reading is not named by this table; the README two months before (5cbc1967b, [torchtune-2403]) said
               its table was "as reported by torch.cuda.max_memory_reserved()", and the recipes' memory log of this
               commit (torchtune/utils/memory.py get_memory_stats) gives peak active, allocated and reserved / 1e9:
               read as reserved, decimal GB (assumed), converted to GiB here.
"""

from __future__ import annotations

from app.estimator.hardware import get_gpu
from app.estimator.presets import get_preset
from app.estimator.specs import GIB, Cluster, LoraSpec, Plan, Workload
from tests.estimator.memory_first_contact_row import FirstContactCase

SOURCE = "torchtune-2405"
TORCHTUNE_2405 = (
    "pytorch/torchtune README.md at 0217d44c2e1e372b34628767745c1f6538086a81 (PR #955, 2024-05-09), peak memory per "
    "GPU table (Llama 2 7B on RTX 4090s at batch 4 x 2048, Llama 2 70B on 8 A100 at batch 4 x 4096; recipe configs "
    "recipes/configs/llama2/*.yaml of that commit; reading not named, read as max reserved / 1e9 as the README of "
    "5cbc1967b named it)"
)
GB = 1e9 / GIB

# (label, config, model preset, task, LoRA, paged AdamW, optimizer in backward, compile, GPUs, card, sequence,
#  gradient accumulation, published GB)
EVERY = LoraSpec(rank=8, alpha=16, targets=("q", "k", "v", "o", "gate", "up", "down"))
QV = LoraSpec(rank=8, alpha=16, targets=("q", "v"))
QKV_16 = LoraSpec(rank=16, alpha=32, targets=("q", "k", "v"))
RTX = "rtx4090-24g"
A100 = "a100-80g-sxm"
ROWS = (
    ("QLoRA (compiled)", "7B_qlora_single_device", "llama-2-7b", "qlora", EVERY, False, False, True, 1, RTX, 2048, 16,
     12.3),
    ("LoRA", "7B_lora_single_device", "llama-2-7b", "lora", QV, False, False, False, 1, RTX, 2048, 64, 21.3),
    ("LoRA", "7B_lora (FSDP)", "llama-2-7b", "lora", QV, False, False, False, 2, RTX, 2048, 32, 16.2),
    ("full fine-tune (PagedAdamW)", "7B_full_low_memory", "llama-2-7b", "full_finetune", None, True, True, False, 1,
     RTX, 2048, 1, 24.1),
    ("full fine-tune", "7B_full (FSDP)", "llama-2-7b", "full_finetune", None, False, False, False, 4, RTX, 2048, 1,
     24.1),
    ("LoRA", "70B_lora (FSDP)", "llama-2-70b", "lora", QKV_16, False, False, False, 8, A100, 4096, 1, 26.4),
    ("full fine-tune (PagedAdamW)", "full_finetune_distributed, llama2_70b (FSDP)", "llama-2-70b", "full_finetune",
     None, True, False, False, 8, A100, 4096, 1, 70.4),
)  # fmt: skip


def torchtune_2405() -> list[FirstContactCase]:
    cases = []
    for label, config, preset, task, lora, paged, in_bwd, compiled, gpus, card, seq, accumulation, published in ROWS:
        gpu = get_gpu(card)
        cases.append(
            FirstContactCase(
                f"torchtune 2024-05 {preset} {label}, {config}, {gpus} x {gpu.name}, batch 4 x {seq}",
                SOURCE,
                TORCHTUNE_2405,
                get_preset(preset).model,
                Workload(
                    task=task,  # type: ignore[arg-type]
                    mixed_precision=False,
                    seq_len=seq,
                    global_batch=4 * gpus * accumulation,
                    lora=lora,
                    paged_optimizer=paged,
                    kbit_upcast=False if task == "qlora" else None,
                    varied_lengths=False,
                ),
                Plan(
                    dp=gpus,
                    zero_stage=3 if gpus > 1 else 0,
                    micro_batch=4,
                    recompute="full",
                    attention="sdpa",
                    optimizer_in_backward=in_bwd,
                    compiled=compiled,
                ),
                Cluster(gpu=gpu, gpus_per_node=gpus),
                round(published * GB, 2),
                "reserved",
                "attention: sdpa (flash); loss: nn.CrossEntropyLoss on the decoder's fp32 output"
                + ("; torch.compile of the model (not the loss)" if compiled else "")
                + ("; torchtune NF4 (torchao)" if task == "qlora" else "")
                + ("; bitsandbytes PagedAdamW" if paged else ""),
            )
        )
    return cases
