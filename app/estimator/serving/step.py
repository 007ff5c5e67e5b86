"""One engine step's time on one pipeline stage: the fitted speed constants (benchmarks/serving_fit.py sets them
here), a replica's per-step constants derived once (`_Hardware`, `_new_hardware`), the step of the closed forms
(`_step_s`: weights and KV bytes at the achieved bandwidth or the FLOPs at the achieved compute, plus overheads,
all-reduces and a speculation's draft) and the simulator's step functions built from the same terms (`_sim_step`,
`_dense_step`, `_dense_decode`, `_stage_step`), which must read the same floats."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import TYPE_CHECKING

from app.estimator.compute import attention_width, matmul_params
from app.estimator.interconnects import all_reduce_s, all_to_all_s, group_bandwidth, point_to_point_s
from app.estimator.params import mlp_params
from app.estimator.performance import compute_precision
from app.estimator.serving.config import ServingConfig
from app.estimator.serving.engines import ENGINE_DEFAULTS, _overhead_key, engine_release
from app.estimator.serving.memory import (
    _draft_kv_per_token,
    _parts,
    expected_experts_touched,
    kv_bytes_per_token_per_gpu,
    weight_bytes_per_param,
)
from app.estimator.serving_gemm import TILE_ROWS, gemm_shapes, occupancy_of_tile_rows
from app.estimator.serving_run import DecodeTime, DenseDecode, DenseStep, StepTime
from app.estimator.specs import Cluster, GpuSpec, ModelSpec

if TYPE_CHECKING:  # the memo of operating points a _Hardware keeps (operating_point imports this module)
    from app.estimator.serving.operating_point import _Point

# --- fitted constants (benchmarks/serving_fit.py on the `fit` cases of tests/estimator/serving_cases.py) ---
# Starting points were the cited figures below; the values are the fit's (rounded). The fit cases are
# TensorRT-LLM's perf overview (H100/H200, FP8) and gpt-fast (A100, batch 1, int8/int4, TP 1-8).
# Achieved fraction of HBM peak when a step streams the weights. STREAM-class kernels reach 80-90 % of
# peak; gpt-fast measures 1.40 TB/s of an A100's 2.04 TB/s at batch 1 (README "Memory Bandwidth").
DECODE_HBM_EFFICIENCY = 0.77
# Achieved fraction of HBM peak when attention reads the paged KV cache (gather over pages, softmax and
# a second pass: lower than a weight stream).
KV_HBM_EFFICIENCY = 0.575
# The two fractions above are of the spec peak on a card whose HBM reaches H100 SXM's measured share of it:
# BabelStream Triad 2.97 of 3.35 TB/s (Azure/AI-benchmarking-guide, ND H100 v5; data/gpus.json). A card with its own
# measurement by the same benchmark (GpuSpec.stream_hbm_bytes_per_s) scales both by its share over this one: H200's
# HBM3e reaches 4.15 of 4.8 TB/s, so its weight and KV streams run at 4.15 / 2.97 = 1.40x H100's, not the spec's
# 4.8 / 3.35 = 1.43x (Triad, STREAM's usual summary figure; the same tables' Copy read 1.38x, Dot 1.41x). Cards
# without a measurement keep the fractions as they are. Not fitted: read from the tables, though the H200 serving rows'
# decode error (faster than published, unlike H100's) is what led to looking for a measurement.
REFERENCE_STREAM_SHARE = 2.97e12 / 3.35e12
# Weight-only quantised GEMV kernels dequantise on the fly and stream below the 16-bit rate: gpt-fast
# int8 1069 GB/s and int4 (g32) 863 GB/s against 1397 GB/s for bf16 on the same A100 (README).
WEIGHT_ONLY_STREAM_EFFICIENCY: dict[str, float] = {"int8": 0.82, "int4": 0.51}
# vLLM and SGLang run 4-bit AWQ/GPTQ checkpoints through Marlin (awq_marlin / gptq_marlin). On GDDR cards it streams
# them at the 16-bit rate: "Marlin delivers essentially ideal speedups at all batchsizes, enabling the maximum possible
# 3.87x speedup [16 / 4.125 bits with group-128 scales] up to batchsizes around 16-32" (A10), and the README's
# models.png (batch 16, all linear layers of a block, group 128, speedup over FP16 PyTorch) has A10, RTX 3090 and
# RTX A6000 at 3.4-4.3x. On the A100 the same figure falls short of 3.87x, the more the smaller the block: Llama7B
# 2.22, Llama13B 2.80, Llama33B 3.04, Llama65B 3.20, Falcon180B 3.64 (bar heights read off the PNG's pixels against
# its gridlines, +-0.02; shapes from bench.py's MODELS: 199, 313, 530, 803 and 2,220 M weights a block).
# IST-DASLab/marlin at 2f6d7c10e124b3c5fa29ff8d77d568bd7af3274c, README.md "Benchmarks", assets/models.png, bench.py.
# Read as a fixed cost per block worth MARLIN_LAYER_OVERHEAD_PARAMS weights streamed: efficiency = P / (P + P0), P
# the block's dense GEMM weights on one GPU (tensor parallelism shrinks it); P0 = 141 M is the least-squares fit over
# the five A100 bars (each within 5 %: tests/estimator/test_serving_marlin.py), not fitted to serving rows; below
# 199 M weights a block (models under ~7B) it is extrapolated. Applied on cards with A100-class HBM bandwidth per SM
# or more (A100 40GB: 1555 GB/s over 108 SMs = 14.4 GB/s; the figure's GDDR cards have 8.3-11.4, gpus.json); H100 and
# H200 are not in the figure and take the A100 curve (the README: "Marlin is not yet optimized for Hopper"). MoE
# models keep the ideal rate (fused Marlin MoE is another kernel, not measured here).
MARLIN_ENGINES = ("vllm", "sglang")
MARLIN_INT4_STREAM_EFFICIENCY = 1.0
MARLIN_LAYER_OVERHEAD_PARAMS = 141e6
MARLIN_FAST_CARD_BYTES_PER_SM_S = 14e9
# Achieved fraction of dense peak by the GEMMs of a decode-dominated step (skinny M = batch) and of a
# prefill-dominated step (large M).
STEP_COMPUTE_EFFICIENCY = 0.315
PREFILL_COMPUTE_EFFICIENCY = 0.72
# The attention core runs in 16 bits (FP8 recipes keep softmax(QK^T)V in bf16 unless FP8 FMHA is
# enabled) at a FlashAttention-class fraction of the 16-bit peak (FlashAttention-2/3 papers: 35-50 %).
ATTENTION_COMPUTE_EFFICIENCY = 0.28
# Routed-expert GEMMs (grouped GEMMs with few rows per expert, token permutation and routing) reach a
# fraction of a dense GEMM's speed.
MOE_GEMM_EFFICIENCY = 0.225
# FP8 GEMMs reach less of their 2x peak than 16-bit ones reach of theirs (scales, casts);
# the same derate as training (performance.FP8_GEMM_DERATE, fitted on torchtitan Float8).
FP8_DERATE = 0.75
# Block-scaled FP8 (DeepSeek-style: one scale per 128 x 128 weight block, the activation scaled per 1 x 128 group:
# DeepSeek-V3/R1 and Qwen3 FP8 checkpoints, config.json `weight_block_size` [128, 128]) runs its GEMMs below per-tensor
# FP8's rate at serving batches. vllm-project/vllm#49363 (H100, benchmarks/kernels/benchmark_fp8_gemm.py, Gemma-4-31B,
# TFLOP/s, both without the activation quantisation): block ÷ per-tensor FP8 at 1 / 16 / 64 rows = 4.91 / 5.16,
# 74.56 / 83.05, 263.26 / 318.41 (N = 12,288, K = 5,376) and 5.87 / 6.08, 72.97 / 93.96, 309.15 / 356.67 (N = 43,008):
# 0.95, 0.90, 0.83, 0.97, 0.78, 0.87, mean 0.88. Applied to the weights' stream (a decode step's GEMMs) and to the FP8
# GEMM rate alike; not fitted.
BLOCK_FP8_GROUP = 128 * 128  # weights per scale of a block-FP8 checkpoint (checkpoints.py: rows x cols)
BLOCK_FP8_GEMM_FACTOR = 0.88
# Per-step engine overhead (scheduling, sampling, input preparation, launch gaps), seconds, plus a
# per-sequence part (detokenisation, sampling). vLLM's V1 rewrite cut CPU overhead to a few ms per step
# (vLLM blog 2025-01-27 "vLLM V1"); "none" is a compiled single-stream loop (gpt-fast).
STEP_OVERHEAD_S: dict[str, float] = {"vllm": 2.0e-3, "sglang": 1.5e-3, "trt-llm": 1.0e-3, "none": 0.1e-3}
PER_SEQUENCE_OVERHEAD_S: dict[str, float] = {"vllm": 8e-6, "sglang": 6e-6, "trt-llm": 3e-6, "none": 0.0}
# Host time per layer of a decode step run eagerly, without a CUDA graph (EngineRelease.eager_decode): the Python model
# code launches each layer's kernels one at a time, and with few tokens the GPU waits on the launches.
# sgl-project/sglang#1401 (2024-09-12, sglang.bench_latency, batch 1, 128 in / 8 out; the GPU is not stated):
# DeepSeek-Coder-V2-Lite (MLA + MoE, 27 layers, triton backend) decodes in 6.22 ms a token with CUDA graphs and "4x"
# slower without (the title figure; the no-graph line is cut off in the stored thread): (4 - 1) x 6.22 / 27 = 0.69 ms a
# layer. Llama 3 8B (32 layers) on the same page: 9.28 - 7.06 = 2.22 ms (triton), 8.23 - 7.35 = 0.88 ms (flashinfer):
# 0.03-0.07 ms a layer, a dense layer launching a fraction of an MLA + MoE layer's kernels (routing, the expert chain,
# the latent projections). Two reports from before that PR, MLA's triton path then running without CUDA graphs against a
# graphed one (other kernels too, so read as bounds, not used): sgl-project/sglang#1369, DeepSeek-Coder-V2-Lite on an
# A100, 31 against 8 ms a token, (31 - 8) / 27 = 0.85 ms a layer; #1264, DeepSeek-V2-Chat at TP 8 (60 layers), 11.5
# against 38 tokens/s, 1.01 ms a layer. MoE models take the MLA + MoE figure, dense models the Llama triton one. Added
# to the step, not overlapped with its GPU time: the published figures are differences at batch 1, where nothing hides
# them (a step that prefills pays it too, though a long prompt's GPU time would hide part of it). What led
# here: DeepSeek-R1's TensorRT-LLM 0.17 rows (source `dstack-r1-h200`) gain 27.5 ms of TPOT from 4 to 64 in flight
# against 25.5 ms estimated, while sitting 47 ms above the estimate at 4: a cost per step that the batch does not
# change. Not fitted on any serving row; those rows count as fitted for it.
EAGER_MOE_LAYER_S = 3.0 * 6.22e-3 / 27
EAGER_DENSE_LAYER_S = (9.28e-3 - 7.06e-3) / 32
# The same host cost read as a floor under a step that prefills on an engine that runs extend batches eagerly
# (engines.json `eager_prefill`: SGLang captures CUDA graphs for decode only): its wall time is at least the host's
# time to issue the forward's kernels, the GPU's work overlapping behind the launches, so the step's GPU time (the
# larger of its memory and compute terms) is raised to it; the scheduler's overhead and the all-reduces stay added.
# Sized from published eager forwards at a few tokens, where the GPU waits on the host all along (the whole step is
# launch time, the graphed one far shorter): MoE layers from sgl-project/sglang#12160 (2025-10, DeepSeek-V3, SGLang's
# scheduler log of one eager extend batch of one new token: "forward cost 82.64 ms", 23.10 ms once captured in a
# graph; "prefill latency is similar when new_tokens < 100"; the GPU and TP degree are not stated): 82.64 ms over 3
# dense and 58 MLA + MoE layers, the dense ones at the figure below. Dense layers from sgl-project/sglang#1401 (the
# thread the decode figures above come from): Llama 3 8B decodes one token without CUDA graphs in 8.23 ms (flashinfer,
# SGLang's default attention backend then; triton 9.28) against 7.35 with them, so the eager step is the host's: 8.23
# ms over 32 layers. Both include the forward's parts outside the layers (embedding, head, sampling), so they read
# high by that much. Not fitted on any serving row; the SGLang rows are its check (docs/validation-serving.md, "Eager
# prefill").
EAGER_PREFILL_DENSE_LAYER_S = 8.23e-3 / 32
EAGER_PREFILL_MOE_LAYER_S = (82.64e-3 - 3 * EAGER_PREFILL_DENSE_LAYER_S) / 58


# Fixed latency of one small TP all-reduce. Engines run one-shot custom kernels over NVLink (vLLM
# custom_all_reduce.cu, SGLang's copy, TRT-LLM's allreduce plugin). vLLM / SGLang: assumed, inside the band measured
# on H100 at 2-16 KB for TP 2 / 4 / 8 by sgl-project/sglang#2904 (SGLang's copy-input kernel 3.7-5.9 µs; vLLM's
# kernel 8.5-10.1 µs timed without a CUDA graph, so with the host launch a graph removes);
# tests/estimator/test_serving_allreduce_latency.py holds it there. TRT-LLM and gpt-fast's PyTorch collectives
# ("none"): fitted on their TP rows (benchmarks/serving_fit.py). Without NVLink the interconnect table's latency
# applies.
ALLREDUCE_LATENCY_S: dict[str, float] = {"vllm": 8e-6, "sglang": 8e-6, "trt-llm": 10e-6, "none": 28e-6}
# The engines' one-shot kernel on an NVLink generation other than Hopper's (NVLink4, where the figures above are set):
# the time of the same kernel there over its time on H100. NVLink3 (A100): vLLM's custom_all_reduce kernel timed by the
# same script (sglang tests/test_trt_reduce.py, no CUDA graph, sizes in float32 elements) on A100 in
# sgl-project/sglang#2688 and on H100 in sgl-project/sglang#2904: A100 13.0 / 11.3 / 12.1 us (TP 2), 13.5 / 12.1 / 13.5
# (TP 4), 14.0 / 14.2 (TP 8; the third not legible) at 512 / 4,096 / 32,768 elements against H100 9.5 / 8.8 / 8.7,
# 9.1 / 8.5 / 9.2, 10.1 / 9.3: ratios 1.28-1.53, mean 1.42. Other links: not measured, 1.0. Not applied to NCCL
# ("none" and the releases without the kernel): that value was fitted on A100 rows. Not fitted on any serving row.
ONE_SHOT_ALLREDUCE_LINK_FACTOR: dict[str, float] = {"nvlink3": 1.42}
# What a TP all-reduce costs in place beyond its isolated kernel (or the fabric's latency), per call: the wait at the
# kernel's entry barrier for the last rank to arrive (rank skew, a host-side cost of the engine's processes, whatever
# the link), which a kernel benchmark (ALLREDUCE_LATENCY_S) does not see. Published in-serving figures:
# 1CatAI/1Cat-vLLM#173 (vLLM, DeepSeek-V4-Flash TP 8 on 8 x V100, CUDA graph): steady arrival skew 31.6 us a call (2.747
# ms a token) beside 18.7 us for the kernel alone; vllm-project/vllm#52911 (vLLM on ROCm, one layer's all-reduce across
# 8 ranks): arrival gaps 45-68 us, the earliest rank's kernel 72 us against 10.5 us on the last; vllm-project/vllm#21852
# (V1's all-reduce kernels holding the wait: profiled kernel time 3 x the inter-token latency) and #5792 (V0's skewed
# launches). No figure for a given engine, GPU and model was found, so the values are fitted
# (benchmarks/serving_allreduce_fit.py) on the TP >= 2 rows that led here, which are fitted from now on; one per engine,
# as the rows disagree (one shared constant: 10 us on all of them, 37-46 us without any one of four sources). vLLM 49 us
# on dstackai's 405B TP 8 H100 rows (every prompt in flight) and llm-k8s's A100 TP 8 rows (either left out: 32 / 48 us),
# inside the vLLM figures above. SGLang 6 us on datacrunch's H200 TP 4 / 8 rows (InferenceX#870's held-out TP 8 rows:
# 7.3 -> 4.7 % off). TensorRT-LLM 17 us, the fit's own value on the rows it had (NIM TP 2, the perf overview); it was
# first held back because it moves the large-batch perf-overview rows from -6.2 to -7.7 %, then taken because the
# TensorRT-LLM 0.9.0 rows recorded meanwhile at first contact and kept out of that fit (source `dli-trtllm09`: Llama 2
# 70B FP8, TP 1-8 on H100 and H200, batch 1-8) read their TP >= 2 TPOT 23.7 % low at 0 us and 6.0 % at 17 us, while
# their TP 1 rows do not move (5.4 %): the value was fitted without them; the choice to apply it was made after
# seeing them, so they count as fitted from here. Not for gpt-fast's compiled loop ("none": its NCCL value is fitted
# on its own TP rows).
ALLREDUCE_IN_PLACE_S: dict[str, float] = {"vllm": 49e-6, "sglang": 6e-6, "trt-llm": 17e-6}
# DP attention with expert parallelism: each MoE layer sends every token's hidden state to its top-k experts' ranks
# (dispatch) and their outputs back (combine), in FP8 with one fp32 scale per 128 values and in bf16, as DeepEP does
# (deepseek-ai/DeepEP docs/legacy.md: "FP8 dispatching and BF16 combining"; SGLang --moe-a2a-backend deepep, vLLM's
# DeepEP all2all backends). Bytes per token and expert copy, per hidden value.
DISPATCH_BYTES = 1.0 + 4.0 / 128
COMBINE_BYTES = 2.0
# Under expert parallelism each rank's experts get the tokens of every rank: from this many rows per local expert its
# grouped GEMMs run at the large-M rate of a dense GEMM (PREFILL_COMPUTE_EFFICIENCY, without MOE_GEMM_EFFICIENCY, fitted
# on TP rows with a few rows per expert). deepseek-ai/DeepGEMM README, "Grouped GEMMs for MoE models (masked layout)"
# (the decode layout; H800, block FP8, DeepSeek-V3's shapes N x K = 4096 x 7168 and 7168 x 2048): 1,233 / 925 TFLOPS at
# 1,024 rows per group, 1,040 / 916 at 512, 932 / 815 at 256, mean 977 = 0.49 of the 1,979 FP8 peak; the large-M block
# FP8 rate here is 0.75 x 0.88 x 0.72 = 0.475 of it. Below 256 rows the fitted MoE rate stays. Applied after the LMSYS
# large-EP rows were recorded (docs/validation-serving.md): those rows count as fitted for it.
EP_LARGE_M_ROWS = 256


@dataclass(slots=True)
class _Hardware:
    """One replica's GPUs and the per-step constants derived once per estimate (the search calls a step
    function thousands of times)."""

    gpu: GpuSpec
    tp: int
    pp: int
    cluster: Cluster
    split: int = 1
    ranks: int = 1  # ranks that each schedule their own sequences (DP attention: tp), else 1
    # DP attention with EP: the step's tokens from which each local expert gets EP_LARGE_M_ROWS rows, and the expert
    # GEMMs' seconds per token there (per GPU, at the large-M rate); inf: never (no EP)
    ep_large_m_tokens: float = math.inf
    ep_expert_s_per_token: float = 0.0
    weight_bytes_static: float = 0.0  # per GPU, every step (non-expert linear layers, head)
    expert_bytes: float = 0.0  # per GPU, per distinct expert touched in every MoE layer
    experts: int = 0
    top_k: int = 0
    hbm_weights: float = 1.0  # achieved bytes/s for weights
    hbm_kv: float = 1.0  # achieved bytes/s for the KV cache
    kv_token: float = 0.0  # KV bytes per token per GPU
    kv_reads: float = 1.0  # times decode attention reads each cached KV byte
    dense_flops_per_token: float = 0.0  # per GPU
    expert_flops_per_token: float = 0.0  # per GPU, already divided by the MoE GEMM efficiency
    attention_coef: float = 0.0  # per GPU: FLOPs per (token x key)
    gemm_rate: float = 1.0
    attention_rate: float = 1.0
    overhead_s: float = 0.0  # per stage
    # per stage: the least a step that prefills takes where the engine runs it eagerly (EAGER_PREFILL_*_LAYER_S)
    eager_prefill_s: float = 0.0
    overhead_per_seq_s: float = 0.0  # per stage
    # the engine packs a step's decodes and prompt tokens into one batch of tokens (engines.json `mixed_prefill`): each
    # linear layer of a step that carries both runs one GEMM over all its rows, at the large-M efficiency
    packed: bool = False
    moe_fixed_s: float = 0.0  # per stage: the MoE layers' kernel chains' fixed latency, every step
    allreduce_fixed_s: float = 0.0
    allreduce_per_token_s: float = 0.0
    hop_fixed_s: float = 0.0
    hop_per_token_s: float = 0.0
    # speculative decoding (serving_levers): positions each decoding sequence runs a step, the tokens a step yields
    # on average, and the draft's k forwards a step (per GPU: bytes streamed, one MoE layer's expert, KV per token,
    # FLOPs per token already divided by the GEMM rate)
    verify_width: int = 1
    tokens_per_step: float = 1.0
    draft_forwards: int = 0
    draft_bytes: float = 0.0
    draft_expert_bytes: float = 0.0
    draft_kv_token: float = 0.0
    draft_flops_per_token: float = 0.0
    draft_overhead_s: float = 0.0
    # the dense layers' GEMMs (columns and weights per GPU) and the SMs they run on: the prompt tokens' compute
    # efficiency is scaled by their wave occupancy at the step's token count (serving_gemm)
    gemm_shapes: tuple[tuple[int, float], ...] = ()
    sms: int = 0
    occupancy_by_rows: dict[int, float] = field(default_factory=dict)  # memo: rows of tiles -> occupancy
    # memos of what the replica's model and traffic give on it (a _Hardware serves one model and one traffic, its
    # offered rate aside: `_hardware`): operating points by concurrency (its type too: a point carries it), and the
    # isolated request's time to first token
    points: dict[tuple[type, float], _Point] = field(default_factory=dict)
    isolated_s: float | None = None
    # its key in the answer's memo (memo._hardware: model, traffic without its rate, servers and split); () outside one
    key: tuple[object, ...] = ()

    def occupancy(self, tokens: float) -> float:
        """The wave occupancy of the step's GEMMs at `tokens` rows (1.0 when the SM count is unknown or MoE)."""
        if not self.sms or tokens <= 0:
            return 1.0
        rows = -int(-tokens // TILE_ROWS)
        found = self.occupancy_by_rows.get(rows)
        if found is None:
            found = self.occupancy_by_rows[rows] = occupancy_of_tile_rows(self.gemm_shapes, self.sms, rows)
        return found


def _new_hardware(model: ModelSpec, cfg: ServingConfig, cluster: Cluster, tp: int, pp: int) -> _Hardware:
    gpu = cluster.gpu
    split = tp * pp
    parts = _parts(model)
    per = weight_bytes_per_param(cfg.weight_format, cfg.group_size)
    gemm_rate, attention_rate = _math_rates(gpu, cfg)
    expert = _expert_active_params(model)
    key = _overhead_key(cfg)
    hw = _Hardware(gpu, tp, pp, cluster, split=split)
    hw.weight_bytes_static = (parts.quantised * per + parts.head * 2.0) / split
    hw.expert_bytes = parts.expert * model.moe_layers * per / split if model.is_moe else 0.0
    hw.experts, hw.top_k = (model.experts, model.experts_per_token) if model.is_moe else (0, 0)
    hbm = gpu.hbm_bytes_per_s * _stream_scale(gpu)
    hw.hbm_weights = hbm * _weight_stream_efficiency(cfg, model, gpu, tp)
    release = engine_release(cfg.release)
    # a contiguous KV cache (no pages) is read as a stream, like the weights (ENGINE_RELEASES "trt-llm-0.6")
    hw.hbm_kv = hbm * (DECODE_HBM_EFFICIENCY if release.contiguous_kv else KV_HBM_EFFICIENCY)
    hw.kv_token = kv_bytes_per_token_per_gpu(model, cfg.kv_format, tp, pp, cfg.mla_cache_values)
    if release.gqa_heads_per_cta and not cfg.mla_cache_values:
        hw.kv_reads = float(max(1, math.ceil(model.heads // model.kv_heads / release.gqa_heads_per_cta)))
    hw.dense_flops_per_token = 2.0 * (matmul_params(model) - expert) / split / gemm_rate
    hw.expert_flops_per_token = 2.0 * expert / MOE_GEMM_EFFICIENCY / split / gemm_rate
    hw.attention_coef = (
        4.0 * model.layers * attention_width(model) / split / (attention_rate * ATTENTION_COMPUTE_EFFICIENCY)
    )
    hw.overhead_s = STEP_OVERHEAD_S[key] / pp
    if release.eager_decode:  # no CUDA graph: the stage's layers launch their kernels from the host (EAGER_*_LAYER_S)
        hw.overhead_s += math.ceil(model.layers / pp) * (EAGER_MOE_LAYER_S if model.is_moe else EAGER_DENSE_LAYER_S)
    # not on a disaggregated decode pool: SGLang's decode server builds the transferred request's batch without a
    # forward (python/sglang/srt/disaggregation/decode_schedule_batch_mixin.py prepare_for_prebuilt: "construct fake
    # completed prefill"), its first token the prefill server's
    if key in ENGINE_DEFAULTS and ENGINE_DEFAULTS[key].eager_prefill and not cfg.decode_pool:
        hw.eager_prefill_s = _eager_prefill_s(model, pp)
    hw.packed = ENGINE_DEFAULTS[cfg.engine].mixed_prefill
    if not model.is_moe:
        hw.gemm_shapes, hw.sms = gemm_shapes(model, tp), gpu.sm_count
    hw.overhead_per_seq_s = PER_SEQUENCE_OVERHEAD_S[key] / pp
    if model.is_moe and key in ENGINE_DEFAULTS:
        hw.moe_fixed_s = math.ceil(model.moe_layers / pp) * ENGINE_DEFAULTS[key].moe_layer_fixed_s
    if tp > 1:
        link = group_bandwidth(cluster, tp, min(tp, cluster.gpus_per_node))
        nvlink = "nvlink" in (cluster.intra_node_link or gpu.intra_node_link) and tp <= cluster.gpus_per_node
        # NCCL's own small-message latency: the PyTorch-collective value fitted on gpt-fast's TP rows
        engine_latency = ALLREDUCE_LATENCY_S["none" if release.nccl_allreduce else key]
        if not release.nccl_allreduce and key != "none":
            engine_latency *= ONE_SHOT_ALLREDUCE_LINK_FACTOR.get(cluster.intra_node_link or gpu.intra_node_link, 1.0)
        latency = (engine_latency if nvlink else link.latency_s) + ALLREDUCE_IN_PLACE_S.get(key, 0.0)
        calls = 2 * math.ceil(model.layers / pp)
        hw.allreduce_fixed_s = calls * latency
        hw.allreduce_per_token_s = calls * (all_reduce_s(model.hidden * 2.0, tp, link) - link.latency_s)
    if cfg.dp_attention and tp > 1:
        _dp_attention_hardware(hw, model, cfg, parts.quantised * per + parts.head * 2.0)
    if cfg.speculative is not None:
        _speculation_hardware(hw, model, cfg, gemm_rate)
    if pp > 1:
        # neighbouring stages share a server only while the whole replica does; beyond, each hop crosses the
        # inter-node fabric (the slowest hop sets the pipeline's pace)
        link = group_bandwidth(cluster, 2, 1 if split > cluster.gpus_per_node else min(2, cluster.gpus_per_node))
        hw.hop_fixed_s = (pp - 1) * link.latency_s
        hw.hop_per_token_s = (pp - 1) * (point_to_point_s(model.hidden * 2.0, link) - link.latency_s)
    return hw


def _eager_prefill_s(model: ModelSpec, pp: int) -> float:
    """The host's time to issue one stage's layers of an eager forward (EAGER_PREFILL_*_LAYER_S): its MoE layers at the
    MoE figure, the others at the dense one."""
    moe = math.ceil(model.moe_layers / pp) if model.is_moe else 0
    dense = max(0, math.ceil(model.layers / pp) - moe)
    return moe * EAGER_PREFILL_MOE_LAYER_S + dense * EAGER_PREFILL_DENSE_LAYER_S


def _dp_attention_hardware(hw: _Hardware, model: ModelSpec, cfg: ServingConfig, static_bytes: float) -> None:
    """DP attention with expert parallelism over the replica's tp ranks, in the step's terms, which count a step's
    sequences and tokens over the whole replica, shared evenly by its ranks: each rank streams the layers outside the
    routed experts whole (`static_bytes`) and 1/tp of the experts; reads its own sequences' whole KV (1/tp of the
    replica's per token); runs its own tokens' GEMMs and attention unsplit (1/tp of the replica's FLOPs per token, as
    under TP); and in place of the TP all-reduces sends its tokens to their experts and back, one all-to-all each way
    per MoE layer, over the fabric that joins the tp GPUs (NVLink in a server, the SKU's inter-node fabric beyond):
    (n-1)/n of a rank's buffer of tokens x top-k x hidden values at the group's bus bandwidth, plus its latency. The
    dense layers run without communication (SGLang --moe-dense-tp-size 1). The ranks are taken as balanced (the load
    balancer spreads sequences, EPLB the experts); a lone request is the exception (`_one_rank`)."""
    tp, cluster = hw.tp, hw.cluster
    hw.ranks = tp
    hw.weight_bytes_static = static_bytes / hw.pp
    hw.kv_token = kv_bytes_per_token_per_gpu(model, cfg.kv_format, 1, hw.pp, cfg.mla_cache_values) / tp
    hw.overhead_per_seq_s /= tp
    layers = math.ceil(model.moe_layers / hw.pp)
    per_token = model.experts_per_token * model.hidden * (DISPATCH_BYTES + COMBINE_BYTES)  # a rank's buffer per token
    latency = group_bandwidth(cluster, tp, min(tp, cluster.gpus_per_node)).latency_s
    hw.allreduce_fixed_s = layers * 2 * latency
    hw.allreduce_per_token_s = layers * (all_to_all_s(per_token, tp, cluster) - latency) / tp
    hw.ep_large_m_tokens = EP_LARGE_M_ROWS * model.experts / model.experts_per_token
    hw.ep_expert_s_per_token = hw.expert_flops_per_token * MOE_GEMM_EFFICIENCY / PREFILL_COMPUTE_EFFICIENCY


def _one_rank(hw: _Hardware) -> _Hardware:
    """A DP-attention replica's step terms for tokens that all sit on one rank (a lone request's prompt): that rank
    runs their dense GEMMs, attention, KV writes and all-to-all alone; the experts stay spread over the ranks."""
    if hw.ranks == 1:
        return hw
    n = hw.ranks
    return replace(
        hw,
        dense_flops_per_token=hw.dense_flops_per_token * n,
        attention_coef=hw.attention_coef * n,
        kv_token=hw.kv_token * n,
        allreduce_per_token_s=hw.allreduce_per_token_s * n,
        points={},
        occupancy_by_rows={},
        isolated_s=None,
        key=(),
    )


def _speculation_hardware(hw: _Hardware, model: ModelSpec, cfg: ServingConfig, gemm_rate: float) -> None:
    """The speculation's constants: verification width, expected tokens per step, and the draft's forwards. A draft
    forward is replayed from a CUDA graph like a compiled decode loop, so it carries that loop's fixed cost
    (STEP_OVERHEAD_S["none"]) rather than the engine's scheduling overhead."""
    spec = cfg.speculative
    if spec is None:
        return
    hw.verify_width, hw.tokens_per_step = spec.verify_width, spec.tokens_per_step
    if spec.method == "ngram":
        return  # a CPU lookup in the prompt and output so far: no model runs
    per = weight_bytes_per_param(cfg.weight_format, cfg.group_size)
    hw.draft_forwards = spec.num_speculative_tokens
    hw.draft_overhead_s = STEP_OVERHEAD_S["none"]
    hw.draft_kv_token = _draft_kv_per_token(model, cfg, hw.tp)
    if spec.draft is not None:
        draft = _parts(spec.draft)
        hw.draft_bytes = ((draft.quantised + draft.experts_total) * per + draft.head * 2.0) / hw.split
        hw.draft_flops_per_token = 2.0 * matmul_params(spec.draft) / hw.split / gemm_rate
        return
    parts = _parts(model)
    hw.draft_bytes = (parts.quantised / model.layers * per + parts.head * 2.0) / hw.split
    hw.draft_expert_bytes = parts.expert * per / hw.split if model.is_moe else 0.0
    one_layer = matmul_params(model) / model.layers + model.vocab * model.hidden
    hw.draft_flops_per_token = 2.0 * one_layer / hw.split / gemm_rate


def _draft_s(hw: _Hardware, decodes: float, kv: float) -> float:
    """The draft's k forwards in one step over `decodes` sequences holding `kv` tokens: each streams the draft's
    weights (an MoE module: the experts the batch touches) and its KV cache, or is bound by its FLOPs."""
    if not hw.draft_forwards or decodes <= 0:
        return 0.0
    weights = hw.draft_bytes
    if hw.draft_expert_bytes:
        weights += expected_experts_touched(hw.experts, hw.top_k, decodes) * hw.draft_expert_bytes
    memory = weights / hw.hbm_weights + kv * hw.draft_kv_token / hw.hbm_kv
    compute = decodes * hw.draft_flops_per_token / STEP_COMPUTE_EFFICIENCY
    return hw.draft_forwards * (max(memory, compute) + hw.draft_overhead_s)


def _math_rates(gpu: GpuSpec, cfg: ServingConfig) -> tuple[float, float]:
    """(GEMM, attention) dense peaks of the math that runs: weight-only int4/int8 dequantise into 16-bit
    GEMMs; FP8 weights run FP8 GEMMs on GPUs with FP8 tensor cores; the attention core runs in 16 bits."""
    math_precision = cfg.precision
    if cfg.weight_format != "fp8" and math_precision == "fp8":
        math_precision = "bf16"
    if cfg.weight_format == "fp8" and gpu.peak_flops.get("fp8"):
        # engines run FP8 weights as W8A8 where FP8 tensor cores exist (vLLM Fp8LinearMethod: cutlass_scaled_mm
        # with dynamic activation scales on SM89+, FP8-Marlin weight-only below; SGLang and TensorRT-LLM alike)
        math_precision = "fp8"
    runs_as = compute_precision(gpu, math_precision)
    gemm = gpu.peak_flops[runs_as] * (FP8_DERATE if runs_as == "fp8" else 1.0)
    if runs_as == "fp8" and _block_fp8(cfg):
        gemm *= BLOCK_FP8_GEMM_FACTOR
    attention = gpu.peak_flops[compute_precision(gpu, "bf16")]
    return gemm, attention


@lru_cache(maxsize=1024)
def _expert_active_params(model: ModelSpec) -> float:
    """GEMM weights per token inside routed experts (top-k of them, every MoE layer)."""
    if not model.is_moe:
        return 0.0
    return float(mlp_params(model, model.expert_ffn or model.ffn)) * model.experts_per_token * model.moe_layers


def _block_fp8(cfg: ServingConfig) -> bool:
    """FP8 weights with one scale per 128 x 128 block (BLOCK_FP8_GEMM_FACTOR)."""
    return cfg.weight_format == "fp8" and cfg.group_size == BLOCK_FP8_GROUP


def _stream_scale(gpu: GpuSpec) -> float:
    """The card's measured STREAM share of its spec HBM bandwidth over H100 SXM's (REFERENCE_STREAM_SHARE); 1 where
    the card has no measurement."""
    if gpu.stream_hbm_bytes_per_s <= 0.0 or gpu.hbm_bytes_per_s <= 0.0:
        return 1.0
    return gpu.stream_hbm_bytes_per_s / gpu.hbm_bytes_per_s / REFERENCE_STREAM_SHARE


def marlin_stream_efficiency(model: ModelSpec, gpu: GpuSpec, tp: int) -> float:
    """Marlin's 4-bit weight stream rate over the 16-bit one for `model`'s dense blocks at tensor parallelism `tp`
    (MARLIN_LAYER_OVERHEAD_PARAMS): 1 on cards below A100-class bandwidth per SM, on MoE models and where the SM
    count is unknown."""
    if model.is_moe or not gpu.sm_count or gpu.hbm_bytes_per_s / gpu.sm_count < MARLIN_FAST_CARD_BYTES_PER_SM_S:
        return MARLIN_INT4_STREAM_EFFICIENCY
    return marlin_block_efficiency(sum(weights for _, weights in gemm_shapes(model, tp)))


def marlin_block_efficiency(block_weights: float) -> float:
    """Marlin's stream rate over the ideal on an A100-class card for a block of `block_weights` dense GEMM weights on
    one GPU: P / (P + MARLIN_LAYER_OVERHEAD_PARAMS)."""
    return MARLIN_INT4_STREAM_EFFICIENCY * block_weights / (block_weights + MARLIN_LAYER_OVERHEAD_PARAMS)


def _weight_stream_efficiency(cfg: ServingConfig, model: ModelSpec, gpu: GpuSpec, tp: int) -> float:
    if cfg.weight_format == "int4" and _overhead_key(cfg) in MARLIN_ENGINES:
        return DECODE_HBM_EFFICIENCY * marlin_stream_efficiency(model, gpu, tp)
    if _block_fp8(cfg):
        return DECODE_HBM_EFFICIENCY * BLOCK_FP8_GEMM_FACTOR
    return DECODE_HBM_EFFICIENCY * WEIGHT_ONLY_STREAM_EFFICIENCY.get(cfg.weight_format, 1.0)


def _step_s(
    hw: _Hardware,
    decode_seqs: float,
    context: float,
    prefill_tokens: float,
    prefill_len: float,
    prefill_chunk: float | None = None,
) -> tuple[float, str]:
    """One engine step on one pipeline stage: `decode_seqs` sequences at `context` tokens decode one token each
    and `prefill_tokens` prompt tokens of prompts of length `prefill_len` are prefilled. Returns (s, bound).

    `prefill_chunk`: the size of the chunks the prefill tokens come in when `prefill_tokens` is an average
    over steps (a prompt is scheduled whole, up to the chunk budget, on one step, not a little on each):
    a fraction prefill_tokens / chunk of the steps carries one chunk. None: this step carries them all.
    On an engine that packs a step's tokens (`hw.packed`: vLLM V1's unified token budget, TensorRT-LLM's in-flight
    batching with packed inputs) a step that carries prompt tokens runs its decodes' rows inside the same GEMMs, at the
    large-M efficiency of all the step's rows, not at the skinny-M decode efficiency; else the two are weighed by
    their tokens (a step that prefills alone has no decodes: SGLang's, `mixed_prefill` off).

    Memory: the weights the step touches (MoE: the distinct experts its tokens route to, averaged over the
    steps with and without a chunk) and the KV cache read (decodes) and written (prefill), at achieved
    bandwidths. Compute: dense and expert GEMMs at the decode/prefill mix's efficiency, the attention core at
    its own. The larger of the two, plus the engine's per-step overhead and the TP all-reduces (fixed latency
    + bytes)."""
    verify = decode_seqs * hw.verify_width  # positions the decoding sequences run (k + 1 each when speculating)
    tokens = verify + prefill_tokens
    weights = hw.weight_bytes_static
    # max(prefill_chunk or prefill_tokens, prefill_tokens), without the call (the closed forms' points take ~3 steps)
    chunk = prefill_chunk or prefill_tokens
    chunk = prefill_tokens if prefill_tokens > chunk else chunk
    if hw.experts:
        share = prefill_tokens / chunk if chunk else 0.0
        touched = (1.0 - share) * expected_experts_touched(hw.experts, hw.top_k, max(verify, 1.0))
        touched += share * expected_experts_touched(hw.experts, hw.top_k, max(verify + chunk, 1.0))
        weights += touched * hw.expert_bytes
    kv = (decode_seqs * context * hw.kv_reads + prefill_tokens) * hw.kv_token
    memory_s = weights / hw.hbm_weights + kv / hw.hbm_kv
    decode_share = verify / tokens if tokens else 1.0
    # the GEMMs of a step that prefills run at M = its decodes + one whole chunk (prefill_tokens may be an average)
    chunk_rows = verify + chunk
    prefill_efficiency = PREFILL_COMPUTE_EFFICIENCY * hw.occupancy(chunk_rows) if prefill_tokens else 0.0
    efficiency = decode_share * STEP_COMPUTE_EFFICIENCY + (1 - decode_share) * prefill_efficiency
    if hw.packed and prefill_tokens:
        efficiency = prefill_efficiency
    if tokens >= hw.ep_large_m_tokens:  # expert parallel, hundreds of rows per expert (EP_LARGE_M_ROWS)
        compute_s = hw.dense_flops_per_token * tokens / efficiency + hw.ep_expert_s_per_token * tokens
    else:
        compute_s = (hw.dense_flops_per_token + hw.expert_flops_per_token) * tokens / efficiency
    compute_s += hw.attention_coef * (verify * context + prefill_tokens * prefill_len / 2)
    compute_s += hw.draft_flops_per_token * prefill_tokens / PREFILL_COMPUTE_EFFICIENCY  # the draft reads the prompt
    overhead = hw.overhead_s + hw.overhead_per_seq_s * decode_seqs + hw.moe_fixed_s
    comm = hw.allreduce_fixed_s + hw.allreduce_per_token_s * tokens if hw.tp > 1 else 0.0
    bound = "memory" if memory_s >= compute_s else "compute"
    draft = _draft_s(hw, decode_seqs, decode_seqs * context) if hw.draft_forwards else 0.0
    gpu_s = compute_s if compute_s > memory_s else memory_s
    if prefill_tokens and gpu_s < hw.eager_prefill_s:  # an eager forward: the host's launches set the pace
        gpu_s = hw.eager_prefill_s
    return gpu_s + overhead + comm + draft, bound


def _pipeline_hop_s(hw: _Hardware, tokens: float) -> float:
    return hw.hop_fixed_s + hw.hop_per_token_s * tokens if hw.pp > 1 else 0.0


def _sim_step(hw: _Hardware) -> StepTime:
    """The simulator's step: `decodes` sequences holding `kv` tokens decode one token each and `prefill` prompt
    tokens whose chunks attend `span` keys in all are prefilled. With pp stages the decoding sequences form pp
    micro-batches and every token crosses all stages (as in _operating_point); a prompt's chunk is not split
    among the micro-batches (a request is in one micro-batch at a time, as vLLM V1 schedules with pipeline
    parallelism), so the step that prefills it takes pp stage times of the whole chunk: the latency of a prompt
    is that of every stage in turn, whatever the pipeline's throughput."""
    if hw.pp == 1 and not hw.experts and hw.verify_width == 1:
        return _dense_step(hw)
    return _stage_step(hw)


def _sim_decode(hw: _Hardware) -> DecodeTime:
    """The simulator's decode-only step: a dense model's on one stage (`_dense_decode`), else `_stage_decode`."""
    if hw.pp == 1 and not hw.experts and hw.verify_width == 1:
        return _dense_decode(hw)
    return _stage_decode(hw)


def _stage_step(hw: _Hardware) -> StepTime:
    """The simulator's step from `_step_s(hw, decodes / pp, kv / decodes, prefill, 2 span / prefill)[0]` (whole
    prompt chunks: of the two expert counts _step_s weighs by the chunk's share, 1 or 0 here, the one weighed 1), its
    constants read once: the same terms in the same order, so the same floats; then pp stages and their hops
    (`_pipeline_hop_s`). The experts a step's tokens touch are kept by token count: a run asks for a few hundred counts
    thousands of times."""
    weights_static, expert_bytes, experts, top_k = hw.weight_bytes_static, hw.expert_bytes, hw.experts, hw.top_k
    width, reads, kv_token, hbm_weights, hbm_kv = hw.verify_width, hw.kv_reads, hw.kv_token, hw.hbm_weights, hw.hbm_kv
    flops, attention = hw.dense_flops_per_token + hw.expert_flops_per_token, hw.attention_coef
    ep_tokens, dense_flops, ep_expert = hw.ep_large_m_tokens, hw.dense_flops_per_token, hw.ep_expert_s_per_token
    fixed, per_seq, moe_fixed, occupancy = hw.overhead_s, hw.overhead_per_seq_s, hw.moe_fixed_s, hw.occupancy
    comm_fixed, comm_per_token = (hw.allreduce_fixed_s, hw.allreduce_per_token_s) if hw.tp > 1 else (0.0, 0.0)
    pp, hop_fixed, hop_per_token, draft_flops = hw.pp, hw.hop_fixed_s, hw.hop_per_token_s, hw.draft_flops_per_token
    packed, eager = hw.packed, hw.eager_prefill_s
    touched: dict[float, float] = {}  # tokens -> experts they touch

    def step(decodes: int, kv: float, prefill: int, span: float) -> float:
        context = kv / decodes if decodes else 0.0
        prefill_len = 2.0 * span / prefill if prefill else 0.0
        seqs = decodes / pp if pp > 1 else decodes
        verify = seqs * width
        tokens = verify + prefill
        weights = weights_static
        if experts:
            rows = 1.0 if tokens < 1.0 else tokens  # max(tokens, 1.0), without the call
            found = touched.get(rows)
            if found is None:
                found = touched[rows] = expected_experts_touched(experts, top_k, rows)
            weights += found * expert_bytes
        memory_s = weights / hbm_weights + (seqs * context * reads + prefill) * kv_token / hbm_kv
        efficiency = STEP_COMPUTE_EFFICIENCY
        if prefill:
            share = verify / tokens
            large_m = PREFILL_COMPUTE_EFFICIENCY * occupancy(tokens)
            efficiency = large_m if packed else share * efficiency + (1 - share) * large_m
        if tokens >= ep_tokens:
            compute_s = dense_flops * tokens / efficiency + ep_expert * tokens
        else:
            compute_s = flops * tokens / efficiency
        compute_s += attention * (verify * context + prefill * prefill_len / 2)
        compute_s += draft_flops * prefill / PREFILL_COMPUTE_EFFICIENCY
        overhead = fixed + per_seq * seqs + moe_fixed
        draft = _draft_s(hw, seqs, seqs * context) if hw.draft_forwards else 0.0
        bound_s = compute_s if compute_s > memory_s else memory_s  # max(memory_s, compute_s)
        if prefill and bound_s < eager:
            bound_s = eager
        seconds = bound_s + overhead + (comm_fixed + comm_per_token * tokens) + draft
        return seconds if pp == 1 else pp * seconds + (hop_fixed + hop_per_token * (seqs + prefill))

    return step


def _stage_decode(hw: _Hardware) -> DecodeTime:
    """`_stage_step(hw)(decodes, kv, 0, 0.0)` to the last bit (a step's prompt terms are zeros that leave each sum as
    it is), its terms that depend on `decodes` alone (the experts touched, the GEMMs, overheads, all-reduces and
    hops) kept by `decodes`: a run asks for a few hundred counts thousands of times."""
    reads, kv_token, hbm_kv, attention, pp = hw.kv_reads, hw.kv_token, hw.hbm_kv, hw.attention_coef, hw.pp
    drafts = hw.draft_forwards
    terms: dict[int, tuple[float, float, float, float, float, float, float]] = {}

    def decode(decodes: int, kv: float) -> float:
        found = terms.get(decodes)
        if found is None:
            found = terms[decodes] = _stage_decode_terms(hw, decodes)
        seqs, verify, weights_s, gemm_s, overhead, comm, hop = found
        context = kv / decodes if decodes else 0.0
        memory_s = weights_s + seqs * context * reads * kv_token / hbm_kv
        compute_s = gemm_s + attention * (verify * context)
        draft = _draft_s(hw, seqs, seqs * context) if drafts else 0.0
        seconds = (compute_s if compute_s > memory_s else memory_s) + overhead + comm + draft
        return seconds if pp == 1 else pp * seconds + hop

    return decode


def _stage_decode_terms(hw: _Hardware, decodes: int) -> tuple[float, float, float, float, float, float, float]:
    """`_stage_step`'s terms of a decode-only step of `decodes` sequences that do not read the KV cache: the sequences
    and positions of one stage, the weights' seconds, the GEMMs' seconds, the overheads, the all-reduces and the
    hops, each as `_stage_step` sums it."""
    pp = hw.pp
    seqs = decodes / pp if pp > 1 else decodes
    verify = seqs * hw.verify_width
    weights = hw.weight_bytes_static
    if hw.experts:
        weights += expected_experts_touched(hw.experts, hw.top_k, 1.0 if verify < 1.0 else verify) * hw.expert_bytes
    if verify >= hw.ep_large_m_tokens:
        gemm_s = hw.dense_flops_per_token * verify / STEP_COMPUTE_EFFICIENCY + hw.ep_expert_s_per_token * verify
    else:
        gemm_s = (hw.dense_flops_per_token + hw.expert_flops_per_token) * verify / STEP_COMPUTE_EFFICIENCY
    comm = hw.allreduce_fixed_s + hw.allreduce_per_token_s * verify if hw.tp > 1 else 0.0
    hop = hw.hop_fixed_s + hw.hop_per_token_s * seqs
    overhead = hw.overhead_s + hw.overhead_per_seq_s * seqs + hw.moe_fixed_s
    return seqs, verify, weights / hw.hbm_weights, gemm_s, overhead, comm, hop


def _dense_step(hw: _Hardware) -> DenseStep:
    """_step_s of a dense model on one stage, its constants read once (the simulation's inner loop, which evaluates it
    inline): the same sum of the weights and KV bytes, the GEMM and attention FLOPs at the decode/prefill mix's
    efficiency, the overheads and the all-reduces."""
    return DenseStep(
        *_dense_terms(hw), prefill_efficiency=PREFILL_COMPUTE_EFFICIENCY, packed=hw.packed, tile_rows=TILE_ROWS,
        by_rows=hw.occupancy_by_rows, occupancy=hw.occupancy, eager_prefill=hw.eager_prefill_s,
    )  # fmt: skip


def _dense_decode(hw: _Hardware) -> DecodeTime:
    """`_dense_step(hw)(decodes, kv, 0, 0.0)`, to the last bit: its terms without the prompt's (adding an integer 0
    or 0.0 leaves a float as it is)."""
    # memory = weights_s + kv·reads·kv_s, compute = flops·decodes / decode_eff + attention·kv (inlined by the run)
    return DenseDecode(*_dense_terms(hw))


def _dense_terms(hw: _Hardware) -> tuple[float, float, float, float, float, float, float, float, float]:
    """A dense step's constants, read once, in DenseDecode's order: the weights' and a KV token's seconds, the KV
    reads per token, the FLOPs per token, the decode efficiency, the attention coefficient, the fixed seconds (the
    overhead and, under TP, the all-reduces' fixed part), the seconds per sequence and per token (TP all-reduces)."""
    tp = hw.tp > 1
    return (
        hw.weight_bytes_static / hw.hbm_weights,
        hw.kv_token / hw.hbm_kv,
        hw.kv_reads,
        hw.dense_flops_per_token + hw.expert_flops_per_token,
        STEP_COMPUTE_EFFICIENCY,
        hw.attention_coef,
        hw.overhead_s + (hw.allreduce_fixed_s if tp else 0.0),
        hw.overhead_per_seq_s,
        hw.allreduce_per_token_s if tp else 0.0,
    )
