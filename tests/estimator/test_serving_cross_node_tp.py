"""TP across servers costs its all-reduces over the fabric: the same TP 16 group is slower per token over two 8-GPU
servers joined by InfiniBand than inside one 16-GPU NVSwitch server. The difference is the fabric's: per all-reduce,
data/interconnects.json's ib-ndr-400 latency (20 µs) plus nvlink4's (12 µs) replace the engines' one-shot NVLink
kernel (ALLREDUCE_LATENCY_S, 8 µs for SGLang), two all-reduces per layer (Megatron-style TP: after attention and
after the MLP), and each token's hidden state (bf16) at the fabric's bus bandwidth instead of NVLink's."""

from __future__ import annotations

import pytest

from app.estimator.hardware import get_gpu
from app.estimator.interconnects import group_bandwidth
from app.estimator.presets import get_preset
from app.estimator.serving import ALLREDUCE_LATENCY_S, ServingConfig, estimate_serving
from app.estimator.specs import Cluster

H100 = get_gpu("h100-80g-sxm")
LLAMA_405B = get_preset("llama-3.1-405b").model
ONE_SERVER = Cluster(gpu=H100, gpus_per_node=16)  # one NVSwitch domain of 16 cards (an HGX-2-like server)
TWO_SERVERS = Cluster(gpu=H100, gpus_per_node=8, nodes=2, inter_node_fabric="ib-ndr-400", inter_node_gbps=3200.0)


@pytest.mark.parametrize("concurrency", [1, 32])
def test_tp_across_servers_costs_more_communication_than_inside_one(concurrency: int) -> None:
    cfg = ServingConfig(input_tokens=2000, output_tokens=500, concurrency=concurrency, engine="sglang", weights="fp8")
    inside = estimate_serving(LLAMA_405B, cfg, ONE_SERVER, tp=16)
    across = estimate_serving(LLAMA_405B, cfg, TWO_SERVERS, tp=16)
    assert across.tpot_ms > inside.tpot_ms
    # at one sequence a step's all-reduces are latency: 2 per layer x (IB + NVLink hop − the one-shot kernel)
    fabric_s = group_bandwidth(TWO_SERVERS, 16, 8).latency_s - ALLREDUCE_LATENCY_S["sglang"]
    assert fabric_s == pytest.approx(24e-6)
    latency_ms = 2 * LLAMA_405B.layers * fabric_s * 1e3
    if concurrency == 1:
        assert across.tpot_ms - inside.tpot_ms == pytest.approx(latency_ms, rel=0.05)
    else:
        assert across.tpot_ms - inside.tpot_ms >= latency_ms * 0.95
