"""First-contact rows of SGLang 0.5.6 under closed-loop load from the SGLang cookbook: Llama 3.1 70B at TP 8 on
8 x A100 and DeepSeek-R1 at TP 8 on 8 x B200 (source `sgl-cookbook` in tests/estimator/data/serving_first_contact.json;
tests/estimator/serving_first_contact.py says how first-contact rows are kept). A source new to the repository: no
earlier serving row comes from sgl-project/sgl-cookbook, and no earlier row is a B200 serving run.

  [sgl-cookbook] sgl-project/sgl-cookbook at 7b5bd9c05e3d86da5161ac2be9b91c19a34bf49d (the SGLang cookbook,
               https://github.com/sgl-project/sgl-cookbook), section "5.1 Speed Benchmark" of two model pages, each run
               printed as the whole "Serving Benchmark Result" block of `python -m sglang.bench_serving` (the Llama page
               writes the client command as `sglang serve --backend sglang ...`, a slip for bench_serving: the flags and
               the printed block are bench_serving's):
                 docs/autoregressive/Llama/Llama3.1.md: "Hardware: NVIDIA A100 GPU (8x)", "Model: Meta-Llama/Llama-3.1-
                   70B", "Tensor Parallelism: 8", "sglang version: 0.5.6"; server `sglang serve --model-path
                   Meta-Llama/Llama-3.1-70B --tp 8` (engine defaults otherwise);
                 docs/autoregressive/DeepSeek/DeepSeek-R1.md: "Hardware: B200 GPU (8x)", "Model: DeepSeek-R1-0528",
                   "Tensor Parallelism: 8", "SGLang Version: 0.5.6.post1"; server `python -m sglang.launch_server
                   --model-path deepseek-ai/DeepSeek-R1-0528 --tp 8` (engine defaults otherwise: no DP attention, no
                   expert parallel).
               Client: `--dataset-name random --random-input-len I --random-output-len O --num-prompts 5C
               --max-concurrency C` (request rate inf: C requests sent at once, each replaced as it finishes, a closed
               loop of C in flight over 5C requests), scenarios "Chat"/"Standard" I/O = 1000/1000, "Summarization"
               8000/1000 and (DeepSeek only) "Reasoning" 1000/8000, at C = 1, 16 and 100 (64 for the 8,000-token
               scenarios). Readings: Median TTFT (ms), Median TPOT (ms) and Output token throughput (tok/s) of each
               block.
               Assumptions, decided before any row was run:
               - Lengths: the range ratio is bench_serving's default (no `--random-range-ratio` given), under which each
                 prompt and output length is drawn uniformly in [1, I] and [1, O]: the printed totals agree (1000/1000
                 at C = 100: 249,831 in and 252,662 out over 500, means 500 and 505; 8000-token prompts: means 3,750-
                 4,194). Each run's means are its totals ÷ its completed requests; the 95th percentile is that of the
                 uniform draw (950 or 7,600), read as lognormal by mean and 95th percentile as the simulation draws
                 lengths (the [datacrunch-h200] rows of serving_first_contact.py do the same). The outputs run to their
                 drawn length (bench_serving's random requests ignore EOS: both Llama runs of the same 10 draws print
                 4,220 generated tokens).
               - GPU: the Llama page does not give the A100's memory; read as the A100 80GB SXM (a100-80g-sxm: eight
                 SXM cards with NVLink and NVSwitch, the HGX/DGX A100 node). The 40GB SXM card has 1,555 against
                 2,039 GB/s of HBM, so this reading sets the decode step's weight stream. The B200 is the HGX B200's
                 (b200-180g-sxm; the cookbook's other B200 pages state "183GB each").
               - Formats: Llama 3.1 70B in bf16 (the checkpoint's dtype, no quantisation flag), KV cache 16-bit.
                 DeepSeek-R1-0528 is the DeepSeek-V3 architecture with block-FP8 weights (weight_block_size
                 [128, 128]; FP8 GEMMs), MLA caching 512 + 64 values per token and layer, KV cache 16-bit (SGLang's
                 `--kv-cache-dtype auto`, no flag given).
               - Load: each run is read as the estimate at C in flight (a closed loop's steady state). The runs are
                 short (five requests per slot), so their first wave arrives together and the loop drains at the end
                 (the printed mean concurrency: 13.5-14.3 of 16, 57-60 of 64, 90-92 of 100): the output throughput
                 counts that ramp and drain, the medians mostly the loop's middle. Lengths vary, so the loop is not
                 held in waves (`waves` stays off).
               - Prefix cache: SGLang's radix cache is on by default, but the random dataset's prompts are random
                 token ids, so no prompt finds another's prefix: no hit rate is stated.
               - Engine: SGLang 0.5.6 / 0.5.6.post1 is not an ENGINE_RELEASES entry: the rows run as the current SGLang,
                 its defaults (chunked prefill, CUDA graphs, the overlap scheduler, the server's cost per request).
               Not read: the mean, P99 and ITL lines (the medians are the figures the other first-contact rows
               compare), the pages' AMD sections, the other cookbook pages (MoE or hybrid models with no preset, or GPUs
               with none: MI300X/MI355X, GB200/GB300, H200 pages of models without a preset).
"""

from __future__ import annotations

from app.estimator.hardware import get_gpu
from app.estimator.presets import get_preset
from app.estimator.serving import ServingConfig
from app.estimator.specs import GpuSpec, ModelSpec
from tests.estimator.serving_first_contact_row import Metric, ServingFirstContact

