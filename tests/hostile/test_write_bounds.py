"""What one anonymous client can write in an hour is bounded, table by table, whatever it sends; the
figures are in docs/operations.md ("Bounded growth"). Each test writes the largest rows the API
accepts, measures what the database stores for them, and checks the hourly bound the settings give."""

from __future__ import annotations

import json
import random
import uuid
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select, text
from sqlalchemy.orm import Session

from app.common.settings import Settings
from app.db.engine import CLIENT, SETTINGS
from app.estimator.presets import preset_config
from app.quotes.models import Quote
from app.quotes.schemas import MAX_WORKLOAD_JSON_BYTES
from tests.conftest import client_for
from tests.quotes.helpers import h100_body

MB = 1_000_000
BUDGET = 50 * MB  # what one anonymous client may add to the database in an hour, all tables together
# Incompressible text at the most bytes per character the schema's limits count (3 in UTF-8): PostgreSQL
# compresses repeated text, and an attacker would not send any.
RANDOM = random.Random(33)


def cjk(count: int) -> str:
    return "".join(chr(RANDOM.randrange(0x4E00, 0x9FA5)) for _ in range(count))


def largest_quote_body() -> dict[str, Any]:
    body = h100_body()
    body["customer"] = {"name": cjk(200), "company": cjk(200), "email": "a" * 64 + "@" + "b" * 60 + ".example.com"}
    workload = body["workload"]
    workload["model"] = {"hf_config": {**preset_config("llama-3-70b"), "name": ""}}
    room = MAX_WORKLOAD_JSON_BYTES - len(json.dumps(workload, ensure_ascii=False).encode())
    workload["model"]["hf_config"]["name"] = cjk(room // 3)  # the workload at its 8 KiB cap
    body["plan"] = {**(body.get("plan") or {}), "summary": cjk(300)}
    return body


def stored_bytes(db: Session, table: str, where: str, params: dict[str, Any]) -> int:
    """Bytes the rows take in the database: PostgreSQL's own row sizes, or SQLite's column lengths."""
    if db.get_bind().dialect.name == "postgresql":
        sql = f"SELECT coalesce(sum(pg_column_size(t.*)), 0) FROM {table} t WHERE {where}"
        return int(db.execute(text(sql), params).scalar_one())
    columns = [row[1] for row in db.execute(text(f"PRAGMA table_info({table})"))]
    total = " + ".join(f"coalesce(length(CAST({c} AS BLOB)), 0)" for c in columns)
    return int(db.execute(text(f"SELECT coalesce(sum({total}), 0) FROM {table} WHERE {where}"), params).scalar_one())


def largest_quote_bytes(client: TestClient, db: Session) -> int:
    response = client.post("/quotes", json=largest_quote_body())
    assert response.status_code == 201, response.text
    quote_id = db.scalar(select(Quote.id).where(Quote.public_id == response.json()["id"]))
    quote = stored_bytes(db, "quotes", "id = :id", {"id": quote_id})
    lines = stored_bytes(db, "quote_lines", "quote_id = :id", {"id": quote_id})
    return quote + lines


def hourly_bounds(settings: Settings, quote_bytes: int) -> dict[str, int]:
    """Bytes one client can add in an hour, per table, with these settings (docs/operations.md)."""
    return {
        "quotes + quote_lines": quote_bytes * settings.quotes_per_minute * 60,
        "hub_configs": settings.hf_cache_max_bytes,  # a cap on the whole table
        "quote_documents": settings.pdf_store_max_bytes,  # a cap on the whole table
        # one counter row per limited path and per limit of its own, reused window after window
        "rate_limit_counters": (len(settings.rate_limit_paths) + len(settings.rate_limit_pages) + 2) * COUNTER_BYTES,
    }


COUNTER_BYTES = 400  # a key of at most 255 characters, two integers, row header (measured below)


def test_one_client_hour_of_writes_stays_under_the_budget(client: TestClient, db: Session) -> None:
    quote = largest_quote_bytes(client, db)
    assert 10_000 < quote < 40_000, quote  # about 21 kB, most of it the 8 KiB workload kept twice
    bounds = hourly_bounds(Settings(), quote)
    print({name: f"{size / MB:.1f} MB" for name, size in bounds.items()}, f"quote {quote} B")
    assert sum(bounds.values()) < BUDGET, bounds


def test_a_rate_limit_counter_row_is_small(db: Session) -> None:
    key = "x" * 255
    db.execute(text("INSERT INTO rate_limit_counters (key, window_start, hits) VALUES (:k, 0, 1)"), {"k": key})
    assert stored_bytes(db, "rate_limit_counters", "key = :k", {"k": key}) <= COUNTER_BYTES


def test_new_quotes_are_limited_per_client_on_every_path(app_settings: Settings, db: Session, backend: str) -> None:
    if backend == "sqlite":
        # conftest's SQLite engine begins every connection itself, so the counter's autocommit would roll back
        pytest.skip("the counter needs an autocommitting connection")
    settings = app_settings.model_copy(update={"quotes_per_minute": 2, "rate_limit_per_minute": 1000})
    db.info[CLIENT], db.info[SETTINGS] = f"client-{uuid.uuid4().hex}", settings
    with client_for(settings, db) as client:
        for _ in range(3):  # refused requests write nothing and spend nothing
            assert client.post("/quotes", json=h100_body(sku_id="no-such-sku")).status_code in (404, 422)
        key = {"Idempotency-Key": uuid.uuid4().hex}
        statuses = [client.post("/quotes", json=h100_body(), headers=key).status_code for _ in range(2)]
        statuses += [client.post("/quotes", json=h100_body()).status_code for _ in range(2)]
        assert statuses == [201, 200, 201, 429]  # the replay is not counted
        refused = client.post("/quotes", json=h100_body())
        assert refused.status_code == 429 and 0 < int(refused.headers["Retry-After"]) <= 60
        assert "QUOTES_PER_MINUTE" in refused.json()["detail"]
