"""First-contact rows of TensorRT-LLM's static-batch peak throughput, v0.5 to v0.7 (sources `trtllm-v061-peak` and
`trtllm-h200-blogs` in tests/estimator/data/serving_first_contact.json; tests/estimator/serving_first_contact.py says
how first-contact rows are kept).

  [trtllm-v061-peak] NVIDIA/TensorRT-LLM at 77d24b5fa178f11ed7fafdd9833b7245e075f721, docs/source/performance.md,
               "Peak Throughput" ("reference data at large batch sizes, representing high throughput offline tasks";
               "This data has been updated for v0.6.1, unless specified"): H100 GPUs (FP8) and A100 GPUs (FP16) from
               TensorRT-LLM v0.6.1, L40S GPUs (FP8) "from TensorRT-LLM v0.5", "Throughput (out tok/s/GPU)" at the
               stated "Batch Size", "TP", "Input Length" and "Output Length". The same file at 138f96d4 (the
               [trtllm-v05-ftl] rows, its "Low Latency" tables) labels the L40S and A100 columns "out tok/s"; this
               commit labels every column per GPU, which is how they are read (at TP 1 the two agree). Harness (the
               file's "Methodology"): `gptSessionBenchmark --warm_up 1 --duration 0 --num_runs 5 --batch_size B
               --input_output_len I,O`, a static batch: B prompts of exactly I tokens prefilled together, then decoded
               together for exactly O tokens; engines built with `--remove_input_padding --enable_context_fmha
               --use_gpt_attention_plugin float16`, on H100 and L40S also `--enable_fp8 --fp8_kv_cache` (FP8 weights,
               activations and KV cache; A100 in fp16 without them), `TRTLLM_ENABLE_XQA=1` for Llama2-70b.
               Throughput = O x B / the batch's latency / TP (the formula of docs/source/blogs/Falcon180B-H200.md):
               recorded here per replica, the table's per-GPU figure x TP, and compared with the estimate's output
               tokens/s of a static batch of B. Rows read: "LLaMA 7B" (Llama2-7b, the file's build command) and
               "LLaMA 70B" (Llama2-70b, 8 KV heads); not GPT-J 6B and Falcon 180B (no preset).
  [trtllm-h200-blogs] NVIDIA/TensorRT-LLM docs/source/blogs/H200launch.md at 1555478c1b417a0b34de05209862ea5a2ab9add1,
               "H200 FP8 Max throughput" ("TensorRT-LLM v0.5.0, TensorRT v9.1.0.4 | H200, H100 FP8"; "Largest batch
               supported on given TP configuration by power of 2"), llama_13b and llama_70b, and docs/source/blogs/
               Falcon180B-H200.md at 3c44cb974badec8966108b16054a99c0923e410d, "Llama-70B on H200 up to 6.7x A100"
               ("TensorRT-LLM v0.7a | Llama2-70B | 1xH200 = TP1 | FP8 | BS: (in order) 960, 960, 192, 560, 96, 640"),
               the 1-GPU rows only (the 8-GPU rows ran a "max TP/PP/DP config" the page does not state).
               "Throughput (out tok/s/GPU)", `out_tps=output_seqlen*batch_size/total_latency/tp` (Falcon180B-H200.md),
               recorded per replica as above. The same static-batch harness and FP8 build as [trtllm-v061-peak] (FP8
               weights, activations and KV cache: the FP8 recipe of that release's performance.md). H200 141GB SXM.
TensorRT-LLM 0.5 / 0.6.1 / 0.7 are not ENGINE_RELEASES entries: the rows run as the current TensorRT-LLM.
"""

from __future__ import annotations

from typing import Literal

from app.estimator.hardware import get_gpu
from app.estimator.presets import get_preset
from app.estimator.serving import ServingConfig
from app.estimator.specs import GpuSpec, ModelSpec
from tests.estimator.serving_first_contact_row import ServingFirstContact

PEAK_V061 = (
    "NVIDIA/TensorRT-LLM at 77d24b5fa178f11ed7fafdd9833b7245e075f721, docs/source/performance.md, Peak Throughput "
    "(H100 FP8 and A100 FP16 v0.6.1, L40S FP8 v0.5; gptSessionBenchmark static batch; out tok/s/GPU x TP)"
)
H200_BLOGS = (
    "NVIDIA/TensorRT-LLM docs/source/blogs/H200launch.md at 1555478c1b417a0b34de05209862ea5a2ab9add1 (H200 FP8 Max "
    "throughput, v0.5.0) and docs/source/blogs/Falcon180B-H200.md at 3c44cb974badec8966108b16054a99c0923e410d "
    "(Llama2-70B 1xH200 FP8, v0.7a); static batch; out tok/s/GPU x TP"
)
H100 = get_gpu("h100-80g-sxm")
H200 = get_gpu("h200-141g-sxm")
A100 = get_gpu("a100-80g-sxm")
L40S = get_gpu("l40s-48g")
LLAMA2 = {size: get_preset(f"llama-2-{size}").model for size in ("7b", "13b", "70b")}


