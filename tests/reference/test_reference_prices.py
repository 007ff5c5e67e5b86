"""Reference cloud prices: seeded with their dates and confidence, compared per GPU-hour, and
converted at the admin-set exchange rate — on SQLite and PostgreSQL."""

from __future__ import annotations

import csv
import json
import re
from decimal import Decimal

from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.reference import repository
from app.reference.service import SEED_CSV, ExchangeRates, build_book, seed_reference_prices, set_exchange_rate


def test_seed_keeps_every_row_with_its_date_and_confidence(db: Session) -> None:
    rows = repository.list_prices(db)
    with SEED_CSV.open(encoding="utf-8") as handle:
        shipped = list(csv.DictReader(handle))
    assert len(rows) == len(shipped) == 30
    p5 = next(r for r in rows if r.instance_type == "p5.48xlarge")
    assert (p5.gpu_count, p5.hourly_micros, p5.confidence) == (8, 55_040_000, "high")
    assert "2026-11-29" in p5.data_date
    assert seed_reference_prices(db) == 0  # idempotent


def test_same_gpu_hours_priced_per_comparable_instance(db: Session) -> None:
    book = build_book(db, "CNY")[0]
    rows = book.compare(gpu_id="h100-80g-sxm", gpus=8, gpu_hours=100.0)
    assert rows, "H100 80GB rows are in the seed"
    assert all(r.gpu_variant.startswith("80GB") for r in rows)  # the 94 GB H100 NVL is not comparable
    lambda_8x = next(r for r in rows if r.instance_type == "gpu_8x_h100_sxm5")
    assert lambda_8x.usd_per_gpu_hour == Decimal("3.9900")  # 31.92 $/h / 8 GPUs
    assert lambda_8x.total_usd == Decimal("399.00")
    assert lambda_8x.total_converted is None  # no exchange rate set yet


def test_month_basis_without_a_token_count(db: Session) -> None:
    rows = build_book(db, "CNY")[0].compare(gpu_id="a100-40g-pcie", gpus=1, gpu_hours=None)
    assert {r.basis for r in rows} == {"month"}
    assert all(r.gpu_hours == Decimal(730) for r in rows)


def test_exchange_rate_converts_the_totals(db: Session) -> None:
    set_exchange_rate(db, base="USD", quote="CNY", rate=Decimal("7.1"), set_by="test")
    rows = build_book(db, "CNY")[0].compare(gpu_id="h100-80g-sxm", gpus=8, gpu_hours=100.0)
    lambda_8x = next(r for r in rows if r.instance_type == "gpu_8x_h100_sxm5")
    assert (lambda_8x.total_converted, lambda_8x.converted_currency) == (Decimal("2832.90"), "CNY")


def test_recommend_options_carry_the_comparison(client: TestClient) -> None:
    response = client.post("/recommend", json={"model": {"preset": "llama-2-7b"}, "task": "lora", "tokens": 1e9})
    option = response.json()["options"][0]
    refs = option["reference_prices"]
    assert refs and all(re.fullmatch(r"\d+\.\d{2}", r["total_usd"]) for r in refs)
    assert refs[0]["basis"] == "job"
    assert Decimal(refs[0]["gpu_hours"]) == Decimal(str(round(option["performance"]["gpu_hours"], 2)))


def test_rates_convert_directly_inversely_and_across_a_common_base() -> None:
    rates = ExchangeRates({("USD", "CNY"): Decimal("7.1"), ("USD", "EUR"): Decimal("0.9")})
    assert rates.rate("CNY", "CNY") == 1
    assert rates.rate("USD", "CNY") == Decimal("7.1")
    assert rates.rate("CNY", "USD") == 1 / Decimal("7.1")
    assert rates.rate("EUR", "CNY") == Decimal("7.1") / Decimal("0.9")
    assert rates.rate("JPY", "CNY") is None


def test_only_the_same_form_factor_is_compared(db: Session) -> None:
    """Before: an H100 SXM option was compared with RunPod's and Lambda's H100 PCIe (a card at a lower power limit,
    without NVLink) as if the same GPU. The seed prices H100 80GB as SXM5 (AWS p5, GCP a3, Azure ND H100 v5, Lambda,
    RunPod 8x SXM) and as PCIe (Lambda gpu_1x_h100_pcie, RunPod 1x_H100_SECURE)."""
    book = build_book(db, "CNY")[0]
    sxm = book.compare(gpu_id="h100-80g-sxm", gpus=8, gpu_hours=100.0, limit=30)
    assert sxm and all("SXM" in r.gpu_variant and r.same_variant for r in sxm)
    assert not {"1x_H100_SECURE", "gpu_1x_h100_pcie"} & {r.instance_type for r in sxm}
    pcie = book.compare(gpu_id="h100-80g-pcie", gpus=1, gpu_hours=100.0, limit=30)
    assert {r.instance_type for r in pcie} == {"1x_H100_SECURE", "gpu_1x_h100_pcie"}
    assert all(r.same_variant for r in pcie)


def test_another_form_factor_is_marked_where_only_it_is_priced(db: Session) -> None:
    """No A100 40GB PCIe instance is in the seed: the A100 40GB rows (SXM4, or a variant Lambda does not state) are
    given, each marked same_variant false, its variant without the research note "(variant not stated in
    catalog)"."""
    rows = build_book(db, "CNY")[0].compare(gpu_id="a100-40g-pcie", gpus=1, gpu_hours=None, limit=30)
    assert rows and not any(r.same_variant for r in rows)
    assert {r.gpu_variant for r in rows} == {"40GB SXM4", "40GB"}


def test_the_answer_gives_a_clean_date_and_the_source_not_the_research_notes(client: TestClient) -> None:
    """Before: data_date read "not recorded in file; snapshot read 2026-11-29 from the research index; content
    implies >= late 2025 (file lists p6-b300.48xlarge; B300 launch timing from memory, unverified)"."""
    body = {"model": {"preset": "llama-3.1-8b"}, "task": "full_finetune", "tokens": 1e9}
    options = client.post("/recommend", json=body).json()["options"]
    refs = [ref for option in options for ref in option["reference_prices"]]
    assert refs
    for ref in refs:
        assert ref["data_date"] is None or re.fullmatch(r"\d{4}-\d{2}-\d{2}", ref["data_date"]), ref
        assert re.fullmatch(r"[\w.-]+/[\w.-]+ \S+ @ [0-9a-f]{40}", ref["source"]), ref
        assert "memory" not in json.dumps(ref) and "(variant" not in ref["gpu_variant"], ref
    assert {ref["data_date"] for ref in refs} == {"2026-11-29"}  # the day the seed's catalogs were read
    for option in options:
        form = option["sku"]["gpu"].split("-")[-1]
        assert all(
            form.upper() in ref["gpu_variant"].upper() for ref in option["reference_prices"] if ref["same_variant"]
        )
