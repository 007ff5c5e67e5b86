"""First-contact rows of a fixed batch on vLLM's latency benchmark: the RTN quantisation pull request's H100 table
(source `vllm-rtn-marlin-h100` in tests/estimator/data/serving_first_contact.json; tests/estimator/
serving_first_contact.py says how first-contact rows are kept). A source new to the repository: no earlier serving row
comes from a vLLM pull request, from `benchmark_latency`, or from 4-bit or 8-bit weights through Marlin on an H100.

  [vllm-rtn-marlin-h100] vllm-project/vllm pull request #23197 ("[Performance] Introduce Marlin-based GEMM kernels for
               the calibration-free RTN-based quantization", https://github.com/vllm-project/vllm/pull/23197, opened
               2025-08-19; the same table in #21836 and #21865): "We ran `benchmark_latency` with several Llama models
               on a machine equipped with H100 GPUs", `[RTN_NUM_BITS=4] python benchmark_latency.py --model <model>
               --n 1 --num-iters-warmup 3 --num-iters 10 --input-len 256 --output-len 32 -tp <#GPUs> --batch-size
               <batch> [--quantization rtn]`, "Each data point is an average of 5 runs, the units are seconds
               (measuring generation latency ...)". Rows read: the Llama3.1-8B table (1 GPU) at batch 1, 4, 8 and 16,
               lines "Baseline (BF16)", "new RTN (Int8)" and "new RTN (Int4)" (the PR's Marlin kernels; the "old RTN"
               lines run the earlier non-Marlin kernels and are not read; the Llama3.3-70B table was not legible in
               the copy read). benchmark_latency is one offline `vllm.LLM.generate` call over `batch` prompts of 256
               tokens, 32 tokens each (ignore_eos), so a row is read as the output tokens/s of a finite offline run of
               `batch` requests queued at once (`requests=batch`): batch x 32 / latency. RTN: weights rounded to
               nearest with one scale per group of 128 (vllm/model_executor/layers/quantization/rtn.py: `RTN_GROUP_SIZE`
               default "128", `RTN_NUM_BITS` default "8"), model dtype bf16 (Llama 3.1's). GPU read as the H100 SXM
               (the form factor is not stated). vLLM of August 2025 (V1): the rows run as the current vLLM.
"""

from __future__ import annotations

from typing import Literal

from app.estimator.hardware import get_gpu
from app.estimator.presets import get_preset
from app.estimator.serving import ServingConfig
from tests.estimator.serving_first_contact_row import ServingFirstContact

SOURCE = "vllm-rtn-marlin-h100"
CITATION = (
    "vllm-project/vllm pull request #23197 (https://github.com/vllm-project/vllm/pull/23197), Llama3.1-8B table: "
    "benchmark_latency --input-len 256 --output-len 32 -tp 1 --batch-size 1/4/8/16 on H100, BF16 and Marlin-based "
    "RTN Int8 / Int4 (group 128), seconds a run"
)
H100 = get_gpu("h100-80g-sxm")
Format = Literal["BF16", "Int8", "Int4"]
_BATCHES = (1, 4, 8, 16)
# seconds at batch 1, 4, 8, 16
_LATENCY_S: dict[Format, tuple[float, float, float, float]] = {
    "BF16": (0.236, 0.260, 0.284, 0.336),
    "Int8": (0.186, 0.231, 0.248, 0.300),
    "Int4": (0.154, 0.194, 0.216, 0.267),
}


def _row(fmt: Format, batch: int, seconds: float) -> ServingFirstContact:
    model = get_preset("llama-3.1-8b").model
    if fmt == "BF16":
        formats: dict = {"weights": "bf16"}
    else:
        formats = {"weights": fmt.lower(), "group_size": 128}
    cfg = ServingConfig(input_tokens=256, output_tokens=32, engine="vllm", in_process=True, precision="bf16", **formats)
    label = f"vllm-rtn-pr23197 llama-3.1-8b h100 tp1 {fmt.lower()} batch {batch} 256/32 benchmark_latency"
    tok_s = round(batch * 32 / seconds, 2)
    return ServingFirstContact(label, SOURCE, CITATION, model, H100, 1, cfg, "output_tokens_per_s", tok_s, batch)


VLLM_RTN_ROWS: tuple[ServingFirstContact, ...] = tuple(
    _row(fmt, batch, seconds) for fmt, line in _LATENCY_S.items() for batch, seconds in zip(_BATCHES, line, strict=True)
)
