"""The overlap scheduler (data/engines.json `overlap_schedule`): SGLang from v0.4 and TensorRT-LLM's PyTorch executor
schedule and launch step N+1 before they process step N's output (sglang python/sglang/srt/managers/scheduler.py
event_loop_overlap; lmsys.org/blog/2024-12-04-sglang-v0-4), so a request arriving during step N is received when N
ends and its prefill runs after N+1: about one decode step later than a loop that processes each step first (vLLM
without --async-scheduling; SGLang v0.3, release "sglang-0.3").

Published: datacrunch-research/h200-benchmarks @c091ef53 (SGLang after v0.4, Llama 3.3 70B TP 4 on 4 x H200, random
prompts of 1..1024 tokens at 1 request/s): median TTFT 85.7 ms, median ITL 13.6 ms. Before the lookahead the estimate
read 35.7 ms (-58 %, the first-contact record, tests/estimator/data/serving_first_contact.json); the lookahead adds
about one step. The rest of the gap is not closed here (docs/validation-serving.md): the test asserts the direction
and the size of the step, not the published figure.
"""

from __future__ import annotations

from dataclasses import replace

from app.estimator.serving import ENGINE_DEFAULTS, ServingConfig, estimate_serving
from tests.estimator.serving_first_contact import SERVING_FIRST_CONTACT, predict


def _ttft_tpot(cfg: ServingConfig) -> tuple[float, float]:
    case = SERVING_FIRST_CONTACT[0]
    cluster_case = replace(case, cfg=cfg, metric="ttft_ms")
    return predict(cluster_case), predict(replace(cluster_case, metric="tpot_ms"))


def test_engines_that_run_one_batch_ahead() -> None:
    assert ENGINE_DEFAULTS["sglang"].overlap_schedule and ENGINE_DEFAULTS["trt-llm"].overlap_schedule
    assert not ENGINE_DEFAULTS["vllm"].overlap_schedule


def test_the_lookahead_adds_about_one_decode_step_to_the_time_to_first_token() -> None:
    case = SERVING_FIRST_CONTACT[0]
    assert case.label.endswith("1 rps ttft") and case.published == 85.745
    now, tpot = _ttft_tpot(case.cfg)
    before, _ = _ttft_tpot(replace(case.cfg, release="sglang-0.3"))
    assert 0.5 * tpot <= now - before <= 1.5 * tpot, (now, before, tpot)
    # toward the published median, from the first contact's 35.7 ms (-58 %)
    assert abs(now / case.published - 1) < abs(35.73 / case.published - 1)


def test_an_idle_replica_waits_for_no_step() -> None:
    case = SERVING_FIRST_CONTACT[0]
    from app.estimator.specs import Cluster

    cluster = Cluster(gpu=case.gpu, gpus_per_node=8)
    now = estimate_serving(case.model, case.cfg, cluster, tp=case.tp, replicas_needed=0)
    old = estimate_serving(case.model, replace(case.cfg, release="sglang-0.3"), cluster, tp=case.tp, replicas_needed=0)
    assert now.isolated_ttft_ms == old.isolated_ttft_ms
