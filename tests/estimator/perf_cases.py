"""Published training runs with their exact configurations, for the performance tests and benchmarks.

Each case gives the published tokens/s per GPU (measured, or derived from a published MFU/TFLOPs
with the FLOP formula the source used — stated per case).
"""

from __future__ import annotations

from dataclasses import dataclass

from app.estimator.compute import megatron_flops_per_iteration
from app.estimator.hardware import get_gpu
from app.estimator.specs import Cluster, GpuSpec, ModelSpec, Plan, Workload

# The product's own GPU table (app/estimator/data/gpus.json, each figure cited there), so that the
# published runs validate the shipped data, not a copy of it.
A100_80_SXM = get_gpu("a100-80g-sxm")
A100_40_SXM = get_gpu("a100-40g-sxm")
H100_SXM = get_gpu("h100-80g-sxm")
# torchtitan's Grand Teton H100: 96 GB HBM2e at 2.4 TB/s, 500 W (pytorch/torchtitan docs/performance.md).
H100_96_TITAN = GpuSpec(
    id="h100-96g-hbm2e",
    name="H100 96GB HBM2e (500 W)",
    memory_gib=96,
    usable_memory_gib=95,
    hbm_bytes_per_s=2.4e12,
    peak_flops={"fp32": 494.7e12, "fp16": 989.4e12, "bf16": 989.4e12, "fp8": 1978.9e12},
    intra_node_link="nvlink4",
    nvlink_bytes_per_s=450e9,
    pcie_gen=5,
)


def gpt3_style(name: str, layers: int, hidden: int, heads: int) -> ModelSpec:
    """Megatron GPT: GELU 4h MLP, LayerNorm, biases, learned positions, tied 51,200 vocab."""
    return ModelSpec(
        name=name,
        layers=layers,
        hidden=hidden,
        heads=heads,
        kv_heads=heads,
        ffn=4 * hidden,
        vocab=51200,
        mlp="gelu",
        tied_embeddings=True,
        norm="layernorm",
        linear_bias=True,
        learned_positions=2048,
    )


def mpt(name: str, layers: int, hidden: int, heads: int) -> ModelSpec:
    """MosaicML MPT (llm-foundry yamls): GELU 4h MLP, no biases, ALiBi, tied 50,368 vocab."""
    return ModelSpec(
        name=name,
        layers=layers,
        hidden=hidden,
        heads=heads,
        kv_heads=heads,
        ffn=4 * hidden,
        vocab=50368,
        mlp="gelu",
        tied_embeddings=True,
        norm="layernorm",
    )


LLAMA3_8B = ModelSpec(name="llama3-8b", layers=32, hidden=4096, heads=32, kv_heads=8, ffn=14336, vocab=128256)
LLAMA3_70B = ModelSpec(name="llama3-70b", layers=80, hidden=8192, heads=64, kv_heads=8, ffn=28672, vocab=128256)
LLAMA3_405B = ModelSpec(name="llama3-405b", layers=126, hidden=16384, heads=128, kv_heads=8, ffn=53248, vocab=128256)
LLAMA2_7B = ModelSpec(name="llama2-7b", layers=32, hidden=4096, heads=32, kv_heads=32, ffn=11008, vocab=32000)


@dataclass(frozen=True)
class Case:
    label: str
    source: str
    model: ModelSpec
    workload: Workload
    plan: Plan
    cluster: Cluster
    tokens_per_s_per_gpu: float  # published (or derived from published MFU/TFLOPs, see source)


def _megatron_tokens(tflops: float, model: ModelSpec, seq: int, full_recompute: bool) -> float:
    """Tokens/s per GPU from a per-GPU TFLOP/s figure counted with the Megatron formula."""
    per_token = (
        megatron_flops_per_iteration(1, seq, model.layers, model.hidden, model.vocab, full_recompute=full_recompute)
        / seq
    )
    return tflops * 1e12 / per_token


def _mfu_tokens(mfu: float, model: ModelSpec, seq: int, peak: float) -> float:
    return _megatron_tokens(mfu * peak / 1e12, model, seq, full_recompute=False)


