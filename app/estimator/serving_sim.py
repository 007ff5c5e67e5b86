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

    def sampler(self, rng: random.Random) -> Callable[[], int]:
        if self.p95 is None or self.p95 <= self.mean:
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


@dataclass(frozen=True, slots=True)
class Quantiles:
    p50: float
    p90: float
    p99: float

    def at(self, percentile: str) -> float:
        return float(getattr(self, percentile))

    def scaled(self, factor: float) -> Quantiles:
        return Quantiles(self.p50 * factor, self.p90 * factor, self.p99 * factor)


@dataclass(frozen=True, slots=True)
class LoadLatency:
    """Simulated latencies of one replica at one arrival rate, in seconds."""

    ttft: Quantiles
    tpot: Quantiles
    e2e: Quantiles
    saturated: bool  # the queue grew through the run: the replica cannot keep up with the rate
    requests: int  # requests measured (after the warm-up)


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


def _blocks(tokens: int, block: int) -> int:
    return -(-tokens // block) * block


class _Run:
    """One run of the scheduler: the requests (arrival, lengths, outcome) and the replica's state."""

    def __init__(self, scheduler: Scheduler, step_time: StepTime, arrival: list[float], prompt: list[int],
                 output: list[int]) -> None:  # fmt: skip
        self.scheduler, self.step_time = scheduler, step_time
        self.arrival, self.prompt, self.output = arrival, prompt, output
        count = len(arrival)
        self.need = [_blocks(prompt[i] + output[i], scheduler.block) for i in range(count)]
        self.first = [math.inf] * count
        self.finish = [math.inf] * count
        self.prefilled = [0] * count  # prompt tokens prefilled so far
        self.base = [0] * count  # prompt + 1 − the decode step at which it joined the decodes
        self.waiting: deque[int] = deque()
        self.prefilling: deque[int] = deque()  # admitted, prompt not yet complete; first come first served
        self.ends: list[tuple[int, int]] = []  # heap of (decode step after which it is complete, request)
        self.decoding = 0
        self.decode_base = 0  # Σ base over the decoding requests: their KV tokens = base + decoding × steps
        self.decode_steps = 0  # decode steps so far (every decoding request advances on each)
        self.reserved = 0  # KV tokens reserved by the running requests
        self.running = 0
        self.now = 0.0
        self.next = 0  # the next request to arrive
        self.completed = 0
        self.queue_at_last_arrival = 0

    def run(self) -> None:
        count, arrival = len(self.arrival), self.arrival
        waiting, prefilling = self.waiting, self.prefilling
        max_seqs = self.scheduler.max_seqs
        while self.completed < count:
            nxt, now = self.next, self.now
            while nxt < count and arrival[nxt] <= now:
                waiting.append(nxt)
                nxt += 1
                if nxt == count:  # requests without a first token yet: the queue
                    self.queue_at_last_arrival = len(waiting) + len(prefilling)
            self.next = nxt
            if self.running == 0 and not waiting:
                self.now = arrival[nxt]  # idle until the next request
                continue
            if waiting and self.running < max_seqs:
                self._admit()
            if prefilling:
                self._mixed_step()
            else:
                self._decode_run()

    def _admit(self) -> None:
        """Waiting requests in arrival order while a sequence slot and their KV cache are free (one request
        is always admitted into an empty replica, as engines run a request longer than the cache's share)."""
        limits = self.scheduler
        while self.waiting and self.running < limits.max_seqs:
            head = self.waiting[0]
            if self.running and self.reserved + self.need[head] > limits.kv_tokens:
                return
            self.waiting.popleft()
            self.prefilling.append(head)
            self.reserved += self.need[head]
            self.running += 1

    def _kv(self) -> float:
        return float(self.decode_base + self.decoding * self.decode_steps)

    def _mixed_step(self) -> None:
        """One step: a token for every decoding request, then prompt chunks within what is left of the budget."""
        budget = self.scheduler.token_budget - (self.decoding if self.scheduler.mixed else 0)
        tokens, span = 0, 0.0
        finished_prompts = []
        for request in self.prefilling:
            if budget <= 0:
                break
            offset = self.prefilled[request]
            chunk = min(self.prompt[request] - offset, budget)
            budget -= chunk
            tokens += chunk
            span += chunk * (offset + chunk / 2)
            self.prefilled[request] = offset + chunk
            if offset + chunk == self.prompt[request]:
                finished_prompts.append(request)
        if not self.scheduler.mixed:  # a prefill batch: the running requests wait for it
            self.now += self.step_time(0, 0.0, tokens, span)
        else:
            self.now += self.step_time(self.decoding, self._kv(), tokens, span)
            if self.decoding:
                self.decode_steps += 1
                self._retire()
        for request in finished_prompts:
            self.prefilling.remove(request)
            self.first[request] = self.now
            if self.output[request] <= 1:
                self._complete(request)
                continue
            # joins the decodes: its KV tokens are prompt + 1 now and grow by one a decode step
            self.base[request] = self.prompt[request] + 1 - self.decode_steps
            self.decode_base += self.base[request]
            self.decoding += 1
            heapq.heappush(self.ends, (self.decode_steps + self.output[request] - 1, request))

    def _decode_run(self) -> None:
        """Steps that only decode, advanced together up to the next completion, or up to the step after the next
        arrival when it could be admitted at once."""
        decoding, done = self.decoding, self.decode_steps
        kv = float(self.decode_base + decoding * done)
        steps = self.ends[0][0] - done
        first_step = self.step_time(decoding, kv, 0, 0.0)
        nxt = self.next
        if nxt < len(self.arrival) and not self.waiting and self.running < self.scheduler.max_seqs:
            steps = min(steps, max(1, math.ceil((self.arrival[nxt] - self.now) / first_step)))
        if steps > 8:  # the context grows by a token a step: over a few steps the first step's time stands
            last_step = self.step_time(decoding, kv + decoding * (steps - 1), 0, 0.0)
            self.now += steps * (first_step + last_step) / 2
        else:
            self.now += steps * first_step
        self.decode_steps = done + steps
        if self.ends[0][0] <= self.decode_steps:
            self._retire()

    def _retire(self) -> None:
        """Requests whose last token the steps so far produced: complete, their cache freed."""
        while self.ends and self.ends[0][0] <= self.decode_steps:
            _, request = heapq.heappop(self.ends)
            self.decoding -= 1
            self.decode_base -= self.base[request]
            self._complete(request)

    def _complete(self, request: int) -> None:
        self.finish[request] = self.now
        self.completed += 1
        self.running -= 1
        self.reserved -= self.need[request]


def poisson_arrivals(rate: float, requests: int, seed: int = DEFAULT_SEED) -> list[float]:
    """Arrival times of a Poisson process at `rate` per second (exponential gaps from random.Random(seed)); the
    same seed gives the same arrivals, scaled by 1 / rate, whatever the rate."""
    rng = random.Random(seed)
    t, times = 0.0, []
    for _ in range(requests):
        t += rng.expovariate(rate)
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
) -> LoadLatency:
    """Run `requests` Poisson arrivals at `rate` per second through one replica; the latencies of those after the
    warm-up. `per_request_s`: the engine's fixed cost per request (API server, tokenisation, detokenisation)
    added to each time to first token."""
    arrival = poisson_arrivals(rate, requests, seed)
    lengths = random.Random(seed + 1)
    draw_prompt, draw_output = prompts.sampler(lengths), outputs.sampler(lengths)
    prompt = [draw_prompt() for _ in range(requests)]
    output = [draw_output() for _ in range(requests)]
    run = _Run(scheduler, step_time, arrival, prompt, output)
    run.run()
    measured = range(min(warmup, requests - 1), requests)
    ttft = [run.first[i] - arrival[i] + per_request_s for i in measured]
    tpot = [(run.finish[i] - run.first[i]) / (output[i] - 1) for i in measured if output[i] > 1] or [0.0]
    e2e = [run.finish[i] - arrival[i] + per_request_s for i in measured]
    saturated = run.queue_at_last_arrival > max(10, requests // 20)
    return LoadLatency(quantiles(ttft), quantiles(tpot), quantiles(e2e), saturated, len(measured))


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
