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
import itertools
import math
import operator
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Literal

from app.estimator.serving_run import DecodeTime, Scheduler, StepTime, run_scheduler

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


def poisson_arrivals(rate: float, requests: int, seed: int = DEFAULT_SEED) -> list[float]:
    """Arrival times of a Poisson process at `rate` per second (exponential gaps from random.Random(seed)); the
    same seed gives the same arrivals, scaled by 1 / rate, whatever the rate."""
    # each gap random.Random.expovariate(rate)'s -log(1 - U) / rate, summed in order from 0 (accumulate's first term is
    # the first gap itself, as 0.0 + it is)
    gaps = _unit_gaps(seed, requests)
    return list(itertools.accumulate(map(operator.truediv, gaps, itertools.repeat(rate, len(gaps)))))


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
    prompt, output = _drawn_lengths(prompts, outputs, requests, seed)
    cached = [min(p - 1, math.floor(p * cached_share)) for p in prompt] if cached_share > 0 else None
    run = run_scheduler(scheduler, step_time, arrival, prompt, output, cached, tokens_per_step, decode_time)
    measured = min(warmup, requests - 1)  # the first measured request
    start, first, finish = run.start[measured:], run.first[measured:], run.finish[measured:]
    # (map over operator's functions: the same operations, in the same order, as the comprehensions they stand for)
    sub, add, fixed = operator.sub, operator.add, itertools.repeat(per_request_s)
    ttft = list(map(add, map(sub, first, start), fixed))  # f - s + per_request_s
    if outputs.constant and outputs.mean > 1:  # (e - f) / (o - 1), one o for all
        tpot = list(map(operator.truediv, map(sub, finish, first), itertools.repeat(outputs.mean - 1)))
    else:
        out = output[measured:]
        if min(out) > 1:
            tpot = list(map(operator.truediv, map(sub, finish, first), map(sub, out, itertools.repeat(1))))
        else:
            tpot = [(e - f) / (o - 1) for e, f, o in zip(finish, first, out, strict=True) if o > 1] or [0.0]
    e2e = list(map(add, map(sub, finish, start), fixed))
    saturated = run.queue_at_last_arrival > max(10, requests // 20)
    held = list(map(sub, finish, run.admitted[measured:]))
    held_s = sum(held)
    span = max(finish) - min(start)
    # Little's law on the running set (rate × time held), or the time-average over the span where the replica falls
    # behind the arrivals (then it runs fewer than rate × held); the span is on one clock unless the run rebased
    running = min(rate * held_s / len(held), held_s / span if span > 0 else math.inf)
    return LoadLatency(
        quantiles(ttft), quantiles(tpot), quantiles(e2e), saturated, len(ttft), held_s / len(held), running,
        sum(ttft) / len(ttft), sum(tpot) / len(tpot), preemptions=run.preemptions,
        recomputed_tokens=run.recomputed_tokens,
    )  # fmt: skip


def _drawn_lengths(prompts: Lengths, outputs: Lengths, requests: int, seed: int) -> tuple[list[int], list[int]]:
    """Each request's prompt and output lengths: lognormal draws from random.Random(seed + 1), prompts first, or the
    mean where constant (which draws nothing from it, so writing it out leaves the other's draws as they were)."""
    if prompts.constant and outputs.constant:
        return [prompts.mean] * requests, [outputs.mean] * requests
    lengths = random.Random(seed + 1)
    draw_prompt, draw_output = prompts.sampler(lengths), outputs.sampler(lengths)
    prompt = [prompts.mean] * requests if prompts.constant else [draw_prompt() for _ in range(requests)]
    output = [outputs.mean] * requests if outputs.constant else [draw_output() for _ in range(requests)]
    return prompt, output


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
    prompt, output = _drawn_lengths(prompts, outputs, requests, seed)
    run = run_scheduler(scheduler, step_time, [0.0] * requests, prompt, output)
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
