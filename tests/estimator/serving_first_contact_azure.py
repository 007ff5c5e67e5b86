"""First-contact rows of TensorRT-LLM 0.15 offline throughput on Azure ND H100 v5 and ND H200 v5 (source
`azure-trtllm015-throughput` in tests/estimator/data/serving_first_contact.json;
tests/estimator/serving_first_contact.py says how first-contact rows are kept). A source new to the repository: no
earlier serving row comes from Azure's AI benchmarking guide, from TensorRT-LLM 0.15, or from an engine built once
for one length pair and run on others.

  [azure-trtllm015-throughput] Azure AI Benchmarking Guide as kept in samuel-bohman/AI-benchmarking-guide at
               2b25b6966d7a14de809214e8b37b1b1e74d4e0e0 (a fork carrying Azure/AI-benchmarking-guide's history; the
               tables were written in its commits 26d18e9 .. 81e939b of 2024-12-12/13 and are unchanged since but
               for their headings), Azure_Results/ND_H100_v5_results.md ("NVIDIA H100 80GB HBM3": ND H100 v5, 8 x H100
               SXM with NVLink) and Azure_Results/ND_H200_v5_results.md ("NVIDIA H200 141GB": ND H200 v5), section
               "End-to-End Inference Workloads - TensorRT-LLM", tables "throughput(tokens/sec)" for LLAMA 3.1 (8B) at
               tp size 1 and for the 70B and 405B at tp size 8, "with FP8 quantization, 1000 requests", input/output
               lengths 128/128, 128/1024, 128/2048, 500/2000, 1024/1024, 2048/2048. The harness at that time
               (Benchmarks/NVIDIA/LLMBenchmark.py at 26d18e9458bb07bd43e3eda7aec8653aa592f2ec, "added trtllm-bench";
               requirements.txt `tensorrt_llm==0.15.0`, TensorRT-LLM checked out at v0.15.0; config.json of that
               commit: meta-llama/Llama-3.1-8B / -70B / -405B, num_requests 1000, precision "FP8"):
               `prepare_dataset.py token-norm-dist --num-requests 1000 --input-mean I --output-mean O --input-stdev=0
               --output-stdev=0` (every request exactly I in, O out), then ONE engine per model, `trtllm-bench build
               --tp_size N --dataset <the dataset of largest I + O, 2048/2048> --quantization FP8`, then for each length
               pair `trtllm-bench throughput --dataset <I/O dataset> --engine_dir <that engine>` (all 1,000 requests
               queued at once: a finite offline run, ramp and drain included). The table's figure is the report's
               "Token Throughput (tokens/sec)" (extract_benchmark_info), which trtllm-bench of that line computes as
               total_output_tokens / total_latency_s (tensorrt_llm/bench/benchmark, the PERFORMANCE OVERVIEW block):
               output tokens/s, read as such (the guide's README speaks of input and output tokens; the harness
               reads the report's output figure). Build of that line (tensorrt_llm/bench/build/build.py,
               `get_benchmark_engine_settings`): FP8 runs `calc_engine_setting` on the dataset's average lengths (here
               2,048 / 2,048 for all six runs), "If the quantization is FP8, force the KV cache dtype to FP8", paged
               and FP8 context FMHA; max batch size and max tokens a step are read as
               serving_first_contact.v017_build_settings gives them for 2,048 / 2,048 (the same heuristic, one byte a
               parameter and a KV value, 0.95 of the rest) -- assumed, not checked against the v0.15.0 tag. The
               engine is a TensorRT engine run by the C++ executor (release "trt-llm-0.14" of ENGINE_RELEASES: that
               loop, no one-step lookahead; the overlap scheduler is the PyTorch backend's, used from v0.19). Models:
               Llama 3.1 8B / 70B / 405B shapes (the H200 tables' headings say "LLAMA 3" for 70B and 405B; the config
               names Llama-3.1, same shapes). Not read: the tables' earlier static-batch versions (2024-09, other
               tool), the MI300X / GB200 / A100 files.
"""

from __future__ import annotations

from collections.abc import Callable

from app.estimator.hardware import get_gpu
from app.estimator.presets import get_preset
from app.estimator.serving import ServingConfig
from app.estimator.specs import GpuSpec, ModelSpec
from tests.estimator.serving_first_contact_row import ServingFirstContact

SOURCE = "azure-trtllm015-throughput"
CITATION = (
    "samuel-bohman/AI-benchmarking-guide (Azure AI Benchmarking Guide) at 2b25b6966d7a14de809214e8b37b1b1e74d4e0e0, "
    "Azure_Results/ND_H100_v5_results.md and ND_H200_v5_results.md, End-to-End Inference Workloads - TensorRT-LLM "
    "(tensorrt_llm 0.15.0, trtllm-bench throughput, FP8, 1000 requests of exact lengths; one engine per model built "
    "from the 2048/2048 dataset; Token Throughput = output tokens/s)"
)
REQUESTS = 1000
BUILD_LENGTHS = (2048, 2048)  # the dataset of largest input + output: the one `trtllm-bench build` saw
LENGTHS = ((128, 128), (128, 1024), (128, 2048), (500, 2000), (1024, 1024), (2048, 2048))
BuildSettings = Callable[[ModelSpec, GpuSpec, int, int, int, bool], tuple[int, int]]

# (GPU, preset, TP, tokens/s in LENGTHS order), as the tables state them (whole tokens/s)
COLUMNS: tuple[tuple[str, str, int, tuple[float, ...]], ...] = (
    ("h100-80g-sxm", "llama-3.1-8b", 1, (15163, 17075, 15014, 13047, 11724, 8026)),
    ("h100-80g-sxm", "llama-3.1-70b", 8, (10032, 13345, 12910, 11594, 9125, 7908)),
    ("h100-80g-sxm", "llama-3.1-405b", 8, (2515, 3417, 3434, 3143, 2422, 1973)),
    ("h200-141g-sxm", "llama-3.1-8b", 1, (17853, 23880, 21255, 18357, 15043, 9736)),
    ("h200-141g-sxm", "llama-3.1-70b", 8, (11973, 18369, 18219, 15911, 11302, 10371)),
    ("h200-141g-sxm", "llama-3.1-405b", 8, (3148, 4981, 5098, 4447, 3050, 2859)),
)  # fmt: skip


def azure_rows(build_settings: BuildSettings) -> tuple[ServingFirstContact, ...]:
    """The rows, each engine's limits from `build_settings` (serving_first_contact.v017_build_settings) for the
    2,048 / 2,048 dataset it was built from."""
    rows = []
    for gpu_id, preset, tp, values in COLUMNS:
        gpu, model = get_gpu(gpu_id), get_preset(preset).model
        batch, tokens = build_settings(model, gpu, tp, *BUILD_LENGTHS, True)
        for (isl, osl), tok_s in zip(LENGTHS, values, strict=True):
            cfg = ServingConfig(
                input_tokens=isl, output_tokens=osl, engine="trt-llm", precision="fp8", weights="fp8",
                kv_cache_precision="fp8", max_num_seqs=batch, max_num_batched_tokens=tokens, release="trt-llm-0.14",
            )  # fmt: skip
            label = f"azure trtllm-0.15 {preset} {gpu_id.split('-')[0]} tp{tp} fp8 {isl}/{osl} offline output"
            rows.append(ServingFirstContact(label, SOURCE, CITATION, model, gpu, tp, cfg, "output_tokens_per_s",
                                            float(tok_s), REQUESTS))  # fmt: skip
    return tuple(rows)
