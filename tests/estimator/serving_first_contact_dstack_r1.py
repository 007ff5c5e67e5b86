"""First-contact rows of DeepSeek-R1 on one 8 x H200 server under SGLang, vLLM and TensorRT-LLM, each at a fixed
number of requests in flight (source `dstack-r1-h200` in tests/estimator/data/serving_first_contact.json;
tests/estimator/serving_first_contact.py says how first-contact rows are kept).

  [dstack-r1-h200] dstackai/benchmarks at 7f37e6697725e58dd09b9ef190b62ce19f01d45e, Deepseek-R1/raw_data/
               online_results.csv (one line per `bench_serving.py` run: the summary fields of SGLang's
               bench_serving, median_ttft_ms, median_tpot_ms, output_throughput), with the setup in Deepseek-R1/
               README.md at 209ca6f9c2f940314362d3e8dab59bf129a1a9a9 ("Evaluate DeepSeek-R1 Inference performance
               with SgLang, vLLM and TensorRT-LLM on 8xH200 and 8xMi300x"): "8x NVIDIA H200 SXM5 GPU, 141GB" in one
               server, deepseek-ai/DeepSeek-R1 (the DeepSeek-V3 architecture; block-FP8 weights, weight_block_size
               [128, 128]; MLA, 512 + 64 values cached per token and layer; the KV cache 16-bit, no engine was given a
               KV format), served by
                 SGLang "sglang: 0.4.3.post2": `python3 -m sglang.launch_server --model deepseek-ai/DeepSeek-R1
                   --tp 8 --trust-remote-code --enable-dp-attention` (DP attention over the 8 GPUs, defaults otherwise);
                 vLLM "0.7.4.dev181+gf35f8e22" (a nightly wheel over vllm/vllm-openai:v0.7.3,
                   VLLM_ATTENTION_BACKEND=FLASHMLA): `vllm serve deepseek-ai/DeepSeek-R1 --trust-remote-code
                   --tensor-parallel-size 8`, defaults otherwise;
                 TensorRT-LLM "0.17.post1.dev" (built at commit 9b931c0f): `trtllm-serve --backend pytorch
                   --max_batch_size 512 --max_num_tokens 16384 --max_seq_len 16384 --tp_size 8 --ep_size 4 --pp_size 1`
                   (expert parallel 4 inside TP 8: not modelled, the rows run as plain TP 8).
               Client: `bench_serving.py --backend <engine> --dataset-name random --num-prompts 500 --random-input 3200
               --random-output 800 --random-range-ratio 1 --max-concurrency C` (every request exactly 3,200 in and 800
               out: the CSV's totals are 1,600,000 and 400,000 over 500 completed; a closed loop of C in flight, all
               sent at once and each replaced when it finishes). Readings: median_ttft_ms, median_tpot_ms and
               output_throughput (tokens/s) at C = 4, 8, 16, 32 and 64, the estimate at that many requests in flight.
               Not read: C = 128 (vLLM's median TTFT jumps from 14.4 s at 64 to 82.8 s and its output throughput falls,
               TensorRT-LLM's mean TTFT from 4.2 s to 31.6 s: requests wait for a slot or KV cache, the queue of the
               closed loop), the MI300X lines (no such GPU in the catalog), the generated-shared-prefix runs (a prefix
               cache whose hit rate is not stated), the 1,600 / 3,200 / 6,400-token outputs (C = 128 only), and
               offline_results.csv (the TensorRT-LLM engine there is a bf16 checkpoint conversion; the SGLang and vLLM
               engine arguments of the modified benchmark_throughput.py were not read). vLLM 0.7.4, SGLang 0.4.3 and
               TensorRT-LLM 0.17 were not ENGINE_RELEASES entries at first contact: the rows ran as the current
               engines; the TensorRT-LLM rows run as release "trt-llm-0.17-pytorch" since (eager decode steps, no
               overlap scheduler), stated after first contact.
"""

from __future__ import annotations

from app.estimator.hardware import get_gpu
from app.estimator.presets import get_preset
from app.estimator.serving import ServingConfig
from app.estimator.vocabulary import Engine
from tests.estimator.serving_first_contact_row import Metric, ServingFirstContact

