"""Latency under load: a seeded simulation of one replica's scheduler, and the closed forms that steer the search.

The engine's scheduler as vLLM V1 runs it (vllm/v1/core/sched/scheduler.py `schedule`; SGLang and TensorRT-LLM's
in-flight batching behave alike):

- Requests arrive as a Poisson process (each replica of a deployment sees the offered load divided among the
  replicas, routed at random by the load balancer) and wait in a first-come-first-served queue.
- Every step first gives each running sequence in its decode phase one token, then spends what is left of the
  token budget (`max_num_batched_tokens`) on prompts in chunks (chunked prefill; SGLang by default runs a step
  of prompt chunks alone while the decodes wait, `enable_mixed_chunk` False): the running request whose
  prompt is part-way through first, then the waiting requests in arrival order, admitted while fewer than
  `max_num_seqs` sequences run and the KV cache holds their whole length (the cache a request will need is
  reserved on admission, TensorRT-LLM's GUARANTEED_NO_EVICT; vLLM preempts instead, which is no faster).
- A request's first token comes out of the step that prefills the last chunk of its prompt; it then decodes one
  token per step until its output is complete and its cache is freed.
- The time of a step comes from the caller's step model (`StepTime`: the roofline step of
  app/estimator/serving/step.py for the decodes and prompt tokens the step carries).

Steps in which nothing but decoding happens are advanced together up to the next arrival or completion (their
time is linear in the context, so the average of the first and last step times them), so a run costs a few
events per request rather than one per token. Standard library only (`random` for the arrivals and lengths):
the figures are a pure function of the inputs and the seed.

Closed forms: an M/D/1 queue in front of a prompt's prefill (Pollaczek-Khinchine mean; the exponential tail
P(W > t) ≈ ρ·exp(−2(1 − ρ)t / D) of the M/G/1 heavy-traffic approximation, Kingman 1962) steer the replica
search; what is reported is the simulation, each percentile of its time to first token held at least the M/D/1
queue's, computed exactly (`md1_wait_quantiles`): one seeded run samples the tail widely at high load.
"""

from __future__ import annotations

import functools
import heapq
import itertools
import math
import random
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Literal

Percentile = Literal["p50", "p90", "p99"]
PERCENTILES: Final[tuple[Percentile, ...]] = ("p50", "p90", "p99")
PERCENTILE_LEVELS: Final[dict[str, float]] = {"p50": 0.50, "p90": 0.90, "p99": 0.99}

# Requests simulated per run, the first of them a warm-up left out of the percentiles (the replica starts idle).
# 1,200 keeps the p99 on ten requests of the measured thousand; the same seed makes every run repeatable.
REQUESTS: Final = 1200
WARMUP: Final = 200
DEFAULT_SEED: Final = 20240901

# Past this many seconds the run's clock restarts at zero whenever the replica falls idle (no request spans an
# idle gap). A float's spacing at 2^20 s is 2^-32 s (IEEE 754 binary64, 52-bit fraction), so the steps of a few
# milliseconds added to the clock keep their digits; at a near-zero rate the arrivals lie ~1e14 s out, where
# the spacing (~0.03 s) swallowed whole steps. Below it the clock is the arrivals' own, float for float.
REBASE_S: Final = float(2**20)

# A lognormal fitted to a mean and a 95th percentile: ln p95 − ln mean = z·σ − σ²/2 with z = Φ⁻¹(0.95). Request
# lengths of production traces are right-skewed with a long tail, and lognormal fits are what serving simulators
# use for them (Splitwise, Patel et al. ISCA 2024, Azure LLM inference traces; Vidur, Agrawal et al. MLSys 2024,
# draws lengths from such traces). The largest p95 ÷ mean a lognormal can have is exp(z²/2) ≈ 3.87.
Z95: Final = 1.6448536269514722
MAX_P95_RATIO: Final = math.exp(Z95 * Z95 / 2)

# StepTime(decode sequences, their KV tokens in total, prompt tokens prefilled, Σ chunk·(offset + chunk/2)):
# seconds. The last argument is the causal attention of the chunks (a chunk at `offset` attends to the offset
# and half of itself).
StepTime = Callable[[int, float, int, float], float]
# DecodeTime(decode sequences, their KV tokens in total): StepTime of a step that prefills nothing, to the last bit
# (the step model's decode-only case, read without the prompt's terms: most of a run's steps only decode).
DecodeTime = Callable[[int, float], float]


@dataclass(frozen=True, slots=True)
class DenseDecode:
    """A DecodeTime linear in its terms (a dense model on one stage): memory = weights_s + kv·reads·kv_s, compute =
    flops·decodes / efficiency + attention·kv, the step the larger plus fixed + per_seq·decodes + per_token·decodes.
    `_run` reads its terms and evaluates it inline, in this order (the same floats), saving a call per step."""

    weights_s: float
    kv_s: float
    reads: float
    flops: float
    efficiency: float
    attention: float
    fixed: float
    per_seq: float
    per_token: float

    def __call__(self, decodes: int, kv: float) -> float:
        memory = self.weights_s + kv * self.reads * self.kv_s
        compute = self.flops * decodes / self.efficiency + self.attention * kv
        return (
            (compute if compute > memory else memory) + self.fixed + self.per_seq * decodes + self.per_token * decodes
        )


