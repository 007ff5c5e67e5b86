"""Reference cloud prices: seeded with their dates and confidence, compared per GPU-hour, and
converted at the admin-set exchange rate — on SQLite and PostgreSQL."""

from __future__ import annotations

import csv
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
