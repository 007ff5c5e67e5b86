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
  app/estimator/serving.py for the decodes and prompt tokens the step carries).

Steps in which nothing but decoding happens are advanced together up to the next arrival or completion (their
time is linear in the context, so the average of the first and last step times them), so a run costs a few
events per request rather than one per token. Standard library only (`random` for the arrivals and lengths):
the figures are a pure function of the inputs and the seed.

Closed forms: an M/D/1 queue in front of a prompt's prefill (Pollaczek-Khinchine mean; the exponential tail
P(W > t) ≈ ρ·exp(−2(1 − ρ)t / D) of the M/G/1 heavy-traffic approximation, Kingman 1962) steer the replica
search; what is reported is the simulation.
"""

from __future__ import annotations

import heapq
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

    def at_most(self, higher_load: LoadLatency) -> LoadLatency:
        """These latencies capped at those of the same arrivals at a higher rate (`simulate` scales one seed's
        arrivals by 1 / rate and draws the same lengths, so the higher rate only brings each request closer to
        the ones before it): where a percentile came out lower at the higher rate, that is the phase of the
        arrivals against the steps (a fraction of a step), not the load, and the lower figure stands for both."""
        return LoadLatency(
            self.ttft.at_most(higher_load.ttft), self.tpot.at_most(higher_load.tpot),
            self.e2e.at_most(higher_load.e2e), self.saturated, self.requests, self.held_s, self.running,
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


def _run(scheduler: Scheduler, step_time: StepTime, arrival: list[float], prompt: list[int],  # noqa: C901
         output: list[int], cached: list[int] | None = None, tokens_per_step: float = 1.0) -> _Outcome:  # fmt: skip
    """One run of the scheduler over the requests (arrival, lengths). Over the complexity limit by design (C901):

    The replica's state is held in locals and the steps are written out in one loop rather than as methods: the
    loop runs a few thousand events per simulation and a search runs a few simulations per candidate, so Python's
    attribute and call overheads were most of a serving answer's time. The arithmetic, and its order, is that of
    the scheduler described at the top of this module: the same inputs give the same floats.

    `cached`: each prompt's tokens found in the prefix cache (its prefill starts after them; its KV still reserved
    whole). `tokens_per_step`: tokens a decode step yields per sequence on average (speculative decoding; the
    context grows by as much a step, and a request completes after ceil((output − 1) / it) decode steps)."""
    count = len(arrival)
    ceil = math.ceil
    token_budget, max_seqs, kv_tokens, block = (
        scheduler.token_budget, scheduler.max_seqs, scheduler.kv_tokens, scheduler.block
    )  # fmt: skip
    mixed, lookahead = scheduler.mixed, scheduler.lookahead
    need = [-(-(prompt[i] + output[i]) // block) * block for i in range(count)]  # KV reserved, whole pages
    first = [math.inf] * count
    finish = [math.inf] * count
    prefilled = list(cached) if cached else [0] * count  # prompt tokens prefilled (or found in the cache) so far
    tps = tokens_per_step
    steps_to_finish = [output[i] - 1 if tps == 1.0 else ceil((output[i] - 1) / tps) for i in range(count)]
    base = [0.0] * count  # prompt + 1 − the decode step at which it joined the decodes (× tokens_per_step)
    waiting: deque[int] = deque()
    prefilling: deque[int] = deque()  # admitted, prompt not yet complete; first come first served
    ends: list[tuple[int, int]] = []  # heap of (decode step after which it is complete, request)
    heappush, heappop, sqrt = heapq.heappush, heapq.heappop, math.sqrt
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
    while completed < count:
        while nxt < count and arrival[nxt] - origin <= now:
            start[nxt] = arrival[nxt] - origin
            waiting.append(nxt)
            nxt += 1
            if nxt == count:  # requests without a first token yet: the queue
                queue_at_last_arrival = len(waiting) + len(prefilling)
        if running == 0 and not waiting:  # idle until the next request
            if arrival[nxt] >= REBASE_S:
                origin, now = arrival[nxt], 0.0
            else:
                now = arrival[nxt]
            continue
        # admission: waiting requests in arrival order while a sequence slot and their KV cache are free (one
        # request is always admitted into an empty replica, as engines run a request longer than the cache's share)
        while waiting and running < max_seqs:
            head = waiting[0]
            if running and reserved + need[head] > kv_tokens:
                break
            waiting.popleft()
            prefilling.append(head)
            admitted[head] = now
            reserved += need[head]
            running += 1
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
                    while ends and ends[0][0] <= decode_steps:  # complete: the cache freed
                        request = heappop(ends)[1]
                        decoding -= 1
                        decode_base -= base[request]
                        finish[request] = now
                        completed += 1
                        running -= 1
                        reserved -= need[request]
            for _ in range(finished):
                request = prefilling.popleft()
                first[request] = now
                if output[request] <= 1:
                    finish[request] = now
                    completed += 1
                    running -= 1
                    reserved -= need[request]
                    continue
                # joins the decodes: its KV tokens are prompt + 1 now and grow by one a decode step
                base[request] = prompt[request] + 1 - decode_steps * tps
                decode_base += base[request]
                decoding += 1
                heappush(ends, (decode_steps + steps_to_finish[request], request))
            continue
        # steps that only decode, advanced together up to the next completion, or up to the step after the next
        # arrival when it could be admitted at once
        kv = decode_base + decoding * decode_steps * tps
        steps = ends[0][0] - decode_steps
        first_step = step_time(decoding, kv, 0, 0.0)
        if nxt < count and not waiting and running < max_seqs:
            # steps to the one after the next arrival, at least 1. Over more than 8 steps the k-th takes
            # first_step + k·growth (the context grows a token a step), so n steps take
            # n·first_step + growth·n(n − 1)/2, the time the advance below counts: the smallest n that reaches
            # the arrival is that quadratic's root, rounded up (first_step alone overshot the arrival by about
            # growth·n²/2, most at the longest gaps, the lowest rates)
            gap = arrival[nxt] - origin - now
            until = ceil(gap / first_step)
            if until > 8:
                growth = step_time(decoding, kv + decoding * tps, 0, 0.0) - first_step
                if growth > 0:
                    half = first_step - growth / 2
                    until = max(9, ceil((sqrt(half * half + 2 * growth * gap) - half) / growth))
            if until < steps:
                until = until if until > 1 else 1
                steps = min(until + lookahead, steps)
        if steps > 8:  # the context grows by a token a step: over a few steps the first step's time stands
            last_step = step_time(decoding, kv + decoding * (steps - 1) * tps, 0, 0.0)
            now += steps * (first_step + last_step) / 2
        else:
            now += steps * first_step
        decode_steps += steps
        while ends and ends[0][0] <= decode_steps:  # complete: the cache freed
            request = heappop(ends)[1]
            decoding -= 1
            decode_base -= base[request]
            finish[request] = now
            completed += 1
            running -= 1
            reserved -= need[request]
    return _Outcome(start, first, finish, queue_at_last_arrival, admitted)


def poisson_arrivals(rate: float, requests: int, seed: int = DEFAULT_SEED) -> list[float]:
    """Arrival times of a Poisson process at `rate` per second (exponential gaps from random.Random(seed)); the
    same seed gives the same arrivals, scaled by 1 / rate, whatever the rate."""
    uniform, log = random.Random(seed).random, math.log
    t, times = 0.0, []
    for _ in range(requests):
        t += -log(1.0 - uniform()) / rate  # random.Random.expovariate(rate), written out (no call per draw)
        times.append(t)
    return times


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
) -> LoadLatency:
    """Run `requests` Poisson arrivals at `rate` per second through one replica; the latencies of those after the
    warm-up. `per_request_s`: the engine's fixed cost per request (API server, tokenisation, detokenisation)
    added to each time to first token. `cached_share`: the share of each prompt found in the prefix cache (never its
    last token); `tokens_per_step`: tokens a decode step yields per sequence (speculative decoding)."""
    arrival = poisson_arrivals(rate, requests, seed)
    lengths = random.Random(seed + 1)
    draw_prompt, draw_output = prompts.sampler(lengths), outputs.sampler(lengths)
    # constant lengths draw nothing from `lengths`, so writing them out leaves the lognormal draws as they were
    prompt = [prompts.mean] * requests if prompts.constant else [draw_prompt() for _ in range(requests)]
    output = [outputs.mean] * requests if outputs.constant else [draw_output() for _ in range(requests)]
    cached = [min(p - 1, math.floor(p * cached_share)) for p in prompt] if cached_share > 0 else None
    run = _run(scheduler, step_time, arrival, prompt, output, cached, tokens_per_step)
    measured = range(min(warmup, requests - 1), requests)
    ttft = [run.first[i] - run.start[i] + per_request_s for i in measured]
    tpot = [(run.finish[i] - run.first[i]) / (output[i] - 1) for i in measured if output[i] > 1] or [0.0]
    e2e = [run.finish[i] - run.start[i] + per_request_s for i in measured]
    saturated = run.queue_at_last_arrival > max(10, requests // 20)
    held = [run.finish[i] - run.admitted[i] for i in measured]
    span = max(run.finish[i] for i in measured) - min(run.start[i] for i in measured)
    # Little's law on the running set (rate × time held), or the time-average over the span where the replica falls
    # behind the arrivals (then it runs fewer than rate × held); the span is on one clock unless the run rebased
    running = min(rate * sum(held) / len(held), sum(held) / span if span > 0 else math.inf)
    return LoadLatency(
        quantiles(ttft), quantiles(tpot), quantiles(e2e), saturated, len(measured), sum(held) / len(held), running
    )


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
