"""First-contact memory rows from the per-parameter FSDP (FSDP2) pull request of torchtitan, March 2024 (source
`torchtitan-165`; tests/estimator/memory_first_contact.py says how rows are kept, recorded and read). The repository
used other torchtitan runs (published_cases.py: benchmarks/llama3_h100_202412_torchtitan.md; [trainy-whitefiber],
[torchtitan-773], [torchtitan-nvfp4], and torchtitan runs behind [torchao] and [torchao-tutorial]), never these: the
FSDP1 / FSDP2 parity runs of a Llama 7B on one H100 node, measured a year before any of those.

  [torchtitan-165] pytorch/torchtitan commit 83c879f1 ("Used per-parameter FSDP (#165)", Andrew Gu, 2024-03-28),
               its message (the PR description; the same eager figures were first posted in #116 on 2024-03-06 and the
               compile figures in #135 on 2024-03-13): "1k steps of minipile on 8 H100 GPUs, local batch size 8,
               sequence length 2048, AC/SAC, bf16 mixed precision, fp32 reduce-scatter", FSDP1 and FSDP2, eager and
               torch.compile; and "2D FSDP" with 2-way SP and 4-way FSDP at local batch 16. "Memory numbers reported as
               percentage since that is how they are logged; can convert against 95.0396 GiB GPU memory": torchtitan's
               GPUMemoryMonitor (torchtrain/metrics.py) divides memory_stats()["active_bytes.all.peak"] and
               ["reserved_bytes.all.peak"] by get_device_properties().total_memory, so each figure is a peak active
               or peak reserved, converted here to GiB against 95.0396 GiB (the compile rows are given in GiB). Active
               bytes are read as allocated, as [torchtune-flags] reads torchtune's active peak. 15 rows.
               The runs (train_configs/llama_7b.toml and torchtrain/ at 83c879f1; the FSDP1 rows ran the torchtitan of
               2024-03-06, 41f51727): model flavor "7B" = dim 4,096, 32 layers, 32 heads, SwiGLU 11,008 (multiple_of
               256), untied output, vocabulary 32,000 (the tokenizer download defaults to meta-llama/llama-2-70b's
               tokenizer.model): the shape of Llama 2 7B. The dataset is packed into samples of seq_len + 1 tokens
               (torchtrain/datasets/hf_datasets.py): every sequence 2,048 tokens. Attention
               F.scaled_dot_product_attention with is_causal (flash on H100 bf16). FSDP (FSDP1 FULL_SHARD with
               MixedPrecision, or FSDP2 fully_shard with MixedPrecisionPolicy) over the 8 GPUs: bf16 parameters in
               compute, fp32 sharded parameters, fp32 gradient reduction, torch.optim.AdamW with its foreach
               implementation (foreach=True at 83c879f1, the default at 41f51727) and optimizer.zero_grad()
               (set_to_none) before each forward: the gradients are made in the backward (Plan.fsdp_torch_adamw). The
               loss: the model returns `self.output(h).float()` and train.py keeps that fp32 `pred` while
               `F.cross_entropy(pred.flatten(0, 1), ...)` runs and through loss.backward() (no `del pred`): the standard
               fp32 loss plus 4 bytes a logit the loop keeps (Plan.kept_logits_bytes 4). torch.compile
               (--training.compile) wraps the whole model, not the loss (train.py `model = torch.compile(model)`). AC =
               full activation checkpointing of each TransformerBlock (checkpoint_wrapper, non-reentrant); SAC = the
               per-op policy of torchtrain/parallelisms/parallelize_llama.py (save mm outputs except every second mm,
               sdpa and reduce-scatter outputs; recompute the rest), the only selective AC torchtitan had when the 1D
               eager and compile figures were posted (#116, #135; selective layer AC and its default "every second
               layer" arrived 2024-03-14, 0d415d78): Plan.recompute "selective", as the [torchao] rows state
               torchtitan's op SAC. 2D: FSDP2 over 4 ranks x TP 2 with SequenceParallel norms and loss parallel (the
               output Colwise-sharded on the vocabulary, the loss on the shard: enable_loss_parallel defaults to True).
               Left out, decided before any estimate was run: the 2D SAC figures (76.49 % active, 90.14 % reserved),
               posted first in #165 (2024-03-26), after #125 made "selective" mean every-second-layer AC by default,
               so which SAC they ran is not stated.
               Assumed (decided before any estimate was run): the card is an H100 with 95.04 GiB (Meta's 96 GB Grand
               Teton H100), modelled on the catalog's H100 80GB SXM as the [torchao] H100 rows are (the figure compared
               does not depend on the card; the fit judgement does, and the two rows above 80 GB read as not fitting).
               Inductor buffer reuse on or off (two compile rows) is not a lever the estimator has: both rows state
               the same plan. FSDP1 and FSDP2 rows differ in Plan.fsdp1 only.
"""

from __future__ import annotations

