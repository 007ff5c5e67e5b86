"""Request examples of the admin JSON API for /docs. Ids are the seeded catalog's; a version is the one
a freshly seeded SKU has (1), so on another catalog "Try it out" may answer 409 (stale version) with
the current values, never 422 (tests/admin/test_api_docs.py posts each one to a seeded app)."""

from __future__ import annotations

from typing import Any

from fastapi.openapi.models import Example

CARD = "a100-40g-pcie-card"  # the seeded by-the-card A100 SKU
CNY = "CNY"


def _example(summary: str, value: dict[str, Any]) -> dict[str, Example]:
    return {"example": Example(summary=summary, value=value)}


SKU_CREATE = _example(
    "A new 8-GPU H200 server, rented by the server, 15 % off annual terms (an illustrative price)",
    {
        "id": "h200-141g-sxm-8x",
        "name": "8x H200 141G SXM NVSwitch server",
        "gpu": "h200-141g-sxm",
        "rental_unit": "node",
        "gpus_per_node": 8,
        "card_counts": [8],
        "intra_node_link": "nvlink4",
        "interconnect": "NVLink + NVSwitch 900 GB/s",
        "host_ram_gib": 2048,
        "regions": ["shenzhen"],
        "indicative_price": True,
        "price": {"amount": "120000.00", "currency": CNY, "note": "launch price"},
        "discounts": {"annual": "15"},
    },
)
SKU_PATCH = _example("Change the network of a SKU at version 1", {"version": 1, "network": "1 Gbps BGP"})
PRICE = {
    **_example(
        "A new list price from now, on the SKU at version 1",
        {"amount": "2900.00", "currency": CNY, "note": "2027 list price", "version": 1},
    ),
    "with_terms": Example(
        summary="A new list price and term discounts together",
        value={"amount": "2900.00", "currency": CNY, "terms": {"monthly": "0", "annual": "20"}, "version": 1},
    ),
}
VERSION = _example("The SKU's current version", {"version": 1})
AVAILABILITY = _example("12 units free in a region that had no figure yet", {"units_available": 12, "version": None})
HOLD = _example(
    "Two units in repair from the day in the address until 2027-01-11, a new hold (version null)",
    {"ends_on": "2027-01-11", "units": 2, "note": "PSU swap", "version": None},
)
ADDON = {
    **_example(
        "An add-on priced on consultation (amount null), new (version null)",
        {"name": "Dedicated 10 Gbps uplink", "amount": None, "currency": CNY, "per_unit": "node", "version": None},
    ),
    "fabric": Example(
        summary="A priced fabric add-on with its bandwidth: 8 ports x 200 Gb/s per server (illustrative figures)",
        value={
            "name": "RoCE v2 200G, per node",
            "amount": "6000.00",
            "currency": CNY,
            "per_unit": "node",
            "ports_per_server": 8,
            "port_gbps": 200,
            "bandwidth_source": "the data centre's NIC inventory",
            "version": None,
        },
    ),
}
CATALOG = _example(
    "A document with one new L40S SKU (GET /admin/api/catalog/export gives the whole catalog in this form)",
    {
        "format": "gpu-sizer-catalog",
        "schema_version": 1,
        "skus": [
            {
                "id": "l40s-48g-card",
                "name": "L40S 48G server, rented by the card",
                "gpu": "l40s-48g",
                "rental_unit": "card",
                "gpus_per_node": 8,
                "card_counts": [1, 2, 4, 8],
                "intra_node_link": "pcie4",
                "regions": ["shenzhen"],
                "prices": [{"amount": "1800.00", "currency": CNY, "effective_from": "2026-12-01T00:00:00Z"}],
                "discounts": {"annual": "10"},
            }
        ],
    },
)
API_KEY = _example(
    "A key for a sales team's CRM: recommendations and quotes, 600 requests a minute, for a year",
    {
        "name": "HubSpot",
        "organisation": "Acme Sales",
        "scopes": ["recommend", "quotes:write", "quotes:read"],
        "rate_limit_per_minute": 600,
        "expires_at": "2027-12-31T00:00:00Z",
    },
)
