"""First-contact memory rows from ms-swift's example scripts and Megatron-SWIFT's benchmark tables (source
`ms-swift-examples`; tests/estimator/memory_first_contact.py says how rows are kept, recorded and read). A source new
to the repository: the `ms-swift` rows there are docs/source_en/LLM/Benchmark.md of swift 1.x; none of these files
was read by an earlier row.

  [ms-swift-examples] modelscope/ms-swift at 3602360a562313afbf2ef6065fdf61f271a2c5b9 (2026-08-22): the figure each
               example script's first comment gives for the run it launches ("# 4 * 44GiB; 15.5s/it"), and the
               "Benchmark" table of docs/source_en/Megatron-SWIFT/Quick-start.md (Qwen2.5-14B full fine-tuning at 8K
               context on one node of 8 A800: Megatron-LM 8*64GB, DeepSpeed ZeRO-2 8*80GB, ZeRO-3 8*58GB, run with
               examples/megatron/base_to_chat.sh and examples/megatron/benchmark/deepspeed.sh) and its Qwen3-30B-A3B
               table (two nodes of 8 A800, examples/megatron/moe/qwen3_moe.sh: Megatron-LM 16*60GiB; the ZeRO-3
               run's own flags are not published, not a row). base_to_chat.sh's own comment (8 * 65GiB) is the
               table's Megatron run again: not a second row.

               Stated by the scripts: the model (Qwen2.5 / Qwen3 checkpoints; -Instruct, -Base and -2507 share their
               base model's config.json shape, the repository presets), the tuner (full, or LoRA with its rank and
               alpha on `all-linear`: every linear but the head), torch_dtype bfloat16, per-device batch, gradient
               accumulation, max_length, packing, attn_impl / attention_backend flash, use_liger_kernel, the
               DeepSpeed stage (swift's zero2 / zero3 json: bf16 with fp32 master weights, no optimizer block, so
               the Trainer's torch AdamW steps under DeepSpeed: Plan.tuning "trainer"), and for `megatron sft` / `pt`
               the TP / PP / EP sizes, sequence parallel, micro and global batch, the recompute granularity (full,
               uniform, 1 layer; or selective: core attention) and optimizer CPU offload. Defaults of that commit
               (docs/source_en/Instruction/Command-line-parameters.md and Megatron-SWIFT/Command-line-parameters.md):
               gradient_checkpointing True, lora_dropout 0.05, cross_entropy_loss_fusion True (Megatron's fused
               vocab-parallel cross-entropy, native, Plan.chunked_loss as the Megatron-Bridge rows state it; read at
               first contact as keeping no full fp32 copy of the logits, which Megatron-LM's code does keep: since
               counted as its unfused loss, activations MEGATRON_VOCAB_PARALLEL_LOSS_BYTES_PER_LOGIT, fitted),
               use_distributed_optimizer True (ZeRO-1),
               accumulate_allreduce_grads_in_fp32 True under bf16 (fp32 main-gradient buffer),
               expert_tensor_parallel_size 1. Packing (`--packing true`) packs whole samples into rows of about
               max_length, read as one length at max_length.
               Rows without packing pad each batch to its longest sample: read as varied lengths whose longest batch
               reaches max_length (assumed: the DeepSeek-R1 distillation data has samples past 8,192 tokens, which are
               truncated; a run of hours meets them).

               Readings: swift logs `memory(GiB)`, torch.cuda.max_memory_reserved() / 2**30 (swift/utils/torch_utils.py
               get_max_reserved_memory for `swift sft`; swift/megatron/callbacks/print.py for Megatron-SWIFT, the
               largest over the model-parallel group: the worst stage); each comment is read as that log's figure,
               in GiB also where it says "GB" (assumed: no script says how its figure was read; a figure of exactly
               80 on an 80 GB card may be the card's own limit). Cards: A800 80GB where named (modelled on the A100
               80GB SXM: the same memory), "4 * A100" read as 80GB (its 50 GB reading), H20 (96 GB, not in the
               catalog) modelled on the H100 80GB, unnamed cards modelled on the A100 80GB (the figure compared does
               not depend on the card; the fit judgement does). The Megatron scripts set
               PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (little fragmentation).

               Left out before any estimate: scripts whose batches' lengths cannot be stated (unpacked LoRA runs on
               swift/self-cognition and the alpaca-gpt4 samples, padding_free runs whose micro-batch is the sum of its
               samples), multimodal, 8-bit / GPTQ / AWQ bases, sequence parallel (Ulysses) runs, tuners other than
               LoRA (DoRA, GaLore, LISA, Muon ...), models without a preset or a readable config.json (Qwen3-14B,
               QwQ-32B with YaRN, Qwen1.5-MoE, Qwen3-235B), and the FP8 benchmark (Qwen3-14B).
"""

