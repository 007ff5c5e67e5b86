"""Settings from the environment (pydantic-settings). Nothing is read at import time."""

from __future__ import annotations

from functools import lru_cache
from typing import Annotated, Literal
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

DEFAULT_SQLITE_URL = "sqlite:///./data/gpu-sizer.db"
SUPPORTED_SCHEMES = ("sqlite", "postgresql", "postgresql+psycopg")
LOOPBACK = ("localhost", "127.0.0.1", "::1")
DEV_API_KEY_SECRET = "dev-only-api-key-secret"  # a placeholder: ENV=prod refuses it (production_problems)
MIN_API_KEY_SECRET_CHARS = 32  # 32 hex characters: 128 bits
# Comma-separated in the environment (`CORS_ORIGINS=https://a.example,https://b.example`).
CommaList = Annotated[list[str], NoDecode]


def normalise_database_url(url: str) -> str:
    """Accept the URLs people paste (postgres://, postgresql://) and pin the psycopg 3 driver."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        raise ValueError(f"DATABASE_URL {url!r} is not a URL; expected sqlite:///path or postgresql://user@host/db")
    scheme = scheme.lower()
    if scheme in ("postgres", "postgresql", "postgresql+psycopg"):
        return f"postgresql+psycopg://{rest}"
    if scheme == "sqlite":
        return url
    raise ValueError(
        f"DATABASE_URL scheme {scheme!r} is not supported; use one of sqlite:///path, postgresql://user@host/db"
    )


class Settings(BaseSettings):
    """There is no SECRET_KEY: nothing is signed without being stored. Admin sessions, API tokens and CSRF
    tokens are random values kept (hashed where they authenticate) in the database, and quote ids are
    192 random bits. A SECRET_KEY left in an environment is ignored (extra="ignore"). The one server secret
    is API_KEY_SECRET, the key of the HMAC that the sales tools' API keys are stored under (app.apikeys):
    a copy of the database alone then holds nothing to test guessed keys against."""

    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore")

    env: Literal["dev", "test", "prod"] = "dev"
    database_url: str = DEFAULT_SQLITE_URL
    port: int = Field(default=8000, ge=1, le=65535)
    host: str = "127.0.0.1"
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    quote_validity_days: int = Field(default=14, ge=1, le=365)
    # The catalog's timezone (IANA name): "today" for a rental's default start date and the capacity page's months.
    # Default China Standard Time, where the seller's first region (Shenzhen) and the catalog's currency (CNY) are
    # (app/catalog/seed_data.py; the quote's seller block lists Shenzhen first).
    catalog_timezone: str = "Asia/Shanghai"
    planner_time_budget_ms: int = Field(default=3_000, ge=0)  # search time per recommendation (0: no limit)
    planner_cache_size: int = Field(default=1024, ge=0)  # plan searches remembered per process (0: off)
    worker_threads: int = Field(default=4, ge=1, le=256)  # threads for synchronous endpoints, per worker process
    # Requests that run the planner one client (its API key, else its address) may have in flight per worker process
    # (0: no cap); another meanwhile is a 429 with Retry-After (app.http.planner_share). Two, half the WORKER_THREADS:
    # one client's burst of searches leaves the other threads, and the cores, to everyone else (review R6-1).
    planner_searches_per_client: int = Field(default=2, ge=0, le=256)
    planner_paths: CommaList = [
        "/estimate",
        "/estimate/scaling",
        "/recommend",
        "/mcp",
        "/results",
        "/results.csv",
        "/results/launch.json",
        "/serve/results",
    ]
    # `serve --workers N`: how long uvicorn's supervisor waits for a worker to answer its health check before it kills
    # it and starts another, start-up included. uvicorn's default, 5 s, is less than two workers importing the app at
    # once took on a busy 2-core host (review R7: each killed once at start-up); 30 s is gunicorn's default worker
    # `timeout` for the same decision (docs.gunicorn.org, settings: timeout).
    worker_healthcheck_timeout_s: int = Field(default=30, ge=1, le=600)
    # PostgreSQL limits per connection of the server, in milliseconds (0 turns one off): a row-lock wait
    # ends in 503 + Retry-After after DB_LOCK_TIMEOUT_MS, a statement after DB_STATEMENT_TIMEOUT_MS; a
    # transaction left idle longer than DB_IDLE_IN_TRANSACTION_TIMEOUT_MS is ended by the database.
    db_lock_timeout_ms: int = Field(default=2_000, ge=0)
    db_statement_timeout_ms: int = Field(default=15_000, ge=0)
    db_idle_in_transaction_timeout_ms: int = Field(default=60_000, ge=0)
    # Quote PDFs render in processes of their own (app.quotes.documents): per worker process, this many
    # renderers, a time limit per rendering, and at most this many renderings in flight or queued.
    pdf_workers: int = Field(default=1, ge=1, le=16)
    pdf_timeout_s: float = Field(default=30.0, gt=0, le=600)
    pdf_max_waiting: int = Field(default=4, ge=1, le=256)
    # New quotes one client address may issue per minute, on every path that issues them (POST /quotes, the
    # wizard's and the serving page's quote forms) together; an idempotent replay is not counted. It bounds
    # what one client adds to the quotes table (docs/operations.md, "Bounded growth"); 0 turns it off, as
    # RATE_LIMIT_PER_MINUTE=0 does.
    quotes_per_minute: int = Field(default=10, ge=0)
    # Stored PDFs: one per quote and language (a new status or template replaces it), all together at most
    # PDF_STORE_MAX_BYTES; the least recently used go first and are rendered again when asked for.
    pdf_store_max_bytes: int = Field(default=24 * 1024 * 1024, ge=1024 * 1024)

    # Hardening (issue 9): limits, rate limiting, browsers and proxies.
    max_body_bytes: int = Field(default=1024 * 1024, ge=1024)
    # Bytes of request bodies one client may send one worker process per minute (0 turns it off): eight
    # bodies of the largest size, room for an admin importing a full catalog a few times over, while a
    # client sending bodies as fast as it can is refused (429) before they are read or parsed.
    body_budget_bytes_per_minute: int = Field(default=8 * 1024 * 1024, ge=0)
    # Seconds a request body may take to arrive once the app reads it (0: no limit); past it, 408 and the
    # connection closed (app.http.body_timeout). The largest body (MAX_BODY_BYTES, 1 MiB) then needs 35 KB/s
    # (280 kbit/s), under any link an operator or a sales tool calls from, and every other body is a few KB; a
    # stalled upload holds its connection half a minute at most. Apache's mod_reqtimeout gives a body 20 s (plus
    # 1 s per 500 bytes) by default, nginx's client_body_timeout 60 s between reads.
    body_read_timeout_s: float = Field(default=30.0, ge=0)
    rate_limit_per_minute: int = Field(default=120, ge=0)  # per client IP and path; 0 turns it off
    # Unsafe methods count on these; every method on the pages (they run the planner or render a PDF).
    # Entries are fnmatch patterns (`*` matches any characters, `/` included); all paths of one entry share
    # a counter per client.
    # Every unsafe route of the app falls under one of these, and every page that runs the planner, reads
    # the Hub or renders a PDF under a page entry (tests/http/test_rate_limited_routes.py walks the routes).
    rate_limit_paths: CommaList = [
        "/estimate",
        "/estimate/scaling",
        "/recommend",
        "/admin/login",
        "/quotes",
        "/quotes/*/accept",
        "/mcp",  # every MCP message (app.mcp.http): a tool call runs the planner or issues a quote
        "/quote/*/accept",  # the accept form of the quote page
        "/admin/*",  # every other admin form and API call (`*` matches across `/`): one counter
    ]
    rate_limit_pages: CommaList = [
        "/results",
        "/results.csv",
        "/results/launch.json",
        "/quote",
        "/quotes/*[./]pdf",  # /quotes/{id}.pdf and /quotes/{id}/pdf: one counter
        "/serve/results",
        "/serve/quote",
    ]
    # GET /metrics (Prometheus) on the service's port: off unless turned on, and then kept to the internal
    # network by the proxy (request counts, latencies and pool figures are no business of the public).
    metrics_enabled: bool = False
    # Hugging Face model ids (`model.hf_id`): config.json is read from HF_ENDPOINT (the variable the
    # huggingface_hub library reads too; a mirror or an internal Hub works), with HF_TOKEN as a Bearer
    # token for gated and private models, and kept in the database (app.hub). HF_TIMEOUT_S bounds one fetch;
    # HF_MAX_FETCHES bounds the fetches waiting at once in a worker process (the others answer 503 with
    # Retry-After), so a slow Hub leaves the rest of the WORKER_THREADS to everyone else.
    hf_endpoint: str = "https://huggingface.co"
    hf_token: SecretStr | None = None
    hf_timeout_s: float = Field(default=10.0, gt=0, le=120)
    hf_max_fetches: int = Field(default=2, ge=1, le=64)
    # The Hub config cache (app.hub.models) is bounded whatever clients send: it keeps only configs the
    # estimator can size, each at most HF_CONFIG_MAX_BYTES as compact JSON (real configs are 1-10 KB; a
    # bigger one is used for its request and not kept), all rows together at most HF_CACHE_MAX_BYTES
    # (the least recently used go first). A refusal (no such model, gated, not sizeable…) is remembered
    # for HF_MISS_TTL_S, and one client address may make HF_NEW_IDS_PER_MINUTE Hub requests for ids not
    # in the cache (0: no limit); past it 429 with Retry-After.
    hf_cache_max_bytes: int = Field(default=8 * 1024 * 1024, ge=64 * 1024)
    hf_config_max_bytes: int = Field(default=64 * 1024, ge=1024)
    hf_miss_ttl_s: int = Field(default=600, ge=0)
    hf_new_ids_per_minute: int = Field(default=10, ge=0)
    # Webhooks (app.webhooks, docs/operations.md "Webhooks"). Each server process runs a delivery worker unless
    # WEBHOOKS_WORKER=false (then `python -m app deliver-webhooks` delivers). URLs resolving to private, loopback or
    # link-local addresses are refused unless WEBHOOKS_ALLOW_PRIVATE. A failed attempt is retried after
    # WEBHOOKS_BACKOFF_BASE_S doubled per attempt (at most WEBHOOKS_BACKOFF_CAP_S, with jitter) until
    # WEBHOOKS_RETRY_FOR_S after the event, then the delivery is `failed`. At most WEBHOOKS_CONCURRENCY requests are
    # in flight per process, each bounded by WEBHOOKS_TIMEOUT_S; a claimed delivery not finished within
    # WEBHOOKS_LEASE_S (a worker that died) is taken by another. Issued quotes past their validity are marked
    # expired (a `quote.expired` event) every WEBHOOKS_EXPIRY_SWEEP_S.
    webhooks_worker: bool = True
    webhooks_allow_private: bool = False
    webhooks_backoff_base_s: float = Field(default=5.0, gt=0, le=3600)
    webhooks_backoff_cap_s: float = Field(default=3600.0, gt=0, le=86_400)
    webhooks_retry_for_s: float = Field(default=86_400.0, gt=0, le=7 * 86_400)  # Standard Webhooks: retry ~a day
    webhooks_concurrency: int = Field(default=8, ge=1, le=256)
    webhooks_timeout_s: float = Field(default=10.0, gt=0, le=60)
    webhooks_lease_s: float = Field(default=120.0, ge=5, le=3600)
    webhooks_poll_s: float = Field(default=1.0, gt=0, le=60)
    webhooks_expiry_sweep_s: float = Field(default=60.0, gt=0, le=3600)
    # The HMAC-SHA256 key API keys are stored under (app.apikeys.service). Changing it retires every key.
    # Production refuses the development default: set 32 or more random bytes, e.g. `openssl rand -hex 32`.
    api_key_secret: SecretStr = SecretStr(DEV_API_KEY_SECRET)
    cors_origins: CommaList = []
    trusted_hosts: CommaList = ["localhost", "127.0.0.1", "testserver"]

    def production_problems(self) -> list[str]:
        """What `ENV=prod` refuses to serve with: defaults that are fine on a laptop and wrong in production.
        `serve` stops with these (one line each) instead of starting."""
        problems = []
        if self.database_url.startswith("sqlite"):
            problems.append(
                "DATABASE_URL is SQLite: production runs on PostgreSQL (one file on one host is neither shared "
                "by app servers nor backed up by pg_dump; docs/operations.md)"
            )
        endpoint = urlsplit(self.hf_endpoint)
        if self.hf_token is not None and endpoint.scheme == "http" and endpoint.hostname not in LOOPBACK:
            problems.append("HF_TOKEN would travel unencrypted: HF_ENDPOINT must be https:// (or on this host)")
        secret = self.api_key_secret.get_secret_value()
        if secret == DEV_API_KEY_SECRET or len(secret) < MIN_API_KEY_SECRET_CHARS:
            problems.append(
                "API_KEY_SECRET is the development default or shorter than 32 characters: set a random one "
                "(`openssl rand -hex 32`); changing it later retires every API key"
            )
        if "testserver" in self.trusted_hosts:
            problems.append(
                "TRUSTED_HOSTS is at its default (it lists 'testserver', the test client's name): list the host "
                "names the service is reached by"
            )
        return problems

    @field_validator("database_url")
    @classmethod
    def _check_database_url(cls, value: str) -> str:
        return normalise_database_url(value)

    @field_validator(
        "rate_limit_paths", "rate_limit_pages", "planner_paths", "cors_origins", "trusted_hosts", mode="before"
    )
    @classmethod
    def _split_commas(cls, value: object) -> object:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("hf_endpoint")
    @classmethod
    def _check_hf_endpoint(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError(f"HF_ENDPOINT {value!r} is not an http(s) URL; e.g. https://huggingface.co")
        return value.rstrip("/")

    @field_validator("catalog_timezone")
    @classmethod
    def _check_timezone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ValueError(f"CATALOG_TIMEZONE {value!r} is not an IANA timezone name; e.g. Asia/Shanghai") from exc
        return value

    @field_validator("log_level", mode="before")
    @classmethod
    def _lower_log_level(cls, value: str) -> str:
        return value.lower() if isinstance(value, str) else value


@lru_cache
def get_settings() -> Settings:
    return Settings()
