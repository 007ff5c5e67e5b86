"""Serving launches that start (pure): every flag a command emits is one its engine's argument parser declares
(tests/planner/data/serving_engine_flags.json, each list read from a named file at a named commit), multi-server
replicas are started the way each engine starts them, and a quantised checkpoint is served as it ships."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from app.estimator.checkpoints import checkpoint_from_config
from app.estimator.presets import get_preset, preset_config
from app.estimator.serving import ServingConfig, context_limit
from app.planner.offers import Constraints
from app.planner.serving import search_serving
from app.planner.serving_launch import ENGINE_VERSIONS, Served
from tests.planner.test_serving_search import OFFERS, offer

FLAGS = json.loads((Path(__file__).parent / "data" / "serving_engine_flags.json").read_text(encoding="utf-8"))
ENGINES = FLAGS["engines"]
LLAMA_8B = get_preset("llama-3.1-8b").model
LLAMA_405B = get_preset("llama-3.1-405b").model
H100_IB = offer("h100-ib", "h100-80g-sxm", "400000", fabric="ib-ndr-400")


def _launch(model: Any, cfg: ServingConfig, offers: list, served: Served | None = None, nodes: int = 16) -> dict:
    found = search_serving(model, cfg, offers, Constraints(max_nodes=nodes), served=served)
    return (found.options or found.near_misses)[0].launch


def _flags(engine: str, command: str) -> list[tuple[str, str | None]]:
    """(flag, value) of the engine's own part of the command (after its program), and of its launchers."""
    words = shlex.split(command)
    pairs = []
    for i, word in enumerate(words):
        if word.startswith("-") and not word.lstrip("-").isdigit():
            value = words[i + 1] if i + 1 < len(words) and not words[i + 1].startswith("--") else None
            pairs.append((word.split("=")[0], value))
    return pairs


def _check(engine: str, launch: dict) -> None:
    spec = ENGINES[engine]
    command = launch["command"]
    program_at = command.index(spec["program"])
    launchers = command[:program_at]
    for flag, _ in _flags(engine, launchers):
        assert any(flag in allowed for allowed in spec.get("launchers", {}).values()), (flag, command)
    for flag, value in _flags(engine, command[program_at + len(spec["program"]) :]):
        assert flag in spec["flags"], f"{engine} has no {flag} ({spec['source']}): {command}"
        if flag in spec.get("choices", {}):
            assert value in spec["choices"][flag], (flag, value)
    source = spec["source"]
    assert launch["versions"] == {engine: ENGINE_VERSIONS[engine]}
    assert source["commit"][:12] in ENGINE_VERSIONS[engine] and source["file"] in ENGINE_VERSIONS[engine]


def _cfg(engine: str, **changes: Any) -> ServingConfig:
    base: dict[str, Any] = {"input_tokens": 1024, "output_tokens": 256, "requests_per_s": 2.0, "engine": engine}
    return ServingConfig(**(base | changes))


@pytest.mark.parametrize("engine", ["vllm", "sglang", "trt-llm"])
@pytest.mark.parametrize(
    "changes",
    [{}, {"kv_cache_precision": "fp8"}, {"weights": "fp8"}, {"weights": "int4"}, {"max_model_len": 32768}],
    ids=["bf16", "fp8-kv", "fp8-weights", "int4", "stated-length"],
)
def test_every_single_server_flag_is_one_the_engine_declares(engine: str, changes: dict) -> None:
    if engine == "trt-llm" and changes.get("weights") == "int4":
        changes = {"weights": "int8"}
    _check(engine, _launch(LLAMA_8B, _cfg(engine, **changes), OFFERS[:1]))


@pytest.mark.parametrize("engine", ["vllm", "sglang", "trt-llm"])
def test_every_multi_server_flag_is_one_the_engine_or_its_launcher_declares(engine: str) -> None:
    launch = _launch(LLAMA_405B, _cfg(engine, concurrency=32, requests_per_s=None), [H100_IB], nodes=2)
    assert launch["servers_per_replica"] == 2 and launch["gpus_per_replica"] == 16
    _check(engine, launch)


