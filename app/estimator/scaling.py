"""The scaling view: speed-up and efficiency of data parallelism inside a server and over 2-16 servers per fabric
(weak scaling, from estimate_performance), with whether each point fits in memory, for the API's `scaling`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from app.estimator.interconnects import fabric_entry, inter_node_fabrics, usual_node
from app.estimator.memory import memory_breakdown
from app.estimator.performance import estimate_performance, micro_batches
from app.estimator.specs import GIB, Cluster, EstimatorError, GpuSpec, MemoryBreakdown, ModelSpec, Plan, Workload

NODE_COUNTS = (2, 4, 8, 16)
# The memory gate of one point: its per-GPU breakdown, whose `fits` decides (the planner passes the gate /estimate
# applies, the plan as the stack that runs it holds it; the estimator's own breakdown by default)
MemoryGate = Callable[[ModelSpec, Workload, Plan, Cluster], MemoryBreakdown]


class _Gate:
    """Memory of each point, once per data-parallel degree and node shape: the link or fabric moves no byte."""

    def __init__(self, model: ModelSpec, gpu: GpuSpec, gpus_per_node: int, gate: MemoryGate) -> None:
        self.model, self.gate, self.found = model, gate, dict[tuple[int, int, int], MemoryBreakdown]()
        usual = usual_node(gpu.id)
        # whole usual servers bring their host RAM, as /estimate assumes them (clusters.gpu_cluster)
        same = usual is not None and usual.gpus_per_node == gpus_per_node
        self.host_ram_gib = usual.host_ram_gib if same and usual is not None else None

    def of(self, workload: Workload, plan: Plan, cluster: Cluster) -> MemoryBreakdown:
        key = (plan.dp, cluster.gpus_per_node, cluster.nodes)
        found = self.found.get(key)
        if found is None:
            found = self.found[key] = self.gate(
                self.model, workload, plan, replace(cluster, host_ram_gib=self.host_ram_gib)
            )
        return found


def _tokens_per_s(model: ModelSpec, workload: Workload, plan: Plan, cluster: Cluster) -> float:
    return estimate_performance(model, workload, plan, cluster).performance.tokens_per_s or 0.0


def _weak_scaled(workload: Workload, base: Plan, dp: int) -> tuple[Workload, Plan]:
    """Same per-GPU work: micro-batches per step fixed, global batch grows with dp."""
    m = micro_batches(workload, base)
    plan = replace(base, dp=dp)
    return replace(workload, global_batch=m * dp * base.micro_batch), plan


def scaling_view(
    model: ModelSpec,
    workload: Workload,
    gpu: GpuSpec,
    base_plan: Plan | None = None,
    *,
    gpus_per_node: int = 8,
    rdma_nics_per_node: int = 1,
    gate: MemoryGate = memory_breakdown,
) -> list[dict[str, object]]:
    """Speed-up and efficiency of data parallelism from 1 to 8 GPUs in a node (per intra-node link:
    the GPU's own and a PCIe-only server of its generation) and over 2-16 nodes (per fabric),
    relative to the smallest point that fits (`_rebase`): speed-up is a point's throughput over that point's
    throughput per replica (tp × pp × cp GPUs), efficiency the speed-up per replica (1 at the baseline).

    Weak scaling: each replica keeps its micro-batches, so the global batch grows with dp. With
    ZeRO ≥ 1 the optimizer step (on the host, where the states are offloaded) is sharded over the data-parallel
    ranks, so each GPU's share of it shrinks as GPUs are added and efficiency can exceed 1 (the API says why:
    `scaling_superlinear`); with ZeRO 0 every GPU steps the whole optimizer and it does not.
    RDMA fabrics (InfiniBand, RoCE) get `rdma_nics_per_node` ports (HGX/DGX servers carry one per
    GPU); plain Ethernet is one port.

    Each point says whether its plan fits in memory (`fits`, by `gate`; `per_gpu_gib`, the gate's total): the speed
    of a point that does not fit is the model's, not a run anyone can make. Memory is estimated once per
    data-parallel degree and node shape (12 estimates for 8 GPUs a server), not per link.
    """
    base = base_plan or Plan()
    unit = base.tp * base.pp * base.cp
    _check_replica(unit, gpus_per_node)
    memory = _Gate(model, gpu, gpus_per_node, gate)
    one = Cluster(gpu=gpu, gpus_per_node=unit, nodes=1)
    w1, p1 = _weak_scaled(workload, base, 1)
    rows = [
        _row("node", gpu.intra_node_link, unit, 1, _tokens_per_s(model, w1, p1, one)) | _fit(memory.of(w1, p1, one))
    ]
    links = [gpu.intra_node_link, f"pcie{gpu.pcie_gen}"]
    for link in dict.fromkeys(links):
        for dp in range(2, gpus_per_node // unit + 1):
            cluster = Cluster(gpu=gpu, gpus_per_node=dp * unit, nodes=1, intra_node_link=link)
            w, p = _weak_scaled(workload, base, dp)
            row = _row("node", link, dp * unit, 1, _tokens_per_s(model, w, p, cluster))
            rows.append(row | _fit(memory.of(w, p, cluster)))
    rows.extend(_multi_node_rows(model, workload, gpu, base, gpus_per_node, rdma_nics_per_node, memory))
    return _rebase(rows, unit)


def _check_replica(unit: int, gpus_per_node: int) -> None:
    """Every multi-node row holds whole replicas of `unit` GPUs: a replica must divide the fewest servers' GPUs
    (NODE_COUNTS[0]), or its rows would run no replica at all (review R6-7: tp 8 × pp 16 read "plan uses 0 GPUs")."""
    smallest = NODE_COUNTS[0] * gpus_per_node
    if smallest % unit:
        raise EstimatorError.of(
            "scaling_replica",
            field="plan",
            replica=unit,
            smallest=smallest,
            largest=NODE_COUNTS[-1] * gpus_per_node,
            first_nodes=NODE_COUNTS[0],
            last_nodes=NODE_COUNTS[-1],
            gpus_per_node=gpus_per_node,
        )


def _rebase(rows: list[dict[str, object]], unit: int) -> list[dict[str, object]]:
    """Speed-up and efficiency against the baseline (`baseline` True): the fewest GPUs that fit, the fastest of them
    where several links do; the one-replica point where none fits (no speed is shown then). A one-replica run that
    does not fit is no run to count from: Llama 2 7B full fine-tuning under ZeRO-1 on H100 fits from 3 GPUs, and
    against its hypothetical one-GPU speed 8 GPUs read 9.04 x (efficiency 1.13)."""
    fitting = [r for r in rows if r["fits"]]
    base = min(fitting, key=lambda r: (_number(r, "gpus"), -_number(r, "tokens_per_s")), default=rows[0])
    per_replica = _number(base, "tokens_per_s") / (_number(base, "gpus") / unit)
    for row in rows:
        speedup = _number(row, "tokens_per_s") / per_replica if per_replica else 0.0
        row |= {
            "speedup": speedup,
            "efficiency": speedup / (_number(row, "gpus") / unit),
            "baseline": row is base and bool(row["fits"]),
        }
    return rows


def _number(row: dict[str, object], key: str) -> float:
    value = row[key]
    assert isinstance(value, int | float)  # the rows' figures (_row)
    return float(value)


def _fit(breakdown: MemoryBreakdown) -> dict[str, object]:
    limit = breakdown.capacity if breakdown.limit is None else breakdown.limit
    return {"fits": breakdown.fits, "per_gpu_gib": breakdown.total / GIB, "limit_gib": limit / GIB}


def _multi_node_rows(
    model: ModelSpec,
    workload: Workload,
    gpu: GpuSpec,
    base: Plan,
    gpus_per_node: int,
    nics: int,
    memory: _Gate,
) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    unit = base.tp * base.pp * base.cp
    for fabric in inter_node_fabrics():
        entry = fabric_entry(fabric)
        gbps = entry["port_gbps"] * (nics if entry["transport"] == "rdma" else 1)
        for nodes in NODE_COUNTS:
            dp = nodes * gpus_per_node // unit
            cluster = Cluster(
                gpu=gpu,
                gpus_per_node=gpus_per_node,
                nodes=nodes,
                inter_node_gbps=gbps,
                inter_node_fabric=fabric,
            )
            w, p = _weak_scaled(workload, base, dp)
            tokens = _tokens_per_s(model, w, p, cluster)
            row = _row("multi-node", fabric, nodes * gpus_per_node, nodes, tokens)
            rows.append(row | _fit(memory.of(w, p, cluster)))
    return rows


def _row(scope: str, link: str, gpus: int, nodes: int, tokens_per_s: float) -> dict[str, object]:
    """One scaling row; `_rebase` adds its speed-up and efficiency."""
    return {"scope": scope, "link": link, "gpus": gpus, "nodes": nodes, "tokens_per_s": tokens_per_s}
