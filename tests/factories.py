"""Factories for test inputs: models, workloads, catalog offers and catalog rows, and the one way tests ask
`POST /recommend`.

Each factory builds a valid object from published defaults and takes the fields a test is about as
keyword arguments, so a test states only what it varies. The defaults are real configurations (cited
beside each), never tuned to make a test pass.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from decimal import Decimal
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.apikeys.schemas import ApiKeyCreate
from app.apikeys.service import issue_key
from app.catalog.models import SkuAvailability, SkuPrice
from app.catalog.repository import get_sku_by_slug
from app.estimator.hardware import get_gpu
from app.estimator.specs import LoraSpec, ModelSpec, Workload
from app.planner.offers import Offer

# meta-llama/Llama-2-7b-hf config.json: 32 layers, hidden 4096, 32 heads (no GQA), intermediate 11008, vocab 32000
LLAMA2_7B_SHAPE: dict[str, Any] = {
    "name": "llama2-7b", "layers": 32, "hidden": 4096, "heads": 32, "kv_heads": 32, "ffn": 11008, "vocab": 32000,
}  # fmt: skip
# mistralai/Mixtral-8x7B-v0.1 config.json: Llama-style 32 layers with GQA 8, every layer 8 experts, 2 per token
MIXTRAL_8X7B_SHAPE: dict[str, Any] = {
    "name": "mixtral-8x7b", "layers": 32, "hidden": 4096, "heads": 32, "kv_heads": 8, "ffn": 14336, "vocab": 32000,
    "experts": 8, "experts_per_token": 2, "expert_ffn": 14336, "moe_layers": 32,
}  # fmt: skip


def dense_model(**changes: Any) -> ModelSpec:
    """A dense decoder, Llama-2-7B's shape unless `changes` say otherwise."""
    return ModelSpec(**(LLAMA2_7B_SHAPE | changes))


def moe_model(**changes: Any) -> ModelSpec:
    """A mixture-of-experts decoder, Mixtral-8x7B's shape unless `changes` say otherwise."""
    return ModelSpec(**(MIXTRAL_8X7B_SHAPE | changes))


def workload(task: str = "full_finetune", **changes: Any) -> Workload:
    """A Workload for `task`; LoRA and QLoRA get PEFT's default adapter (LoraSpec()) unless one is given."""
    if task in ("lora", "qlora"):
        changes.setdefault("lora", LoraSpec())
    return Workload(task=task, **changes)  # type: ignore[arg-type]


def offer(sku_id: str = "h100-node", gpu: str = "h100-80g-sxm", **changes: Any) -> Offer:
    """A catalog offer as the planner reads it: one 8-GPU server of `gpu` rented by the node in one region,
    CNY 1,000.00 a month, over the GPU's own link, with no fabric between servers, unless `changes` say
    otherwise. A `monthly` change is the list price as a string; `unit` the rental unit ("card" offers 1, 2,
    4 or 8 cards)."""
    spec = get_gpu(gpu)
    unit = changes.pop("unit", changes.pop("rental_unit", "node"))
    fields: dict[str, Any] = {
        "sku_id": sku_id,
        "name": sku_id,
        "gpu": spec,
        "regions": ("shenzhen",),
        "rental_unit": unit,
        "gpus_per_node": 8,
        "card_counts": (1, 2, 4, 8) if unit == "card" else (),
        "intra_node_link": spec.intra_node_link,
        "inter_node_fabric": None,
        "host_ram_gib": 1024,
        "currency": "CNY",
        "unit_monthly_list": Decimal(changes.pop("monthly", "1000.00")),
    }
    return Offer(**(fields | changes))


def with_changes(offer_: Offer, **changes: Any) -> Offer:
    """`offer_` with `changes` (an Offer is a frozen dataclass)."""
    return replace(offer_, **changes)


def new_price(
    db: Session,
    slug: str,
    amount_minor: int,
    *,
    currency: str = "CNY",
    effective_from: datetime | None = None,
    created_by: str | None = None,
) -> SkuPrice:
    """A new list price for the seeded SKU `slug`; `effective_from` and `created_by` take the model's defaults
    (now, "seed") when not given."""
    stated = {"effective_from": effective_from, "created_by": created_by}
    row = SkuPrice(
        sku=get_sku_by_slug(db, slug),
        amount_minor=amount_minor,
        currency=currency,
        **{name: value for name, value in stated.items() if value is not None},
    )
    db.add(row)
    db.flush()
    return row


def units_available(db: Session, slug: str, region: str, units: int) -> SkuAvailability:
    """How many units of the seeded SKU `slug` are free in `region`."""
    sku = get_sku_by_slug(db, slug)
    assert sku is not None, slug
    row = SkuAvailability(sku_pk=sku.id, region=region, units_available=units)
    db.add(row)
    db.flush()
    return row


def recommend(client: TestClient, body: dict[str, Any] | None = None, /, **fields: Any) -> dict[str, Any]:
    """`POST /recommend` with `body` (or the keyword fields as the body); the answer, which must be a 200."""
    response = client.post("/recommend", json={**(body or {}), **fields})
    assert response.status_code == 200, response.text
    return response.json()


def sales_key(client: TestClient, db: Session, organisation: str = "Sales", **fields: Any) -> dict[str, str]:
    """The headers of a live API key with every scope (a sales tool's), issued straight into the test's database: a
    quote issued with it holds tracked units, and it may accept anonymous quotes that would take them."""
    data = ApiKeyCreate(
        name="sales tool", organisation=organisation, scopes=["recommend", "quotes:write", "quotes:read"], **fields
    )
    secret = client.app.state.settings.api_key_secret.get_secret_value()  # type: ignore[attr-defined]
    issued = issue_key(db, data=data, created_by="tests", secret=secret)
    db.flush()
    return {"Authorization": f"Bearer {issued.key}"}
