"""Tensor parallelism across servers (app/planner/serving_multinode.py), pure: DeepSeek-V3's block-FP8 checkpoint on
8 x H100 servers with MTP speculation (which no engine pipelines) is served as TP 16 over two servers joined by
InfiniBand on every engine, each server's command one its engine starts; never over a TCP network, never split
where a block-FP8 shard would hold part of a 128-row block, and pipelines still compete where the engine runs them."""

from __future__ import annotations

from typing import Any

import pytest

from app.estimator.checkpoints import checkpoint_from_config
from app.estimator.presets import get_preset, preset_config
from app.estimator.serving import ServingConfig, context_limit, estimate_serving
from app.estimator.serving_levers import Speculation
from app.estimator.specs import Cluster
from app.planner.offers import Configuration, Constraints
from app.planner.serving import search_serving
from app.planner.serving_launch import Served, launch_block
from app.planner.serving_multinode import cross_node_degrees
from tests.planner.test_serving_launch import H100_IB, _cfg, _check, _flags
from tests.planner.test_serving_search import offer

DEEPSEEK = get_preset("deepseek-v3").model
CONFIG = preset_config("deepseek-v3")
SERVED = Served("deepseek-ai/DeepSeek-V3", checkpoint_from_config(CONFIG), context_limit(CONFIG))
H100_TCP = offer("h100-eth", "h100-80g-sxm", "400000", fabric="eth-100")
MTP = Speculation("mtp", 1, 0.85)
TWO_SERVERS = Cluster(gpu=H100_IB.gpu, gpus_per_node=8, nodes=2, inter_node_fabric="ib-ndr-400", inter_node_gbps=3200.0)


def _deepseek_cfg(engine: str, **changes: Any) -> ServingConfig:
    base = {"weights": "fp8", "group_size": 128 * 128, "mla_cache_values": 576, "requests_per_s": 10.0}
    return _cfg(engine, **(base | {"input_tokens": 2000, "output_tokens": 500} | changes))


def _search(engine: str, offers: list, nodes: int = 16, **changes: Any) -> Any:
    return search_serving(
        DEEPSEEK, _deepseek_cfg(engine, **changes), offers, Constraints(max_nodes=nodes), served=SERVED
    )


def _tp16_launch(engine: str) -> dict[str, Any]:
    """The TP 16 over two servers replica's launch: the search's first option on vLLM and SGLang (neither pipelines
    MTP); TensorRT-LLM pipelines it too and ranks TP 8 x PP 2 first here, so its TP 16 launch is built directly."""
    cfg = _deepseek_cfg(engine, speculative=MTP)
    if engine == "trt-llm":
        estimate = estimate_serving(DEEPSEEK, cfg, TWO_SERVERS, tp=16, simulate=False)
        return launch_block(DEEPSEEK, cfg, (16, 1, 1), Configuration(8, 2), estimate, 32, SERVED, fabric="ib-ndr-400")
    found = _search(engine, [H100_IB], speculative=MTP)
    assert found.options, [m.misses for m in found.near_misses]
    best = found.options[0]
    assert (best.tp, best.pp, best.config.cards_per_node) == (16, 1, 8)
    assert best.cost.fabric_on_consultation or best.cost.monthly_effective > 0
    return best.launch


@pytest.mark.parametrize("engine", ["vllm", "sglang", "trt-llm"])
def test_deepseek_v3_with_mtp_on_h100_is_tp16_over_two_servers_on_every_engine(engine: str) -> None:
    launch = _tp16_launch(engine)
    assert launch["servers_per_replica"] == 2 and launch["needs_infiniband"]
    _check(engine, launch)
    commands = launch["node_commands"]
    if engine == "sglang":
        assert [c.count(f"--node-rank {r}") for r, c in enumerate(commands)] == [1, 1]
    elif engine == "vllm":
        head, worker = commands
        assert head.startswith("ray start --head --port 6379 && vllm serve ")
        assert "--tensor-parallel-size 16" in head and "--distributed-executor-backend ray" in head
        assert worker == "ray start --address $HEAD_IP:6379 --block"
    else:
        (job,) = commands
        assert job.startswith("mpirun -H <server-1>:8,<server-2>:8 -np 16 trtllm-llmapi-launch trtllm-serve ")
        assert "--tp_size 16" in job and "--pp_size" not in job
    for command in commands:
        assert not any(flag == "--node-rank" and value == "$NODE_RANK" for flag, value in _flags(engine, command))


def test_without_an_rdma_fabric_no_tp_crosses_servers() -> None:
    """Over TCP (eth-100) only pipelines cross servers, which SGLang does not run with speculation."""
    found = _search("sglang", [H100_TCP], speculative=MTP)
    shown = found.options + found.near_misses
    assert shown and all(o.tp <= 8 for o in shown), [(o.tp, o.pp) for o in shown]
    # the SKU only a pipelined replica serves: rejected pp_speculative, its deployment without speculation a near miss
    assert ("h100-eth", "pp_speculative", {"engine": "sglang", "method": "mtp"}) in found.rejected
    assert found.near_misses[0].misses[0][0] == "pp_speculative" and found.near_misses[0].pp == 2


def test_a_block_fp8_checkpoint_is_not_split_into_partial_blocks() -> None:
    """DeepSeek-V3's routed experts are 2,048 wide: 16 shards of 128 rows, 32 shards of 64 (vLLM and SGLang refuse
    "not divisible by weight quantization block_n"); a 16-bit copy splits 32 ways."""
    block = _deepseek_cfg("sglang")
    assert list(cross_node_degrees(DEEPSEEK, block, H100_IB, 2)) == [16]
    assert list(cross_node_degrees(DEEPSEEK, block, H100_IB, 4)) == []
    assert list(cross_node_degrees(DEEPSEEK, _deepseek_cfg("sglang", weights="bf16", group_size=None), H100_IB, 4))
    assert list(cross_node_degrees(DEEPSEEK, block, H100_TCP, 2)) == []


def test_pipelines_still_compete_where_the_engine_runs_them() -> None:
    """Without speculation vLLM pipelines: TP 16 over two servers and TP 8 x PP 2 are both weighed, and the ranking
    decides (here the pipeline: two replicas of it carry the load on four servers)."""
    cfg = _deepseek_cfg("vllm")
    assert list(cross_node_degrees(DEEPSEEK, cfg, H100_IB, 2)) == [16]
    found = _search("vllm", [H100_IB], nodes=16)
    assert [(o.tp, o.pp) for o in found.options][:1] == [(8, 2)]
