"""FP8 math asked where a GPU has none: the same FP8 weights run weight-only (16-bit math), as a near miss.

vLLM and SGLang load an FP8 checkpoint on Ampere (SM80/86, no FP8 tensor cores) through the FP8 Marlin kernel: the
weights stay 8-bit in memory and are dequantised in the kernel into 16-bit GEMMs, so memory-bound decode reads 1 byte
per weight while compute-bound prefill runs at the 16-bit rate. The estimator already prices `"weights":"fp8"` with
16-bit math that way (app/estimator/serving/step.py `_math_rates`: FP8 GEMMs only where FP8 tensor cores exist;
WEIGHT_BYTES["fp8"] = 1). Sources (read from the stored public snapshots named):
- vLLM: vllm/model_executor/layers/quantization/utils/marlin_utils_fp8.py (vllm-project/vllm@02d33ed1cbfc):
  `is_fp8_marlin_supported()` is `has_device_capability(80)`, and `prepare_fp8_layer_for_marlin` logs "Your GPU does
  not have native support for FP8 computation ... Weight-only FP8 compression will be used leveraging the Marlin
  kernel" (MoE layers too: `prepare_moe_fp8_layer_for_marlin`).
- SGLang: python/sglang/srt/layers/quantization/fp8_utils.py `can_auto_enable_marlin_fp8()` returns
  `80 <= sm < 89`; fp8.py `Fp8LinearMethod.__init__` sets `use_marlin = SGLANG_FORCE_FP8_MARLIN or
  can_auto_enable_marlin_fp8()` (sgl-project/sglang, stored versions @002ed7e465ec and later; the MoE method does the
  same with the auto/triton MoE runner).
TensorRT-LLM has no such path: its FP8 recipes need SM89+ (app/estimator/serving/rules.py kernel_support `trt_fp8_kv`).
PURE.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Final

from app.estimator.serving import ServingConfig
from app.estimator.vocabulary import ENGINES
from app.planner.misses import MissCode

CODE: Final[MissCode] = "fp8_weights_bf16_math"
# the engines that run FP8 weights weight-only through Marlin where FP8 math is missing: all but TensorRT-LLM
# (module docstring)
MARLIN_FP8_ENGINES: Final = frozenset(ENGINES) - {"trt-llm"}


def weight_only(cfg: ServingConfig) -> ServingConfig | None:
    """The request with FP8 math asked run as FP8 weights with bf16 math, where its engine does that; else None
    (no FP8 math asked, weights in another format, or an engine without the FP8 Marlin path)."""
    if cfg.precision != "fp8" or cfg.weight_format != "fp8" or cfg.engine not in MARLIN_FP8_ENGINES:
        return None
    return replace(cfg, precision="bf16", weights="fp8")
