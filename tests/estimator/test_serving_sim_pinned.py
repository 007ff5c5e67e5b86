"""Regression guard for the scheduler simulation: the figures of a few replicas at their peak, as the simulator
gave them when these cases were written, to the last digit. Speed-ups of app/estimator/serving_sim.py (and of the
search that calls it) must not move any figure for the same seed; these are not published measurements (the
simulator's accuracy is checked in test_serving_sim.py and test_serving_loaded_published.py)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.estimator.hardware import get_gpu
from app.estimator.presets import get_preset
from app.estimator.serving import ServingConfig, peak_latency
from app.estimator.serving_sim import LoadLatency, Quantiles
from app.estimator.specs import Cluster

H100 = Cluster(gpu=get_gpu("h100-80g-sxm"), gpus_per_node=8)
A100 = Cluster(gpu=get_gpu("a100-80g-sxm"), gpus_per_node=8)
A100_TWO_NODES = Cluster(
    gpu=get_gpu("a100-80g-sxm"), gpus_per_node=8, nodes=2, inter_node_gbps=3200, inter_node_fabric="ib-ndr-400"
)


def _latency(ttft: tuple, tpot: tuple, e2e: tuple, saturated: bool) -> LoadLatency:
    return LoadLatency(Quantiles(*ttft), Quantiles(*tpot), Quantiles(*e2e), saturated, 1000)


# name: (preset, cluster, tp, pp, replicas, ServingConfig fields, the simulated latency at the peak)
CASES = {
    "dense, vLLM, one A100": (
        "llama-3.1-8b", A100, 1, 1, 4, {"input_tokens": 1024, "output_tokens": 256, "requests_per_s": 10},
        _latency((0.0857136950688897, 0.15087081782170914, 0.2629208247785174),
                 (0.018525971954042687, 0.020943217453435414, 0.022813700999455556),
                 (4.829683034058576, 5.47358878184788, 5.914503428208853), False),
    ),
    "long prompts, TP 8 H100": (
        "llama-3.1-70b", H100, 8, 1, 3, {"input_tokens": 8000, "output_tokens": 300, "requests_per_s": 5},
        _latency((0.7983004463211216, 1.8817076198192753, 3.0732456626362867),
                 (0.10836244064462658, 0.16419007817049214, 0.19417930651391466),
                 (33.47438715684808, 50.05350804133828, 60.04101693749054), False),
    ),
    "lognormal lengths": (
        "llama-3.1-8b", H100, 1, 1, 2,
        {"input_tokens": 1000, "output_tokens": 300, "input_tokens_p95": 3000, "output_tokens_p95": 900,
         "requests_per_s": 8},
        _latency((0.023979203066261334, 0.07032296568669381, 0.1608601560095269),
                 (0.010503862000617838, 0.011880962925725021, 0.013733464248502327),
                 (1.9872531948119203, 6.688780578412593, 17.597690619996204), False),
    ),
    "MoE, SGLang (prefill steps alone)": (
        "mixtral-8x7b", H100, 2, 1, 1,
        {"input_tokens": 512, "output_tokens": 512, "requests_per_s": 5, "engine": "sglang", "release": "sglang-0.3"},
        _latency((0.06506332705936302, 0.10444238852859229, 0.17073201170806768),
                 (0.05263522434093805, 0.05370357047585909, 0.05409444884686318),
                 (26.95596402290419, 27.506394897862066, 27.69577628285883), False),
    ),
    # the same replica on a current SGLang, whose scheduler runs one batch ahead (data/engines.json overlap_schedule):
    # an arrival waits one decode step more, so TTFT grows by about one step (figures when the lookahead was added)
    "MoE, SGLang one batch ahead": (
        "mixtral-8x7b", H100, 2, 1, 1,
        {"input_tokens": 512, "output_tokens": 512, "requests_per_s": 5, "engine": "sglang"},
        _latency((0.09759765812949084, 0.145898420908145, 0.1911563068419805),
                 (0.05183797928106987, 0.052971389456239394, 0.05337712631293666),
                 (26.592499848671046, 27.174070830450724, 27.39102195203354), False),
    ),
    "pipeline over two servers": (
        "llama-3.1-70b", A100_TWO_NODES, 8, 2, 1, {"input_tokens": 1024, "output_tokens": 256, "requests_per_s": 2},
        # a prompt's chunk crosses both stages whole (not split among the micro-batches), so its step is longer
        _latency((0.1175347908125346, 0.21698690625270559, 0.4100783258655417),
                 (0.02070023670660215, 0.02347886452071816, 0.025465953543442308),
                 (5.411208531100314, 6.164667904013193, 6.658509726784774), False),
    ),
    "saturated": (
        "llama-3.1-70b", H100, 8, 1, 1, {"input_tokens": 8000, "output_tokens": 300, "requests_per_s": 5},
        _latency((160.84348584443103, 249.48315482330997, 271.96323317078543),
                 (0.19589263925944347, 0.19589269128786002, 0.19589270321103908),
                 (219.41538587426223, 289.86120207025994, 296.7578048809135), True),
    ),
    "KV cache bound, long lognormal prompts": (
        "llama-3.1-70b", A100, 4, 1, 2,
        {"input_tokens": 8000, "output_tokens": 2000, "input_tokens_p95": 20000, "requests_per_s": 3,
         "max_model_len": 32768},
        _latency((2402.282105646524, 3736.9391992277647, 4084.686101573018),
                 (0.09203657739922853, 0.09483115894170437, 0.09726881370100188),
                 (2580.9165060326313, 3921.9808334940203, 4231.837653003108), True),
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", list(CASES))
def test_simulated_figures_are_unchanged(name: str) -> None:
    preset, cluster, tp, pp, replicas, fields, expected = CASES[name]
    latency = peak_latency(get_preset(preset).model, ServingConfig(**fields), cluster, tp=tp, pp=pp, replicas=replicas)
    # exact: the same inputs and seed give the same floats (the KV hold time and the requests run, added after
    # these cases were written, are checked in test_serving_sim.py)
    assert replace(latency, held_s=0.0, running=0.0) == expected
