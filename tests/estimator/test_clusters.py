"""Clusters as people describe them: a GPU type or a catalog server, and a node count.

Node shapes and fabrics come from data/interconnects.json `node_defaults` (DGX A100: eight HDR 200 Gb/s
NICs; DGX H100/H200/B200: eight ConnectX-7 at 400 Gb/s; cited there). Exact figures are asserted: they are
the data, not estimates.
"""

from __future__ import annotations

import pytest

from app.estimator.clusters import CatalogServer, HardwareAsked, gpu_cluster, server_cluster
from app.estimator.hardware import get_gpu
from app.estimator.interconnects import ethernet_gbps, fabric_of, group_bandwidth, usual_node
from app.estimator.performance import estimate_performance
from app.estimator.presets import get_preset
from app.estimator.specs import EstimatorError, Plan, Workload


def test_a100_nodes_default_to_hgx_servers_on_hdr_infiniband() -> None:
    cluster, notes = gpu_cluster(get_gpu("a100-80g-sxm"), HardwareAsked(nodes=2))
    assert (cluster.gpus_per_node, cluster.nodes, cluster.gpus) == (8, 2, 16)
    assert cluster.inter_node_gbps == 1600.0
    assert fabric_of(cluster) == "ib-hdr-200"
    assert any("8 × 200 Gb/s = 1600 Gb/s per node" in n.text and "rail-optimised" in n.text for n in notes)
    assert any("8 × NVIDIA A100 80GB SXM4 per node" in n.text for n in notes)


@pytest.mark.parametrize("gpu", ["h100-80g-sxm", "h200-141g-sxm", "b200-180g-sxm"])
def test_hopper_and_blackwell_nodes_default_to_ndr_400_per_gpu(gpu: str) -> None:
    cluster, _ = gpu_cluster(get_gpu(gpu), HardwareAsked(nodes=4))
    assert (cluster.gpus_per_node, cluster.inter_node_gbps, fabric_of(cluster)) == (8, 3200.0, "ib-ndr-400")


def test_every_built_in_gpu_has_a_cited_usual_node() -> None:
    from app.estimator.hardware import load_gpus

    for gpu_id in load_gpus():
        usual = usual_node(gpu_id)
        assert usual is not None, gpu_id
        assert usual.source and usual.gpus_per_node >= 1 and usual.inter_node_gbps > 0


def test_a_gpu_alone_is_one_card_and_says_so() -> None:
    cluster, notes = gpu_cluster(get_gpu("h100-80g-sxm"), HardwareAsked())
    assert cluster.gpus == 1
    assert [n.text for n in notes] == ["hardware: one NVIDIA H100 80GB SXM5 (give hardware.nodes for whole servers)"]


def test_what_the_request_says_wins() -> None:
    gpu = get_gpu("h100-80g-sxm")
    cluster, notes = gpu_cluster(gpu, HardwareAsked(nodes=2, gpus_per_node=4, inter_node_gbps=800))
    assert (cluster.gpus_per_node, cluster.inter_node_gbps) == (4, 800)
    assert not any(n.code.startswith("fabric") for n in notes)
    named, notes = gpu_cluster(gpu, HardwareAsked(nodes=2, inter_node_fabric="roce-200"))
    assert (fabric_of(named), named.inter_node_gbps) == ("roce-200", 1600.0)  # one 200G port per GPU, as the server
    assert "fabric: roce-200 at 1600 Gb/s per node (8 ports)" in [n.text for n in notes]
    with pytest.raises(EstimatorError) as raised:
        gpu_cluster(gpu, HardwareAsked(nodes=2, inter_node_fabric="token-ring"))
    assert raised.value.field == "hardware.inter_node_fabric"


def test_a_multi_node_estimate_needs_no_bandwidth_from_the_customer() -> None:
    """Before: 'a multi-node group needs hardware.inter_node_gbps' for {"gpu", "nodes"}."""
    cluster, _ = gpu_cluster(get_gpu("h100-80g-sxm"), HardwareAsked(nodes=2))
    model = get_preset("llama-3.1-8b").model
    workload = Workload(task="pretrain", seq_len=4096, global_batch=64, tokens=1e9)
    perf = estimate_performance(model, workload, Plan(dp=16, zero_stage=3), cluster).performance
    assert perf.tokens_per_s_per_gpu and perf.gpu_hours
    assert group_bandwidth(cluster, 16, 8).bottleneck == "inter"


A100_SERVER = CatalogServer("8x A100 80G SXM NVLink server", 8, "nvlink3", None, "10 Gbps BGP", 1024)
H100_SERVER = CatalogServer(
    "8x H100", 8, "nvlink4", "ib-ndr-400", "10 Gbps international; InfiniBand 400G optional", 2048
)


def test_a_catalog_server_without_rdma_uses_its_own_network() -> None:
    """The seeded a100-80g-sxm-8x lists '10 Gbps BGP' and no fabric: two nodes talk over 10 GbE TCP."""
    cluster, notes = server_cluster(get_gpu("a100-80g-sxm"), A100_SERVER, HardwareAsked(nodes=2))
    assert (cluster.gpus_per_node, cluster.inter_node_gbps, fabric_of(cluster)) == (8, 10.0, "eth-10")
    assert (cluster.intra_node_link, cluster.host_ram_gib) == ("nvlink3", 1024)
    assert any("10 Gbps BGP" in n.text and "TCP" in n.text for n in notes)


def test_a_catalog_server_with_a_fabric_option_is_joined_by_it() -> None:
    cluster, notes = server_cluster(get_gpu("h100-80g-sxm"), H100_SERVER, HardwareAsked(nodes=2))
    assert (cluster.inter_node_gbps, fabric_of(cluster)) == (400.0, "ib-ndr-400")
    assert any("ib-ndr-400 option" in n.text for n in notes)


def test_a_catalog_server_with_no_stated_rate_asks_for_one() -> None:
    server = CatalogServer("mystery", 8, "pcie4", None, "public internet", None)
    with pytest.raises(EstimatorError) as raised:
        server_cluster(get_gpu("a10-24g"), server, HardwareAsked(nodes=2))
    assert raised.value.field == "hardware.inter_node_gbps"


@pytest.mark.parametrize(
    ("text", "gbps"),
    [("10 Gbps BGP", 10.0), ("100 Mbps BGP", 0.1), ("2.5 Gbit/s", 2.5), ("InfiniBand only", None), ("", None)],
)
def test_ethernet_rate_from_catalog_text(text: str, gbps: float | None) -> None:
    assert ethernet_gbps(text) == gbps
