"""First-contact memory rows from Megatron-LM's functional tests other than the release tests (source
`megatron-functional`; tests/estimator/memory_first_contact.py says how rows are kept, recorded and read). A source new
to the repository: the `megatron-release` rows read only the `*_release` test cases of the same directory; none of
these test cases was read by an earlier row.

  [megatron-functional] NVIDIA/Megatron-LM tests/functional_tests/test_cases/gpt at d98e8a64d (2026-08-22): each test
               case's model_config.yaml with its golden values (golden_values_dev_dgx_h100.json, dev_dgx_a100.json: the
               figures NVIDIA's CI checks every merge request against), the largest "mem-max-allocated-bytes" of the
               file. That scalar is training.py's torch.cuda.memory_stats()["allocated_bytes.all.peak"] (never reset)
               logged on the tensorboard rank, the last rank (world_size - 1: the last pipeline stage): allocated,
               bytes, read as GiB. Every case runs on one node of 8 GPUs (tests/test_utils/recipes/h100/gpt.yaml:
               `nodes: 1`, `gpus: 8`), so DP = 8 / (TP x PP x CP); each DP below agrees with the same file's other
               reading, mem-allocated-bytes between steps (2 + 4 + 12 / DP bytes a parameter with the distributed
               optimizer, 18 without).

               gpt/gpt3_7b_tp4_pp1_memory_speed and gpt/gpt3_7b_tp1_pp4_memory_speed (the "memory_speed" cases): 32
               layers, hidden 4096, 32 heads, 8 query groups, no --swiglu (the two-matrix GeLU MLP of the default 4 x
               hidden = 16,384), no --normalization (LayerNorm), biases on (the default --add-bias-linear), learned
               absolute positions (the default --position-embedding-type, 8,192 rows), untied head, --vocab-size
               131,073 padded to a multiple of 128 x TP (131,584 at TP 4, 131,200 at TP 1: Megatron's
               _vocab_size_with_padding), mock data of 8,192 tokens a sample (one length), bf16, the distributed
               optimizer with overlapped gradient reduce and parameter gather, no recompute, no sequence parallel, no
               --cross-entropy-loss-fusion (the plain vocab_parallel_cross_entropy with its fp32 upcast), Transformer
               Engine layers with the default attention backend (fused / flash). TP 4: micro-batch 2, global batch 8
               (DP 2, 2 micro-batches a step). TP 1 x PP 4 with --num-layers-per-virtual-pipeline-stage 1 (8 virtual
               stages a rank, interleaved 1F1B): micro-batch 1, global batch 8 (DP 2, 4 micro-batches).

               The small GPT cases (gpt3_mcore_te_tp1_pp1_uniform_full_recompute, gpt3_mcore_te_tp2_pp2,
               gpt3_mcore_te_tp4_pp1_dist_optimizer_overlap_grad_reduce_param_gather, gpt3_mcore_te_tp2_pp2_cp2,
               gpt3_mcore_tp4_pp1): 12 layers, hidden 512, 8 heads (no GQA), the GeLU MLP of 2,048, LayerNorm,
               biases, 1,024 learned positions, the head tied to the embedding (no --untie-embeddings-and-output-
               weights), the GPT-2 BPE vocabulary (50,257 rows padded to a multiple of 128 x TP), micro-batch 4 x
               1,024 tokens, global batch 32, bf16, the plain vocab-parallel cross-entropy. --attention-backend
               unfused (the s x s scores materialised) in the te_ cases but cp2 (flash); the gpt3_mcore_tp4_pp1 case
               runs Megatron's local (non-TE) layers, whose core attention is unfused too. The distributed optimizer
               only where the name says dist_optimizer (else Megatron's fp32 main parameters and Adam states on every
               rank); full recompute (uniform, one layer a chunk) only in uniform_full_recompute; sequence parallel
               and CP 2 in cp2 only.

               Left out before any estimate: the resume / checkpoint / rerun / inference / RL cases (their steps are
               not one training configuration), cases whose golden file is only GB200 (no GB200 in the catalog), MoE
               cases with multi-latent attention and multi-token prediction (not modelled), FP8 cases, and the
               remaining small cases that repeat a layout above with a flag that moves no memory the estimator counts.
"""

from __future__ import annotations

from app.estimator.hardware import get_gpu
from app.estimator.specs import GIB, Cluster, GpuSpec, ModelSpec, Plan, Workload
from app.estimator.vocabulary import Recompute
from tests.estimator.memory_first_contact_row import FirstContactCase

MEGATRON_FUNCTIONAL = (
    "NVIDIA/Megatron-LM tests/functional_tests/test_cases/gpt/<case>/model_config.yaml and golden_values_dev_dgx_"
    "{h100,a100}.json at d98e8a64ddf34856e74b24714e3bedb2f5a39553 (one node of 8 GPUs; mem-max-allocated-bytes = "
    "torch.cuda.memory_stats()['allocated_bytes.all.peak'] on the last rank, bytes to GiB)"
)
SOURCE = "megatron-functional"

A100_80 = get_gpu("a100-80g-sxm")
H100 = get_gpu("h100-80g-sxm")