def _peak(
    source: Literal["trtllm-v061-peak", "trtllm-h200-blogs"], gpu: GpuSpec, release: str, size: str, batch: int,
    tp: int, isl: int, osl: int, per_gpu: float,
) -> ServingFirstContact:  # fmt: skip
    """A static batch of `batch` prompts of `isl` tokens generating `osl` each at TP `tp`; the table's output
    tokens/s per GPU, recorded per replica (x tp). FP8 weights, activations and KV cache, fp16 on A100."""
    precision: Literal["fp16", "fp8"] = "fp16" if gpu is A100 else "fp8"
    cfg = ServingConfig(
        input_tokens=isl, output_tokens=osl, concurrency=batch, batching="static", engine="trt-llm",
        precision=precision, weights=precision, kv_cache_precision=precision,
        # the page's Llama builds hold a contiguous KV cache (ENGINE_RELEASES), stated after first contact; the
        # blogs do not state their build
        release="trt-llm-0.6" if source == "trtllm-v061-peak" else None,
    )  # fmt: skip
    model: ModelSpec = LLAMA2[size]
    label = f"trtllm-{release} llama-2-{size} {gpu.id.split('-')[0]} tp{tp} {precision} b{batch} {isl}/{osl} output"
    cite = PEAK_V061 if source == "trtllm-v061-peak" else H200_BLOGS
    return ServingFirstContact(label, source, cite, model, gpu, tp, cfg, "output_tokens_per_s", per_gpu * tp)


# (GPU, release, model size, batch, TP, input, output, out tok/s/GPU), transcribed from the tables
PEAK_LINES: tuple[tuple[GpuSpec, str, str, int, int, int, int, float], ...] = (
    (H100, "0.6.1", "7b", 768, 1, 128, 128, 19694.0),
    (H100, "0.6.1", "7b", 112, 1, 128, 2048, 6818.0),
    (H100, "0.6.1", "7b", 80, 1, 2048, 128, 2244.0),
    (H100, "0.6.1", "7b", 48, 1, 2048, 2048, 2740.0),
    (H100, "0.6.1", "70b", 1024, 2, 128, 128, 2657.0),
    (H100, "0.6.1", "70b", 480, 4, 128, 2048, 1486.0),
    (H100, "0.6.1", "70b", 96, 2, 2048, 128, 306.0),
    (H100, "0.6.1", "70b", 64, 2, 2048, 2048, 547.0),
    (L40S, "0.5", "7b", 64, 1, 128, 128, 3240.0),
    (L40S, "0.5", "7b", 64, 1, 128, 2048, 1622.0),
    (L40S, "0.5", "7b", 32, 1, 2048, 128, 581.0),
    (L40S, "0.5", "7b", 16, 1, 2048, 2048, 531.0),
    (A100, "0.6.1", "7b", 384, 1, 128, 128, 5586.0),
    (A100, "0.6.1", "7b", 60, 1, 128, 2048, 1928.0),
    (A100, "0.6.1", "7b", 52, 1, 2048, 128, 591.0),
    (A100, "0.6.1", "7b", 64, 2, 2048, 2048, 782.0),
    (A100, "0.6.1", "70b", 1280, 4, 128, 128, 670.0),
    (A100, "0.6.1", "70b", 240, 4, 128, 2048, 525.0),
    (A100, "0.6.1", "70b", 120, 4, 2048, 128, 79.0),
)  # fmt: skip

# (release, model size, batch, TP, input, output, out tok/s/GPU): H200launch.md (v0.5.0), Falcon180B-H200.md (v0.7a)
H200_LINES: tuple[tuple[str, str, int, int, int, int, float], ...] = (
    ("0.5", "13b", 1024, 1, 128, 128, 11819.0),
    ("0.5", "13b", 128, 1, 128, 2048, 4750.0),
    ("0.5", "13b", 64, 1, 2048, 128, 1349.0),
    ("0.5", "70b", 512, 1, 128, 128, 3014.0),
    ("0.5", "70b", 512, 2, 128, 2048, 1654.0),
    ("0.5", "70b", 64, 1, 2048, 128, 341.0),
    ("0.5", "70b", 32, 1, 2048, 128, 303.0),
    ("0.7a", "70b", 960, 1, 128, 128, 3803.0),
    ("0.7a", "70b", 192, 1, 128, 2048, 2941.0),
    ("0.7a", "70b", 96, 1, 128, 4096, 1946.0),
)  # fmt: skip

TRTLLM_STATIC_ROWS: tuple[ServingFirstContact, ...] = (
    *(_peak("trtllm-v061-peak", *line) for line in PEAK_LINES),
    *(_peak("trtllm-h200-blogs", H200, *line) for line in H200_LINES),
)
