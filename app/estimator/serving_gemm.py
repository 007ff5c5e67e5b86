"""How much of a GPU a prefill step's GEMMs occupy: tile and wave quantization of the dense layers' GEMMs at M tokens.

A GEMM of M tokens × N outputs (per GPU: N / TP for the column-parallel QKV and gate/up projections, the full hidden
size for the row-parallel output and down projections) is computed in output tiles, one thread block per tile;
the tiles run in waves of one per SM. When the tiles do not fill the last wave, the SMs without a tile idle: "wave
quantization" (NVIDIA, Matrix Multiplication Background User's Guide, DU-09799-001_v001, Feb 2023, §3.2: on an A100's
108 SMs a GEMM of 109 tiles takes two waves). §2.3 of the same guide: cuBLAS picks among tiles 256×128, 128×256,
128×128 (the largest that fill the GPU), 64×128 and smaller; a short prompt (M ≤ 128 rows) is one row of 128-row
tiles, so at TP 4-8 a projection of 2,560 columns is 20 tiles on 132 SMs (15 % busy), where a 2,048-token prompt
is 16 rows of them and fills every wave to within a few per cent.

The occupancy here is that of 128×128 tiles, each GEMM weighted by its FLOPs (its weights: M is common to all). The
large-M compute efficiency of the serving model (serving/step.py PREFILL_COMPUTE_EFFICIENCY) was fitted on steps of
thousands of tokens, where the occupancy is 0.95-1.0, so the factor leaves long prompts where they were and slows
short prompts in proportion to the SMs they leave idle. cuBLAS's split-K kernels recover some of the idle SMs for
the narrowest GEMMs (the guide's §3 notes the library's heuristics), so the factor is an upper bound on the loss
per GEMM; it applies to the prompt tokens of a step (decode tokens already run at the skinny-M efficiency). Fine-
grained MoE layers are not counted here (their grouped GEMMs have their own efficiency).
"""

from __future__ import annotations

import math

from app.estimator.compute import attention_width
from app.estimator.specs import ModelSpec

TILE_ROWS = 128  # M per tile (tokens)
TILE_COLS = 128  # N per tile (output columns)


def gemm_shapes(model: ModelSpec, tp: int) -> tuple[tuple[int, float], ...]:
    """(output columns per GPU, weights per GPU) of each dense GEMM of one layer under tensor parallelism `tp`:
    QKV and gate/up split their columns, the output and down projections their rows (Megatron-style TP, as vLLM,
    SGLang and TensorRT-LLM shard them)."""
    qkv = (model.heads + 2 * model.kv_heads) * model.d_head
    width = attention_width(model)
    up = (2 if model.mlp == "swiglu" else 1) * model.ffn
    return (
        (max(1, qkv // tp), model.hidden * qkv / tp),
        (model.hidden, width / tp * model.hidden),
        (max(1, up // tp), model.hidden * up / tp),
        (model.hidden, model.ffn / tp * model.hidden),
    )


def wave_occupancy(shapes: tuple[tuple[int, float], ...], sms: int, tokens: int) -> float:
    """Busy share of the SMs over the layer's GEMMs at `tokens` rows (FLOP-weighted): tiles ÷ (waves × SMs) for each.
    1.0 when the SM count is unknown (0) or there are no rows."""
    if sms <= 0 or tokens <= 0:
        return 1.0
    return occupancy_of_tile_rows(shapes, sms, math.ceil(tokens / TILE_ROWS))


def occupancy_of_tile_rows(shapes: tuple[tuple[int, float], ...], sms: int, rows: int) -> float:
    """wave_occupancy at `rows` rows of tiles (the occupancy only changes at multiples of TILE_ROWS tokens)."""
    total = busy = 0.0
    for columns, weights in shapes:
        tiles = rows * math.ceil(columns / TILE_COLS)
        occupancy = tiles / (math.ceil(tiles / sms) * sms)
        total += weights / occupancy
        busy += weights
    return busy / total