from __future__ import annotations

from app.estimator.hardware import get_gpu
from app.estimator.presets import get_preset
from app.estimator.specs import Cluster, LoraSpec, Plan, Workload
from tests.estimator.memory_first_contact_row import FirstContactCase

MS_SWIFT_EXAMPLES = (
    "modelscope/ms-swift examples/train/**/*.sh, examples/megatron/**/*.sh and docs/source_en/Megatron-SWIFT/"
    "Quick-start.md at 3602360a562313afbf2ef6065fdf61f271a2c5b9 (each script's first comment; memory(GiB) = "
    "torch.cuda.max_memory_reserved / 2**30, read as that log's figure)"
)
SOURCE = "ms-swift-examples"

A100_80 = get_gpu("a100-80g-sxm")
H100 = get_gpu("h100-80g-sxm")
# two DLC nodes; the fabric is not named (the memory ignores it)
TWO_NODES = Cluster(gpu=A100_80, gpus_per_node=8, nodes=2, inter_node_gbps=1600.0)
ALL_LINEAR = ("all-linear",)


def _swift_sft() -> list[FirstContactCase]:
    """`swift sft`: the Hugging Face Trainer, with DeepSpeed where the script names it."""
    cases = []
    liger = "loss: Liger fused linear cross-entropy (no logits)"
    plain = "loss: transformers ForCausalLM (fp32 upcast)"
    cases.append(
        FirstContactCase(
            "ms-swift examples/train/packing/llm.sh: Qwen2.5-7B-Instruct LoRA r=8 all-linear, packed 1 x 2048, 1 GPU",
            SOURCE,
            MS_SWIFT_EXAMPLES,
            get_preset("qwen2.5-7b").model,
            Workload(
                task="lora",
                seq_len=2048,
                global_batch=4,
                lora=LoraSpec(rank=8, alpha=32, targets=ALL_LINEAR, dropout=0.05),
                varied_lengths=False,
            ),
            Plan(micro_batch=1, recompute="full", tuning="trainer_peft"),
            Cluster(gpu=A100_80),
            22.0,
            "reserved",
            "attention: flash-attn 2 (packed, varlen); " + plain + "; gradient checkpointing",
        )
    )
    # (label, preset, GPUs, ZeRO stage, micro-batch, accumulation, seq, packed, Liger, card, published GiB)
    deepspeed = (
        ("full/qwen2_5_32b.sh: Qwen2.5-32B", "qwen2.5-32b", 8, 3, 1, 2, 8192, True, True, A100_80, 80.0),
        ("Megatron-SWIFT Quick-start.md benchmark, DeepSpeed ZeRO-2: Qwen2.5-14B", "qwen2.5-14b", 8, 2, 1, 2, 8192,
         True, False, A100_80, 80.0),
        ("Megatron-SWIFT Quick-start.md benchmark, DeepSpeed ZeRO-3: Qwen2.5-14B", "qwen2.5-14b", 8, 3, 1, 2, 8192,
         True, False, A100_80, 58.0),
        ("cached_dataset/sft.sh: Qwen2.5-7B", "qwen2.5-7b", 4, 3, 1, 4, 8192, True, True, A100_80, 44.0),
        ("flash_attention_3/transformers.sh (fa2): Qwen2.5-7B", "qwen2.5-7b", 4, 3, 1, 4, 16384, True, True, H100,
         43.0),
        ("padding_free/sft.sh without padding_free: Qwen2.5-7B", "qwen2.5-7b", 4, 3, 8, 1, 8192, False, True,
         A100_80, 60.0),
        ("liger/sft.sh with Liger and packing: Qwen2.5-7B", "qwen2.5-7b", 4, 3, 1, 2, 8192, True, True, A100_80,
         42.0),
        ("liger/sft.sh without Liger: Qwen2.5-7B", "qwen2.5-7b", 4, 3, 1, 2, 8192, True, False, A100_80, 54.0),
        ("liger/sft.sh without Liger and packing: Qwen2.5-7B", "qwen2.5-7b", 4, 3, 1, 2, 8192, False, False,
         A100_80, 52.0),
        ("packing/liger_kernel.sh: Qwen2.5-7B", "qwen2.5-7b", 4, 3, 1, 2, 16384, True, True, A100_80, 42.0),
    )  # fmt: skip
    for label, preset, gpus, zero, micro, accumulation, seq, packed, fused, gpu, published in deepspeed:
        layout = f"{'packed' if packed else 'padded'} {micro} x {seq}"
        cases.append(
            FirstContactCase(
                f"ms-swift {label} full fine-tune, ZeRO-{zero} x {gpus}, {layout}",
                SOURCE,
                MS_SWIFT_EXAMPLES,
                get_preset(preset).model,
                Workload(
                    task="full_finetune",
                    seq_len=seq,
                    global_batch=gpus * micro * accumulation,
                    varied_lengths=not packed,
                ),
                Plan(dp=gpus, zero_stage=zero, micro_batch=micro, recompute="full", fused_loss=fused, tuning="trainer"),
                Cluster(gpu=gpu, gpus_per_node=gpus),
                published,
                "reserved",
                "attention: flash-attn 2"
                + (" (packed, varlen)" if packed else "")
                + "; "
                + (liger if fused else plain)
                + f"; DeepSpeed ZeRO-{zero} bf16 (fp32 master), torch AdamW; gradient checkpointing",
            )
        )
    cases.append(
        FirstContactCase(
            "ms-swift examples/train/agent/qwen2_5.sh: Qwen2.5-3B full fine-tune (bf16 AdamW), packed 1 x 8192, 1 GPU",
            SOURCE,
            MS_SWIFT_EXAMPLES,
            get_preset("qwen2.5-3b").model,
            # no DeepSpeed: the Trainer's torch AdamW on the bf16 parameters (no fp32 master), as the ms-swift rows
            Workload(task="full_finetune", mixed_precision=False, seq_len=8192, global_batch=8, varied_lengths=False),
            Plan(micro_batch=1, recompute="full", fused_loss=True, tuning="trainer"),
            Cluster(gpu=A100_80),
            35.0,
            "reserved",
            "attention: flash-attn 2 (packed, varlen); " + liger + "; gradient checkpointing",
        )
    )
    return cases


