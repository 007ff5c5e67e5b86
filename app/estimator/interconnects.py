"""Achieved collective bandwidths of a cluster, from measured NCCL bus bandwidths.

Figures live in data/interconnects.json, each with its source. We use nccl-tests' *bus bandwidth*
(busbw) because it is the quantity that makes collective time independent of group size:
all-reduce time = 2(n−1)/n · bytes / busbw, all-gather or reduce-scatter = (n−1)/n · bytes / busbw
(NVIDIA/nccl-tests `doc/PERFORMANCE.md`).

A group of GPUs that spans several nodes is bounded by its slowest stage (hierarchical view:
intra-node NVLink/PCIe, then the node's network injection bandwidth). In a ring over k nodes every
node sends 2(n−1)/n · bytes through its NICs, so the inter-node stage's busbw equals the per-node
injection bandwidth shared by the groups that communicate at the same time on that node.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from app.estimator.specs import Cluster, EstimatorError

_DATA_FILE = "interconnects.json"
_BITS_PER_BYTE = 8.0
# Fabrics assumed when a cluster gives `inter_node_gbps` without naming one: below 100 Gb/s it is
# almost always plain Ethernet (TCP sockets); from 100 Gb/s up an RDMA fabric (RoCE or InfiniBand).
_TCP_BELOW_GBPS = 100.0


@dataclass(frozen=True, slots=True)
class LinkBandwidth:
    """Effective bus bandwidth and fixed latency of one collective over one group."""

    busbw_bytes_per_s: float
    latency_s: float
    nodes: int  # nodes the group spans
    bottleneck: str  # "intra" or "inter" or "none" (a group of one)


@lru_cache(maxsize=1)
def _table() -> dict[str, Any]:
    text = (Path(__file__).parent / "data" / _DATA_FILE).read_text(encoding="utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def intra_node_kinds() -> tuple[str, ...]:
    return tuple(_table()["intra_node"])


def inter_node_fabrics() -> tuple[str, ...]:
    return tuple(_table()["inter_node"])


def _entry(section: str, name: str, *, code: str, field: str, param: str) -> dict[str, Any]:
    """The data file's entry `name` in `section`; an unknown name is the error `code` on `field`, the name given
    as `param` beside the known ones."""
    table = _table()[section]
    if name not in table:
        raise EstimatorError.of(code, field=field, **{param: str(name)}, known=sorted(table))
    entry: dict[str, Any] = table[name]
    return entry


def _intra_entry(kind: str) -> dict[str, Any]:
    return _entry("intra_node", kind, code="intra_link_unknown", field="hardware.intra_node_link", param="link")


def fabric_entry(fabric: str) -> dict[str, Any]:
    return _entry("inter_node", fabric, code="fabric_unknown", field="hardware.inter_node_fabric", param="fabric")


def intra_busbw_bytes_per_s(kind: str, group_gpus: int) -> float:
    """All-reduce busbw inside one node; an NVLink bridge joins pairs only, larger groups use PCIe."""
    entry = _intra_entry(kind)
    if group_gpus > entry.get("max_gpus", group_gpus):
        entry = _intra_entry("pcie4")
    return float(entry["allreduce_busbw_gbytes_per_s"]) * 1e9


def _intra_latency_s(kind: str) -> float:
    return float(_intra_entry(kind)["latency_us"]) * 1e-6


def fabric_of(cluster: Cluster) -> str:
    """The named fabric, or one inferred from the per-node rate (stated in the module constants)."""
    return cluster.inter_node_fabric or inferred_fabric(cluster.inter_node_gbps or 0.0)


def inferred_fabric(gbps: float) -> str:
    if gbps < _TCP_BELOW_GBPS:
        return "eth-25" if gbps >= 25 else "eth-10"
    return "roce-200" if gbps < 400 else "ib-ndr-400"


def node_injection_bytes_per_s(cluster: Cluster) -> float:
    """Achieved per-node network bandwidth: line rate × the fabric's measured efficiency."""
    entry = fabric_entry(fabric_of(cluster))
    gbps = cluster.inter_node_gbps if cluster.inter_node_gbps else float(entry["port_gbps"])
    return gbps / _BITS_PER_BYTE * 1e9 * float(entry["efficiency"])


@lru_cache(maxsize=16)
def host_pcie_bytes_per_s(pcie_gen: int) -> float:
    """Achieved GPU<->host copy bandwidth of one x16 link (offload traffic)."""
    table = _table()["pcie_host"]
    key = str(min(max(pcie_gen, 3), 6))
    return float(table[key]["gbytes_per_s"]) * 1e9


def group_bandwidth(cluster: Cluster, group_gpus: int, gpus_per_node_in_group: int) -> LinkBandwidth:
    """Bandwidth of a collective over `group_gpus` GPUs placed `gpus_per_node_in_group` per node.

    All groups of the same kind run their collective at once (every DP replica reduces together),
    so the node's injection bandwidth is shared by gpus_per_node / gpus_per_node_in_group groups.
    """
    if group_gpus <= 1:
        return _SINGLE
    return _group_bandwidth(
        cluster.intra_node_link or cluster.gpu.intra_node_link,
        cluster.gpus_per_node,
        cluster.inter_node_gbps,
        cluster.inter_node_fabric,
        group_gpus,
        gpus_per_node_in_group,
    )