def lognormal_sigma(mean: float, p95: float) -> float:
    """σ of the lognormal whose mean and 95th percentile are given (the smaller root: the mean ≤ p95 branch)."""
    gap = math.log(p95 / mean)
    return Z95 - math.sqrt(max(0.0, Z95 * Z95 - 2.0 * gap))


@dataclass(frozen=True, slots=True)
class Lengths:
    """Tokens per request: a constant `mean`, or a lognormal with that mean and 95th percentile `p95`, drawn as
    whole tokens within [1, cap]."""

    mean: int
    p95: int | None = None
    cap: int | None = None

    @property
    def constant(self) -> bool:
        return self.p95 is None or self.p95 <= self.mean

    def sampler(self, rng: random.Random) -> Callable[[], int]:
        if self.p95 is None or self.constant:
            return lambda: self.mean
        sigma = lognormal_sigma(self.mean, self.p95)
        mu = math.log(self.mean) - sigma * sigma / 2
        cap = self.cap or 1 << 30
        return lambda: min(cap, max(1, round(rng.lognormvariate(mu, sigma))))

    def share_above(self, limit: float) -> float:
        """The share of the distribution longer than `limit` tokens (none when constant at or under it)."""
        if self.p95 is None or self.p95 <= self.mean:
            return float(self.mean > limit)
        from statistics import NormalDist  # noqa: PLC0415 (only for distributions)

        sigma = lognormal_sigma(self.mean, self.p95)
        mu = math.log(self.mean) - sigma * sigma / 2
        return 1.0 - NormalDist().cdf((math.log(max(limit, 1.0)) - mu) / sigma)

    def quantile(self, level: float) -> int:
        """The length at `level` of the distribution (NormalDist's inverse CDF; the mean when constant)."""
        if self.p95 is None or self.p95 <= self.mean:
            return self.mean
        from statistics import NormalDist  # noqa: PLC0415 (only for distributions)

        sigma = lognormal_sigma(self.mean, self.p95)
        mu = math.log(self.mean) - sigma * sigma / 2
        value = math.exp(mu + sigma * NormalDist().inv_cdf(level))
        return min(self.cap or 1 << 30, max(1, round(value)))


@dataclass(frozen=True, slots=True)
class Scheduler:
    """The engine limits the scheduler works within (per replica)."""

    token_budget: int  # max_num_batched_tokens
    max_seqs: int  # max_num_seqs
    kv_tokens: int  # the KV cache, in tokens
    block: int  # KV page, tokens
    mixed: bool = True  # decodes ride in the steps that prefill (vLLM, TensorRT-LLM); else those steps prefill alone
    # decode steps already scheduled when an arrival is received: 1 where the scheduler runs one batch ahead of the GPU
    # (SGLang's and TensorRT-LLM's overlap loops: data/engines.json overlap_schedule), so an arrival during a decode
    # step is scheduled after the step that follows it; 0 where each step's output is processed before the next
    lookahead: int = 0
    # the share of a request's output still to come that admission reserves in the KV cache (`_run`): 1 reserves its
    # whole length and never preempts (TensorRT-LLM's default GUARANTEED_NO_EVICT); below 1 the cache is allocated as
    # tokens are generated and, when a step cannot get its tokens' blocks, the running request admitted last is
    # preempted and later recomputed (vLLM V1: 0, SGLang: its new_token_ratio). data/engines.json kv_reserve_share
    reserve: float = 1.0


@dataclass(frozen=True, slots=True)
class Quantiles:
    p50: float
    p90: float
    p99: float

    def at(self, percentile: str) -> float:
        return float(getattr(self, percentile))

    def scaled(self, factor: float) -> Quantiles:
        return Quantiles(self.p50 * factor, self.p90 * factor, self.p99 * factor)

    def at_most(self, other: Quantiles) -> Quantiles:
        return Quantiles(min(self.p50, other.p50), min(self.p90, other.p90), min(self.p99, other.p99))


@dataclass(frozen=True, slots=True)
class LoadLatency:
    """Simulated latencies of one replica at one arrival rate, in seconds."""

    ttft: Quantiles
    tpot: Quantiles
    e2e: Quantiles
    saturated: bool  # the queue grew through the run: the replica cannot keep up with the rate
    requests: int  # requests measured (after the warm-up)
    # seconds a measured request holds its KV cache (admission to completion), mean; and the requests the replica
    # runs (admitted: KV reserved) on average over the measured requests' span
    held_s: float = 0.0
    running: float = 0.0
    # the means over the measured requests of the time to first token and the time per output token, seconds (what
    # benchmark clients that report means publish: "Mean TTFT", "Mean ITL"); NaN where not simulated request by request
    ttft_mean: float = math.nan
    tpot_mean: float = math.nan
    # a disaggregated decode pool's wait for a sequence slot before its first step (`mdc_wait_quantiles`), part of
    # the deployment's time to first token (app/estimator/serving_disagg.py); zero elsewhere
    admission: Quantiles = Quantiles(0.0, 0.0, 0.0)
    # requests preempted over the whole run (their KV freed when a step could not get blocks), and the tokens their
    # resumption prefilled again (prompt + output so far: the recompute); zero where admission reserves whole lengths
    preemptions: int = 0
    recomputed_tokens: int = 0

    def at_most(self, higher_load: LoadLatency) -> LoadLatency:
        """These latencies capped at those of the same arrivals at a higher rate (`simulate` scales one seed's
        arrivals by 1 / rate and draws the same lengths, so the higher rate only brings each request closer to
        the ones before it): where a percentile came out lower at the higher rate, that is the phase of the
        arrivals against the steps (a fraction of a step), not the load, and the lower figure stands for both."""
        return LoadLatency(
            self.ttft.at_most(higher_load.ttft), self.tpot.at_most(higher_load.tpot),
            self.e2e.at_most(higher_load.e2e), self.saturated, self.requests, self.held_s, self.running,
            min(self.ttft_mean, higher_load.ttft_mean), min(self.tpot_mean, higher_load.tpot_mean),
            self.admission.at_most(higher_load.admission), self.preemptions, self.recomputed_tokens,
        )  # fmt: skip


