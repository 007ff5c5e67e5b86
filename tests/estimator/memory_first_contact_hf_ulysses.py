"""First-contact memory rows from the Hugging Face blog's Ulysses sequence-parallelism benchmark (source
`hf-blog-ulysses`; tests/estimator/memory_first_contact.py says how rows are kept, recorded and read). A source new to
the repository: no earlier row comes from huggingface/blog, from a DeepSpeed Ulysses run or from Qwen3-4B.

  [hf-blog-ulysses] huggingface/blog ulysses-sp.md at 01d33d5c4b3eef17ffb79275e339f6ecad6484a4 ("Ulysses Sequence
               Parallelism: Training with Million-Token Contexts", March 2026, section "Benchmarks"): Qwen3-4B trained
               with TRL's SFTTrainer on the Gutenberg English streaming dataset, H100 80GB, DeepSpeed ZeRO-3 with CPU
               optimizer offloading, gradient checkpointing, kernels-community/flash-attn2, micro-batch 1, gradient
               accumulation 8. The "Setup" table: the baseline on 1 GPU at 8,192 tokens (no sequence parallelism),
               and SP=4 on 4 GPUs (DP 1) at 8,192, 32,768, 65,536 and 98,304 tokens; the "Memory Reduction" table gives
               each run's "Peak Memory" (76.4, 23.4, 35.0, 50.5, 66.0 GB). The 128K run is reported as an OOM ("requires
               ~81 GB"): a bound, not a row.

               Stated by the post: the model, the card, ZeRO-3 with the optimizer on the host, gradient checkpointing,
               flash attention 2, the sequence length, SP and DP sizes, micro-batch and accumulation. Assumed (the
               post does not say): bf16 with DeepSpeed's fp32 master on the host (accelerate's mixed_precision bf16,
               as the post's accelerate config); the Trainer's standard loss (transformers' ForCausalLM loss with its
               fp32 upcast; the post's SFTTrainer code takes `outputs.logits` and names no Liger or chunked loss);
               every sample at the full length (books of about 250k tokens, the post's figure, truncated to the
               length: one length, not varied); the reading: torch's reserved pool (`max_memory_reserved`), GB read as
               GiB (the 128K run "requires ~81 GB and OOMs" on an 80 GB card, which holds 79.6 GiB: GiB makes that an
               OOM, decimal GB would not). Ulysses sequence parallelism is modelled as context parallelism of the same
               degree (Plan.cp): each rank holds 1/SP of the tokens outside attention, and DeepSpeed's ZeRO partitions
               over the sequence-and-data-parallel group (dp x sp), as ZeRO over dp x cp. Qwen3-4B has no preset: its
               config.json shape (36 layers, hidden 2,560, 32 heads, 8 KV heads, head_dim 128, SwiGLU 9,728, vocabulary
               151,936, tied embeddings).
"""

from __future__ import annotations

from app.estimator.hardware import get_gpu
from app.estimator.specs import Cluster, ModelSpec, Plan, Workload
from tests.estimator.memory_first_contact_row import FirstContactCase

HF_BLOG_ULYSSES = (
    "huggingface/blog ulysses-sp.md at 01d33d5c4b3eef17ffb79275e339f6ecad6484a4, 'Benchmarks' (Qwen3-4B, TRL "
    "SFTTrainer, H100 80GB, DeepSpeed ZeRO-3 with CPU optimizer offload, gradient checkpointing, flash-attn 2, batch "
    "1 x seq; Peak Memory GB per rank, read as max reserved GiB)"
)
SOURCE = "hf-blog-ulysses"
H100 = get_gpu("h100-80g-sxm")
# Qwen/Qwen3-4B config.json (num_hidden_layers 36, hidden_size 2560, num_attention_heads 32, num_key_value_heads 8,
# head_dim 128, intermediate_size 9728, vocab_size 151936, tie_word_embeddings true)
QWEN3_4B = ModelSpec(
    name="Qwen3 4B",
    layers=36,
    hidden=2560,
    heads=32,
    kv_heads=8,
    ffn=9728,
    vocab=151936,
    tied_embeddings=True,
    head_dim=128,
    rope_theta=1000000.0,
    norm_eps=1e-06,
    hf_repo="Qwen/Qwen3-4B",
    family="qwen3",
)


def hf_blog_ulysses() -> list[FirstContactCase]:
    cases = []
    for sp, seq, published in ((1, 8192, 76.4), (4, 8192, 23.4), (4, 32768, 35.0), (4, 65536, 50.5), (4, 98304, 66.0)):
        layout = "1 GPU, no SP" if sp == 1 else f"SP {sp} x DP 1 on {sp} GPUs"
        cases.append(
            FirstContactCase(
                f"HF blog Ulysses SP: Qwen3-4B full fine-tune, {layout}, batch 1 x {seq:,}, H100 80GB",
                SOURCE,
                HF_BLOG_ULYSSES,
                QWEN3_4B,
                Workload(task="full_finetune", seq_len=seq, global_batch=8, varied_lengths=False),
                Plan(cp=sp, zero_stage=3, offload="optimizer", micro_batch=1, recompute="full", tuning="trainer"),
                Cluster(gpu=H100, gpus_per_node=sp),
                published,
                "reserved",
                "attention: flash-attn 2 (Ulysses all-to-all over heads); loss: transformers ForCausalLM (fp32 "
                "upcast); DeepSpeed ZeRO-3 bf16, optimizer on the host; gradient checkpointing",
            )
        )
    return cases