_SINGLE = LinkBandwidth(float("inf"), 0.0, 1, "none")


@lru_cache(maxsize=65536)
def _group_bandwidth(
    kind: str, gpus_per_node: int, gbps: float | None, named: str | None, group_gpus: int, in_node: int
) -> LinkBandwidth:
    """Cached core of `group_bandwidth` (the planner asks the same few questions thousands of times)."""
    per_node = max(1, min(in_node, group_gpus))
    nodes = -(-group_gpus // per_node)
    intra = intra_busbw_bytes_per_s(kind, per_node) if per_node > 1 else float("inf")
    latency = _intra_latency_s(kind) if per_node > 1 else 0.0
    if nodes == 1:
        return LinkBandwidth(intra, latency, 1, "intra")
    if not (named or gbps):
        raise EstimatorError.of("multi_node_rate", field="hardware.inter_node_gbps")
    entry = fabric_entry(named or inferred_fabric(gbps or 0.0))
    node_bytes_per_s = (gbps or entry["port_gbps"]) / _BITS_PER_BYTE * 1e9 * entry["efficiency"]
    inter = node_bytes_per_s * per_node / max(gpus_per_node, per_node)
    latency += entry["latency_us"] * 1e-6
    bottleneck = "inter" if inter < intra else "intra"
    return LinkBandwidth(min(intra, inter), latency, nodes, bottleneck)


def all_reduce_s(message_bytes: float, group_gpus: int, link: LinkBandwidth) -> float:
    """Ring all-reduce: 2(n−1)/n × bytes over the bus bandwidth, plus one latency term."""
    if group_gpus <= 1 or message_bytes <= 0:
        return 0.0
    return link.latency_s + 2.0 * (group_gpus - 1) / group_gpus * message_bytes / link.busbw_bytes_per_s


def gather_or_scatter_s(message_bytes: float, group_gpus: int, link: LinkBandwidth) -> float:
    """All-gather, reduce-scatter or all-to-all of a `message_bytes` full buffer: (n−1)/n × bytes."""
    if group_gpus <= 1 or message_bytes <= 0:
        return 0.0
    return link.latency_s + (group_gpus - 1) / group_gpus * message_bytes / link.busbw_bytes_per_s


def all_to_all_s(message_bytes: float, group_gpus: int, cluster: Cluster, in_node: int | None = None) -> float:
    """An all-to-all of a `message_bytes` buffer per rank over `group_gpus` GPUs placed `in_node` per server (None:
    a whole server at a time): each rank keeps 1/n, sends its peers in the server their share over the server's
    links and its peers beyond it theirs over its share of the server's network injection (every GPU of the server
    sends off it at once, its own group's or another's), both at once; plus the group's latency. (A ring
    collective's bus bandwidth does not apply: no hop carries another's data.)"""
    if group_gpus <= 1 or message_bytes <= 0:
        return 0.0
    in_node = max(1, min(group_gpus, cluster.gpus_per_node, in_node or group_gpus))
    link = group_bandwidth(cluster, group_gpus, in_node)
    near = message_bytes * (in_node - 1) / group_gpus
    seconds = near / intra_busbw_bytes_per_s(cluster.intra_node_link or cluster.gpu.intra_node_link, in_node)
    if group_gpus > in_node:
        far = message_bytes * (group_gpus - in_node) / group_gpus
        seconds = max(seconds, far / (node_injection_bytes_per_s(cluster) / cluster.gpus_per_node))
    return link.latency_s + seconds


def point_to_point_s(message_bytes: float, link: LinkBandwidth) -> float:
    """One send between neighbouring stages: bytes over the link's bandwidth plus latency."""
    if message_bytes <= 0 or link.nodes == 0:
        return 0.0
    return link.latency_s + message_bytes / link.busbw_bytes_per_s


@dataclass(frozen=True, slots=True)
class NodeDefault:
    """The server a GPU type usually comes in (data/interconnects.json `node_defaults`, each row cited)."""

    server: str
    gpus_per_node: int
    fabric: str
    nics: int
    source: str
    host_ram_gib: float | None = None  # DGX rows: the server's RAM (host_ram_source cites it)

    @property
    def inter_node_gbps(self) -> float:
        return float(self.nics * fabric_entry(self.fabric)["port_gbps"])


def usual_node(gpu_id: str) -> NodeDefault | None:
    """The usual server of a built-in GPU type; None for a GPU the table does not know."""
    row = _table()["node_defaults"].get(gpu_id)
    if row is None:
        return None
    ram = row.get("host_ram_gib")
    return NodeDefault(
        row["server"],
        int(row["gpus_per_node"]),
        row["fabric"],
        int(row["nics"]),
        row["source"],
        float(ram) if ram is not None else None,
    )


_RATE = re.compile(r"(\d+(?:\.\d+)?)\s*([GM])(?:bps|bit/s|b/s)", re.IGNORECASE)


def ethernet_gbps(network: str) -> float | None:
    """The first line rate a catalog's network text states ("10 Gbps BGP" → 10, "100 Mbps" → 0.1)."""
    found = _RATE.search(network or "")
    if found is None:
        return None
    value = float(found.group(1))
    return value if found.group(2).upper() == "G" else value / 1000.0
