"""First-contact rows of vLLM 0.8.5 under Poisson load on one H100 PCIe, one RTX 4090 and two H100 PCIe (source
`iog-vllm085` in tests/estimator/data/serving_first_contact.json; tests/estimator/serving_first_contact.py says how
first-contact rows are kept).

  [iog-vllm085] IOG-Foundation/llm-inference-benchmarks at 4990a807c6f1971edda635c18d98550059782eb8, results/
               vllm_200prompts<R>qps_<model>_sharegpt_<N>x<GPU>.json (each one `benchmark_serving.py --save-result`
               summary; the README's "Online Serving" tables print the same runs), with the setup in README.md,
               requirements.txt and run_benchmark.sh at that commit: vLLM 0.8.5 (`vllm==0.8.5` in requirements.txt;
               the README names the `vllm/vllm-openai:v0.8.5` image; its V1 engine: chunked prefill and prefix
               caching on by default), `vllm serve <model> --disable-log-requests --dtype float16
               --tensor-parallel-size <N>` (the README's launch; read as 16-bit weights, math and KV cache,
               gpu_memory_utilization 0.9, engine defaults otherwise), on io.net's cloud: "NVIDIA-H100-PCIe" (N = 1
               or 2) and "NVIDIA-GeForce-RTX-4090" (N = 1). Client: run_benchmark.sh, `benchmark_serving.py --backend
               vllm --dataset-name sharegpt --seed 42 --num-prompts 200 --request-rate R` (burstiness 1.0: Poisson
               arrivals) for R = 32, 16, 8, 4, 1 in that order against one server per model. Lengths: the summaries'
               total_input_tokens and total_output_tokens ÷ 200 (no per-request lengths are saved: taken constant at
               the means, as the gpustack rows are). Readings: median_ttft_ms and median_tpot_ms.
               Prefix cache: every read run came after the 32 requests/s run sent the same 200 prompts (seed 42) to
               the same server, and vLLM's V1 engine caches a finished prompt's full 16-token blocks, recomputing at
               least the last prompt token (vllm/v1/core/kv_cache_manager.py `get_computed_blocks`; llm-k8s rows in
               serving_first_contact.py show the same in their per-request TTFTs), so each prompt finds all but 1-16
               of its tokens cached: read as a hit rate of 1 - 8.5 / mean prompt tokens.
               Runs read: R = 1, 4 and 8 whose duration exceeds the arrival span (200 / R s) by at most 15 s (a drain
               of the last requests; the runs left out exceed it by 25 s or more: the server fell behind the offered
               rate, so their TTFT is a queue growing through the run). Models, read as the preset of their
               architecture: meta-llama/Meta-Llama-3-8B-Instruct (llama-3-8b), deepseek-ai/DeepSeek-R1-Distill-Llama-8B
               (Llama 3.1 8B shapes), DeepSeek-R1-Distill-Qwen-1.5B / -7B / -14B / -32B (Qwen2.5 1.5B / 7B / 14B /
               32B shapes), Qwen/QwQ-32B-Preview (Qwen2.5 32B), meta-llama/Meta-Llama-3-70B-Instruct (llama-3-70b, TP
               2). Not read: R = 16 and 32 (200 arrivals over 12.5 s and 6.25 s: mostly the ramp and the drain), the
               runs on 2, 4 and 8 x RTX 4090 (their TTFT falls as the rate rises, 6.9 s at 1 request/s to 0.2 s at 8
               for the Llama 8B distill on 4 GPUs, which the source does not explain), the second summary line of the
               files holding two runs (the first is read), AceMath-7B, gemma-2-9b-it, phi-4 and the FP8 Nemotron 70B
               (not read for lack of time, no preset, or a checkpoint format not checked here). Recorded running as the
               current vLLM; after first contact they run as ENGINE_RELEASES "vllm-0.8" (the V1 engine before 0.10:
               its server's cost per request, which these rows sized, so they are fitted since).
"""

from __future__ import annotations

from app.estimator.hardware import get_gpu
from app.estimator.presets import get_preset
from app.estimator.serving import ServingConfig
from app.estimator.specs import GpuSpec, ModelSpec
from tests.estimator.serving_first_contact_row import Metric, ServingFirstContact

SOURCE = "iog-vllm085"
CITATION = (
    "IOG-Foundation/llm-inference-benchmarks at 4990a807c6f1971edda635c18d98550059782eb8, results/"
    "vllm_200prompts<R>qps_<model>_sharegpt_<N>x<GPU>.json (vLLM 0.8.5, benchmark_serving.py sharegpt seed 42, 200 "
    "prompts, Poisson at R requests/s; median_ttft_ms, median_tpot_ms); setup in README.md, run_benchmark.sh"
)
H100_PCIE = get_gpu("h100-80g-pcie")
RTX4090 = get_gpu("rtx4090-24g")
# the source's model (short name) -> the preset of its architecture
PRESET_OF = (
    ("llama-3-8b", "llama-3-8b"), ("r1-llama-8b", "llama-3.1-8b"), ("r1-qwen-1.5b", "qwen2.5-1.5b"),
    ("r1-qwen-7b", "qwen2.5-7b"), ("r1-qwen-14b", "qwen2.5-14b"), ("r1-qwen-32b", "qwen2.5-32b"),
    ("qwq-32b", "qwen2.5-32b"), ("llama-3-70b", "llama-3-70b"),
)  # fmt: skip
MODELS: dict[str, ModelSpec] = {name: get_preset(preset).model for name, preset in PRESET_OF}
# tokens vLLM recomputes of a prompt found in its prefix cache: 1 to 16 (the last block's share), 8.5 on average
UNCACHED_TOKENS = 8.5