def _megatron_swift() -> list[FirstContactCase]:
    """`megatron sft` / `megatron pt`: Megatron-LM (mcore) with Transformer Engine layers."""
    cases = []
    mcore = (
        "attention: flash; loss: Megatron fused vocab-parallel cross-entropy (native); distributed optimizer, fp32 "
        "main grads; expandable segments"
    )
    # (label, preset, task, GPUs, tp, pp, ep, recompute, seq, global batch, offload, LoRA rank, card, published GiB)
    rows = (
        ("Quick-start.md benchmark, Megatron-LM (base_to_chat.sh): Qwen2.5-14B", "qwen2.5-14b", "full_finetune", 8, 4,
         1, 1, "selective", 8192, 16, False, 0, A100_80, 64.0),
        ("examples/megatron/pretrain.sh: Qwen2.5-7B", "qwen2.5-7b", "pretrain", 4, 4, 1, 1, "selective", 8192, 16,
         False, 0, A100_80, 80.0),
        ("examples/megatron/long_text.sh: Qwen2.5-7B", "qwen2.5-7b", "full_finetune", 4, 4, 1, 1, "full", 32768, 8,
         False, 0, A100_80, 50.0),
        ("examples/megatron/dense/qwen3_32b.sh: Qwen3-32B", "qwen3-32b", "full_finetune", 8, 8, 1, 1, "full", 8192,
         16, False, 0, A100_80, 80.0),
        ("examples/megatron/dense/72b_offload.sh: Qwen2.5-72B-Instruct, optimizer CPU offload", "qwen2.5-72b",
         "full_finetune", 8, 8, 1, 1, "full", 8192, 16, True, 0, A100_80, 65.0),
        ("examples/train/cached_dataset/mcore.sh: Qwen3-30B-A3B-Base LoRA r=32", "qwen3-30b-a3b", "lora", 4, 1, 1, 4,
         "full", 8192, 16, False, 32, A100_80, 48.0),
        ("examples/train/flash_attention_3/mcore.sh (fa2): Qwen3-30B-A3B-Base LoRA r=32", "qwen3-30b-a3b", "lora", 4,
         1, 1, 4, "full", 8192, 16, False, 32, H100, 49.0),
        ("Qwen3-Best-Practice.md / moe/qwen3_moe.sh, Megatron-LM: Qwen3-30B-A3B-Base", "qwen3-30b-a3b",
         "full_finetune", 16, 1, 2, 8, "full", 8192, 16, False, 0, A100_80, 60.0),
        ("examples/megatron/mcore_bridge/full/moe.sh: Qwen3-30B-A3B-Instruct-2507", "qwen3-30b-a3b", "full_finetune",
         8, 4, 2, 4, "full", 8192, 4, False, 0, A100_80, 76.0),
    )  # fmt: skip
    for label, preset, task, gpus, tp, pp, ep, recompute, seq, global_batch, offload, rank, gpu, published in rows:
        dp = gpus // (tp * pp)
        cluster = TWO_NODES if gpus > 8 else Cluster(gpu=gpu, gpus_per_node=gpus)
        lora = LoraSpec(rank=rank, alpha=2 * rank, targets=ALL_LINEAR, dropout=0.05) if rank else None
        shape = f"TP {tp} x PP {pp}" + (f" x EP {ep}" if ep > 1 else "") + f" x DP {dp}"
        cases.append(
            FirstContactCase(
                f"ms-swift Megatron-SWIFT {label}, {shape}, packed 1 x {seq}, {recompute} recompute",
                SOURCE,
                MS_SWIFT_EXAMPLES,
                get_preset(preset).model,
                Workload(task=task, seq_len=seq, global_batch=global_batch, lora=lora, varied_lengths=False),  # type: ignore[arg-type]
                Plan(
                    tp=tp,
                    pp=pp,
                    dp=dp,
                    ep=ep,
                    # ms-swift's default expert_tensor_parallel_size 1 (module docstring); stated after first contact
                    # (fitted: the record keeps the figure without it)
                    expert_tp=1,
                    sequence_parallel=tp > 1,
                    zero_stage=1,
                    micro_batch=1,
                    recompute=recompute,  # type: ignore[arg-type]
                    offload="optimizer" if offload else "none",
                    fp32_main_grads=True,
                    chunked_loss=True,
                ),
                cluster,
                published,
                "reserved",
                mcore
                + ("; MoE alltoall dispatcher, grouped GEMM, permute fusion, expert TP 1" if ep > 1 else "")
                + ("; capacity factor 2, first stage 25 of 48 layers" if preset == "qwen3-30b-a3b" and tp == 4 else "")
                + ("; optimizer on the host (precision-aware optimizer, fraction 1)" if offload else ""),
            )
        )
    return cases


def ms_swift_examples() -> list[FirstContactCase]:
    return _swift_sft() + _megatron_swift()
