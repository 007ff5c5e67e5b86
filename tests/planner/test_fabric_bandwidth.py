"""The fabric as catalog data: a fabric add-on states its bandwidth (ports per server × Gb/s per port), the estimator
and the planner size the traffic between servers with it, and an add-on on consultation makes the option
indicative. Before: /recommend assumed one 400 Gb/s port per H100 server (app/planner/offers.py FABRIC_GBPS) while
/estimate on `hardware.gpu: "h100-80g-sxm"` assumed eight, so the two disagreed on the same servers; an option whose
fabric was on consultation was not marked indicative."""

from __future__ import annotations

import io
from contextlib import nullcontext
from decimal import Decimal
from typing import Any

import pytest
from fastapi.testclient import TestClient
from pypdf import PdfReader
from sqlalchemy.orm import Session

from app.catalog.models import SkuAddon
from app.catalog.repository import get_addon, get_sku_by_slug
from app.planner.offers import Configuration, FabricAddon, price
from app.planner.schemas import HardwareIn
from app.planner.workload import resolve_cluster
from tests.factories import offer, recommend

H100 = "h100-80g-sxm-8x"
SEVENTY_B = {"model": {"preset": "llama-3.1-70b"}, "task": "full_finetune", "tokens": 2e10}
CUSTOMER = {"name": "Li Wei", "company": "", "email": "li.wei@example.com"}


def _fabric(unit_monthly: Decimal | None = None, ports: int | None = 8, gbps: int | None = 400) -> FabricAddon:
    return FabricAddon("infiniband-400g", "InfiniBand NDR 400G", "node", unit_monthly, ports, gbps)


def test_the_offer_joins_its_servers_at_the_add_ons_ports_times_their_rate() -> None:
    stated = offer(inter_node_fabric="ib-ndr-400", fabric_addon=_fabric())
    assert stated.inter_node_gbps == 3200.0
    # an add-on without a figure: one port of the SKU's fabric, as before
    unstated = offer(inter_node_fabric="ib-ndr-400", fabric_addon=_fabric(ports=None, gbps=None))
    assert unstated.inter_node_gbps == 400.0
    assert offer(inter_node_fabric="roce-200", fabric_addon=_fabric(ports=4, gbps=200)).inter_node_gbps == 800.0
    assert offer().inter_node_gbps is None


def test_a_fabric_on_consultation_marks_the_joined_cost_only() -> None:
    on_consultation = offer(inter_node_fabric="ib-ndr-400", fabric_addon=_fabric())
    two = price(on_consultation, Configuration(8, 2), "monthly", 100.0)
    assert (two.fabric_on_consultation, two.fabric_monthly, two.monthly_list) == (True, Decimal(0), Decimal("2000.00"))
    one = price(on_consultation, Configuration(8, 1), "monthly", 100.0)
    assert one.fabric_on_consultation is False
    priced = offer(inter_node_fabric="ib-ndr-400", fabric_addon=_fabric(Decimal("500.00")))
    cost = price(priced, Configuration(8, 2), "monthly", 100.0)
    assert (cost.fabric_on_consultation, cost.fabric_monthly, cost.job_total) == (
        False,
        Decimal("1000.00"),
        Decimal("3000.00"),
    )


def _infiniband(db: Session) -> SkuAddon:
    sku = get_sku_by_slug(db, H100)
    assert sku is not None
    addon = get_addon(db, sku.id, "infiniband-400g")
    assert addon is not None
    return addon


def _multi(client: TestClient) -> list[dict[str, Any]]:
    options = [o for o in recommend(client, SEVENTY_B)["options"] if o["nodes"] > 1]
    assert options
    return options


def test_the_seeded_infiniband_states_eight_400g_ports_with_its_source(db: Session) -> None:
    addon = _infiniband(db)
    assert (addon.ports_per_server, addon.port_gbps, addon.server_gbps) == (8, 400, 3200)
    assert "DGX H100" in addon.bandwidth_source and "article" in addon.bandwidth_source


def test_estimate_and_recommend_agree_on_the_same_servers(client: TestClient) -> None:
    """A multi-server option's plan, estimated on its SKU and on the usual H100 servers, gives its own speed."""
    option = _multi(client)[0]
    assert "at 3200 Gb/s per server" in option["assumptions"][0]
    plan = {k: v for k, v in option["quote"]["plan"].items() if k not in ("global_batch", "summary")}
    plan.pop("time_to_train_hours", None)
    hours = option["performance"]["time_to_train_hours"]
    for hardware in ({"sku": H100, "nodes": option["nodes"]}, {"gpu": "h100-80g-sxm", "nodes": option["nodes"]}):
        response = client.post("/estimate", json={**SEVENTY_B, "hardware": hardware, "plan": plan})
        assert response.status_code == 200, response.text
        assert response.json()["performance"]["time_to_train_hours"] == pytest.approx(hours, rel=1e-6), hardware
    sku_estimate = client.post("/estimate", json={**SEVENTY_B, "hardware": {"sku": H100, "nodes": 2}, "plan": plan})
    assert any("3200 Gb/s per node (catalog)" in a for a in sku_estimate.json()["assumptions"])


