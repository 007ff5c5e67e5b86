"""DP-attention launches (review R3-5, R3-15): the layout says what runs — attention data-parallel ranks, each with
its own KV cache and scheduler, the routed experts split over them, an all-to-all between them over NVLink inside a
server and the fabric across servers — not one TP group and its all-reduces; each engine's cap on running requests
set the way it reads it: SGLang's --max-running-requests is the server's, split over the DP ranks
(max_running_requests // dp_size, sglang python/sglang/srt/mem_cache/kv_cache_configurator.py
`resolve_max_num_reqs`), vLLM's --max-num-seqs each DP engine's own (vllm/v1/core/sched/scheduler.py, one scheduler
per DP engine: docs/serving/data_parallel_deployment.md); the commits are in app/planner/serving_launch.py."""

from __future__ import annotations

import math
import shlex
from dataclasses import replace
from typing import Any

import pytest

from app.estimator.hardware import get_gpu
from app.estimator.presets import get_preset
from app.estimator.serving import ServingConfig, estimate_serving
from app.estimator.specs import Cluster
from app.planner.offers import Configuration
from app.planner.serving_launch import launch_block
from app.text.messages import launch as launch_text
from tests.planner.test_serving_launch import _check

DEEPSEEK_V3 = get_preset("deepseek-v3").model  # 256 routed experts, shipped block FP8
DEEPSEEK_V2_LITE = get_preset("deepseek-v2-lite").model  # 64 routed experts, 16-bit
H100 = get_gpu("h100-80g-sxm")
MLA = {"input_tokens": 2000, "output_tokens": 500, "requests_per_s": 2.0, "mla_cache_values": 576, "dp_attention": True}
FP8 = {"precision": "fp8", "weights": "fp8", "group_size": 128 * 128}


def _cfg(engine: str, model: Any) -> ServingConfig:
    return ServingConfig(engine=engine, **MLA, **(FP8 if model is DEEPSEEK_V3 else {}))


def _launch(engine: str, model: Any, nodes: int, concurrency: float, replicas: int = 2) -> dict[str, Any]:
    """The launch of `replicas` DP-attention replicas over `nodes` 8-GPU servers each, sized to run `concurrency`
    sequences per replica within the SLO."""
    cfg, cluster = _cfg(engine, model), Cluster(H100, 8, nodes, inter_node_gbps=3200.0, inter_node_fabric="ib-ndr-400")
    estimate = estimate_serving(model, cfg, cluster, tp=8 * nodes, simulate=False)
    fabric = "ib-ndr-400" if nodes > 1 else None
    shape, config = (8 * nodes, 1, replicas), Configuration(8, nodes * replicas)
    return launch_block(model, cfg, shape, config, estimate, concurrency, model.hf_repo, fabric=fabric)


def _cap(engine: str, model: Any, nodes: int) -> int:
    """The sequences a replica holds (estimate.max_concurrency), which bounds the launch's."""
    cluster = Cluster(H100, 8, nodes, inter_node_gbps=3200.0, inter_node_fabric="ib-ndr-400")
    return estimate_serving(model, _cfg(engine, model), cluster, tp=8 * nodes, simulate=False).max_concurrency


def _flag(command: str, name: str) -> int:
    words = shlex.split(command)
    return int(words[words.index(name) + 1])


def _texts(launch: dict[str, Any], lang: str) -> str:
    texts = [launch["texts"]["layout"], *launch["texts"]["notes"]]
    return " ".join(launch_text(t["code"], t["params"], lang) for t in texts)


@pytest.mark.parametrize("concurrency", [10.0, 279.0])
def test_sglang_max_running_requests_leaves_every_rank_its_share(concurrency: float) -> None:
    """SGLang gives each DP rank max_running_requests // dp_size: 10 sequences on 16 ranks left every rank none (the
    server refuses to start: "max_running_request is zero"), 279 left each 17 (272 in all)."""
    launch = _launch("sglang", DEEPSEEK_V3, 2, concurrency)
    _check("sglang", launch)
    flag, dp = _flag(launch["command"], "--max-running-requests"), _flag(launch["command"], "--dp-size")
    assert dp == 16 and flag % dp == 0, launch["command"]
    assert flag // dp == math.ceil(min(concurrency, _cap("sglang", DEEPSEEK_V3, 2)) / dp) >= 1, launch["command"]


