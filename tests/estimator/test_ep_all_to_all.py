"""Training's expert-parallel all-to-all is priced as an all-to-all, not as a ring collective (review R8-1).

In an all-to-all no hop carries another rank's data: (ep−1)/ep of each GPU's buffer goes to its peers, the part
bound for other servers through that GPU's share of the server's network injection (8×400G per H100 server, ~45 GB/s
per GPU), not through the whole server's ~360 GB/s as a ring's inter-node stage would. `interconnects.all_to_all_s`
is the one model of it (serving uses it too). DeepSeek-V3 technical report (arXiv 2412.19437) §3.2.1: with
cross-node expert parallelism "the computation-to-communication ratio is approximately 1:1" — the exchange over
InfiniBand is as long as the layer's compute, which is why they built DualPipe to hide it; it is not cheaper than
the NVLink exchange inside a server.
"""

from __future__ import annotations

import pytest

from app.estimator.communication import StepShape, ep_comm, per_node
from app.estimator.hardware import get_gpu
from app.estimator.interconnects import all_to_all_s, usual_node
from app.estimator.performance import estimate_performance
from app.estimator.presets import get_preset
from app.estimator.specs import Cluster, Plan, Workload

DSV3 = get_preset("deepseek-v3").model
H100 = get_gpu("h100-80g-sxm")
_SERVER = usual_node("h100-80g-sxm")
assert _SERVER is not None
# the API's {"gpu": "h100-80g-sxm", "nodes": 32}: 32 DGX H100 servers, 8 × 400G InfiniBand NDR each
CLUSTER = Cluster(
    gpu=H100,
    gpus_per_node=_SERVER.gpus_per_node,
    nodes=32,
    inter_node_gbps=_SERVER.inter_node_gbps,
    inter_node_fabric=_SERVER.fabric,
)
WORKLOAD = Workload(task="pretrain", precision="fp8", seq_len=4096, global_batch=2048, tokens=1e12)


def _plan(ep: int, recompute: str = "full", tp: int = 1) -> Plan:
    return Plan(tp=tp, pp=8, dp=32 // tp, ep=ep, zero_stage=1, recompute=recompute, micro_batch=1)  # type: ignore[arg-type]


def _shape(plan: Plan) -> StepShape:
    return StepShape(
        micro_batches=1,
        fwd_s=0.0,
        bwd_s=0.0,
        attention_s=0.0,
        layers_local=DSV3.layers // plan.pp,
        trainable_local=0.0,
        placement=per_node(plan, CLUSTER.gpus_per_node),
    )


def test_ep_across_servers_is_not_faster_than_ep_inside_one() -> None:
    """The R8-1 repro: EP 8 (NVLink) gave 1,382 tok/s/GPU and EP 32 (4 servers, IB) 1,406 — faster over IB.
    At equal everything the cross-server plan must be slower and spend more exposed communication."""
    inside = estimate_performance(DSV3, WORKLOAD, _plan(8), CLUSTER).performance
    across = estimate_performance(DSV3, WORKLOAD, _plan(32), CLUSTER).performance
    assert across.breakdown_s["exposed_comm"] > inside.breakdown_s["exposed_comm"]
    assert across.tokens_per_s_per_gpu is not None and inside.tokens_per_s_per_gpu is not None
    assert across.tokens_per_s_per_gpu < inside.tokens_per_s_per_gpu


@pytest.mark.parametrize("ep", [8, 16, 32, 64])
def test_ep_exchange_is_the_interconnects_all_to_all(ep: int) -> None:
    """Each MoE layer: dispatch + combine forward, their gradients backward, and under full recompute the forward
    pair again (Megatron-LM megatron/core/recompute.py at d98e8a64, `checkpointed_forward`: with
    --recompute-granularity full each whole TransformerLayer, its MoE layer's token dispatcher included, runs under
    tensor_parallel.checkpoint / te_checkpoint and is re-run in the backward). Exact: one model decides."""
    message = 4096 * DSV3.experts_per_token * DSV3.hidden * 2.0  # the micro-batch's routed tokens, bf16
    moe_layers = DSV3.moe_layers / 8
    for recompute, count in (("none", 4), ("selective", 4), ("full", 6)):
        plan = _plan(ep, recompute)
        expected = moe_layers * count * all_to_all_s(message, ep, CLUSTER)
        assert ep_comm(DSV3, WORKLOAD, plan, CLUSTER, _shape(plan)) == pytest.approx(expected, rel=1e-12)


def test_off_server_share_goes_through_each_gpus_own_share_of_the_network() -> None:
    """EP 32 over 4 servers: 24/32 of each GPU's buffer leaves its server at 1/8 of the server's injection."""
    from app.estimator.interconnects import node_injection_bytes_per_s

    message = 4096 * DSV3.experts_per_token * DSV3.hidden * 2.0
    far_s = message * 24 / 32 / (node_injection_bytes_per_s(CLUSTER) / 8)
    assert all_to_all_s(message, 32, CLUSTER) == pytest.approx(far_s, rel=0.01)  # + latency, µs against ms


def test_fewer_ep_ranks_per_server_send_more_of_their_buffer_off_it() -> None:
    """tp 2 leaves 4 ranks of each ep group per server (ranks ordered tp, dp): 28/32 of the buffer leaves it."""
    plan = _plan(32, "none", tp=2)
    shape = _shape(plan)
    assert shape.placement["ep"] == 4
    message = 4096 * DSV3.experts_per_token * DSV3.hidden * 2.0
    expected = DSV3.moe_layers / 8 * 4 * all_to_all_s(message, 32, CLUSTER, in_node=4)
    assert ep_comm(DSV3, WORKLOAD, plan, CLUSTER, shape) == pytest.approx(expected, rel=1e-12)
    assert all_to_all_s(message, 32, CLUSTER, in_node=4) > all_to_all_s(message, 32, CLUSTER)


def test_ep_overlap_hides_the_exchange_behind_the_micro_batch_compute() -> None:
    """DualPipe / --overlap-moe-expert-parallel-comm: the exchange overlaps the forward + backward like any other
    overlappable collective (communication.hide), so the DeepSeek-V3 run's own DualPipe is not priced as exposed."""
    from app.estimator.communication import hide

    plan = _plan(32, "none")
    exposed = ep_comm(DSV3, WORKLOAD, plan, CLUSTER, _shape(plan))
    shape = _shape(plan)
    shape.fwd_s, shape.bwd_s = 0.1, 0.2
    overlapped = ep_comm(DSV3, WORKLOAD, Plan(**{**_kwargs(plan), "ep_overlap": True}), CLUSTER, shape)
    assert overlapped == pytest.approx(hide(exposed, 0.3), rel=1e-12)
    assert overlapped < exposed


def _kwargs(plan: Plan) -> dict[str, object]:
    import dataclasses

    return {f.name: getattr(plan, f.name) for f in dataclasses.fields(plan)}


def test_the_estimate_tells_an_overlapped_exchange_from_an_exposed_one() -> None:
    """ep_overlap is part of the step's cache key (performance._step_key): the same plan with and without it, one
    after the other on the same cluster, gets two answers."""
    exposed = estimate_performance(DSV3, WORKLOAD, _plan(32), CLUSTER).performance
    hidden = estimate_performance(DSV3, WORKLOAD, Plan(**{**_kwargs(_plan(32)), "ep_overlap": True}), CLUSTER)
    assert hidden.performance.breakdown_s["exposed_comm"] < exposed.breakdown_s["exposed_comm"]
