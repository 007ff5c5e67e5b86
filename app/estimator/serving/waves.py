"""A closed loop of identical requests that stays in waves (`ServingConfig.waves`): the operating point of `clients`
requests in flight when every request has the same prompt and output length and the clients start together.

A benchmark client at a fixed number in flight with fixed lengths (SGLang's bench_serving and vLLM's benchmark_serving
with `--dataset-name random --random-range-ratio 1`, which send `ignore_eos` so each request generates exactly its
output length; `--max-concurrency C`, a semaphore of C held until the response ends) sends its first C requests at
once. Requests prefilled in the same engine step then decode in the same steps and finish on the same step, so their
replacements reach the engine together and are prefilled together again: the loop never spreads into the staggered
steady state `operating_point._replaced` reads, where each replacement arrives alone and queues behind the few
prompts already waiting. Instead each request's time to first token is its whole group's prefill step: the
prompts that one step takes at once, up to the scheduler's token budget (vLLM `max_num_batched_tokens`, SGLang
`chunked_prefill_size`, TensorRT-LLM `max_num_tokens`; each rank its own under DP attention), and the groups of a wave
follow one another, each a prefill step that the others' decodes share or wait for.

Published: dstackai/benchmarks at 7f37e669, Deepseek-R1/raw_data/online_results.csv (DeepSeek-R1 on 8 x H200, 3,200
in / 800 out, 500 prompts at 4-64 in flight; tests/estimator/serving_first_contact_dstack_r1.py): every run's duration
is its waves times the median end-to-end latency (vLLM at 4 in flight: 125 waves x 21.54 s = 2,692 s, the CSV's
2,692.1 s; at 64: 8 x 66.27 s = 530 s against 527.4 s), and vLLM 0.7.4's median TTFT grows with the wave, 975, 1,772,
3,389 and 7,687 ms at 4, 8, 16 and 32 in flight (224-244 ms a prompt): one prefill step of the whole wave, since
vLLM's V0 engine of that line ran MLA models without chunked prefill and so with a token budget of the model's whole
context (`VllmConfig.__post_init__` in vllm/config.py, which logs "MLA is enabled; forcing chunked prefill and prefix
caching to be disabled." at v0.7.1 (config.py:3257) and v0.7.3 (config.py:3329): launch logs of DeepSeek-V3 and
DeepSeek-V2-Lite-Chat quoted in public repositories, NPU builds, the message not yet limited to a platform; from
v0.8.4 it reads "MLA is enabled on a non-GPU platform": chunked MLA prefill came to GPUs in between. The vLLM rows'
TTFT, about 230 ms a prompt of the wave at every C, agrees on the GPU).
"""

from __future__ import annotations

import math

from app.estimator.serving.config import ServingConfig
from app.estimator.serving.engines import ENGINE_DEFAULTS, _batched_tokens, _request_overhead_s
from app.estimator.serving.operating_point import _Point
from app.estimator.serving.step import _Hardware, _pipeline_hop_s, _step_s
from app.estimator.serving_levers import cached_prompt_tokens


def wave_point(cfg: ServingConfig, hw: _Hardware, clients: int) -> _Point:
    """Latencies and throughput of `clients` identical requests in flight that run in waves (module docstring): a
    group of prompts prefilled in one step, then decoded with the rest of the wave. The median request's TTFT is its
    group's prefill (the groups of a wave arrive one after another, each as its predecessors' tokens finish); its TPOT
    the decode step of the whole wave plus the other groups' prefill steps, spread over its output; the replica
    completes `clients` requests every end-to-end latency (each client holds its request that long)."""
    c = max(1, clients)
    prompt, out, pp, ranks = cfg.input_tokens, max(cfg.output_tokens, 1), hw.pp, hw.ranks
    computed = max(1, prompt - cached_prompt_tokens(prompt, cfg.prefix_cache_hit_rate))
    budget = _batched_tokens(cfg, hw.gpu)
    per_rank = math.ceil(c / ranks)  # DP attention: each rank prefills its own share of the wave
    group = max(1, min(per_rank, budget // computed))  # prompts one step takes whole, within the token budget
    groups = math.ceil(per_rank / group)
    steps = math.ceil(group * computed / budget)  # a prompt longer than the budget is chunked over several steps
    chunk = group * computed / steps
    prefill_step, _ = _step_s(hw, 0.0, 0.0, chunk * ranks, prompt)
    prefill = pp * steps * prefill_step + _pipeline_hop_s(hw, chunk * ranks)
    per_stage = max(1.0, c / pp)
    decode_step, bound = _step_s(hw, per_stage, prompt + out / 2, 0.0, 0.0)
    decode = (pp * decode_step + _pipeline_hop_s(hw, per_stage)) / hw.tokens_per_step
    # the other groups' prefill steps fall within this request's decode: an engine that mixes prefill chunks into the
    # decode steps still produces its token in them (the step is the prefill's, not the decode's), one that does not
    # (SGLang's default) makes the decodes wait for them
    mixed = ENGINE_DEFAULTS[cfg.engine].mixed_prefill
    others = min(groups - 1, out - 1) if out > 1 else 0
    extra = others * max(0.0, prefill - (decode if mixed else 0.0))
    tpot = decode + extra / max(out - 1, 1)
    served = _request_overhead_s(cfg)
    ttft = prefill + served
    e2e = ttft + (out - 1) * tpot
    return _Point(ttft, tpot, e2e, c / e2e, float(c), bound)