def _padded(vocab: int, tp: int) -> int:
    """Megatron-LM's _vocab_size_with_padding: up to a multiple of --make-vocab-size-divisible-by (128) x TP."""
    multiple = 128 * tp
    return -(-vocab // multiple) * multiple


# the two shapes (module docstring): (layers, hidden, heads, query groups, ffn, vocabulary, learned positions, tied)
SHAPES = {
    "7b": (32, 4096, 32, 8, 16384, 131073, 8192, False),  # the memory_speed cases
    "small": (12, 512, 8, 8, 2048, 50257, 1024, True),  # the small GPT cases, GPT-2's BPE vocabulary
}


def _gpt(size: str, tp: int) -> ModelSpec:
    """Megatron-LM's GPT of the test cases: GeLU MLP, LayerNorm, biases, learned positions, the vocabulary padded."""
    layers, hidden, heads, groups, ffn, vocab, positions, tied = SHAPES[size]
    return ModelSpec(
        name=f"megatron-gpt-{size}-tp{tp}",
        layers=layers,
        hidden=hidden,
        heads=heads,
        kv_heads=groups,
        ffn=ffn,
        vocab=_padded(vocab, tp),
        mlp="gelu",
        norm="layernorm",
        linear_bias=True,
        learned_positions=positions,
        tied_embeddings=tied,
    )


def _plan(
    tp: int, pp: int, cp: int, micro: int, distributed: bool, recompute: Recompute, unfused: bool, vpp: int = 1
) -> Plan:
    """One node of 8 GPUs, Megatron's fp32 main-gradient buffer and plain vocab-parallel loss; sequence parallel only
    with CP (the cp2 case); hidden dropout at Megatron's default 0.1 (no case sets --hidden-dropout), stated after
    first contact (fitted: the record keeps the figures without it)."""
    return Plan(
        tp=tp,
        pp=pp,
        cp=cp,
        dp=8 // (tp * pp * cp),
        virtual_stages=vpp,
        zero_stage=1 if distributed else 0,
        micro_batch=micro,
        recompute=recompute,
        sequence_parallel=cp > 1,
        flash_attention=not unfused,
        attention="eager" if unfused else "flash",
        fp32_main_grads=True,
        upcast_vocab_parallel_loss=True,
        hidden_dropout=True,
    )


def _case(
    label: str, model: ModelSpec, workload: Workload, plan: Plan, gpu: GpuSpec, published: int, levers: str
) -> FirstContactCase:
    return FirstContactCase(
        f"Megatron-LM functional {label}, {gpu.name}",
        SOURCE,
        MEGATRON_FUNCTIONAL,
        model,
        workload,
        plan,
        Cluster(gpu=gpu, gpus_per_node=8),
        published / GIB,
        "allocated",
        levers,
        stage=-1,  # training.py logs on the tensorboard rank, world_size - 1: the last stage
    )


def _memory_speed() -> list[FirstContactCase]:
    levers = (
        "attention: Transformer Engine fused (flash); loss: Megatron vocab_parallel_cross_entropy, fp32 upcast; "
        "distributed optimizer, fp32 main-gradient buffer; no recompute; no sequence parallel"
    )
    cases = []
    # (label, tp, pp, virtual stages, micro-batch, ((card, max allocated bytes), ...))
    rows = (
        ("gpt3_7b_tp4_pp1_memory_speed TP 4 x DP 2, batch 2 x 8192", 4, 1, 1, 2,
         ((H100, 57143791616), (A100_80, 58188115968))),
        ("gpt3_7b_tp1_pp4_memory_speed PP 4 x VPP 8 x DP 2, batch 1 x 8192", 1, 4, 8, 1,
         ((H100, 60720852992), (A100_80, 60489064448))),
    )  # fmt: skip
    for label, tp, pp, vpp, micro, readings in rows:
        for gpu, published in readings:
            plan = _plan(tp, pp, 1, micro, True, "none", False, vpp)
            workload = Workload(task="pretrain", precision="bf16", seq_len=8192, global_batch=8)
            cases.append(_case(label, _gpt("7b", tp), workload, plan, gpu, published, levers))
    return cases


def _small() -> list[FirstContactCase]:
    cases = []
    # (case, tp, pp, cp, distributed optimizer, full recompute, unfused attention, max allocated bytes on DGX A100)
    rows = (
        ("gpt3_mcore_te_tp1_pp1_uniform_full_recompute", 1, 1, 1, False, True, True, 2534070272),
        ("gpt3_mcore_te_tp2_pp2", 2, 2, 1, False, False, True, 1900158464),
        ("gpt3_mcore_te_tp4_pp1_dist_optimizer_overlap_grad_reduce_param_gather", 4, 1, 1, True, False, True,
         1513530880),
        ("gpt3_mcore_te_tp2_pp2_cp2", 2, 2, 2, False, False, False, 857134592),
        ("gpt3_mcore_tp4_pp1 (local layers)", 4, 1, 1, False, False, True, 1628741632),
    )  # fmt: skip
    for name, tp, pp, cp, distributed, full, unfused, published in rows:
        plan = _plan(tp, pp, cp, 4, distributed, "full" if full else "none", unfused)
        layout = f"TP {tp} x PP {pp}" + (f" x CP {cp}" if cp > 1 else "") + f" x DP {plan.dp}, batch 4 x 1024"
        levers = (
            ("attention: unfused (s x s scores)" if unfused else "attention: Transformer Engine flash")
            + "; loss: Megatron vocab_parallel_cross_entropy, fp32 upcast; "
            + ("distributed optimizer" if distributed else "fp32 main parameters and Adam states on every rank")
            + ", fp32 main-gradient buffer"
            + ("; full recompute" if full else "; no recompute")
            + ("; sequence parallel" if cp > 1 else "")
        )
        workload = Workload(task="pretrain", precision="bf16", seq_len=1024, global_batch=32)
        cases.append(_case(f"{name} {layout}", _gpt("small", tp), workload, plan, A100_80, published, levers))
    return cases


def megatron_functional() -> list[FirstContactCase]:
    return _memory_speed() + _small()