def quantiles(values: list[float]) -> Quantiles:
    """p50, p90, p99 by linear interpolation between order statistics (numpy's default 'linear' method)."""
    ordered = sorted(values)
    last = len(ordered) - 1

    def at(level: float) -> float:
        position = level * last
        low = int(position)
        high = min(low + 1, last)
        return ordered[low] + (ordered[high] - ordered[low]) * (position - low)

    return Quantiles(at(0.50), at(0.90), at(0.99))


@dataclass(slots=True)
class _Outcome:
    """What a run gives back: each request's first-token and completion times, and the queue at the last arrival."""

    start: list[float]  # arrival, first-token and completion times on the run's clock (see REBASE_S)
    first: list[float]
    finish: list[float]
    queue_at_last_arrival: int
    admitted: list[float]  # when its KV cache was reserved, on the same clock
    preemptions: int = 0
    recomputed_tokens: int = 0


def _run(scheduler: Scheduler, step_time: StepTime, arrival: list[float], prompt: list[int],  # noqa: C901
         output: list[int], cached: list[int] | None = None, tokens_per_step: float = 1.0,
         decode_time: DecodeTime | None = None) -> _Outcome:  # fmt: skip
    """One run of the scheduler over the requests (arrival, lengths). Over the complexity limit by design (C901):

    The replica's state is held in locals and the steps are written out in one loop rather than as methods: the
    loop runs a few thousand events per simulation and a search runs a few simulations per candidate, so Python's
    attribute and call overheads were most of a serving answer's time. The arithmetic, and its order, is that of
    the scheduler described at the top of this module: the same inputs give the same floats.

    `cached`: each prompt's tokens found in the prefix cache (its prefill starts after them; its KV still reserved
    whole). `tokens_per_step`: tokens a decode step yields per sequence on average (speculative decoding; the
    context grows by as much a step, and a request completes after ceil((output − 1) / it) decode steps).
    `decode_time`: the step model's decode-only steps (step_time's with no prompt tokens otherwise)."""
    count = len(arrival)
    decode = decode_time or (lambda decodes, kv: step_time(decodes, kv, 0, 0.0))
    dense = decode_time if isinstance(decode_time, DenseDecode) else None
    d_weights, d_kv, d_reads, d_flops, d_eff, d_attention, d_fixed, d_per_seq, d_per_token = (
        (dense.weights_s, dense.kv_s, dense.reads, dense.flops, dense.efficiency, dense.attention, dense.fixed,
         dense.per_seq, dense.per_token) if dense is not None else (0.0,) * 9
    )  # fmt: skip
    d_compute = d_seq = d_token = 0.0
    ceil = math.ceil
    token_budget, max_seqs, kv_tokens, block = (
        scheduler.token_budget, scheduler.max_seqs, scheduler.kv_tokens, scheduler.block
    )  # fmt: skip
    mixed, lookahead = scheduler.mixed, scheduler.lookahead
    need = [-(-(p + o) // block) * block for p, o in zip(prompt, output, strict=True)]  # KV reserved, whole pages
    first = [math.inf] * count
    finish = [math.inf] * count
    prefilled = list(cached) if cached else [0] * count  # prompt tokens prefilled (or found in the cache) so far
    tps = tokens_per_step
    steps_to_finish = [o - 1 for o in output] if tps == 1.0 else [ceil((o - 1) / tps) for o in output]
    # KV allocated as tokens come (Scheduler.reserve < 1): admission reserves the prompt and `share` of the output still
    # owed; a step that cannot get its tokens' KV preempts the running request admitted last, whose prefill (prompt +
    # output so far) is computed again when it is admitted anew from the front of the queue
    share = scheduler.reserve
    # (where max_num_seqs requests of the longest length fit whole, the cache never binds: both rules admit alike and
    # nothing is preempted, so the run takes the whole-length path, the faster)
    grow = share < 1.0 and count > 0 and max_seqs * max(need) > kv_tokens
    if grow:
        prompt = list(prompt)  # a preempted request's prompt becomes prompt + its output so far
    out_left = list(output)  # tokens still owed, the first included (grow only)
    order: dict[int, None] = {}  # the running requests in admission order (grow only; popitem takes the last)
    end_at = [0] * count  # the decode step a decoding request completes at, 0 when not decoding (grow only)
    pre_sum = dec_prompt = pending = 0  # Σ prompts admitted not yet decoding, Σ decodes' prompts, Σ output owed
    preemptions = recomputed = 0
    base = [0.0] * count  # prompt + 1 − the decode step at which it joined the decodes (× tokens_per_step)
    waiting: deque[int] = deque()
    prefilling: deque[int] = deque()  # admitted, prompt not yet complete; first come first served
    ends: list[int] = []  # heap of (decode step after which it is complete) × count + request: that order, as ints
    heappush, heappop, sqrt, inf = heapq.heappush, heapq.heappop, math.sqrt, math.inf
    decoding = 0
    decode_base = 0.0  # Σ base over the decoding requests: their KV tokens = base + decoding × steps × tps
    decode_steps = 0  # decode steps so far (every decoding request advances on each)
    reserved = 0  # KV tokens reserved by the running requests
    running = 0
    start = [0.0] * count  # arrival on the run's clock
    admitted = [0.0] * count
    origin = 0.0  # the arrival time the clock counts from (0 until the arrivals pass REBASE_S)
    now = 0.0
    nxt = 0  # the next request to arrive
    completed = 0
    queue_at_last_arrival = 0
    upcoming = arrival[0] - origin if count else math.inf  # the next arrival on the run's clock (inf: none left)
    while completed < count:
        while upcoming <= now:
            start[nxt] = upcoming
            waiting.append(nxt)
            nxt += 1
            if nxt == count:  # requests without a first token yet: the queue
                queue_at_last_arrival = len(waiting) + len(prefilling)
            upcoming = arrival[nxt] - origin if nxt < count else math.inf
        if running == 0 and not waiting:  # idle until the next request
            if arrival[nxt] >= REBASE_S:
                origin, now = arrival[nxt], 0.0
                upcoming = arrival[nxt] - origin
            else:
                now = arrival[nxt]
            continue
        # admission: waiting requests in arrival order while a sequence slot and their KV cache are free (one
        # request is always admitted into an empty replica, as engines run a request longer than the cache's share)
        while waiting and running < max_seqs:
            head = waiting[0]
            # `reserved` (whole lengths) bounds what the running requests can come to hold: within it any rule admits
            if running and reserved + need[head] > kv_tokens:
                if not grow:
                    break
                # the cache the running requests hold after their next token, `share` of what they still owe, and
                # the head's prompt and share
                kv = decode_base + decoding * decode_steps * tps
                owed = pending - kv + dec_prompt
                if pre_sum + kv + decoding * tps + share * (owed + out_left[head]) + prompt[head] > kv_tokens:
                    break
            waiting.popleft()
            prefilling.append(head)
            if first[head] == inf:  # (a resumed request keeps its first admission)
                admitted[head] = now
            reserved += need[head]
            running += 1
            if grow:
                order[head] = None
                pre_sum += prompt[head]
                pending += out_left[head]
        # the cache free once the decodes' next tokens have theirs (grow only, and only past the whole lengths' bound:
        # within it nothing can run out)
        free = inf if reserved <= kv_tokens or not grow else (
            kv_tokens - pre_sum - decode_base - decoding * (decode_steps + 1) * tps
        )  # fmt: skip
        while free < 0 and running > 1:
            victim = order.popitem()[0]  # the running request admitted last (vLLM: self.running.pop())
            preemptions += 1
            running -= 1
            reserved -= need[victim]
            pending -= out_left[victim]
            if end_at[victim]:  # decoding: its output so far joins its prompt, to be prefilled again
                emitted = int(base[victim] + decode_steps * tps) - prompt[victim]
                steps_to_finish[victim] = end_at[victim] - decode_steps - 1  # the resumed prefill yields a token
                end_at[victim] = 0
                decoding -= 1
                decode_base -= base[victim]
                dec_prompt -= prompt[victim]
                prompt[victim] += emitted
                out_left[victim] -= emitted
                lost = prompt[victim]
            else:  # still prefilling (the last admitted: the end of `prefilling`)
                prefilling.remove(victim)
                pre_sum -= prompt[victim]
                lost = prefilled[victim]
            prefilled[victim] = cached[victim] if cached else 0
            recomputed += lost - prefilled[victim]
            waiting.appendleft(victim)
            free = (
                inf
                if reserved <= kv_tokens
                else kv_tokens - pre_sum - decode_base - decoding * (decode_steps + 1) * tps
            )
        if prefilling:
            # one step: a token for every decoding request, then prompt chunks within what is left of the budget
            budget = token_budget - (decoding if mixed else 0)
            tokens, span = 0, 0.0
            finished = 0  # the prompts this step completes: the first of `prefilling` (chunks go in its order)
            for request in prefilling:
                if budget <= 0:
                    break
                offset = prefilled[request]
                chunk = prompt[request] - offset
                if chunk > budget:
                    chunk = budget
                budget -= chunk
                tokens += chunk
                span += chunk * (offset + chunk / 2)
                prefilled[request] = offset + chunk
                if offset + chunk == prompt[request]:
                    finished += 1
            if not mixed:  # a prefill batch: the running requests wait for it
                now += step_time(0, 0.0, tokens, span)
            else:
                now += step_time(decoding, decode_base + decoding * decode_steps * tps, tokens, span)
                if decoding:
                    decode_steps += 1
        else:
            finished = 0
            # steps that only decode, advanced together up to the next completion, or up to the step after the next
            # arrival when it could be admitted at once
            kv = decode_base + decoding * decode_steps * tps
            steps = ends[0] // count - decode_steps
            if dense is None:
                first_step = decode(decoding, kv)
            else:  # DenseDecode inline: its terms that depend on `decoding` alone, once for the event's steps
                d_compute, d_seq, d_token = d_flops * decoding / d_eff, d_per_seq * decoding, d_per_token * decoding
                memory, compute = d_weights + kv * d_reads * d_kv, d_compute + d_attention * kv
                first_step = (compute if compute > memory else memory) + d_fixed + d_seq + d_token
            if nxt < count and not waiting and running < max_seqs:
                # steps to the one after the next arrival, at least 1. Over more than 8 steps the k-th takes
                # first_step + k·growth (the context grows a token a step), so n steps take
                # n·first_step + growth·n(n − 1)/2, the time the advance below counts: the smallest n that reaches
                # the arrival is that quadratic's root, rounded up (first_step alone overshot the arrival by about
                # growth·n²/2, most at the longest gaps, the lowest rates)
                gap = upcoming - now
                until = ceil(gap / first_step)
                if until > 8 and steps > 9:  # (otherwise until stays over 8 either way: the completion comes first)
                    if dense is None:
                        growth = decode(decoding, kv + decoding * tps) - first_step
                    else:
                        grown = kv + decoding * tps
                        memory, compute = d_weights + grown * d_reads * d_kv, d_compute + d_attention * grown
                        growth = (compute if compute > memory else memory) + d_fixed + d_seq + d_token - first_step
                    if growth > 0:
                        half = first_step - growth / 2
                        until = ceil((sqrt(half * half + 2 * growth * gap) - half) / growth)
                        if until < 9:
                            until = 9
                if until < steps:
                    if until < 1:
                        until = 1
                    if until + lookahead < steps:
                        steps = until + lookahead
            if free < (steps - 1) * decoding * tps and running > 1:  # (grow) up to the step the cache cannot hold
                room = 1 + int(free // (decoding * tps))
                if room < steps:
                    steps = room
            if steps > 8:  # the context grows by a token a step: over a few steps the first step's time stands
                if dense is None:
                    last_step = decode(decoding, kv + decoding * (steps - 1) * tps)
                else:
                    grown = kv + decoding * (steps - 1) * tps
                    memory, compute = d_weights + grown * d_reads * d_kv, d_compute + d_attention * grown
                    last_step = (compute if compute > memory else memory) + d_fixed + d_seq + d_token
                now += steps * (first_step + last_step) / 2
            else:
                now += steps * first_step
            decode_steps += steps
        # after a step of either kind: the requests past their last decode step complete (none where no decode step
        # ran: every end is beyond decode_steps), then the prompts the step completed join the decodes
        while ends and ends[0] // count <= decode_steps:  # complete: the cache freed
            entry = heappop(ends)
            request = entry % count
            if grow:
                if end_at[request] != entry // count:  # left over from a decode the request was preempted from
                    continue
                end_at[request] = 0
                del order[request]
                dec_prompt -= prompt[request]
                pending -= out_left[request]
            decoding -= 1
            decode_base -= base[request]
            finish[request] = now
            completed += 1
            running -= 1
            reserved -= need[request]
        if finished:  # most steps complete no prompt: skipped without building a range (the loop's speed)
            for _ in range(finished):
                request = prefilling.popleft()
                if first[request] == inf:  # (a resumed request's first token came before its preemption)
                    first[request] = now
                if grow:
                    pre_sum -= prompt[request]
                if steps_to_finish[request] <= 0:
                    finish[request] = now
                    completed += 1
                    running -= 1
                    reserved -= need[request]
                    if grow:
                        del order[request]
                        pending -= out_left[request]
                    continue
                # joins the decodes: its KV tokens are prompt + 1 now and grow by one a decode step
                base[request] = prompt[request] + 1 - decode_steps * tps
                decode_base += base[request]
                decoding += 1
                end = decode_steps + steps_to_finish[request]
                if grow:
                    end_at[request] = end
                    dec_prompt += prompt[request]
                heappush(ends, end * count + request)
    return _Outcome(start, first, finish, queue_at_last_arrival, admitted, preemptions, recomputed)


def poisson_arrivals(rate: float, requests: int, seed: int = DEFAULT_SEED) -> list[float]:
    """Arrival times of a Poisson process at `rate` per second (exponential gaps from random.Random(seed)); the
    same seed gives the same arrivals, scaled by 1 / rate, whatever the rate."""
    # each gap random.Random.expovariate(rate)'s -log(1 - U) / rate, summed in order from 0 (accumulate's first term is
    # the first gap itself, as 0.0 + it is)
    return list(itertools.accumulate(gap / rate for gap in _unit_gaps(seed, requests)))


@functools.lru_cache(maxsize=16)
def _unit_gaps(seed: int, requests: int) -> tuple[float, ...]:
    """The first `requests` exponential gaps of mean 1 from random.Random(seed), -log(1 - U): the draws every rate's
    arrivals divide (kept: a run asks for the same seed's)."""
    uniform, log = random.Random(seed).random, math.log
    return tuple(-log(1.0 - uniform()) for _ in range(requests))


def simulate(
    step_time: StepTime,
    scheduler: Scheduler,
    rate: float,
    prompts: Lengths,
    outputs: Lengths,
    *,
    seed: int = DEFAULT_SEED,
    requests: int = REQUESTS,
    warmup: int = WARMUP,
    per_request_s: float = 0.0,
    cached_share: float = 0.0,
    tokens_per_step: float = 1.0,
    decode_time: DecodeTime | None = None,
) -> LoadLatency:
    """Run `requests` Poisson arrivals at `rate` per second through one replica; the latencies of those after the
    warm-up. `per_request_s`: the engine's fixed cost per request (API server, tokenisation, detokenisation)
    added to each time to first token. `cached_share`: the share of each prompt found in the prefix cache (never its
    last token); `tokens_per_step`: tokens a decode step yields per sequence (speculative decoding); `decode_time`: the
    step model's decode-only steps, where it has them apart."""
    arrival = poisson_arrivals(rate, requests, seed)
    lengths = random.Random(seed + 1)
    draw_prompt, draw_output = prompts.sampler(lengths), outputs.sampler(lengths)
    # constant lengths draw nothing from `lengths`, so writing them out leaves the lognormal draws as they were
    prompt = [prompts.mean] * requests if prompts.constant else [draw_prompt() for _ in range(requests)]
    output = [outputs.mean] * requests if outputs.constant else [draw_output() for _ in range(requests)]
    cached = [min(p - 1, math.floor(p * cached_share)) for p in prompt] if cached_share > 0 else None
    run = _run(scheduler, step_time, arrival, prompt, output, cached, tokens_per_step, decode_time)
    measured = min(warmup, requests - 1)  # the first measured request
    start, first, finish = run.start[measured:], run.first[measured:], run.finish[measured:]
    ttft = [f - s + per_request_s for f, s in zip(first, start, strict=True)]
    tpot = [(e - f) / (o - 1) for e, f, o in zip(finish, first, output[measured:], strict=True) if o > 1] or [0.0]
    e2e = [e - s + per_request_s for e, s in zip(finish, start, strict=True)]
    saturated = run.queue_at_last_arrival > max(10, requests // 20)
    held = [e - a for e, a in zip(finish, run.admitted[measured:], strict=True)]
    span = max(finish) - min(start)
    # Little's law on the running set (rate × time held), or the time-average over the span where the replica falls
    # behind the arrivals (then it runs fewer than rate × held); the span is on one clock unless the run rebased
    running = min(rate * sum(held) / len(held), sum(held) / span if span > 0 else math.inf)
    return LoadLatency(
        quantiles(ttft), quantiles(tpot), quantiles(e2e), saturated, len(ttft), sum(held) / len(held), running,
        sum(ttft) / len(ttft), sum(tpot) / len(tpot), preemptions=run.preemptions,
        recomputed_tokens=run.recomputed_tokens,
    )  # fmt: skip


def finite_run_output_rate(
    step_time: StepTime, scheduler: Scheduler, prompts: Lengths, outputs: Lengths, requests: int, *,
    seed: int = DEFAULT_SEED,
) -> float:  # fmt: skip
    """Output tokens per second of an offline benchmark run of `requests` requests, all queued at once: the total
    output over the time from the first arrival to the last completion, as the engines' benchmarks report it
    (sglang.bench_serving and vLLM's benchmark_serving: output_throughput = sum(output_lens) / dur_s, dur_s from the
    first request sent to the last one done). A finite run fills the replica at once (every prompt prefills before the
    decodes settle) and drains it at the end (the last requests decode in a shrinking batch), so it reports less
    than the replica's steady rate; the fewer requests per batch the replica holds, the more."""
    lengths = random.Random(seed + 1)
    draw_prompt, draw_output = prompts.sampler(lengths), outputs.sampler(lengths)
    prompt = [prompts.mean] * requests if prompts.constant else [draw_prompt() for _ in range(requests)]
    output = [outputs.mean] * requests if outputs.constant else [draw_output() for _ in range(requests)]
    run = _run(scheduler, step_time, [0.0] * requests, prompt, output)
    return sum(output) / (max(run.finish) - min(run.start))


# --- closed forms ---------------------------------------------------------------------------------------


def poisson_quantile(mean: float, level: float) -> int:
    """The smallest k with P(K ≤ k) ≥ level for K ~ Poisson(mean): the cumulative sum of the pmf, or the normal
    approximation with continuity correction beyond a mean of 200."""
    if mean <= 0:
        return 0
    if mean > 200:
        from statistics import NormalDist  # noqa: PLC0415 (large means only)

        return max(0, math.ceil(mean + NormalDist().inv_cdf(level) * math.sqrt(mean) - 0.5))
    term = total = math.exp(-mean)
    k = 0
    while total < level:
        k += 1
        term *= mean / k
        total += term
    return k


def interrupted_tpot_estimate(step_s: float, prefill_s: float, rate: float, output_tokens: int, level: float) -> float:
    """A closed-form quantile of a request's time per output token when other requests' prompts are prefilled in
    its decode steps: the K prompts that arrive during its decode, K ~ Poisson(rate × its decode time), each add
    their prefill time to its output_tokens − 1 steps of `step_s`; solved as a fixed point. Steers the replica
    search; infinite when the prompts alone keep the replica busy (rate × prefill ≥ 1)."""
    if rate * prefill_s >= 1:
        return math.inf
    steps = max(1, output_tokens - 1)
    tpot = step_s
    for _ in range(60):
        following = step_s + poisson_quantile(rate * steps * tpot, level) * prefill_s / steps
        if following <= tpot:
            return max(tpot, following)
        tpot = following
    return tpot


def queue_wait_estimate(rate: float, service_s: float, level: float) -> float:
    """A closed-form quantile of the wait before a prompt's prefill: P(W > t) ≈ ρ·exp(−2(1 − ρ)t / D), the
    exponential tail of the M/G/1 queue in heavy traffic with deterministic service (Kingman 1962), whose mean
    ρD / (2(1 − ρ)) is the Pollaczek-Khinchine mean of M/D/1. Steers the replica search; infinite at ρ ≥ 1."""
    rho = rate * service_s
    if rho >= 1:
        return math.inf
    if rho <= 1 - level:
        return 0.0
    return service_s / (2 * (1 - rho)) * math.log(rho / (1 - level))


# The M/D/1 waiting time, exactly. With D the service time, ρ = λD and π_j the stationary number in system (the
# same at departures, arrivals (PASTA) and any time), an arrival waits at most kD + u (k ≥ 0, 0 ≤ u < D) exactly when
# the N customers present D − u earlier and the A ~ Poisson(ρ(1 − u/D)) arriving since number at most k + 1, less the
# case N = 0, A = k + 1 (the first of those arrived inside the last D − u and is still in service, more than u left):
#     P(W ≤ kD + u) = Σ_{j=0}^{k+1} π_j P(A ≤ k + 1 − j) − π_0 P(A = k + 1),   so P(W ≤ mD) = Σ_{j≤m} π_j.
# This is Franx's form of Crommelin's M/D/c waiting-time distribution for c = 1 (G. J. Franx, "A simple solution
# for the M/D/c waiting time distribution", Operations Research Letters 29 (2001) 221-229,
# doi:10.1016/S0167-6377(01)00108-0; C. D. Crommelin, "Delay probability formulae when the holding times are
# constant", P.O. Elec. Engrs. J. 25 (1932) 41-50): a sum of positive terms, where Crommelin's alternating series
# P(W ≤ t) = (1 − ρ) Σ_{k ≤ t/D} (ρ(k − t/D))^k e^{−ρ(k − t/D)} / k! loses every digit to cancellation by t ≈ 40D
# (V. B. Iversen, L. Staalhage, "Waiting time distribution in M/D/1 queueing systems", Electronics Letters 35
# (1999), doi:10.1049/el:19991500, compute it from the state probabilities for that reason). π_j, at departures,
# from the balance across the cut between j and j + 1: the only way down is a service that leaves j + 1 with no
# arrival during it; every term positive, so the recursion is numerically stable:
#     π_0 = 1 − ρ,   a_0 π_{j+1} = π_0 ā_{j+1} + Σ_{i=1}^{j} π_i ā_{j+2−i},
#     a_k = e^{−ρ} ρ^k / k!,   ā_m = Σ_{k≥m} a_k.
# MD1_TERMS: the arrivals in one service counted (ā_m for ρ < 1 is below 1e-47 past m = 40, under a double's
# resolution of the sums). MD1_STATES: the number in system followed; where a percentile lies further out (ρ above
# about 0.9996 for the p99) the figure returned is MD1_STATES·D, a lower bound of it.
MD1_TERMS: Final = 48
MD1_STATES: Final = 6000


def _md1_states(rho: float, level: float) -> list[float]:
    """π_0 … π_m of the M/D/1 queue at load ρ < 1, m the first state whose cumulative sum reaches `level` (or
    MD1_STATES)."""
    a = [math.exp(-rho)]
    for k in range(1, MD1_TERMS + 2):
        a.append(a[-1] * rho / k)
    tail = [0.0] * (MD1_TERMS + 2)  # ā_m, summed from the smallest term up
    for m in range(MD1_TERMS, -1, -1):
        tail[m] = tail[m + 1] + a[m]
    tail[0] = 1.0

    def upper(m: int) -> float:
        return tail[m] if m <= MD1_TERMS else 0.0

    pi = [1.0 - rho]
    total = pi[0]
    while total < level and len(pi) < MD1_STATES:
        j = len(pi) - 1
        value = pi[0] * upper(j + 1)
        for i in range(max(1, j + 2 - MD1_TERMS), j + 1):
            value += pi[i] * tail[j + 2 - i]
        pi.append(value / a[0])
        total += pi[-1]
    return pi


def _md1_cdf(pi: list[float], cumulative: list[float], rho: float, k: int, u: float) -> float:
    """P(W ≤ k + u) in units of the service time (0 ≤ u < 1), given π_0 … π_{k+1} and their running sums: the states
    more than MD1_TERMS below k + 1 count whole (P(A ≤ n) for n past MD1_TERMS is 1 to a double)."""
    mean = rho * (1.0 - u)
    pmf = math.exp(-mean)
    cdf = [pmf]  # P(A ≤ n), n = 0 … min(k + 1, MD1_TERMS)
    for n in range(1, min(k + 1, MD1_TERMS) + 1):
        pmf *= mean / n
        cdf.append(cdf[-1] + pmf)
    first = k + 1 - (len(cdf) - 1)  # the states below it count whole
    value = cumulative[first - 1] if first > 0 else 0.0
    value += sum(pi[j] * cdf[k + 1 - j] for j in range(first, k + 2))
    at_k1 = pmf if k + 1 <= MD1_TERMS else 0.0  # P(A = k + 1)
    return value - pi[0] * at_k1


@functools.lru_cache(maxsize=4096)
def md1_wait_quantiles(rho: float) -> tuple[float, float, float]:
    """The p50, p90 and p99 of an M/D/1 queue's waiting time (before service) at load ρ, in units of the service
    time: exact (see above) to 1e-9 of D; infinite at ρ ≥ 1. Depends on ρ alone, so it is cached on it."""
    if rho >= 1:
        return math.inf, math.inf, math.inf
    if rho <= 0:
        return 0.0, 0.0, 0.0
    pi = _md1_states(rho, PERCENTILE_LEVELS["p99"])
    cumulative = list(itertools.accumulate(pi))
    found: list[float] = []
    for percentile in PERCENTILES:
        level = PERCENTILE_LEVELS[percentile]
        if level <= pi[0]:
            found.append(0.0)
            continue
        m = next((index for index, total in enumerate(cumulative) if total >= level), None)
        if m is None:  # past the states followed: a lower bound
            found.append(float(len(pi)))
            continue
        # P(W ≤ (m − 1)D) < level ≤ P(W ≤ mD): bisect u in [0, 1) with k = m − 1
        low, high = 0.0, 1.0
        while high - low > 1e-9:
            mid = (low + high) / 2
            if _md1_cdf(pi, cumulative, rho, m - 1, mid) >= level:
                high = mid
            else:
                low = mid
        found.append(m - 1 + high)
    return found[0], found[1], found[2]


def md1_ttft_floor(rate: float, service_s: float, fixed_s: float = 0.0) -> Quantiles:
    """The time to first token's p50, p90 and p99 of an M/D/1 queue: Poisson arrivals at `rate` in front of a
    prefill of `service_s` seconds, each first token `fixed_s` later still (the engine's per-request cost, outside
    the queue). What one replica's simulated percentiles are held to (a seeded run of a thousand requests spreads
    widely about them at high load)."""
    waits = md1_wait_quantiles(rate * service_s)
    return Quantiles(*(service_s + fixed_s + wait * service_s for wait in waits))


def erlang_c(servers: int, offered: float) -> float:
    """The probability an arrival waits in an M/M/c queue (Erlang C) with `servers` servers and `offered` = λ × mean
    service erlangs, through the Erlang B recursion B(k) = aB(k−1) / (k + aB(k−1)), C = B / (1 − ρ(1 − B))
    (Kleinrock, Queueing Systems Vol. 1, 1975, §3.5); 1 at ρ = offered ÷ servers ≥ 1."""
    if offered <= 0:
        return 0.0
    rho = offered / servers
    if rho >= 1:
        return 1.0
    blocking = 1.0
    for k in range(1, servers + 1):
        blocking = offered * blocking / (k + offered * blocking)
    return blocking / (1 - rho * (1 - blocking))


def mdc_wait_quantiles(rate: float, servers: int, service_s: float) -> Quantiles:
    """The p50, p90 and p99 of the wait before service of Poisson arrivals at `rate` for one of `servers` slots each
    held `service_s` seconds (a decode replica's sequence slots, each held for a request's whole decode): M/D/c in
    the heavy-traffic form P(W > t) ≈ C(c, a) · exp(−2(cμ − λ)t / (c_a² + c_s²)), c_a² = 1 (Poisson), c_s² = 0
    (deterministic holding), C the Erlang C probability of waiting (Kingman's heavy-traffic law extended to c
    servers, Köllerström, J. Appl. Prob. 11, 1974; for c = 1 its mean is Pollaczek-Khinchine's M/D/1 mean, half of
    M/M/1's). An approximation, not a bound; exact as ρ → 1, where it matters. Infinite at ρ ≥ 1."""
    if service_s <= 0 or rate <= 0:
        return Quantiles(0.0, 0.0, 0.0)
    if rate * service_s >= servers:
        return Quantiles(math.inf, math.inf, math.inf)
    waiting = erlang_c(servers, rate * service_s)
    decay = 2 * (servers / service_s - rate)  # (cμ − λ) × 2 / (c_a² + c_s²)
    found = [max(0.0, math.log(waiting / (1 - PERCENTILE_LEVELS[q])) / decay) if waiting > 0 else 0.0
             for q in PERCENTILES]  # fmt: skip
    return Quantiles(*found)