def _row(
    model: str, gpu: GpuSpec, tp: int, rate: float, lengths: tuple[int, int], metric: Metric, ms: float
) -> ServingFirstContact:
    total_in, total_out = lengths
    mean_in = total_in / 200
    cfg = ServingConfig(
        input_tokens=round(mean_in), output_tokens=round(total_out / 200), requests_per_s=rate, peak_factor=1.0,
        engine="vllm", precision="fp16", prefix_cache_hit_rate=round(1.0 - UNCACHED_TOKENS / mean_in, 4),
        release="vllm-0.8",  # the V1 engine's server before 0.10 (ENGINE_RELEASES), stated after first contact
    )  # fmt: skip
    reading = "ttft" if metric == "ttft_ms" else "tpot"
    label = f"iog vllm-0.8.5 {model} {gpu.id.split('-')[0]} tp{tp} sharegpt {rate:g} rps {reading}"
    return ServingFirstContact(label, SOURCE, CITATION, MODELS[model], gpu, tp, cfg, metric, ms)


# (model, GPU, TP, requests/s, (total input, total output tokens), median_ttft_ms, median_tpot_ms), transcribed from
# the summaries (rounded to 0.01 ms)
RUNS: tuple[tuple[str, GpuSpec, int, float, tuple[int, int], float, float], ...] = (
    ("llama-3-8b", H100_PCIE, 1, 1.0, (41169, 40344), 20.36, 10.64),
    ("llama-3-8b", H100_PCIE, 1, 4.0, (41169, 40359), 21.65, 10.99),
    ("llama-3-8b", H100_PCIE, 1, 8.0, (41169, 40359), 22.73, 11.80),
    ("llama-3-8b", RTX4090, 1, 1.0, (41169, 40351), 43.50, 19.45),
    ("llama-3-8b", RTX4090, 1, 4.0, (41169, 40382), 50.02, 22.56),
    ("llama-3-8b", RTX4090, 1, 8.0, (41169, 40351), 60.99, 26.87),
    ("r1-llama-8b", H100_PCIE, 1, 1.0, (41169, 42322), 20.59, 10.63),
    ("r1-llama-8b", H100_PCIE, 1, 4.0, (41169, 42322), 22.48, 11.05),
    ("r1-llama-8b", H100_PCIE, 1, 8.0, (41169, 42322), 22.35, 11.79),
    ("r1-llama-8b", RTX4090, 1, 1.0, (41169, 42743), 39.85, 19.24),
    ("r1-llama-8b", RTX4090, 1, 4.0, (41169, 42743), 49.67, 22.62),
    ("r1-llama-8b", RTX4090, 1, 8.0, (41169, 42328), 60.23, 26.90),
    ("r1-qwen-1.5b", H100_PCIE, 1, 1.0, (41650, 43074), 10.69, 4.07),
    ("r1-qwen-1.5b", H100_PCIE, 1, 4.0, (41650, 43074), 10.78, 4.16),
    ("r1-qwen-1.5b", H100_PCIE, 1, 8.0, (41650, 43074), 10.86, 4.28),
    ("r1-qwen-1.5b", RTX4090, 1, 1.0, (41650, 43065), 18.70, 11.42),
    ("r1-qwen-1.5b", RTX4090, 1, 4.0, (41650, 43074), 21.08, 11.62),
    ("r1-qwen-1.5b", RTX4090, 1, 8.0, (41650, 43065), 22.74, 12.12),
    ("r1-qwen-7b", H100_PCIE, 1, 1.0, (41650, 43630), 20.17, 10.11),
    ("r1-qwen-7b", H100_PCIE, 1, 4.0, (41650, 43500), 21.08, 10.37),
    ("r1-qwen-7b", H100_PCIE, 1, 8.0, (41650, 43344), 22.36, 10.96),
    ("r1-qwen-7b", RTX4090, 1, 1.0, (41650, 43453), 33.86, 17.90),
    ("r1-qwen-7b", RTX4090, 1, 4.0, (41650, 43541), 39.28, 20.25),
    ("r1-qwen-7b", RTX4090, 1, 8.0, (41650, 43550), 44.79, 21.94),
    ("r1-qwen-14b", H100_PCIE, 1, 1.0, (41650, 41704), 35.05, 19.58),
    ("r1-qwen-14b", H100_PCIE, 1, 4.0, (41650, 41704), 36.26, 20.18),
    ("r1-qwen-14b", H100_PCIE, 1, 8.0, (41650, 41704), 38.21, 20.87),
    ("r1-qwen-32b", H100_PCIE, 1, 1.0, (41650, 42266), 82.29, 41.32),
    ("qwq-32b", H100_PCIE, 1, 1.0, (40991, 38940), 81.60, 41.55),
    ("llama-3-70b", H100_PCIE, 2, 1.0, (41169, 35753), 110.79, 53.10),
)

IOG_ROWS: tuple[ServingFirstContact, ...] = tuple(
    row
    for model, gpu, tp, rate, lengths, ttft, tpot in RUNS
    for row in (
        _row(model, gpu, tp, rate, lengths, "ttft_ms", ttft),
        _row(model, gpu, tp, rate, lengths, "tpot_ms", tpot),
    )
)
