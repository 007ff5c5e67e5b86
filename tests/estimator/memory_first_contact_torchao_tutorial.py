"""First-contact memory rows from torchao's float8 pre-training tutorial (source `torchao-tutorial`;
tests/estimator/memory_first_contact.py says how rows are kept, recorded and read). No earlier row used it: the
[torchao] source took docs/source/workflows/training.md and torchao/prototype/float8nocompile/README.md of pytorch/ao,
and [torchao-moe] its moe_training README; this tutorial's runs (2025-06-04) are other runs, on a later torchtitan.

  [torchao-tutorial] pytorch/ao docs/source/eager_tutorials/pretraining.rst at 36027d82d1ad ("(Part 1) Pre-training
               with float8", added as docs/source/pretraining.rst by 488ecd4c, PR #2304, 2025-06-05): three torchtitan
               runs of Llama 3 8B on 8 GPUs, each a command and its step log: `NGPU=8 CONFIG_FILE=".../llama3_8b.toml"
               ./run_train.sh --training.compile` (bfloat16), the same with `--model.converters="float8"
               --float8.recipe_name="rowwise"` and with `--model.converters="float8"` (tensorwise, the default
               recipe). The tutorial links llama3_8b.toml at pytorch/torchtitan 775a486e (2025-06-04), which sets
               batch_size 1, seq_len 8192, AdamW, data_parallel_shard_degree -1 (FSDP2 over the 8 GPUs), activation
               checkpointing "selective" with selective_ac_option "op", and [float8] enable_fsdp_float8_all_gather
               false, precompute_float8_dynamic_scale_for_fsdp false, filter_fqns ["output"] (bf16 all-gather, the
               output projection left in bf16). The rows are the steady-state "memory:" of each log (steps 10 to 40:
               30.89 bf16, 30.99 rowwise, 30.91 tensorwise GiB), torchtitan's max reserved (components/metrics.py
               reads memory_stats()["reserved_bytes.all.peak"], GiB): reserved, GiB.
               Stated by torchtitan at 775a486e: bf16 parameters under FSDP2 mixed precision with fp32 sharded
               parameters, gradient reduction and AdamW states (torchtitan's defaults, as the [torchao] rows model
               them), and with --training.compile the loss compiled with the model (torchtitan PR #1033, April 2025:
               Plan.compiled_loss, as the [torchao] B200 rows).
               Assumed (decided before any estimate was run): the card is an H100 with 95 GiB (30.99 GiB is 32.62 %
               of it: the 96 GB H100 of Meta's Grand Teton hosts), modelled on the catalog's H100 80GB SXM as the
               [torchao] H100 rows are (the figure compared does not depend on the card; the fit judgement does); the
               dataset (c4) fills every sequence (torchtitan packs its text stream into full 8,192-token samples).
"""

from __future__ import annotations

from app.estimator.hardware import get_gpu
from app.estimator.presets import get_preset
from app.estimator.specs import Cluster, Plan, Workload
from tests.estimator.memory_first_contact_row import FirstContactCase

SOURCE = "torchao-tutorial"
TORCHAO_TUTORIAL = (
    "pytorch/ao docs/source/eager_tutorials/pretraining.rst at 36027d82d1ad9949597ea16002ff4940374b1b94 (written "
    "2025-06-05, PR #2304): torchtitan 775a486e llama3_8b.toml, 8 GPUs, FSDP2, batch 1 x 8192, selective (op) AC, "
    "--training.compile; step-log memory: = torchtitan max reserved, GiB"
)

# (run, precision, steady-state memory: GiB)
ROWS = (
    ("bfloat16", "bf16", 30.89),
    ("float8 rowwise", "fp8", 30.99),
    ("float8 tensorwise", "fp8", 30.91),
)


def torchao_tutorial() -> list[FirstContactCase]:
    cases = []
    model = get_preset("llama-3-8b").model
    gpu = get_gpu("h100-80g-sxm")
    for run, precision, published in ROWS:
        cases.append(
            FirstContactCase(
                f"torchao float8 tutorial torchtitan Llama 3 8B {run}, FSDP 8, batch 1 x 8192, compile, op SAC, H100",
                SOURCE,
                TORCHAO_TUTORIAL,
                model,
                Workload(task="pretrain", precision=precision, seq_len=8192, global_batch=8),  # type: ignore[arg-type]
                Plan(
                    dp=8,
                    zero_stage=3,
                    recompute="selective",
                    micro_batch=1,
                    compiled=True,
                    compiled_loss=True,
                ),
                Cluster(gpu=gpu, gpus_per_node=8),
                published,
                "reserved",
                "attention: sdpa (flash); loss: torchtitan cross-entropy, compiled with the model; compile; "
                + ("float8 linears (output in bf16), " if precision == "fp8" else "")
                + "bf16 all-gather",
            )
        )
    return cases
