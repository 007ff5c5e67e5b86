"""Tensor parallelism across servers: the degrees a replica may take over several servers of one SKU, and the commands
each server of such a replica runs. PURE.

A model no server holds is served either as pipeline stages, one server each (planner/serving_shapes.py `_shapes`), or
as one tensor-parallel group over every GPU of several servers: TP = GPUs per server x servers. All three engines
run the latter:

- SGLang: `--tp 16 --nnodes 2 --node-rank 0|1 --dist-init-addr HEAD:PORT` on each server (docs.sglang.io,
  references/multi_node_deployment/multi_node.html "Run 405B (fp16) on Two Nodes"; basic_usage/deepseek_v3.html
  "Running examples on multi-node": DeepSeek-V3 at TP 16 on two 8 x H100 servers). No Ray.
- vLLM: `--tensor-parallel-size 16` over a Ray cluster of both servers (docs.vllm.ai serving/distributed_serving
  "Running vLLM on multiple nodes": "the tensor parallel size is the number of GPUs in each node times the number
  of nodes"; `--distributed-executor-backend ray`).
- TensorRT-LLM: one MPI job of tp ranks over the servers, each rank under `trtllm-llmapi-launch` (TensorRT-LLM
  examples/models/core/deepseek_v3/README.md, multi-node serving with `tp_size: 16` on two 8 x H100 nodes).

Every all-reduce of such a group crosses the servers' fabric twice a layer, a few tens of µs each where NVLink takes
a few: the engines document it over InfiniBand or RoCE only, so only an RDMA fabric (data/interconnects.json
`transport`) is offered it; a TCP network is left to pipelines. The estimator costs the all-reduce over the fabric
(app/estimator/serving/memo.py `_hardware`: the group's bandwidth and latency are the inter-node stage's once TP exceeds
a server, app/estimator/interconnects.py `group_bandwidth`).

What each engine requires of the split, beyond the attention heads (`valid_tp`, the caller's): a block-FP8 checkpoint
(one scale per 128 x 128 block) needs every TP shard of a column-split weight to hold whole blocks — vLLM
model_executor/layers/quantization/fp8.py `Fp8LinearMethod.create_weights` / `Fp8MoEMethod.create_weights` ("... is
not divisible by weight quantization block_n"), SGLang's copy of the same checks in srt/layers/quantization/fp8.py.
DeepSeek-V3's routed experts (moe_intermediate_size 2,048) split 16 ways hold one block of 128 rows each; 32 ways
would hold 64, which both engines refuse.
"""

from __future__ import annotations

from collections.abc import Iterator

from app.estimator.interconnects import fabric_entry
from app.estimator.serving import BLOCK_FP8_GROUP, ServingConfig
from app.estimator.specs import ModelSpec
from app.estimator.vocabulary import ENGINES
from app.planner.offers import Offer

# Engines that run one tensor-parallel group over several servers (module docstring).
CROSS_NODE_TP_ENGINES = frozenset(ENGINES)  # all three
# Rows of one scale block of a block-FP8 checkpoint (config.json `weight_block_size` [128, 128]).
FP8_BLOCK_ROWS = 128
# Ray's default GCS port (`ray start --head --port`, docs.ray.io "ray start"); vLLM's examples/online_serving/
# run_cluster.sh starts the head and joins the others on it.
RAY_PORT = 6379


def rdma_fabric(fabric: str | None) -> bool:
    """Whether a fabric carries RDMA (InfiniBand, RoCE): data/interconnects.json's `transport`."""
    return fabric is not None and fabric_entry(fabric).get("transport") == "rdma"


def _block_fp8_splits(model: ModelSpec, cfg: ServingConfig, tp: int) -> bool:
    """Every column-split shard of a block-FP8 checkpoint holds whole 128-row blocks (module docstring)."""
    if cfg.weight_format != "fp8" or cfg.group_size != BLOCK_FP8_GROUP:
        return True
    widths = [model.ffn] + ([model.expert_ffn or model.ffn] if model.is_moe else [])
    return all(width % tp == 0 and (width // tp) % FP8_BLOCK_ROWS == 0 for width in widths)


def cross_node_tp(
    model: ModelSpec, cfg: ServingConfig, gpus_per_node: int, fabric: str | None, servers: int
) -> int | None:
    """TP over `servers` whole servers (GPUs per server x servers) where their fabric is RDMA, the engine runs TP
    across servers and the checkpoint splits that way; None otherwise (and for one server). The attention heads'
    split is the caller's (`valid_tp`)."""
    if servers < 2 or cfg.engine not in CROSS_NODE_TP_ENGINES or not rdma_fabric(fabric):
        return None
    tp = gpus_per_node * servers
    return tp if _block_fp8_splits(model, cfg, tp) else None


def cross_node_degrees(model: ModelSpec, cfg: ServingConfig, offer: Offer, servers: int) -> Iterator[int]:
    """`cross_node_tp` on the offer's servers; nothing for a SKU rented by the card."""
    if offer.rental_unit != "node":
        return
    tp = cross_node_tp(model, cfg, offer.gpus_per_node, offer.inter_node_fabric, servers)
    if tp is not None:
        yield tp


def node_commands(engine: str, command: str, nodes: int, head: str, rank: str) -> list[str]:
    """What each server of a multi-server replica runs, server 1 (the head) first: SGLang the same command with its
    own --node-rank; vLLM a Ray cluster (the head starts Ray and the command, the others join it); TensorRT-LLM one
    MPI job that the head starts over every server (the others run nothing of their own)."""
    if nodes < 2:
        return [command]
    if engine == "sglang":
        return [command.replace(f"--node-rank {rank}", f"--node-rank {r}") for r in range(nodes)]
    if engine == "vllm":
        join = f"ray start --address {head}:{RAY_PORT} --block"
        return [f"ray start --head --port {RAY_PORT} && {command}"] + [join] * (nodes - 1)
    return [command]