SOURCE = "dstack-r1-h200"
CITATION = (
    "dstackai/benchmarks at 7f37e6697725e58dd09b9ef190b62ce19f01d45e, Deepseek-R1/raw_data/online_results.csv "
    "(DeepSeek-R1 on 8 x H200 SXM5; SGLang 0.4.3.post2 --tp 8 --enable-dp-attention, vLLM 0.7.4.dev181 TP 8 FlashMLA, "
    "TensorRT-LLM 0.17 PyTorch backend TP 8; bench_serving random 3200 in / 800 out, range ratio 1, "
    "500 prompts, --max-concurrency C); setup in Deepseek-R1/README.md at 209ca6f9c2f940314362d3e8dab59bf129a1a9a9"
)
H200 = get_gpu("h200-141g-sxm")
DEEPSEEK_V3 = get_preset("deepseek-v3").model  # DeepSeek-R1 has the DeepSeek-V3 architecture


# The scheduler's token budget: trtllm-serve's `--max_num_tokens 16384`; vLLM 0.7's V0 engine ran MLA models without
# chunked prefill, its budget max(max_model_len, 2048) = 163,840 (DeepSeek-R1's max_position_embeddings, no
# --max-model-len given: serving/waves.py cites the code; stated after first contact, the rows were recorded on the
# current vLLM's 8,192-token chunks); SGLang's default.
_BUDGET: dict[str, int] = {"trt-llm": 16384, "vllm": 163840}


def _cfg(engine: Engine, concurrency: int) -> ServingConfig:
    trt = engine == "trt-llm"
    return ServingConfig(
        input_tokens=3200, output_tokens=800, concurrency=concurrency, engine=engine, precision="fp8", weights="fp8",
        kv_cache_precision="bf16",
        group_size=128 * 128,  # block FP8: weight_block_size [128, 128]
        mla_cache_values=512 + 64,  # config.json: kv_lora_rank 512, qk_rope_head_dim 64
        dp_attention=engine == "sglang",  # --enable-dp-attention
        max_num_seqs=512 if trt else None, max_num_batched_tokens=_BUDGET.get(engine),
        waves=True,  # fixed lengths, ignore_eos, C sent at once: the loop stays in waves (stated after first contact)
        # TensorRT-LLM 0.17's PyTorch backend launched without CUDA graphs or the overlap scheduler (ENGINE_RELEASES),
        # stated after first contact
        release="trt-llm-0.17-pytorch" if trt else None,
    )  # fmt: skip


_VERSIONS = {"sglang": "sglang-0.4.3", "vllm": "vllm-0.7.4", "trt-llm": "trtllm-0.17"}
_READINGS: dict[Metric, str] = {"ttft_ms": "ttft", "tpot_ms": "tpot", "output_tokens_per_s": "output"}


def _rows(engine: Engine, concurrency: int, ttft: float, tpot: float, tok_s: float) -> list[ServingFirstContact]:
    cfg = _cfg(engine, concurrency)
    name = f"dstack {_VERSIONS[engine]} deepseek-r1 h200 tp8 fp8 c{concurrency} 3200/800"
    values: dict[Metric, float] = {"ttft_ms": ttft, "tpot_ms": tpot, "output_tokens_per_s": tok_s}
    return [
        ServingFirstContact(f"{name} {_READINGS[m]}", SOURCE, CITATION, DEEPSEEK_V3, H200, 8, cfg, m, v)
        for m, v in values.items()
    ]


# (engine, C, median_ttft_ms, median_tpot_ms, output_throughput), transcribed from the CSV's h200 random 3200/800 lines
RUNS: tuple[tuple[Engine, int, float, float, float], ...] = (
    ("sglang", 4, 3556.20705, 43.14762804, 82.62628352),
    ("sglang", 8, 3967.199142, 43.48452974, 164.144702),
    ("sglang", 16, 7882.921541, 50.90542678, 256.254165),
    ("sglang", 32, 12904.80412, 61.18636742, 405.5433975),
    ("sglang", 64, 22600.89091, 76.49795418, 590.7787657),
    ("vllm", 4, 974.8834405, 25.73463239, 148.581247),
    ("vllm", 8, 1771.826166, 31.32708064, 237.589178),
    ("vllm", 16, 3388.584595, 49.75211769, 294.0662875),
    ("vllm", 32, 7686.501789, 51.99512878, 512.8554233),
    ("vllm", 64, 14419.03863, 64.41520109, 758.3782529),
    ("trt-llm", 4, 1038.458569, 55.11537776, 71.03764423),
    ("trt-llm", 8, 1855.813048, 55.85705891, 136.6643861),
    ("trt-llm", 16, 2739.214037, 57.57998727, 256.9385157),
    ("trt-llm", 32, 3470.01382, 65.50804512, 451.3424732),
    ("trt-llm", 64, 3561.952946, 82.62508863, 723.8971539),
)

DSTACK_R1_ROWS: tuple[ServingFirstContact, ...] = tuple(row for run in RUNS for row in _rows(*run))