from app.estimator.hardware import get_gpu
from app.estimator.presets import get_preset
from app.estimator.specs import Cluster, Plan, Workload
from tests.estimator.memory_first_contact_row import FirstContactCase

SOURCE = "torchtitan-165"
TORCHTITAN_165 = (
    "pytorch/torchtitan commit 83c879f18763611bda68586c45f0082fd568d646 ('Used per-parameter FSDP (#165)', "
    "2024-03-28; FSDP1 rows on 41f51727741647366ba38190e59c46456881c846): Llama 7B (Llama 2 shape), 8 H100 96GB, "
    "minipile packed to 2,048, bf16 mixed precision, fp32 reduce-scatter, AC (full) / SAC (per-op); peak active and "
    "peak reserved of memory_stats(), % of 95.0396 GiB"
)
CAPACITY_GIB = 95.0396  # the commit message: "can convert against 95.0396 GiB GPU memory"
# (FSDP, compile, AC, data-parallel ranks, TP, local batch, reading, figure, unit "%" of CAPACITY_GIB or "GiB", note)
ROWS = (
    ("FSDP1", False, "full", 8, 1, 8, "allocated", 24.81, "%", ""),
    ("FSDP1", False, "full", 8, 1, 8, "reserved", 33.82, "%", ""),
    ("FSDP1", False, "selective", 8, 1, 8, "allocated", 52.98, "%", ""),
    ("FSDP1", False, "selective", 8, 1, 8, "reserved", 67.23, "%", ""),
    ("FSDP2", False, "full", 8, 1, 8, "allocated", 23.92, "%", ""),
    ("FSDP2", False, "full", 8, 1, 8, "reserved", 32.64, "%", ""),
    ("FSDP2", False, "selective", 8, 1, 8, "allocated", 52.13, "%", ""),
    ("FSDP2", False, "selective", 8, 1, 8, "reserved", 62.51, "%", ""),
    ("FSDP2", True, "full", 8, 1, 8, "reserved", 28.72, "GiB", "inductor buffer reuse off"),
    ("FSDP2", True, "full", 8, 1, 8, "reserved", 28.90, "GiB", "inductor buffer reuse on"),
    ("FSDP2", True, "selective", 8, 1, 8, "reserved", 53.83, "GiB", ""),
    ("FSDP2", True, "selective", 8, 1, 16, "reserved", 88.23, "GiB", ""),
    ("FSDP2", True, "none", 8, 1, 8, "reserved", 90.28, "GiB", ""),
    ("FSDP2", False, "full", 4, 2, 16, "allocated", 50.12, "%", ""),
    ("FSDP2", False, "full", 4, 2, 16, "reserved", 60.97, "%", ""),
)  # fmt: skip
AC_NAMES = {"full": "AC", "selective": "SAC (per-op)", "none": "no AC"}


def torchtitan_fsdp2() -> list[FirstContactCase]:
    cases = []
    model = get_preset("llama-2-7b").model  # torchtitan flavor "7B" with the Llama 2 tokenizer: the same shape
    gpu = get_gpu("h100-80g-sxm")
    for fsdp, compiled, recompute, dp, tp, micro_batch, reading, figure, unit, note in ROWS:
        published = figure * CAPACITY_GIB / 100 if unit == "%" else figure
        plan = Plan(
            dp=dp,
            tp=tp,
            zero_stage=3,
            recompute=recompute,  # type: ignore[arg-type]
            sequence_parallel=tp > 1,  # SequenceParallel norms, loss parallel on the vocabulary shard
            micro_batch=micro_batch,
            compiled=compiled,
            kept_logits_bytes=4.0,  # train.py keeps the fp32 `pred` through loss.backward()
            fsdp_torch_adamw=True,  # torch AdamW (foreach), zero_grad() before each forward
            fsdp1=fsdp == "FSDP1",
        )
        parallel = f"FSDP {dp}" if tp == 1 else f"FSDP {dp} x TP {tp} (SP)"
        cases.append(
            FirstContactCase(
                f"torchtitan #165 Llama 7B {fsdp} {'compile' if compiled else 'eager'} {AC_NAMES[recompute]}, "
                f"{parallel}, batch {micro_batch} x 2048, H100{', ' + note if note else ''} ({reading})",
                SOURCE,
                TORCHTITAN_165,
                model,
                Workload(task="pretrain", seq_len=2048, global_batch=64, varied_lengths=False),
                plan,
                Cluster(gpu=gpu, gpus_per_node=8),
                published,
                reading,
                "attention: sdpa (flash); loss: F.cross_entropy on the model's fp32 output, which the loop keeps "
                "through the backward"
                + ("; loss parallel on the vocabulary shard" if tp > 1 else "")
                + ("; torch.compile of the model (not the loss)" if compiled else "; eager")
                + f"; {fsdp}, bf16 params, fp32 reduce-scatter, torch AdamW foreach",
            )
        )
    return cases