def test_the_admins_bandwidth_moves_the_speed_of_both(client: TestClient, db: Session) -> None:
    option = _multi(client)[0]
    addon = _infiniband(db)
    addon.ports_per_server = 1  # the old constant's fabric: one 400 Gb/s port a server
    db.flush()
    # at 400 Gb/s the two servers hold the states only by offloading the optimizer: ranked after every option that
    # holds them on the GPUs (recommend.py, "Offload last"), still listed
    slower_options = recommend(client, {**SEVENTY_B, "constraints": {"limit": 10}})["options"]
    slower = next(o for o in slower_options + [None] if o and o["nodes"] == option["nodes"])
    assert "at 400 Gb/s per server" in slower["assumptions"][0]
    assert slower["performance"]["time_to_train_hours"] > option["performance"]["time_to_train_hours"]
    # /estimate reads the SKU through its own session opener (app.planner.workload.resolve_cluster): given this
    # test's session, it sizes the same servers at the admin's figure
    cluster, notes = resolve_cluster(HardwareIn(sku=H100, nodes=2), lambda: nullcontext(db))
    assert (cluster.inter_node_fabric, cluster.inter_node_gbps) == ("ib-ndr-400", 400.0)
    assert any("400 Gb/s per node (catalog)" in note.text for note in notes)
    addon.ports_per_server, addon.port_gbps = 4, 200  # an admin's RoCE-like figure: 800 Gb/s
    db.flush()
    cluster, _notes = resolve_cluster(HardwareIn(sku=H100, nodes=2), lambda: nullcontext(db))
    assert cluster.inter_node_gbps == 800.0


def test_a_fabric_on_consultation_makes_the_option_and_its_quote_indicative(client: TestClient, db: Session) -> None:
    sku = get_sku_by_slug(db, H100)
    assert sku is not None
    sku.indicative_price = False  # so that only the fabric makes it indicative
    db.flush()
    options = recommend(client, SEVENTY_B)["options"]
    quotes = []
    for option in options:
        joined = option["nodes"] > 1
        assert (option["indicative"], option["cost"]["fabric_on_consultation"]) == (joined, joined)
        quote = client.post("/quotes", json={**option["quote"], "customer": CUSTOMER})
        assert quote.status_code == 201, quote.text
        body = quote.json()
        quotes.append(body)
        assert (body["indicative"], body["fabric_on_consultation"]) == (joined, joined)
        assert Decimal(body["total"]) == Decimal(option["cost"]["job_total"])
        for lang, words in (("en", "+ fabric on consultation"), ("zh", "+ 组网费用面议")):
            page = client.get(f"/quotes/{body['id']}/print?lang={lang}")
            assert page.status_code == 200, page.text
            assert (words in page.text) == joined, (lang, option["nodes"])
    # the PDF is that page printed: its total says so too
    joined_quote = next(q for q in quotes if q["fabric_on_consultation"])
    pdf = PdfReader(io.BytesIO(client.get(joined_quote["links"]["pdf"]).content))
    assert "+ fabric on consultation" in " ".join(" ".join(page.extract_text() for page in pdf.pages).split())


def test_a_priced_fabric_is_in_the_total_and_not_indicative(client: TestClient, db: Session) -> None:
    _infiniband(db).amount_minor = 800_000  # CNY 8,000 a server a month
    sku = get_sku_by_slug(db, H100)
    assert sku is not None
    sku.indicative_price = False
    db.flush()
    for option in _multi(client):
        cost = option["cost"]
        assert option["indicative"] is False and cost["fabric_on_consultation"] is False
        assert Decimal(cost["fabric_monthly"]) == Decimal(8000) * option["nodes"]
        annual_unit = Decimal(85_000)  # 15 % off 100,000.00 on the annual term
        assert Decimal(cost["annual_total"]) == (annual_unit * option["nodes"] + Decimal(cost["fabric_monthly"])) * 12
        quote = client.post("/quotes", json={**option["quote"], "customer": CUSTOMER}).json()
        assert Decimal(quote["total"]) == Decimal(cost["job_total"])
        assert quote["fabric_on_consultation"] is False and quote["indicative"] is False
        line = next(line for line in quote["lines"] if line["code"] == "infiniband-400g")
        assert Decimal(line["amount"]) == Decimal(8000) * option["nodes"] * cost["months"]
