"""A server whose host RAM the catalog does not list (the A100 40G card server, app/catalog/seed_data.py) is offered
on the condition that it has the host RAM the plan needs (warning `host_ram_unconfirmed`), not dropped."""

from __future__ import annotations

import io

from fastapi.testclient import TestClient
from pypdf import PdfReader

from app.text import messages
from tests.factories import recommend

PCIE_CARDS = "a100-40g-pcie-card"
CUSTOMER = {"name": "Li Wei", "company": "", "email": "li.wei@example.com"}


def test_70b_qlora_is_offered_on_two_cards_with_the_host_ram_to_confirm(client: TestClient) -> None:
    # Llama 3.1 70B QLoRA on 2e7 tokens: ZeRO-3 over 2 × A100 40G fits the cards (/estimate on a 256 GiB host: 31.1 of
    # 37.05 GiB, ~12 h), each rank loading the whole ~37 GiB 4-bit model on the host first (~74 GiB). It was dropped
    # (rejected host_ram) and the 8 × A100 80G server, 30,000.00 a month, recommended instead.
    result = recommend(
        client, model={"preset": "llama-3.1-70b"}, task="qlora", tokens=2e7, constraints={"objective": "cheapest"}
    )
    top = result["options"][0]
    assert (top["sku"]["id"], top["total_gpus"]) == (PCIE_CARDS, 2)
    assert (top["cost"]["months"], top["cost"]["job_total"]) == (1, "5600.00")
    assert PCIE_CARDS not in {r["sku"] for r in result["rejected"]}
    assert top["memory"]["fits"] is True  # the gate it passed: the cards hold it, the host RAM is the condition
    codes = {w["code"] for w in top["warnings"]}
    assert "host_load_unknown" not in codes
    warning = next(w for w in top["warnings"] if w["code"] == "host_ram_unconfirmed")
    params = warning["params"]
    # the load: 2 copies of the ~37 GiB model (2 × 36.8), and on top of it the reserve of a server with 2 cards
    # (app/estimator/memory/breakdown.py host_ram_reserve_gib: the OS tiers plus 6 GiB per GPU)
    assert 70 < params["host_gib"] < 80
    assert params["host_gib"] + 12 < params["needed_gib"] < params["host_gib"] + 25
    assert f"{params['needed_gib']:,} GiB" in warning["message"]
    zh = messages.warning("host_ram_unconfirmed", params, "zh")
    assert f"{params['needed_gib']:,} GiB" in zh and "确认" in zh


def test_the_quote_of_that_option_prints_the_host_ram_to_confirm(client: TestClient) -> None:
    # the option's own quote body posts (it was refused, plan_host_ram_unknown), and the quote's page and PDF, in
    # English and Chinese, state the condition with the GiB the option named
    result = recommend(
        client, model={"preset": "llama-3.1-70b"}, task="qlora", tokens=2e7, constraints={"objective": "cheapest"}
    )
    top = result["options"][0]
    needed = next(w for w in top["warnings"] if w["code"] == "host_ram_unconfirmed")["params"]["needed_gib"]
    response = client.post("/quotes", json={**top["quote"], "customer": CUSTOMER})
    assert response.status_code == 201, response.text
    quote = response.json()
    assert quote["plan"]["host_ram_unconfirmed_gib"] == needed and quote["plan"]["fits"] is True
    page = client.get(f"/quotes/{quote['id']}/print").text
    assert f"the plan needs {needed:,} GiB of host RAM per server" in page
    zh = client.get(f"/quotes/{quote['id']}/print?lang=zh").text
    assert f"每台服务器需要 {needed:,} GiB 主机内存" in zh
    pdf = "\n".join(
        page.extract_text() for page in PdfReader(io.BytesIO(client.get(quote["links"]["pdf"]).content)).pages
    )
    assert f"{needed:,} GiB of host RAM" in " ".join(pdf.split())


def test_offloading_onto_a_server_of_unknown_host_ram_is_still_refused(client: TestClient) -> None:
    body = {
        "sku_id": PCIE_CARDS,
        "quantity": 1,
        "term": "monthly",
        "workload": {"model": {"preset": "llama-3.1-8b"}, "task": "lora", "tokens": 1e8},
        "plan": {"dp": 1, "zero_stage": 3, "offload": "optimizer"},
        "customer": CUSTOMER,
    }
    response = client.post("/quotes", json=body)
    assert response.status_code == 422, response.text
    assert response.json()["errors"][0]["type"] == "plan_host_ram_unknown"
