"""First-contact rows of Mixtral 8x7B on vLLM's latency benchmark at TP 2 and TP 8, no expert parallelism: the fused-MoE
pull requests' tables (sources `vllm-moe-a100-tp2` and `vllm-moe-h100-tp8` in tests/estimator/data/
serving_first_contact.json; tests/estimator/serving_first_contact.py says how first-contact rows are kept). New to the
repository: no earlier serving row is a Mixtral, and none comes from these pull requests.

Why these rows: each batch prefills `batch` prompts of 1,000 tokens before it decodes, so a step carries 1,000 x batch
rows and each of Mixtral's 8 experts about 250 x batch (top-2): the large-M expert GEMMs a long prompt runs, which
MOE_GEMM_EFFICIENCY (fitted on decode / TP rows with a few rows per expert) was not fitted on.

  [vllm-moe-a100-tp2] vllm-project/vllm pull request #3240 ("adding fused moe kernel config for A100 TP2",
               https://github.com/vllm-project/vllm/pull/3240, opened 2024-03-06): `python
               benchmarks/benchmark_latency.py --model=mistralai/Mixtral-8x7B-Instruct-v0.1 --input-len 1000
               --output-len 50 -tp 2 --num-iters 100 --batch-size <bs>`, "Avg latency" in seconds at batch 1, 2, 4, 8,
               16, 32 and 64, on A100 at TP 2 (read as the A100 80GB SXM: Mixtral's 93 GB of bf16 weights do not fit
               two 40 GB cards). Both lines read: "Compared to master" (vLLM main of 2024-03-06, the fused MoE kernel
               at its default tile configuration) and "This PR" (the same with a tuned A100 TP 2 configuration).
  [vllm-moe-h100-tp8] vllm-project/vllm pull request #2542 ("Fused MOE for Mixtral",
               https://github.com/vllm-project/vllm/pull/2542, merged; opened 2024-01-22): the same command at `-tp 8`
               on H100 (read as SXM; the form factor is not stated), seconds at batch 1-64; the "This PR" line (the
               fused MoE kernel, merged) is read, not "master" (the per-expert loop it replaced).

benchmark_latency is one offline `vllm.LLM.generate` over `batch` prompts of exactly 1,000 tokens, 50 tokens each
(ignore_eos), dtype auto (Mixtral's bf16), CUDA graphs on (vLLM's default since 0.2.5), so a row is read as the output
tokens/s of a finite offline run of `batch` requests queued at once (`requests=batch`): batch x 50 / seconds, as the
[vllm-rtn-marlin-h100] rows are. vLLM of early 2024 (V0, no chunked prefill) is not an ENGINE_RELEASES entry: the
rows run as the current vLLM.
"""

from __future__ import annotations

from app.estimator.hardware import get_gpu
from app.estimator.presets import get_preset
from app.estimator.serving import ServingConfig
from app.estimator.specs import GpuSpec
from tests.estimator.serving_first_contact_row import ServingFirstContact

A100_CITATION = (
    "vllm-project/vllm pull request #3240 (https://github.com/vllm-project/vllm/pull/3240): benchmark_latency "
    "Mixtral-8x7B-Instruct-v0.1 --input-len 1000 --output-len 50 -tp 2 --batch-size 1-64 on A100, Avg latency (s), "
    "master and tuned-config lines"
)
H100_CITATION = (
    "vllm-project/vllm pull request #2542 (https://github.com/vllm-project/vllm/pull/2542): benchmark_latency "
    "Mixtral-8x7B-Instruct-v0.1 --input-len 1000 --output-len 50 -tp 8 --batch-size 1-64 on H100, fused MoE line (s)"
)
A100 = get_gpu("a100-80g-sxm")
H100 = get_gpu("h100-80g-sxm")
_BATCHES = (1, 2, 4, 8, 16, 32, 64)
# seconds at batch 1, 2, 4, 8, 16, 32, 64, transcribed from the pull requests
_A100_MASTER_S = (0.8453641083685216, 1.1280082573764958, 1.6140852882619947, 2.348028304380132, 3.5489811494306194,
                  5.627054951939499, 9.691197272467543)  # fmt: skip
_A100_TUNED_S = (0.7621450612053741, 1.0328856136795366, 1.4489717756788014, 2.0341408042260447, 2.893355064672651,
                 4.530912061399431, 7.537396909691161)  # fmt: skip
_H100_FUSED_S = (0.459, 0.515, 0.610, 0.813, 1.044, 1.489, 2.419)


def _row(source: str, cite: str, gpu: GpuSpec, tp: int, line: str, batch: int, seconds: float) -> ServingFirstContact:
    model = get_preset("mixtral-8x7b").model
    cfg = ServingConfig(input_tokens=1000, output_tokens=50, engine="vllm", in_process=True, precision="bf16")
    label = f"vllm-moe {source[9:]} mixtral-8x7b {line} batch {batch} 1000/50 benchmark_latency"
    tok_s = round(batch * 50 / seconds, 2)
    return ServingFirstContact(label, source, cite, model, gpu, tp, cfg, "output_tokens_per_s", tok_s, batch)


_LINES: tuple[tuple[str, str, GpuSpec, int, str, tuple[float, ...]], ...] = (
    ("vllm-moe-a100-tp2", A100_CITATION, A100, 2, "master", _A100_MASTER_S),
    ("vllm-moe-a100-tp2", A100_CITATION, A100, 2, "tuned", _A100_TUNED_S),
    ("vllm-moe-h100-tp8", H100_CITATION, H100, 8, "fused", _H100_FUSED_S),
)
VLLM_MOE_ROWS: tuple[ServingFirstContact, ...] = tuple(
    _row(source, cite, gpu, tp, line, batch, seconds)
    for source, cite, gpu, tp, line, times in _LINES
    for batch, seconds in zip(_BATCHES, times, strict=True)
)
