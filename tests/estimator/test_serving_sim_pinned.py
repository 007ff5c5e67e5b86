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
        _latency((0.08963727500915297, 0.1654488208363844, 0.276234316455262),
                 (0.01897178080210864, 0.021614773029037342, 0.02371523806211056),
                 (4.94181532166499, 5.623239329136206, 6.189379909032905), False),
    ),
    "long prompts, TP 8 H100": (
        "llama-3.1-70b", H100, 8, 1, 3, {"input_tokens": 8000, "output_tokens": 300, "requests_per_s": 5},
        _latency((0.9474145370123068, 2.253169012262629, 3.4423615825411753),
                 (0.11869485910178114, 0.1786260315271738, 0.1983295092458049),
                 (37.16222427229775, 55.23065536233309, 61.99880558940596), False),
    ),
    "lognormal lengths": (
        "llama-3.1-8b", H100, 1, 1, 2,
        {"input_tokens": 1000, "output_tokens": 300, "input_tokens_p95": 3000, "output_tokens_p95": 900,
         "requests_per_s": 8},
        _latency((0.02646587883186058, 0.07369889021520921, 0.16613154816701792),
                 (0.0106632090790465, 0.012055416845912712, 0.01386653771168291),
                 (2.0156264085731515, 6.818420564997405, 17.813554563255053), False),
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
        _latency((0.12614078967915532, 0.23649220012599415, 0.42153114674440423),
                 (0.021507075073832222, 0.024614582900602477, 0.027029781318546938),
                 (5.627332595358979, 6.465825343300023, 7.025220713822687), False),
    ),
    "saturated": (
        "llama-3.1-70b", H100, 8, 1, 1, {"input_tokens": 8000, "output_tokens": 300, "requests_per_s": 5},
        _latency((165.19581678507177, 256.32061765397765, 279.3674881241886),
                 (0.1992706107061991, 0.19927066273461566, 0.19927067465779472),
                 (224.77773027748293, 297.0964356349561, 304.2058270843618), True),
    ),
    "KV cache bound, long lognormal prompts": (
        "llama-3.1-70b", A100, 4, 1, 2,
        {"input_tokens": 8000, "output_tokens": 2000, "input_tokens_p95": 20000, "requests_per_s": 3,
         "max_model_len": 32768},
        _latency((2409.166907099024, 3748.0495245849393, 4096.948553155815),
                 (0.09228499638462662, 0.09507142136262615, 0.09752463850737556),
                 (2588.272860589032, 3933.6699083174103, 4244.226178058208), True),
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", list(CASES))
def test_simulated_figures_are_unchanged(name: str) -> None:
    preset, cluster, tp, pp, replicas, fields, expected = CASES[name]
    latency = peak_latency(get_preset(preset).model, ServingConfig(**fields), cluster, tp=tp, pp=pp, replicas=replicas)
    # exact: the same inputs and seed give the same floats (the KV hold time and the requests run, added after
    # these cases were written, are checked in test_serving_sim.py)
    assert replace(latency, held_s=0.0, running=0.0) == expected
