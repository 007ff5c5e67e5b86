"""First-contact rows of current engines under load: AccelMark's SGLang 0.5.6 and vLLM 0.20.1 runs on A100 (source
`accelmark-a100` in tests/estimator/data/serving_first_contact.json; tests/estimator/serving_first_contact.py says how
first-contact rows are kept).

  [accelmark-a100] FreedomIntelligence/AccelMark at 6d41f8aa61b18303efd3f889863cb5648a3601e4, results/<run>/<scenario>/
               result.json, four runs of the project's own harness (loadgen/loadgen.py, runners/benchmark_runner.py):
               SGLang 0.5.6 (runners/nvidia_sglang_c43a8309) serving meta-llama/Meta-Llama-3-70B-Instruct at TP 8 on
               8 x "NVIDIA A100-SXM4-40GB" (NV12 between every pair; suite_B, 2026-05-07) and Meta-Llama-3-8B-Instruct
               on one "NVIDIA A100-SXM4-80GB" (suite_A, 2026-05-09) and one "NVIDIA A800-SXM4-80GB" (suite_A,
               2026-05-07; at TP 1 the A800 is the A100 80GB SXM4: same GA100, HBM2e and clocks, only NVLink is cut,
               read as a100-80g-sxm), and vLLM 0.20.1 (runners/nvidia_vllm020_0f6c56e4, the V1 engine) serving the 8B
               on one A100-SXM4-80GB (suite_A, verified, 2026-05-18). bf16, greedy, EOS honoured, context 4,096
               (suites/suite_A|B/suite.json `max_model_len`); the engines run in the harness's own process (SGLang's
               `sgl.Engine` with mem_fraction_static 0.88 and CUDA graphs, vLLM's `AsyncLLMEngine` / `LLM` with
               gpu_memory_utilization 0.90), no HTTP server in front; engine defaults otherwise, so the prefix cache is
               on (SGLang's radix cache, vLLM V1's prefix caching). The clock (runners/<runner>/runner.py
               `inference_fn_streaming`) starts after the harness has put the prompt through the chat template
               (runners/benchmark_runner.py `format_prompt`) and before it hands the text to the engine
               (`AsyncLLMEngine.generate`, `Engine.async_generate`): no HTTP and no chat template in it, the engine's
               own tokenising, hand-off and detokenising still in it. Every row states the run in process
               (`in_process`), so no server cost per request is charged (stated after first contact; the part an
               in-process caller still pays is not sized).
               Prompts: datasets/sharegpt_standard_v1/requests.jsonl in file order through the tokenizer's chat
               template (`input_tokens` per line; the template's few tokens are not counted): the first 300 (suite_A
               online: mean 240, 95th percentile 523), 200 (suite_B online: 238, 523), 150 (suite_A interactive: 236,
               519), 50 (suite_B interactive: 229, 479) or 100 (sustained and offline: 245, 535). Outputs: SGLang's
               streaming path caps max_new_tokens at 224 (runner.py `inference_fn_streaming`), so its online,
               interactive and sustained requests generate 189 tokens on average (the sustained samples' tokens_out ÷
               requests_completed: 188.6-189.0 on all three SGLang runs), 95th percentile the cap; vLLM's and the
               offline paths cap at 512 (suite `output_tokens_max`): 346 on average (vLLM's sustained samples 345.7; the
               offline runs' throughput x elapsed ÷ 100: 344-352), 95th percentile the cap. Read as lognormal by mean
               and 95th percentile.
               The prefix cache: every scenario sends the same prompts more than once (three timed passes, after warmup
               requests drawn from the same list; sustained and offline cycle 100 prompts), so from the second pass on
               a prompt finds itself cached: all but the last token under SGLang (page size 1: 99.6 % of the prompt
               tokens) and its full 16-token blocks short of the last token under vLLM (96.6 %), computed from the
               `input_tokens` of the 300 online prompts (the other sets within 0.3 points). The pooled median is then
               a cached request's (two passes of three, and every timed request of sustained and offline), so every
               row states the cache.
               Readings:
               - interactive: one request at a time (loadgen `_run_interactive_async`), 3 passes pooled, ttft_ms_p50
                 and tpot_ms_p50 (per request (total - first token) ÷ (output - 1)): one request in flight.
               - online: Poisson arrivals at target_qps (`_run_online_async`: random.expovariate), 3 runs of the
                 online prompts, pooled ttft_ms_p50 and tpot_ms_p50. Read only where the run's arrivals span at least
                 three request lifetimes (n ÷ qps against the published TTFT + mean output x TPOT): suite_B at 2 and 5
                 requests/s (20 and 6.5 lifetimes), suite_A at 5 (13-24); not 10 and 25 (suite_B: 2.2 and under 1) nor
                 25 and 100 (suite_A: 1.5-2.1 and under 1), whose runs are mostly their ramp and drain.
               - sustained: a closed loop of `sustained_concurrency` requests in flight (8 for suite_A, 4 for suite_B)
                 for 30 minutes, the first 2 discarded: the median over the 28 one-minute samples of ttft_ms_p50, and
                 `sustained_throughput_tokens_per_sec` (output tokens/s).
               - offline: all 100 prompts at once (`_run_offline`, one warmup pass first), output tokens/s at
                 client_concurrency 8 (32 and 128 read the same: the client sends everything at once), a finite run.
"""

from __future__ import annotations

from typing import Literal

from app.estimator.hardware import get_gpu
from app.estimator.presets import get_preset
from app.estimator.serving import ServingConfig
from app.estimator.specs import GpuSpec, ModelSpec
from tests.estimator.serving_first_contact_row import Metric, ServingFirstContact