def test_multi_server_sglang_gives_every_server_its_rank_and_the_heads_address() -> None:
    """SGLang has no Ray: every server of a replica runs the command with --nnodes, its own --node-rank and the
    head's --dist-init-addr (server_args.py nnodes / node_rank / dist_init_addr); without them the head waits for
    ranks that never come, or both servers claim rank 0. The layout must not describe vLLM's Ray cluster."""
    launch = _launch(LLAMA_405B, _cfg("sglang", concurrency=32, requests_per_s=None), [H100_IB], nodes=2)
    command = launch["command"]
    assert "--tp-size 8 --pp-size 2 --nnodes 2 --node-rank $NODE_RANK --dist-init-addr $HEAD_IP:5000" in command
    assert command.endswith("--host 0.0.0.0")  # SGLang binds 127.0.0.1 unless told: the balancer could not reach it
    assert "Ray" not in launch["layout"] and "vLLM" not in launch["layout"]
    assert "--node-rank" in launch["layout"] and "ib-ndr-400" in launch["layout"]


def test_multi_server_trtllm_runs_as_one_mpi_job_under_trtllm_llmapi_launch() -> None:
    """A 16-rank trtllm-serve started on one server fails its world-size check: it must run under mpirun (or srun)
    with every rank wrapped by trtllm-llmapi-launch (TensorRT-LLM docs, multi-node serving)."""
    launch = _launch(LLAMA_405B, _cfg("trt-llm", concurrency=32, requests_per_s=None), [H100_IB], nodes=2)
    command = launch["command"]
    assert command.startswith("mpirun -H <server-1>:8,<server-2>:8 -np 16 trtllm-llmapi-launch trtllm-serve ")
    assert "--backend pytorch --tp_size 8 --pp_size 2" in command
    assert "Ray" not in launch["layout"] and "MPI job of 16 ranks" in launch["layout"]
    assert any("srun -N 2 --ntasks-per-node 8 --mpi=pmix trtllm-llmapi-launch" in n for n in launch["notes"])


def test_multi_server_vllm_is_one_ray_cluster() -> None:
    launch = _launch(LLAMA_405B, _cfg("vllm", concurrency=32, requests_per_s=None), [H100_IB], nodes=2)
    assert "--pipeline-parallel-size 2 --distributed-executor-backend ray" in launch["command"]
    assert "Ray cluster" in launch["layout"]


def test_single_server_replicas_are_not_given_multi_server_flags() -> None:
    for engine in ("vllm", "sglang", "trt-llm"):
        command = _launch(LLAMA_8B, _cfg(engine), OFFERS[:1])["command"]
        assert "--nnodes" not in command and "mpirun" not in command and "--distributed-executor-backend" not in command


def _deepseek(engine: str, **changes: Any) -> dict:
    config = preset_config("deepseek-v3")
    served = Served("deepseek-ai/DeepSeek-V3", checkpoint_from_config(config), context_limit(config))
    cfg = _cfg(engine, **({"weights": "fp8", "group_size": 128 * 128, "mla_cache_values": 576} | changes))
    return _launch(get_preset("deepseek-v3").model, cfg, [H100_IB], served, nodes=4)


@pytest.mark.parametrize("engine", ["vllm", "sglang", "trt-llm"])
def test_a_block_fp8_checkpoint_is_served_as_shipped_on_every_engine(engine: str) -> None:
    """DeepSeek-V3's repository is its block-FP8 checkpoint: vLLM and SGLang read its quantization_config (an explicit
    --quantization that differs is refused at start-up), TensorRT-LLM too (load_hf_quant_config FP8_BLOCK_SCALES):
    no flag, no Model Optimizer step, no advice to quantise it, the repository itself on the command line."""
    launch = _deepseek(engine)
    command, notes = launch["command"], " ".join(launch["notes"])
    assert " deepseek-ai/DeepSeek-V3 " in f" {command.replace('--model-path ', '')} "
    assert "--quantization" not in command and "<" not in command.split("trtllm-llmapi-launch")[-1]
    assert "block FP8 (128 x 128 scales)" in notes and "hf_ptq.py" not in notes and "quantises" not in notes
    _check(engine, launch)


def test_a_format_other_than_the_checkpoints_needs_another_checkpoint() -> None:
    """Asked for 16-bit weights, the FP8 repository cannot be served as is: the command names a 16-bit checkpoint to
    provide and says why; it does not pass --quantization to the FP8 checkpoint."""
    launch = _deepseek("vllm", weights="bf16", group_size=None)
    assert launch["command"].startswith("vllm serve <bf16 checkpoint of deepseek-ai/DeepSeek-V3> ")
    assert any("ships block FP8" in note and "not the bf16" in note for note in launch["notes"])


