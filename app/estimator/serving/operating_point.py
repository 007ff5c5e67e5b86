"""The steady-state closed forms: latencies and throughput of one replica at a concurrency (`_operating_point`,
with chunked prefill mixed into the decode steps), a closed loop's replacements and queue for a slot, the
concurrency that carries an offered load (`_solve_load`) and the most a replica carries within the SLO
(`_capacity_point`), and one request's TTFT on an idle replica."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from app.estimator.serving.config import ServingConfig, ServingEstimate
from app.estimator.serving.engines import ENGINE_DEFAULTS, _batched_tokens, _overlap_loop, _request_overhead_s
from app.estimator.serving.memory import sequence_kv_tokens
from app.estimator.serving.step import _Hardware, _one_rank, _pipeline_hop_s, _step_s
from app.estimator.serving_levers import cached_prompt_tokens
from app.estimator.serving_sim import (
    PERCENTILE_LEVELS,
    Lengths,
    interrupted_tpot_estimate,
    queue_wait_estimate,
)
from app.estimator.specs import ModelSpec


@dataclass(frozen=True, slots=True)
class _Point:
    ttft_s: float
    tpot_s: float
    e2e_s: float
    requests_per_s: float  # per replica
    concurrency: float
    bound: str


def _operating_point(model: ModelSpec, cfg: ServingConfig, hw: _Hardware, concurrency: float) -> _Point:
    """Latencies and throughput of one replica with `concurrency` sequences in flight (kept on `hw`, built for this
    model and traffic: the closed forms ask for the same points many times in one answer)."""
    key = (type(concurrency), concurrency)
    found = hw.points.get(key)
    if found is None:
        found = hw.points[key] = _new_operating_point(model, cfg, hw, concurrency)
    return found


def _new_operating_point(model: ModelSpec, cfg: ServingConfig, hw: _Hardware, concurrency: float) -> _Point:
    c = max(concurrency, 1e-9)
    prompt, out = cfg.input_tokens, max(cfg.output_tokens, 1)
    pp = hw.pp
    if cfg.batching == "static":
        batch = max(1.0, math.ceil(c))
        prefill, _ = _step_s(hw, 0.0, 0.0, batch * prompt, prompt)
        ttft = pp * prefill + _pipeline_hop_s(hw, batch * prompt)
        per_stage_batch = max(1.0, batch / pp)
        step, bound = _step_s(hw, per_stage_batch, prompt + out / 2, 0.0, 0.0)
        tpot = pp * step + _pipeline_hop_s(hw, per_stage_batch)
        e2e = ttft + (out - 1) * tpot
        return _Point(ttft, tpot, e2e, batch / e2e, batch, bound)
    # a prompt is chunked on its rank (DP attention: each rank its own budget and c / ranks of the sequences); a step
    # that prefills carries a chunk on every rank (the ranks are taken as balanced)
    # (max(a, b) written b if b > a else a where a point is computed: the same value, without the call; the closed
    # forms compute a few hundred points an answer)
    ranks = hw.ranks
    budget = _batched_tokens(cfg, hw.gpu)
    chunk, half = budget - c / ranks, budget / 2
    chunk = half if half > chunk else chunk
    cached = cached_prompt_tokens(prompt, cfg.prefix_cache_hit_rate)
    computed = prompt - cached  # the prompt tokens a request prefills (the rest are found in the prefix cache)
    prefill_steps = math.ceil(computed / chunk)
    decode_steps = (out - 1) / hw.tokens_per_step  # speculation yields tokens_per_step tokens a step
    steps_per_request = prefill_steps + decode_steps
    # Steady state: a request's decode steps carry the decodes of its micro-batch and the prompt tokens of the
    # OTHER requests that start meanwhile (its own prompt is its TTFT). With pp stages the c sequences form pp
    # micro-batches in flight, but one sequence cannot be split: below pp sequences each micro-batch holds
    # one, and every token still crosses all pp stages (pipelining adds latency; it adds throughput only
    # once there are micro-batches to overlap). A request in flight at a mean concurrency under 1 decodes
    # alone (its step holds itself).
    per_stage = c / pp
    per_stage = per_stage if per_stage > 1.0 else 1.0
    others = per_stage - 1.0 if per_stage - 1.0 > 0.0 else 0.0  # max(0.0, per_stage − 1.0)
    prefill_tokens = others * computed / (1e-9 if steps_per_request < 1e-9 else steps_per_request)
    mixed = ENGINE_DEFAULTS[cfg.engine].mixed_prefill
    step, bound = _mixed_step_s(
        hw, per_stage, prompt + out / 2, prefill_tokens, prompt + cached, min(computed, chunk) * ranks, mixed
    )
    hop = _pipeline_hop_s(hw, per_stage + prefill_tokens)
    tpot = (pp * step + hop) / hw.tokens_per_step
    # _prefill_s(model, cfg, hw, c, prompt): its chunk, stage load and hop are these (the mean prompt's); the chunks
    # share their steps with the OTHERS' decodes (the request itself decodes only after its prompt), so one request in
    # flight prefills as on an idle replica (_new_isolated_ttft_s; review F6: its own decode beside a 128-token chunk
    # made 129 GEMM rows, two rows of tiles that filled twice the SMs, serving_gemm, and a TTFT below the idle one's)
    prefill = _chunked_prefill_s(model, cfg, hw, others, prompt + out / 2, prompt, chunk, cached, ranks) * pp + hop
    e2e = prefill + (out - 1) * tpot
    # Each finished request is replaced at once (a closed loop of c): the new prompts queue for the prefill one
    # after another, the queue the simulated TTFT is held to under Poisson load (_held_to_md1): its mean wait,
    # ρD / (2(1 − ρ)) at ρ = (c − 1) / E2E × D (Pollaczek-Khinchine), the c − 1 others' prompts in front of this one.
    # (under DP attention the ranks prefill their own prompts side by side: ranks servers)
    rho = min(0.95, others / e2e * prefill / ranks) if c > 1 else 0.0
    ttft = prefill + rho * prefill / (2.0 * (1.0 - rho))
    e2e = ttft + (out - 1) * tpot
    # The server's fixed cost per request is latency, not GPU time: the engine completes c / e2e requests/s whatever
    # the time its requests spend in the server before and after (the server overlaps it with the running steps).
    served = _request_overhead_s(cfg)
    return _Point(ttft + served, tpot, e2e + served, c / e2e, c, bound)


def _prefill_s(model: ModelSpec, cfg: ServingConfig, hw: _Hardware, concurrency: float, prompt: int) -> float:
    """One prompt of `prompt` tokens chunked into the mixed steps of a replica running `concurrency` sequences of the
    configured lengths (the others' decodes and the prompts they bring share its steps), the pipeline's hop after."""
    c, out, pp, ranks = max(concurrency, 1e-9), max(cfg.output_tokens, 1), hw.pp, hw.ranks
    budget = _batched_tokens(cfg, hw.gpu)
    chunk = max(budget - c / ranks, budget / 2)
    mean_computed = cfg.input_tokens - cached_prompt_tokens(cfg.input_tokens, cfg.prefix_cache_hit_rate)
    steps_per_request = math.ceil(mean_computed / chunk) + (out - 1) / hw.tokens_per_step
    per_stage = max(1.0, c / pp)
    others = per_stage - 1.0  # the decodes beside the prompt's chunks (_new_operating_point)
    prefill_tokens = others * mean_computed / max(steps_per_request, 1e-9)
    hop = _pipeline_hop_s(hw, per_stage + prefill_tokens)
    cached = cached_prompt_tokens(prompt, cfg.prefix_cache_hit_rate)
    context = cfg.input_tokens + out / 2
    return _chunked_prefill_s(model, cfg, hw, others, context, prompt, chunk, cached, ranks) * pp + hop


def _mixed_step_s(
    hw: _Hardware,
    decodes: float,
    context: float,
    prefill_tokens: float,
    prefill_len: float,
    chunk: float,
    mixed: bool = True,
) -> tuple[float, str]:
    """The mean step of `decodes` sequences decoding while other prompts' tokens, `prefill_tokens` a step on
    average, arrive in whole chunks of `chunk` tokens (the engines schedule a waiting prompt whole, up to the token
    budget, on the next step: vLLM's and SGLang's schedulers, TensorRT-LLM's in-flight batching): a share
    prefill_tokens / chunk of the steps carries a chunk, the rest decode only. The mean of the two steps, not one
    step at the mean load: a step that carries a chunk is compute-bound and one that decodes only is bound by the
    weights' read, so the average of their maxima is longer than the maximum of their averages (the decode's read
    hides the averaged prefill). A step that carries a chunk packs the decodes' tokens and the chunk's into one
    batch of tokens (vLLM V1's unified token budget, SGLang's mixed chunk, TensorRT-LLM's in-flight batching with
    packed inputs), so each linear layer runs one GEMM over all its rows, at the large-M efficiency (`hw.packed`,
    _step_s); so does every step once the prompt tokens fill one a step (`prefill_tokens` >= `chunk`: short
    prompts at high concurrency). The computed tokens attend to the cached ones before them (`prefill_len`). An
    engine that does not mix (`mixed` False: SGLang, `enable_mixed_chunk` off by default,
    sglang/srt/server_args.py) runs the chunk as a step of its own while the decodes wait: each decode step then
    follows, on average, `share` prefill steps."""
    if prefill_tokens <= 0.0 or prefill_tokens >= chunk:
        return _step_s(hw, decodes, context, prefill_tokens, prefill_len, chunk)
    share = prefill_tokens / chunk
    decode_only, decode_bound = _step_s(hw, decodes, context, 0.0, 0.0)
    if not mixed:
        prefill_only, prefill_bound = _step_s(hw, 0.0, 0.0, chunk, prefill_len)
        spent = ((decode_only, decode_bound), (share * prefill_only, prefill_bound))
        return decode_only + share * prefill_only, _dominant(spent)
    with_chunk, chunk_bound = _step_s(hw, decodes, context, chunk, prefill_len)
    spent = ((share * with_chunk, chunk_bound), ((1.0 - share) * decode_only, decode_bound))
    return share * with_chunk + (1.0 - share) * decode_only, _dominant(spent)


def _dominant(spent: tuple[tuple[float, str], ...]) -> str:
    """The bound of the step kind that takes most of the replica's time (time, bound per kind): a decode-dominated
    replica whose few steps with a prefill chunk are compute-bound reads "memory" (review R2 R11: Llama-3.1-8B at 64
    sequences of 1,000 / 500 tokens read "compute" from the steps that carry a chunk)."""
    return max(spent, key=lambda kind: kind[0])[1]


def _chunked_prefill_s(
    model: ModelSpec,
    cfg: ServingConfig,
    hw: _Hardware,
    decodes: float,
    context: float,
    prompt: int,
    chunk: float,
    cached: int = 0,
    ranks: int = 1,
) -> float:
    """A prompt's prefill in chunks, each sharing a step with the running decodes; chunk k attends to the
    offset + its own causal half. The first `cached` tokens are found in the prefix cache: prefilling starts
    after them. Queueing before admission is not included. Under DP attention each of the `ranks` prefills a chunk
    of its own in the same step."""
    chunk = max(1, int(chunk))
    steps = math.ceil((prompt - cached) / chunk)
    if steps > 64:  # long prompts in small chunks: the average chunk stands for all of them
        step, _ = _step_s(hw, decodes, context, chunk * ranks, prompt + cached)
        return steps * step
    total, offset = 0.0, cached
    while offset < prompt:
        size = min(chunk, prompt - offset)
        step, _ = _step_s(hw, decodes, context, size * ranks, 2 * offset + size)
        total += step
        offset += size
    return total


def _queued(point: _Point, clients: int, slots: int) -> _Point:
    """The operating point of `clients` in a closed loop on a replica that runs `slots` of them at once: the replica
    completes X = slots / C requests/s, C a slot's cycle (the engine's time for one request: the server's fixed cost
    per request holds no slot), so by Little's law the others wait (clients − slots) / X = (clients / slots − 1) × C
    for a slot before their prefill starts (TTFT and E2E both carry the wait)."""
    if clients <= slots:
        return point
    wait = (clients - slots) / point.requests_per_s
    return replace(point, ttft_s=point.ttft_s + wait, e2e_s=point.e2e_s + wait)


def _replaced(point: _Point, cfg: ServingConfig, hw: _Hardware, clients: int, slots: int) -> _Point:
    """The operating point of a closed loop of `clients` whose finished requests are replaced by their clients: the
    replacement waits for the steps already under way when it reaches the engine, none of which carries its prompt.

    A client sends its next request once it has read the last token of the one before (vllm bench serve
    --max-concurrency and AIPerf's concurrency mode hold a slot until the response ends), so the replacement arrives
    after the step that finished its predecessor, while the next one runs: the path out to the client and back in
    (detokenising, HTTP, the chat template, tokenising) is far longer than the engine's turn from one step to the next.
    vLLM's engine core takes new requests only between steps (vllm/v1/engine/core.py: `_process_input_queue` before
    each `step`, which schedules, runs the model and processes its output), so the prompt waits for the running step
    and is scheduled in the one after: one step. SGLang's overlap loop (scheduler.py `event_loop_overlap`) and
    TensorRT-LLM's PyTorch executor launch step N + 1 before processing step N's output, so when the predecessor's
    last token leaves, N + 1 already runs; the next turn of the loop launches N + 2 before the replacement arrives,
    and the turn after it receives the replacement and queues its prefill behind N + 2: two steps. One client alone
    finds the replica idle (nothing runs), and a request that waited for a slot (clients over slots) is already
    queued when the slot frees: it waits only for the step the overlap loop launched ahead. Static batches are not
    replaced, nor is a replica asked for its capacity (no concurrency: an offline run, whose requests are all queued
    already). The simulation of Poisson arrivals (serving_sim) already holds each arrival to the next step boundary,
    and one more under the overlap loop (`Scheduler.lookahead`)."""
    if cfg.concurrency is None or cfg.batching == "static":  # None: at capacity, queued (offline)
        return point
    overlap = int(_overlap_loop(cfg))
    step = point.tpot_s * hw.tokens_per_step / hw.pp  # a step of the loop: each stage's micro-batch
    if clients <= 1:
        wait = 0.0
    elif clients <= slots:  # the rest of the step under way when the replacement reaches the engine, then the lookahead
        wait = (_residual_step_fraction(_request_overhead_s(cfg), step) + overlap) * step
    else:
        wait = overlap * step
    e2e = point.e2e_s + wait
    # Little's law as the clients see it (each holds one request for its whole end-to-end latency, the server's fixed
    # cost included) while every client has a slot; beyond the slots a request is queued, past the server, when a slot
    # frees, so a slot's cycle is the engine's time for one request and the lookahead's wait
    held = e2e if clients <= slots else _engine_e2e_s(point) + wait
    return replace(point, ttft_s=point.ttft_s + wait, e2e_s=e2e, requests_per_s=point.concurrency / held)


def _residual_step_fraction(served_s: float, step_s: float) -> float:
    """The share of a step still to run when a replacement reaches the engine, `served_s` (the server's fixed cost per
    request: the predecessor's last token out to the client, the replacement back in) after the step that finished its
    predecessor. The steps run back to back meanwhile, so it lands `served_s` into the next one: 1 − served_s / step_s
    of it is left. Once the path is longer than half a step its arrival falls anywhere in a step (the path's time varies
    from request to request by more than the rest of a step), and the mean rest is half a step (the mean residual of a
    uniform phase)."""
    if step_s <= 0.0:
        return 0.0
    return max(1.0 - served_s / step_s, 0.5)


def queue_wait_s(estimate: ServingEstimate, clients: int) -> float:
    """The wait for a KV slot in `estimate`'s TTFT when `clients` exceed its max_concurrency (0 otherwise)."""
    slots = estimate.max_concurrency
    if slots < 1 or clients <= slots:
        return 0.0
    return (clients - slots) / (estimate.requests_per_s / estimate.replicas)  # Little's law, as `_queued`


def _meets(point: _Point, cfg: ServingConfig) -> bool:
    if cfg.slo_ttft_ms is not None and point.ttft_s * 1e3 > cfg.slo_ttft_ms:
        return False
    return not (cfg.slo_tpot_ms is not None and point.tpot_s * 1e3 > cfg.slo_tpot_ms)


def _has_slo(cfg: ServingConfig) -> bool:
    return cfg.slo_ttft_ms is not None or cfg.slo_tpot_ms is not None


def _best_within_slo(model: ModelSpec, cfg: ServingConfig, hw: _Hardware, limit: int) -> _Point | None:
    """The highest-throughput concurrency (≤ limit) that meets the SLO; latency grows with concurrency."""
    top = _operating_point(model, cfg, hw, limit)
    if _meets(top, cfg):
        return top
    low = _operating_point(model, cfg, hw, 1)
    if not _meets(low, cfg):
        return None
    lo, hi = 1, limit
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _meets(_operating_point(model, cfg, hw, mid), cfg):
            lo = mid
        else:
            hi = mid
    return _operating_point(model, cfg, hw, lo)


def _engine_e2e_s(point: _Point) -> float:
    """The time a request of `point` holds its sequence slot in the engine (the server's fixed cost left out)."""
    return point.concurrency / point.requests_per_s


def _solve_load(model: ModelSpec, cfg: ServingConfig, hw: _Hardware, per_replica_rps: float, limit: int) -> _Point:
    """The concurrency at which one replica completes `per_replica_rps` requests/s (Little's law: C = λ·E2E(C));
    capped at limit. E2E grows with C more slowly than C itself below saturation, so the fixed-point
    iteration from C = λ·E2E(0) climbs monotonically to the solution; bisection finishes slow cases."""
    top = _operating_point(model, cfg, hw, limit)
    if top.requests_per_s <= per_replica_rps:
        return top
    c = per_replica_rps * _engine_e2e_s(_operating_point(model, cfg, hw, 1e-6))
    for _ in range(40):
        following = per_replica_rps * _engine_e2e_s(_operating_point(model, cfg, hw, c))
        if abs(following - c) <= 1e-7 * max(c, 1e-6):
            return _operating_point(model, cfg, hw, following)
        c = following
    lo, hi = c, float(limit)
    for _ in range(40):
        mid = (lo + hi) / 2
        if _operating_point(model, cfg, hw, mid).requests_per_s < per_replica_rps:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-7 * hi:
            break
    return _operating_point(model, cfg, hw, hi)


def _capacity_point(model: ModelSpec, cfg: ServingConfig, hw: _Hardware, limit: int) -> _Point | None:
    return _best_within_slo(model, cfg, hw, limit) if _has_slo(cfg) else _operating_point(model, cfg, hw, limit)


def launch_max_seqs(limit: int, slo_concurrency: float) -> int:
    """--max-num-seqs of a colocated replica's launch: the most sequences it runs within the SLO (admitting more would
    break the latency targets; the rest wait for a slot), never more than the KV cache holds (`limit`). The one rule
    the launch (app/planner/serving_launch.replica_max_seqs) and the simulated slots (`_launch_slots`) share. Where no
    concurrency meets the SLO (`slo_concurrency` 0: a target one request alone misses, the TPOT at one sequence above
    it), a cap cannot help and admits all the KV cache holds: capped to one slot, the queue for it read as the miss
    ("add replicas", p90 TTFT of hours) where the target itself is out of reach (review R11-2)."""
    if slo_concurrency <= 0:
        return limit
    return max(1, min(limit, math.floor(slo_concurrency) or 1))


def _launch_slots(model: ModelSpec, cfg: ServingConfig, hw: _Hardware, limit: int) -> int:
    """The sequences a replica's launch admits (`launch_max_seqs` on the closed loop's concurrency within the SLO,
    `_capacity_point`; all the KV cache holds without an SLO); a disaggregated pool's launch admits all its KV cache
    holds (serving_launch.disaggregated_launch)."""
    if cfg.decode_pool or cfg.kv_transfer_s > 0 or not _has_slo(cfg):
        return limit
    point = _capacity_point(model, cfg, hw, limit)
    return launch_max_seqs(limit, point.concurrency if point else 0.0)


def _capacity(model: ModelSpec, cfg: ServingConfig, hw: _Hardware, limit: int) -> float:
    point = _capacity_point(model, cfg, hw, limit)
    return point.requests_per_s if point else 0.0


def _isolated_ttft_s(model: ModelSpec, cfg: ServingConfig, hw: _Hardware) -> float:
    """One request on an idle replica: its prompt's chunks with nothing else running (kept on `hw`)."""
    if hw.isolated_s is None:
        hw.isolated_s = _new_isolated_ttft_s(model, cfg, hw)
    return hw.isolated_s


def _new_isolated_ttft_s(model: ModelSpec, cfg: ServingConfig, hw: _Hardware) -> float:
    prompt = cfg.input_tokens
    cached = cached_prompt_tokens(prompt, cfg.prefix_cache_hit_rate)
    # under DP attention the prompt is one rank's: its chunks run there alone
    prefill = _chunked_prefill_s(model, cfg, _one_rank(hw), 0.0, 0.0, prompt, _batched_tokens(cfg, hw.gpu), cached)
    return prefill * hw.pp + _pipeline_hop_s(hw, prompt / hw.pp) + _request_overhead_s(cfg)


def _at_percentile(model: ModelSpec, cfg: ServingConfig, hw: _Hardware, point: _Point, concurrency: float) -> _Point:
    """A closed loop's latencies at the SLO's percentile (`point`: its steady state, `concurrency` the sequences it
    runs), for lengths drawn about their means (input_tokens_p95 / output_tokens_p95); the steady state itself at the
    p50, with constant lengths (every request alike) and for static batches (the batch's figures are its own).

    TTFT: the steady state's, plus the prefill of the prompt at the percentile (Lengths.quantile, the lognormal the
    simulation draws, held to what one sequence may hold) over the mean prompt's, plus the wait for the others'
    prompts at the percentile (`queue_wait_estimate`, Kingman's exponential tail whose mean is the Pollaczek-Khinchine
    mean the steady state carries) over its mean: a long prompt that also meets the queue's tail (the two at the same
    level; at most the sum of their excursions). TPOT: at least the steady state's, or the closed-form quantile of a
    decode interrupted by the others' prompts (`interrupted_tpot_estimate`: Poisson arrivals at the loop's rate, each
    adding its chunks' time over the decode-only steps they replace). Review: a closed loop of 64 with prompts of
    8,000 tokens (p95 30,000) met a p99 TTFT target of 7,163 ms on the p50's 7,092 ms."""
    level = PERCENTILE_LEVELS[cfg.slo_percentile]
    cap = sequence_kv_tokens(model, cfg, hw.gpu, hw.tp, hw.pp)
    cap = min(cfg.max_model_len or cap, cap)
    prompts = Lengths(cfg.input_tokens, cfg.input_tokens_p95, max(cap, cfg.input_tokens))
    outputs = Lengths(cfg.output_tokens, cfg.output_tokens_p95)
    if level <= 0.5 or (prompts.constant and outputs.constant) or cfg.batching == "static":
        return point
    c, out = max(concurrency, 1e-9), max(cfg.output_tokens, 1)
    prefill = _prefill_s(model, cfg, hw, c, cfg.input_tokens)
    per_stage = max(1.0, c / hw.pp)
    rate = max(0.0, per_stage - 1.0) / (prefill + (out - 1) * point.tpot_s) / hw.ranks  # the others' prompts
    rho = min(0.95, rate * prefill)  # as the steady state holds it
    mean_wait = rho * prefill / (2.0 * (1.0 - rho))
    tail_wait = queue_wait_estimate(rho / prefill, prefill, level) if rho > 0 else 0.0
    longest = _prefill_s(model, cfg, hw, c, prompts.quantile(level))
    ttft = point.ttft_s + max(0.0, longest - prefill) + max(0.0, tail_wait - mean_wait)
    budget = _batched_tokens(cfg, hw.gpu)
    chunks = math.ceil(cfg.input_tokens / max(budget - c / hw.ranks, budget / 2))
    decode, _ = _step_s(hw, per_stage, cfg.input_tokens + out / 2, 0.0, 0.0)
    decode_tpot = (hw.pp * decode + _pipeline_hop_s(hw, per_stage)) / hw.tokens_per_step
    added = max(0.0, prefill - chunks * decode_tpot)  # a prompt's chunks over the decode steps they take the place of
    tpot = max(point.tpot_s, interrupted_tpot_estimate(decode_tpot, added, rate, out, level))
    return replace(
        point, ttft_s=ttft, tpot_s=tpot, e2e_s=point.e2e_s + (ttft - point.ttft_s) + (out - 1) * (tpot - point.tpot_s)
    )