def _nodes(gpu: GpuSpec, gpus: int, gbps: float | None, fabric: str | None = None) -> Cluster:
    return Cluster(
        gpu=gpu, gpus_per_node=min(8, gpus), nodes=max(1, gpus // 8), inter_node_gbps=gbps, inter_node_fabric=fabric
    )


# Selene: DGX A100 with 8 × HDR 200 Gb/s InfiniBand per node (Narayanan et al. 2021 §5).
SELENE_GBPS = 1600.0

GPT_145B = gpt3_style("gpt-145.6b", 80, 12288, 96)
GPT_530B = gpt3_style("gpt-529.6b", 105, 20480, 128)
GPT_1T = gpt3_style("gpt-1008b", 128, 25600, 160)
GPT_39B = gpt3_style("gpt-39.1b", 48, 8192, 64)
GPT_22B = gpt3_style("gpt-22b", 48, 6144, 64)
GPT_175B = gpt3_style("gpt-175b", 96, 12288, 96)
MPT_7B = mpt("mpt-7b", 32, 4096, 32)
MPT_13B = mpt("mpt-13b", 40, 5120, 40)
MPT_30B = mpt("mpt-30b", 48, 7168, 64)
MPT_70B = mpt("mpt-70b", 80, 8192, 64)

NARAYANAN = (
    "Narayanan et al. 2021 (SC21) Table 1 (TFLOP/s per GPU counted with 96·B·s·l·h²(1+s/6h+V/16lh), full recompute; "
    "row values from the paper; the 44 % to 52 % range re-read in the Megatron-DeepSpeed README)"
)
MEGATRON_README = (
    "NVIDIA/Megatron-LM README.md MFU table (22B 41.5 %, 175B 51.4 %, 530B 56.0 %, 1T 56.3 %; data-parallel size 1); "
    "configurations from Korthikanti et al. 2022 Table 3 (t = 8, micro-batch 1, batch = GPUs; not re-read)"
)
KORTHIKANTI = "Korthikanti et al. 2022 abstract: 530B on 2240 A100, MFU 54.2 % (selective+SP) / 42.1 % (full recompute)"
FOUNDRY = "mosaicml/llm-foundry scripts/train/benchmarking/README.md (Throughput T/s/GPU column)"
LLAMA3 = "Dubey et al. 2024 (The Llama 3 Herd of Models) Table 4: BF16 MFU; 400 Gb/s RoCE per GPU"
TITAN = "pytorch/torchtitan docs/performance.md"


def _megatron_case(label: str, model: ModelSpec, tp: int, pp: int, gpus: int, batch: int, tflops: float) -> Case:
    dp = gpus // (tp * pp)
    return Case(
        label,
        NARAYANAN,
        model,
        Workload(task="pretrain", seq_len=2048, global_batch=batch),
        Plan(dp=dp, tp=tp, pp=pp, recompute="full", sequence_parallel=False, micro_batch=1),
        _nodes(A100_80_SXM, gpus, SELENE_GBPS, "ib-hdr-200"),
        _megatron_tokens(tflops, model, 2048, True),
    )


def _korthikanti_case(label: str, model: ModelSpec, pp: int, mfu: float) -> Case:
    gpus = 8 * pp
    plan = Plan(dp=1, tp=8, pp=pp, recompute="selective", sequence_parallel=True, micro_batch=1)
    workload = Workload(task="pretrain", seq_len=2048, global_batch=gpus)
    cluster = _nodes(A100_80_SXM, gpus, SELENE_GBPS, "ib-hdr-200")
    return Case(label, MEGATRON_README, model, workload, plan, cluster, _mfu_tokens(mfu, model, 2048, 312e12))


def _foundry_case(
    label: str,
    model: ModelSpec,
    gpu: GpuSpec,
    gpus: int,
    seq: int,
    mb: int,
    batch: int,
    ac: bool,
    tokens: float,
    gbps: float | None = None,
    fabric: str | None = None,
) -> Case:
    plan = Plan(dp=gpus, zero_stage=3, recompute="full" if ac else "none", micro_batch=mb)
    return Case(
        label,
        FOUNDRY,
        model,
        Workload(task="pretrain", seq_len=seq, global_batch=batch),
        plan,
        _nodes(gpu, gpus, gbps, fabric),
        tokens,
    )


def _llama3_case(label: str, gpus: int, dp: int, mfu: float) -> Case:
    plan = Plan(dp=dp, tp=8, pp=16, micro_batch=1, virtual_stages=4, sequence_parallel=True)
    tokens = mfu * 989.4e12 / _llama_flops_per_token(8192)
    return Case(
        label,
        LLAMA3,
        LLAMA3_405B,
        Workload(task="pretrain", seq_len=8192, global_batch=2048),
        plan,
        _nodes(H100_SXM, gpus, 3200.0, "roce-200"),
        tokens,
    )


def _llama_flops_per_token(seq: int) -> float:
    from app.estimator.compute import training_flops

    return training_flops(LLAMA3_405B, Workload(task="pretrain", seq_len=seq)).model


CASES: tuple[Case, ...] = (
    _megatron_case("Megatron 39.1B, 512 A100", GPT_39B, 8, 2, 512, 1536, 138),
    _megatron_case("Megatron 145.6B, 1536 A100", GPT_145B, 8, 8, 1536, 2304, 148),
    _megatron_case("Megatron 529.6B, 2520 A100", GPT_530B, 8, 35, 2520, 2520, 163),
    _megatron_case("Megatron 1008B, 3072 A100", GPT_1T, 8, 64, 3072, 3072, 163),
    _korthikanti_case("Megatron 22B selective+SP, 8 A100", GPT_22B, 1, 0.415),
    _korthikanti_case("Megatron 175B selective+SP, 64 A100", GPT_175B, 8, 0.514),
    _korthikanti_case("Megatron 530B selective+SP, 280 A100", GPT_530B, 35, 0.560),
    _korthikanti_case("Megatron 1T selective+SP, 512 A100", GPT_1T, 64, 0.563),
    Case(
        "Korthikanti 530B selective, 2240 A100",
        KORTHIKANTI,
        GPT_530B,
        Workload(task="pretrain", seq_len=2048, global_batch=2240),
        Plan(dp=8, tp=8, pp=35, recompute="selective", sequence_parallel=True, micro_batch=1),
        _nodes(A100_80_SXM, 2240, SELENE_GBPS, "ib-hdr-200"),
        _mfu_tokens(0.542, GPT_530B, 2048, 312e12),
    ),
    Case(
        "Korthikanti 530B full recompute, 2240 A100",
        KORTHIKANTI,
        GPT_530B,
        Workload(task="pretrain", seq_len=2048, global_batch=2240),
        Plan(dp=8, tp=8, pp=35, recompute="full", sequence_parallel=False, micro_batch=1),
        _nodes(A100_80_SXM, 2240, SELENE_GBPS, "ib-hdr-200"),
        _mfu_tokens(0.421, GPT_530B, 2048, 312e12),
    ),
    _foundry_case("MPT-7B 8xA100-80 s2048", MPT_7B, A100_80_SXM, 8, 2048, 6, 96, False, 4641),
    _foundry_case("MPT-13B 8xA100-80 s2048", MPT_13B, A100_80_SXM, 8, 2048, 2, 48, False, 2262),
    _foundry_case("MPT-30B 8xA100-80 s2048 AC", MPT_30B, A100_80_SXM, 8, 2048, 3, 504, True, 916),
    _foundry_case("MPT-70B 64xA100-80 AC", MPT_70B, A100_80_SXM, 64, 2048, 8, 2048, True, 410, 1600.0, "roce-200"),
    _foundry_case("MPT-7B 8xH100 s2048", MPT_7B, H100_SXM, 8, 2048, 6, 48, False, 10643),
    _foundry_case("MPT-13B 8xH100 s2048", MPT_13B, H100_SXM, 8, 2048, 2, 16, False, 4792),
    _foundry_case("MPT-30B 8xH100 s2048 AC", MPT_30B, H100_SXM, 8, 2048, 3, 504, True, 2002),
    _foundry_case("MPT-70B 64xH100 AC", MPT_70B, H100_SXM, 64, 2048, 8, 2048, True, 1039, 3200.0, "ib-ndr-400"),
    _llama3_case("Llama 3 405B, 8192 H100", 8192, 64, 0.43),
    _llama3_case("Llama 3 405B, 16384 H100", 16384, 128, 0.41),
    Case(
        "torchtitan Llama 3 8B, 64 A100, FSDP",
        TITAN,
        LLAMA3_8B,
        Workload(task="pretrain", seq_len=8192, global_batch=64),
        Plan(dp=64, zero_stage=3, recompute="selective", micro_batch=1),
        _nodes(A100_80_SXM, 64, 800.0, "roce-200"),
        2973,
    ),
    Case(
        "torchtitan Llama 3 70B, 64 A100, FSDP",
        TITAN,
        LLAMA3_70B,
        Workload(task="pretrain", seq_len=8192, global_batch=64),
        Plan(dp=64, zero_stage=3, recompute="full", micro_batch=1),
        _nodes(A100_80_SXM, 64, 800.0, "roce-200"),
        323,
    ),
    Case(
        "torchtitan Llama 3.1 8B, 8 H100, FSDP+compile",
        TITAN,
        LLAMA3_8B,
        Workload(task="pretrain", seq_len=8192, global_batch=16),
        Plan(dp=8, zero_stage=3, recompute="selective", micro_batch=2),
        _nodes(H100_96_TITAN, 8, None),
        6667,
    ),
    Case(
        "torchtitan Llama 3.1 8B, 8 H100, FSDP+compile+Float8",
        TITAN,
        LLAMA3_8B,
        Workload(task="pretrain", precision="fp8", seq_len=8192, global_batch=16),
        Plan(dp=8, zero_stage=3, recompute="selective", micro_batch=2),
        _nodes(H100_96_TITAN, 8, None),
        8532,
    ),
)