def test_trtllm_does_not_load_an_awq_checkpoint_and_says_so() -> None:
    """TensorRT-LLM's PyTorch backend reads block FP8, compressed-tensors and Model Optimizer checkpoints, not AutoAWQ
    (tensorrt_llm/_torch/model_config.py load_hf_quant_config): an AWQ repository gets a Model Optimizer int4 one."""
    awq = {"quantization_config": {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True}}
    served = Served("hugging-quants/Meta-Llama-3.1-8B-Instruct-AWQ-INT4", checkpoint_from_config(awq), 131072)
    launch = _launch(LLAMA_8B, _cfg("trt-llm", weights="int4", group_size=128), OFFERS[:1], served)
    assert launch["command"].startswith("trtllm-serve <int4 Model Optimizer checkpoint of ")
    assert any("does not load awq checkpoints" in note for note in launch["notes"])
    vllm = _launch(LLAMA_8B, _cfg("vllm", weights="int4", group_size=128), OFFERS[:1], served)
    assert vllm["command"].startswith("vllm serve hugging-quants/Meta-Llama-3.1-8B-Instruct-AWQ-INT4 ")


def test_the_longest_request_is_the_context_capped_at_the_kv_cache() -> None:
    """--max-model-len is never the mean request: the model's context where one replica's cache holds it, else the
    tokens the cache holds (vLLM refuses to start when one max_model_len sequence does not fit)."""
    served = Served("meta-llama/Llama-3.1-8B-Instruct", context=131072)
    roomy = _launch(LLAMA_8B, _cfg("vllm"), OFFERS[:1], served)
    assert roomy["max_model_len"] == 131072 and "--max-model-len 131072 " in roomy["command"]
    small = offer("l40s-card", "l40s-48g", "5000", unit="card")
    tight = _launch(LLAMA_405B, _cfg("vllm", weights="int4"), [H100_IB], Served("x", context=10_000_000), nodes=2)
    assert tight["max_model_len"] < 10_000_000
    assert any("the most KV cache one sequence may use holds" in note for note in tight["notes"])
    unknown = _launch(LLAMA_8B, _cfg("sglang"), [small], Served("x"))
    assert "--context-length" not in unknown["command"] and unknown["max_model_len"] is None


def test_a_stated_longest_request_no_replica_holds_is_a_near_miss_not_an_option() -> None:
    """A stated serving.max_request_tokens is the launch's --max-model-len, which vLLM refuses to start with when one
    such sequence does not fit the replica's KV cache: a shape whose cache is shorter is a sequence_too_long miss."""
    cfg = _cfg("vllm", max_model_len=40_000_000)
    found = search_serving(LLAMA_8B, cfg, OFFERS[:1], Constraints())
    assert not found.options and found.near_misses
    code, params = found.near_misses[0].misses[0]
    assert code == "sequence_too_long" and params["context_len"] == 40_000_000
    assert params["kv_cache_tokens"] < 40_000_000
    fits = search_serving(LLAMA_8B, _cfg("vllm", max_model_len=65_536), OFFERS[:1], Constraints()).options[0]
    assert fits.launch["max_model_len"] == 65_536 and "--max-model-len 65536 " in fits.launch["command"]


@pytest.mark.parametrize("size", ["0.5B", "1.5B", "3B", "7B", "14B", "32B", "72B"])
def test_a_qwen25_preset_serves_its_instruct_repository_with_the_instruct_context(size: str) -> None:
    """Qwen publishes Qwen/Qwen2.5-<size>-Instruct beside each base model; a chat deployment serves it, not the
    pretrained model. Its config.json states max_position_embeddings 32,768 (the 7B to 72B base models state
    131,072: huggingface.co/Qwen/Qwen2.5-72B-Instruct/blob/main/config.json), so the launch accepts that many."""
    from app.planner.schemas import ModelIn
    from app.planner.serving_request import served

    preset = f"qwen2.5-{size.lower()}"
    model = get_preset(preset).model
    chat = served(ModelIn(preset=preset), model)
    assert chat.repo == f"Qwen/Qwen2.5-{size}-Instruct"
    assert chat.context == 32768
    base = served(ModelIn(preset=preset, variant="base"), model)
    assert base.repo == f"Qwen/Qwen2.5-{size}"
    assert base.context == preset_config(preset)["max_position_embeddings"]