SOURCE = "sgl-cookbook"
CITATION = (
    "sgl-project/sgl-cookbook at 7b5bd9c05e3d86da5161ac2be9b91c19a34bf49d, docs/autoregressive/Llama/Llama3.1.md and "
    "docs/autoregressive/DeepSeek/DeepSeek-R1.md, 5.1 Speed Benchmark (SGLang 0.5.6 / 0.5.6.post1, TP 8 on 8 x A100 / "
    "8 x B200; sglang.bench_serving random I/O, --num-prompts 5C --max-concurrency C; Median TTFT, Median TPOT, "
    "Output token throughput)"
)
A100_80G = get_gpu("a100-80g-sxm")
B200 = get_gpu("b200-180g-sxm")
LLAMA_70B = get_preset("llama-3.1-70b").model
DEEPSEEK_V3 = get_preset("deepseek-v3").model  # DeepSeek-R1-0528 has the DeepSeek-V3 architecture


def _cfg(deepseek: bool, isl: int, osl: int, totals: tuple[int, int, int], concurrency: int) -> ServingConfig:
    """One run's request: `totals` = (total input tokens, total generated tokens, completed requests) of its block;
    lengths uniform in [1, isl] and [1, osl] (range ratio 0), read by their means and 95th percentiles."""
    total_in, total_out, completed = totals
    lengths = {
        "input_tokens": round(total_in / completed), "output_tokens": round(total_out / completed),
        "input_tokens_p95": round(0.95 * isl), "output_tokens_p95": round(0.95 * osl),
    }  # fmt: skip
    if not deepseek:
        return ServingConfig(**lengths, concurrency=concurrency, engine="sglang", precision="bf16")
    return ServingConfig(
        **lengths, concurrency=concurrency, engine="sglang", precision="fp8", weights="fp8", kv_cache_precision="bf16",
        group_size=128 * 128,  # block FP8: weight_block_size [128, 128]
        mla_cache_values=512 + 64,  # config.json: kv_lora_rank 512, qk_rope_head_dim 64
    )  # fmt: skip


_READINGS: dict[Metric, str] = {"ttft_ms": "ttft", "tpot_ms": "tpot", "output_tokens_per_s": "output"}
Run = tuple[int, int, int, tuple[int, int, int], float, float, float]


def _rows(deepseek: bool, run: Run) -> list[ServingFirstContact]:
    isl, osl, concurrency, totals, ttft, tpot, tok_s = run
    model: ModelSpec = DEEPSEEK_V3 if deepseek else LLAMA_70B
    gpu: GpuSpec = B200 if deepseek else A100_80G
    cfg = _cfg(deepseek, isl, osl, totals, concurrency)
    name = (
        f"sgl-cookbook sglang-0.5.6.post1 deepseek-r1 b200 tp8 fp8 c{concurrency} random {isl}/{osl}"
        if deepseek
        else f"sgl-cookbook sglang-0.5.6 llama-3.1-70b a100 tp8 bf16 c{concurrency} random {isl}/{osl}"
    )
    values: dict[Metric, float] = {"ttft_ms": ttft, "tpot_ms": tpot, "output_tokens_per_s": tok_s}
    return [
        ServingFirstContact(f"{name} {_READINGS[m]}", SOURCE, CITATION, model, gpu, 8, cfg, m, v)
        for m, v in values.items()
    ]


# (I, O, C, (total input, total generated, completed), Median TTFT ms, Median TPOT ms, output tok/s), transcribed from
# the blocks of docs/autoregressive/Llama/Llama3.1.md
LLAMA_RUNS: tuple[Run, ...] = (
    (1000, 1000, 1, (6101, 4220, 10), 131.77, 18.63, 52.88),
    (1000, 1000, 16, (39668, 40805, 80), 147.02, 26.08, 513.48),
    (1000, 1000, 100, (249831, 252662, 500), 184.22, 48.67, 1919.38),
    (8000, 1000, 1, (41941, 4220, 10), 318.02, 18.81, 50.69),
    (8000, 1000, 16, (300020, 41669, 80), 531.82, 36.73, 389.00),
    (8000, 1000, 64, (1273893, 170000, 320), 616.38, 82.85, 788.27),
)
# the same fields from docs/autoregressive/DeepSeek/DeepSeek-R1.md
DEEPSEEK_RUNS: tuple[Run, ...] = (
    (1000, 1000, 1, (6101, 4210, 10), 140.76, 9.15, 105.24),
    (1000, 1000, 16, (39668, 40725, 80), 131.71, 17.46, 795.30),
    (1000, 1000, 100, (249831, 252162, 500), 147.62, 41.98, 2282.90),
    (1000, 8000, 1, (6101, 44452, 10), 126.19, 9.20, 108.07),
    (1000, 8000, 16, (39668, 318226, 80), 153.75, 15.59, 912.02),
    (1000, 8000, 64, (158939, 1300705, 320), 158.15, 26.72, 2207.16),
    (8000, 1000, 1, (41941, 4210, 10), 154.96, 9.27, 103.56),
    (8000, 1000, 16, (300020, 41589, 80), 189.59, 19.23, 733.41),
    (8000, 1000, 64, (1273893, 169680, 320), 224.92, 40.99, 1468.50),
)

SGL_COOKBOOK_ROWS: tuple[ServingFirstContact, ...] = (
    *(row for run in LLAMA_RUNS for row in _rows(False, run)),
    *(row for run in DEEPSEEK_RUNS for row in _rows(True, run)),
)
