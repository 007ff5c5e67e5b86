"""First-contact rows of vLLM 0.6.2 under Poisson load on one A10: the non-disaggregated baseline of Mooncake's vLLM
benchmark (source `mooncake-vllm-a10` in tests/estimator/data/serving_first_contact.json;
tests/estimator/serving_first_contact.py says how first-contact rows are kept).

  [mooncake-vllm-a10] kvcache-ai/Mooncake doc/en/vllm-benchmark-results-v0.1.md at
               c9fad6c84305e595e498b46ed69b02b247285062 ("Benchmark performance on NVIDIA A10"), the "Non-disaggregated"
               rows (one vLLM server, no KV transfer), with the setup of doc/en/vllm-integration-v0.1.md at
               80fcb1ab0636ea47c434fff7fd3c7767766074af: vLLM v0.6.2 (kvcache-ai/vllm `mooncake-integration`, "based on
               PR 8498 (vllm version: v0.6.2)"), `python3 -m vllm.entrypoints.openai.api_server --model
               Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4 --max-model-len 10000 --gpu-memory-utilization 0.95`, no tensor
               parallelism ("option --tensor_parallel_size is not supported"), one NVIDIA A10 (24 GB) per server.
               Engine defaults otherwise: chunked prefill off (v0.6.2 enables it by default only above 32K tokens of
               context; the page's "with --enable-chunked-prefill" rows are not read: its token budget is not stated),
               prefix caching off, CUDA graphs on. GPTQ int4 weights (group 128, the checkpoint's quantize_config), fp16
               math and KV cache. Client: `benchmark_serving.py --backend vllm --dataset-name sonnet --sonnet-input-len
               1024|256 --sonnet-output-len 6 --sonnet-prefix-len 50 --num-prompts 200 --request-rate R` (Poisson
               arrivals): 202,314 / 49,054 input tokens over 200 requests (means 1,012 and 245, taken constant: sonnet
               prompts are built to the requested length) and exactly 1,200 output tokens (6 each). Readings: Median
               TTFT (ms) and Median TPOT (ms) (the 5 tokens after the first) at 2 requests/s for 1,024-token prompts
               and at 2, 4, 6 and 8 requests/s for 256-token prompts; every run completes its 200 requests at the
               offered rate (2.02-8.02 requests/s), its lifetimes well under a second. vLLM 0.6.2 is not an
               ENGINE_RELEASES entry: the rows run as the current vLLM (whose scheduler mixes prefill chunks into
               decode steps, where v0.6.2 without chunked prefill runs a prompt's prefill as a step of its own).
"""

from __future__ import annotations

from app.estimator.hardware import get_gpu
from app.estimator.presets import get_preset
from app.estimator.serving import ServingConfig
from tests.estimator.serving_first_contact_row import Metric, ServingFirstContact

SOURCE = "mooncake-vllm-a10"
CITATION = (
    "kvcache-ai/Mooncake at c9fad6c84305e595e498b46ed69b02b247285062, doc/en/vllm-benchmark-results-v0.1.md "
    "(Non-disaggregated rows; vLLM v0.6.2, Qwen2.5-7B-Instruct-GPTQ-Int4, 1 x A10, benchmark_serving.py sonnet, "
    "200 prompts, output 6); launch in doc/en/vllm-integration-v0.1.md at 80fcb1ab0636ea47c434fff7fd3c7767766074af"
)
A10 = get_gpu("a10-24g")
QWEN25_7B = get_preset("qwen2.5-7b").model


def _row(prompt: int, rate: float, metric: Metric, ms: float) -> ServingFirstContact:
    cfg = ServingConfig(
        input_tokens=prompt, output_tokens=6, requests_per_s=rate, peak_factor=1.0, engine="vllm", precision="fp16",
        weights="int4", group_size=128, max_model_len=10000, gpu_memory_utilization=0.95,
    )  # fmt: skip
    reading = "ttft" if metric == "ttft_ms" else "tpot"
    label = f"mooncake vllm-0.6.2 qwen2.5-7b-gptq-int4 a10 tp1 sonnet {prompt}/6 {rate:g} rps {reading}"
    return ServingFirstContact(label, SOURCE, CITATION, QWEN25_7B, A10, 1, cfg, metric, ms)


# (mean prompt tokens, requests/s, Median TTFT ms, Median TPOT ms): the page's "Non-disaggregated" rows
RUNS: tuple[tuple[int, float, float, float], ...] = (
    (1012, 2.0, 282.00, 17.10),
    (245, 2.0, 55.86, 12.19),
    (245, 4.0, 64.54, 12.27),
    (245, 6.0, 74.35, 16.11),
    (245, 8.0, 88.21, 24.63),
)

MOONCAKE_ROWS: tuple[ServingFirstContact, ...] = tuple(
    row
    for prompt, rate, ttft, tpot in RUNS
    for row in (_row(prompt, rate, "ttft_ms", ttft), _row(prompt, rate, "tpot_ms", tpot))
)