def test_vllm_max_num_seqs_is_each_engines() -> None:
    launch = _launch("vllm", DEEPSEEK_V2_LITE, 1, 100.0)
    _check("vllm", launch)
    assert _flag(launch["command"], "--data-parallel-size") == 8
    assert _flag(launch["command"], "--max-num-seqs") == math.ceil(100 / 8)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_sglang_replica_over_two_servers_is_worded_as_ranks_and_an_all_to_all(lang: str) -> None:
    """Review R3-5: "one TP 16 group over all their GPUs" and "every layer's two all-reduces cross the fabric"."""
    launch = _launch("sglang", DEEPSEEK_V3, 2, 279.0)
    text = _texts(launch, lang)
    per_rank = _flag(launch["command"], "--max-running-requests") // 16
    words = {
        "en": ["16 attention data-parallel ranks", "its own KV cache and scheduler", f"{per_rank} per rank",
               "256 routed experts split 16 ways", "16 per GPU", "all-to-all dispatch and combine (DeepEP)",
               "NVLink inside a server and ib-ndr-400 across servers", "--node-rank"],
        "zh": ["16 个注意力数据并行 rank", "自己的 KV 缓存与调度器", f"每个 rank {per_rank} 个",
               "256 个路由专家按 16 路切分", "每张 GPU 16 个", "all-to-all 分发与合并（DeepEP）",
               "服务器内经 NVLink、跨服务器经 ib-ndr-400", "--node-rank"],
    }[lang]  # fmt: skip
    assert all(w in text for w in words), [w for w in words if w not in text]
    for wrong in ("TP 16 group", "all-reduce", "张量并行 16 组"):
        assert wrong not in text, text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_vllm_dp_replica_is_worded_as_one_engine_per_gpu(lang: str) -> None:
    """Review R3-15: a vLLM DP-attention replica read as replicas pinned to their GPUs, nothing of its engines."""
    launch = _launch("vllm", DEEPSEEK_V2_LITE, 1, 100.0, replicas=1)
    text = _texts(launch, lang)
    words = {
        "en": ["8 engines per replica", "--data-parallel-size 8", "its own KV cache and scheduler",
               "--max-num-seqs is each engine's: 13", "64 routed experts are split 8 ways", "all-to-all", "NVLink"],
        "zh": ["运行 8 个引擎", "--data-parallel-size 8", "自己的 KV 缓存与调度器", "--max-num-seqs 是每个引擎的：13",
               "64 个路由专家按 8 路切分", "all-to-all", "NVLink"],
    }[lang]  # fmt: skip
    assert all(w in text for w in words), [w for w in words if w not in text]
    assert "CUDA_VISIBLE_DEVICES" not in text and "all-reduce" not in text, text


@pytest.mark.parametrize("nodes", [1, 2])
def test_sglang_dp_attention_runs_the_dense_layers_without_tensor_parallelism(nodes: int) -> None:
    """The step model runs a DP-attention replica's dense (non-MoE) layers on each rank alone, with no TP all-reduce
    (app/estimator/serving/step.py `_dp_attention_hardware`). SGLang does that only with `--moe-dense-tp-size 1`:
    ServerArgs.moe_dense_tp_size (Optional[int], default None: the dense MLP sharded over the whole --tp-size;
    sgl-project/sglang@001067fffe33 python/sglang/srt/server_args.py, 'Expert parallelism' section) takes 1 or None
    only. The launch passed --enable-dp-attention and --moe-a2a-backend deepep without it, so every dense layer all-
    reduced over all the replica's GPUs; its value is checked against the flag list's choices."""
    launch = _launch("sglang", DEEPSEEK_V3, nodes, 100.0)
    _check("sglang", launch)
    words = shlex.split(launch["command"])
    assert "--moe-dense-tp-size" in words, launch["command"]
    assert words[words.index("--moe-dense-tp-size") + 1] == "1", launch["command"]


def test_a_plain_tp_sglang_launch_leaves_the_dense_layers_tensor_parallel() -> None:
    """Without DP attention the dense layers share the replica's TP group (the flag's default), so it is not passed."""
    cfg = replace(_cfg("sglang", DEEPSEEK_V3), dp_attention=False)
    estimate = estimate_serving(DEEPSEEK_V3, cfg, Cluster(H100, 8, 1), tp=8, simulate=False)
    launch = launch_block(DEEPSEEK_V3, cfg, (8, 1, 1), Configuration(8, 1), estimate, 10.0, DEEPSEEK_V3.hf_repo)
    _check("sglang", launch)
    assert "--moe-dense-tp-size" not in launch["command"], launch["command"]