SOURCE = "accelmark-a100"
CITATION = (
    "FreedomIntelligence/AccelMark at 6d41f8aa61b18303efd3f889863cb5648a3601e4, results/community/"
    "nvidia_a100_sxm4_40gbx8_suite_B_nvidia_sglang_c43a8309_40a62dd1, nvidia_a100_sxm4_80gbx1_suite_A_nvidia_sglang_"
    "c43a8309_b14c1ebc, nvidia_a800_sxm4_80gbx1_suite_A_nvidia_sglang_c43a8309_93928a91, results/verified/"
    "nvidia_a100_sxm4_80gbx1_suite_A_nvidia_vllm020_0f6c56e4_8f83bfab (<scenario>/result.json: interactive, online, "
    "sustained, offline; SGLang 0.5.6, vLLM 0.20.1, in-process engines, bf16)"
)
A100_40G = get_gpu("a100-40g-sxm")
A100_80G = get_gpu("a100-80g-sxm")
LLAMA3_8B = get_preset("llama-3-8b").model
LLAMA3_70B = get_preset("llama-3-70b").model

Engine = Literal["sglang", "vllm"]
# Share of each prompt's tokens found cached (see above): SGLang's radix cache, page size 1; vLLM's full 16-token blocks
CACHED = {"sglang": 0.996, "vllm": 0.966}
# (mean, 95th percentile) output tokens: SGLang's streaming path (cap 224) and the 512-token cap elsewhere
STREAM_OUT = {"sglang": (189, 224), "vllm": (346, 512)}
OFFLINE_OUT = (346, 512)
# (mean, 95th percentile) prompt tokens of the prompt sets
ONLINE_A, ONLINE_B = (240, 523), (238, 523)
INTERACTIVE_A, INTERACTIVE_B = (236, 519), (229, 479)
FIRST_100 = (245, 535)
MEM_FRACTION = {"sglang": 0.88, "vllm": 0.90}  # runner.py: mem_fraction_static 0.88; gpu_memory_utilization 0.90


def _cfg(engine: Engine, prompt: tuple[int, int], out: tuple[int, int], **load: float | int | None) -> ServingConfig:
    return ServingConfig(
        input_tokens=prompt[0], output_tokens=out[0], input_tokens_p95=prompt[1], output_tokens_p95=out[1],
        engine=engine, precision="bf16", max_model_len=4096, gpu_memory_utilization=MEM_FRACTION[engine],
        prefix_cache_hit_rate=CACHED[engine], in_process=True, **load,  # type: ignore[arg-type]
    )  # fmt: skip


def _run(
    name: str, engine: Engine, model: ModelSpec, gpu: GpuSpec, tp: int, suite: Literal["A", "B"],
    interactive: tuple[float, float], online: tuple[tuple[float, float, float], ...],
    sustained: tuple[float, float], offline_tok_s: float,
) -> list[ServingFirstContact]:  # fmt: skip
    """One AccelMark run's rows: interactive (TTFT, TPOT at one in flight), online ((requests/s, TTFT, TPOT) at each
    rate read), sustained (TTFT and output tokens/s at 8 or 4 in flight) and offline (output tokens/s, 100 at once)."""
    stream = STREAM_OUT[engine]
    prefix = f"accelmark {name} {model.name} {gpu.id.split('-sxm')[0]} tp{tp}"
    closed = 8 if suite == "A" else 4

    def row(label: str, cfg: ServingConfig, metric: Metric, value: float, requests: int | None = None):
        return ServingFirstContact(f"{prefix} {label}", SOURCE, CITATION, model, gpu, tp, cfg, metric, value, requests)

    one = _cfg(engine, INTERACTIVE_A if suite == "A" else INTERACTIVE_B, stream, concurrency=1)
    loop = _cfg(engine, FIRST_100, stream, concurrency=closed)
    rows = [
        row("interactive c1 ttft", one, "ttft_ms", interactive[0]),
        row("interactive c1 tpot", one, "tpot_ms", interactive[1]),
    ]
    for rate, ttft, tpot in online:
        cfg = _cfg(engine, ONLINE_A if suite == "A" else ONLINE_B, stream, requests_per_s=rate, peak_factor=1.0)
        rows += [
            row(f"online {rate:g} rps ttft", cfg, "ttft_ms", ttft),
            row(f"online {rate:g} rps tpot", cfg, "tpot_ms", tpot),
        ]
    offline = _cfg(engine, FIRST_100, OFFLINE_OUT, max_num_seqs=512 if engine == "vllm" else None)
    rows += [
        row(f"sustained c{closed} ttft", loop, "ttft_ms", sustained[0]),
        row(f"sustained c{closed} output", loop, "output_tokens_per_s", sustained[1]),
        row("offline 100 at once output", offline, "output_tokens_per_s", offline_tok_s, 100),
    ]  # fmt: skip
    return rows


ACCELMARK_ROWS: tuple[ServingFirstContact, ...] = (
    *_run("sglang-0.5.6", "sglang", LLAMA3_70B, A100_40G, 8, "B", (72.21, 18.52),
          ((2, 92.29, 25.88), (5, 96.6, 32.04)), (93.25, 182.0), 2234.48),
    *_run("sglang-0.5.6", "sglang", LLAMA3_8B, A100_80G, 1, "A", (29.64, 11.01),
          ((5, 41.3, 12.84),), (39.25, 664.0), 3826.14),
    *_run("sglang-0.5.6 a800", "sglang", LLAMA3_8B, A100_80G, 1, "A", (31.14, 11.0),
          ((5, 40.79, 12.88),), (40.0, 664.1), 3808.98),
    *_run("vllm-0.20.1", "vllm", LLAMA3_8B, A100_80G, 1, "A", (27.78, 10.77),
          ((5, 40.2, 13.21),), (34.5, 712.3), 3871.19),
)  # fmt: skip
