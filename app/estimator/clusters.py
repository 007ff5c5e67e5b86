"""A cluster as people describe it: a GPU type (or a catalog server) and a node count.

What the request leaves out is filled from the GPU's usual server (data/interconnects.json
`node_defaults`: 8 SXM GPUs on an HGX board with one InfiniBand NIC per GPU, rail-optimised) or
from the catalog server's own shape and network, and every filled-in value is returned as an
assumption sentence so the response says what it assumed.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.estimator.interconnects import NodeDefault, ethernet_gbps, fabric_entry, inferred_fabric, usual_node
from app.estimator.notes import Note, note
from app.estimator.specs import Cluster, EstimatorError, GpuSpec


@dataclass(frozen=True, slots=True)
class HardwareAsked:
    """What a request said about its hardware; None where it said nothing."""

    gpus_per_node: int | None = None
    nodes: int | None = None
    intra_node_link: str | None = None
    inter_node_gbps: float | None = None
    inter_node_fabric: str | None = None
    host_ram_gib: float | None = None


@dataclass(frozen=True, slots=True)
class CatalogServer:
    """A catalog SKU's server: its shape, links, host and network as the catalog lists them."""

    name: str
    gpus_per_node: int
    intra_node_link: str
    inter_node_fabric: str | None  # an RDMA fabric the SKU can be joined with
    network: str  # free text, e.g. "10 Gbps BGP"
    host_ram_gib: float | None
    inter_node_gbps: float | None = None  # that fabric's bandwidth per server as the catalog states it (ports × Gb/s)


def gpu_cluster(gpu: GpuSpec, asked: HardwareAsked) -> tuple[Cluster, list[Note]]:
    """A cluster of a GPU type. `{"gpu"}` alone is one card; with `nodes`, whole usual servers."""
    notes: list[Note] = []
    usual = usual_node(gpu.id)
    nodes = asked.nodes or 1
    per_node = asked.gpus_per_node
    if per_node is None:
        if asked.nodes is None:
            per_node = 1
            notes.append(note("hardware_one_gpu", gpu=gpu.name))
        else:
            per_node = usual.gpus_per_node if usual else gpu.max_gpus_per_node
            if usual:
                notes.append(note("hardware_usual_server", per_node=per_node, gpu=gpu.name, server=usual.server))
            else:
                notes.append(note("hardware_largest_server", per_node=per_node, gpu=gpu.name))
    gbps, fabric = asked.inter_node_gbps, asked.inter_node_fabric
    if fabric:
        fabric_entry(fabric)  # unknown names are a 422 naming the known ones
    if nodes > 1 and not (gbps or fabric):
        if usual is None:
            raise EstimatorError.of("fabric_usual_unknown", field="hardware.inter_node_gbps", gpu=gpu.name)
        fabric, gbps = usual.fabric, usual.inter_node_gbps
        notes.append(_fabric_note(usual))
    elif nodes > 1 and fabric and not gbps:
        gbps = _nics_for(fabric, usual) * fabric_entry(fabric)["port_gbps"]
        notes.append(note("fabric_ports", fabric=fabric, gbps=gbps, ports=gbps / fabric_entry(fabric)["port_gbps"]))
    host_ram = asked.host_ram_gib
    if host_ram is None and usual is not None and usual.host_ram_gib and per_node == usual.gpus_per_node:
        host_ram = usual.host_ram_gib  # whole usual servers: their RAM, so that offload can be planned
        notes.append(note("host_ram_usual", host_ram=host_ram, server=usual.server))
    cluster = Cluster(
        gpu=gpu,
        gpus_per_node=per_node,
        nodes=nodes,
        intra_node_link=asked.intra_node_link,
        inter_node_gbps=gbps if nodes > 1 else None,
        host_ram_gib=host_ram,
        inter_node_fabric=fabric if fabric and nodes > 1 else None,
    )
    return cluster, notes


def server_cluster(gpu: GpuSpec, server: CatalogServer, asked: HardwareAsked) -> tuple[Cluster, list[Note]]:
    """A cluster of catalog servers: their node shape, links, host RAM and network unless overridden."""
    notes: list[Note] = []
    nodes = asked.nodes or 1
    per_node = asked.gpus_per_node or server.gpus_per_node
    gbps, fabric = asked.inter_node_gbps, asked.inter_node_fabric
    if nodes > 1 and not (gbps or fabric):
        if server.inter_node_fabric:
            fabric = server.inter_node_fabric
            gbps = _catalog_gbps(server, fabric)
            notes.append(note("fabric_catalog", server=server.name, fabric=fabric, gbps=gbps))
        else:
            gbps = ethernet_gbps(server.network)
            if gbps is None:
                raise EstimatorError.of("server_rate_unknown", field="hardware.inter_node_gbps", server=server.name)
            fabric = inferred_fabric(gbps)
            notes.append(note("fabric_tcp", server=server.name, network=server.network, gbps=gbps))
    elif nodes > 1 and fabric and not gbps:
        gbps = _catalog_gbps(server, fabric)
    host = asked.host_ram_gib or server.host_ram_gib
    if asked.gpus_per_node is None or asked.host_ram_gib is None:
        shape: dict[str, str | int | float | bool] = {"nodes": nodes, "server": server.name, "per_node": per_node}
        shape["link"] = server.intra_node_link
        notes.append(
            note("hardware_servers_ram", **shape, host_ram=host) if host else note("hardware_servers", **shape)
        )
    cluster = Cluster(
        gpu=gpu,
        gpus_per_node=per_node,
        nodes=nodes,
        intra_node_link=asked.intra_node_link or server.intra_node_link,
        inter_node_gbps=gbps if nodes > 1 else None,
        host_ram_gib=host,
        inter_node_fabric=fabric if fabric and nodes > 1 else None,
    )
    return cluster, notes


def _catalog_gbps(server: CatalogServer, fabric: str) -> float:
    """The server's bandwidth on `fabric`: the catalog's figure (its fabric add-on's ports × Gb/s) for the server's
    own fabric, else one port of that fabric."""
    if fabric == server.inter_node_fabric and server.inter_node_gbps:
        return server.inter_node_gbps
    return float(fabric_entry(fabric)["port_gbps"])


def _nics_for(fabric: str, usual: NodeDefault | None) -> int:
    """Ports per node for a named RDMA fabric: the usual server's NIC count; one port for Ethernet."""
    if fabric_entry(fabric)["transport"] != "rdma" or usual is None:
        return 1
    return usual.nics


def _fabric_note(usual: NodeDefault) -> Note:
    port = float(fabric_entry(usual.fabric)["port_gbps"])
    code = "fabric_usual_rail" if usual.nics == usual.gpus_per_node else "fabric_usual"  # one NIC per GPU
    return note(
        code, fabric=usual.fabric, nics=usual.nics, port_gbps=port, gbps=usual.inter_node_gbps, server=usual.server
    )
