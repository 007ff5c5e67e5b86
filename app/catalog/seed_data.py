"""The catalog the company sells, from the company's 2026 article.

The article quotes ranges "for reference, final on consultation": the seed takes the midpoint
and marks the price as indicative. Amounts are CNY per month per rental unit.

Notes never restate a price or a discount: those change, and the catalog states them from the data
(`price.summary` of GET /catalog/skus); a note keeps what the data cannot say (the article's range).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

GPU_TYPES: list[dict[str, str]] = [
    {"slug": "a100-40g-pcie", "name": "NVIDIA A100 40GB PCIe"},
    {"slug": "a100-80g-sxm", "name": "NVIDIA A100 80GB SXM"},
    {"slug": "h100-80g-sxm", "name": "NVIDIA H100 80GB SXM"},
    {"slug": "h200-141g-sxm", "name": "NVIDIA H200 141GB SXM"},
    {"slug": "l40s-48g", "name": "NVIDIA L40S 48GB"},
]

SKUS: list[dict[str, Any]] = [
    {
        "slug": "a100-40g-pcie-card",
        "name": "A100 40G custom server, rented by the card",
        "gpu": "a100-40g-pcie",
        "rental_unit": "card",
        "gpus_per_node": 4,
        "card_counts": [1, 2, 4],
        "intra_node_link": "pcie4",
        "interconnect": "PCIe 4.0, no NVLink",
        "host_cpu": "general-purpose server",
        # the article lists a "general-purpose server" and no RAM: unknown, so an option that needs host RAM on it
        # is offered with the warning host_ram_unconfirmed (app/planner) and its quote prints that condition
        "host_ram_gib": None,
        "host_nvme_tb": "",
        "network": "100 Mbps BGP",
        "inter_node_fabric": None,
        "infiniband_addon": False,
        "regions": ["shenzhen"],
        "indicative_price": False,
        "price": Decimal("2800.00"),
        "discounts_bp": {"monthly": 0, "annual": 2000},
        "notes": "",
    },
    {
        "slug": "a100-80g-sxm-8x",
        "name": "8x A100 80G SXM NVLink server",
        "gpu": "a100-80g-sxm",
        "rental_unit": "node",
        "gpus_per_node": 8,
        "card_counts": [8],
        "intra_node_link": "nvlink3",
        "interconnect": "NVLink 600 GB/s all-to-all (NVSwitch)",
        "host_cpu": "2x Intel Xeon Platinum 8380 (80 cores)",
        "host_ram_gib": 1024,  # the company's article: "1TB DDR4 ECC"
        "host_nvme_tb": "4x 3.84 TB NVMe",
        "network": "10 Gbps BGP",
        "inter_node_fabric": None,
        "infiniband_addon": False,
        "regions": ["shenzhen"],
        "indicative_price": True,
        "price": Decimal("30000.00"),
        "discounts_bp": {"monthly": 0, "annual": 1500},
        "notes": "The article's list range is CNY 25,000-35,000 per month; a custom channel may offer more off "
        "an annual term, on consultation.",
    },
    {
        "slug": "h100-80g-sxm-8x",
        "name": "8x H100 80G SXM NVSwitch server",
        "gpu": "h100-80g-sxm",
        "rental_unit": "node",
        "gpus_per_node": 8,
        "card_counts": [8],
        "intra_node_link": "nvlink4",
        "interconnect": "NVLink + NVSwitch 900 GB/s",
        "host_cpu": "2x Intel Xeon Platinum 8480+ (112 cores)",
        "host_ram_gib": 2048,  # the company's article: "2TB DDR5"
        "host_nvme_tb": "8x 15.36 TB NVMe",
        "network": "10 Gbps international; InfiniBand 400G optional",
        "inter_node_fabric": "ib-ndr-400",
        "infiniband_addon": True,
        "regions": ["singapore", "los-angeles"],
        "indicative_price": True,
        "price": Decimal("100000.00"),
        "discounts_bp": {"monthly": 0, "annual": 1500},
        "notes": "The article's list range is CNY 80,000-120,000 per month.",
    },
]

SEED_CURRENCY = "CNY"

# Options sold with a SKU, monthly per unit. `price` None: the article gives no figure, so the
# option is "priced on consultation" and a quote shows it without adding it to the total.
# A fabric add-on states its bandwidth per server: `ports_per_server` × `port_gbps` (None for an add-on that is
# not a fabric), with its source. The article says only "InfiniBand 400G 可选" (optional) for the H100 server and
# gives no port count: the 8 ports are NVIDIA's reference design for an 8-GPU HGX H100 server, the same figure
# POST /estimate assumes for H100 servers (app/estimator/data/interconnects.json node_defaults).
H100_IB_SOURCE = (
    "NVIDIA DGX H100 / DGX BasePOD reference architecture: eight single-port ConnectX-7 NICs, up to 400 Gb/s "
    "NDR InfiniBand each, one per GPU, for the compute fabric of an 8-GPU HGX H100 server (docs.nvidia.com/"
    "dgx-basepod/reference-architecture-infrastructure-foundation-enterprise-ai/latest/core-components.html). "
    "The company's article says only 'InfiniBand 400G optional': the port count is the reference design's, "
    "to confirm with the data centre."
)
ADDONS: list[dict[str, Any]] = [
    {
        "sku": "h100-80g-sxm-8x",
        "code": "infiniband-400g",
        "name": "InfiniBand NDR 400G, per node",
        "price": None,
        "per_unit": "node",
        "ports_per_server": 8,
        "port_gbps": 400,
        "bandwidth_source": H100_IB_SOURCE,
    },
]
