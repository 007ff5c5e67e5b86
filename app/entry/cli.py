"""Command line: `gpu-sizer serve|migrate|seed|…` (the console script `make install` puts in
.venv/bin), the same as `python -m app …` (app/__main__.py hands over to `main` here). Bad configuration gives one
line, not a traceback."""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
import tempfile

import uvicorn
from pydantic import ValidationError

from app.admin.cli import ADMIN_COMMANDS, add_admin_commands, run_admin_command
from app.common.settings import Settings
from app.db.engine import DatabaseUnavailable, build_engine, build_sessionmaker, check_connection
from app.db.migrate import revisions, upgrade
from app.entry.seed import seed_database
from app.mcp.stdio import serve_stdio
from app.planner.cli import add_recommend_command, run_recommend_command
from app.quotes.expiry import expire_due
from app.reference.cli import add_rate_command, run_rate_command
from app.text.field_words import plain_message
from app.webhooks.worker import DeliveryWorker, WorkerConfig

GRACEFUL_SHUTDOWN_S = 10


def _settings() -> Settings:
    return Settings()


def _describe(exc: ValidationError) -> str:
    first = exc.errors()[0]
    field = ".".join(str(p) for p in first["loc"]).upper() or "settings"
    return f"{field}: {plain_message(first)}"


def cmd_migrate(settings: Settings) -> None:
    engine = build_engine(settings.database_url)
    check_connection(engine)
    found = revisions(engine, settings.database_url)
    engine.dispose()
    upgrade(settings.database_url)
    if found.before is None:
        print(f"migrate: created the schema (revision {found.head})")
    elif found.before != found.head:
        print(f"migrate: upgraded the database from revision {found.before} to {found.head}")
    else:
        print(f"migrate: the database is already at the latest revision ({found.head})")


def cmd_seed(settings: Settings) -> None:
    engine = build_engine(settings.database_url)
    check_connection(engine)
    with build_sessionmaker(engine).begin() as session:
        print(seed_database(session))
    engine.dispose()


class NotForProduction(Exception):
    """ENV=prod with a setting production must not run with (Settings.production_problems)."""


def cmd_serve(settings: Settings, *, workers: int = 1) -> None:
    if settings.env == "prod" and (problems := settings.production_problems()):
        raise NotForProduction("ENV=prod refuses to serve: " + "; ".join(problems))
    engine = build_engine(settings.database_url)
    check_connection(engine)
    engine.dispose()
    if workers > 1 and not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        # Each worker writes its metrics here and /metrics sums them (prometheus-client multiprocess mode).
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="gpu-sizer-metrics-")
    print(f"serving on http://{settings.host}:{settings.port}", flush=True)
    uvicorn.run(
        "app.entry.main:app",
        host=settings.host,
        port=settings.port,
        workers=workers,
        log_level=settings.log_level,
        proxy_headers=True,
        access_log=False,  # app.http.observability writes one JSON line per request instead
        # SIGTERM: stop accepting, let requests in flight finish, and cancel what is left after this long
        # (a database wait ends by itself within DB_LOCK_TIMEOUT_MS / DB_STATEMENT_TIMEOUT_MS).
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S,
        # With --workers, the supervisor kills a worker that has not answered its ping within this long, start-up
        # included (uvicorn/supervisors/multiprocess.py keep_subprocess_alive; uvicorn's default is 5 s).
        timeout_worker_healthcheck=settings.worker_healthcheck_timeout_s,
    )


def cmd_deliver_webhooks(settings: Settings, *, once: bool) -> None:
    """Deliver webhooks from this process (beside or instead of the servers' workers: WEBHOOKS_WORKER=false),
    until SIGTERM/SIGINT, or with --once until nothing is due."""
    engine = build_engine(settings.database_url)
    check_connection(engine)
    worker = DeliveryWorker(build_sessionmaker(engine), WorkerConfig.from_settings(settings), sweep=expire_due)

    async def deliver() -> None:
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, worker.stop)
        await worker.run(until_idle=once)

    print("deliver-webhooks: delivering" + (" what is due" if once else " until stopped"), flush=True)
    asyncio.run(deliver())
    engine.dispose()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="gpu-sizer", description="gpu-sizer service")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("migrate", help="upgrade the database named by DATABASE_URL to the latest schema")
    sub.add_parser("seed", help="insert the seed catalog (idempotent; never overwrites admin changes)")
    serve = sub.add_parser("serve", help="serve HTTP on HOST:PORT")
    serve.add_argument("--workers", type=int, default=1)
    deliver = sub.add_parser("deliver-webhooks", help="deliver webhook events (each server process also does)")
    deliver.add_argument("--once", action="store_true", help="stop when nothing is due nor in flight")
    sub.add_parser("mcp", help="serve the MCP tools over stdio (for an MCP client that starts this process)")
    add_admin_commands(sub)
    add_recommend_command(sub)
    add_rate_command(sub)
    args = parser.parse_args(argv)

    try:
        settings = _settings()
        if args.command == "migrate":
            cmd_migrate(settings)
        elif args.command == "seed":
            cmd_seed(settings)
        elif args.command == "serve":
            cmd_serve(settings, workers=args.workers)
        elif args.command == "deliver-webhooks":
            cmd_deliver_webhooks(settings, once=args.once)
        elif args.command == "mcp":
            serve_stdio(settings)
        elif args.command == "recommend":
            return run_recommend_command(args, settings)
        elif args.command == "set-exchange-rate":
            return run_rate_command(args, settings)
        elif args.command in ADMIN_COMMANDS:
            return run_admin_command(args, settings)
    except ValidationError as exc:
        print(f"error: bad configuration: {_describe(exc)}", file=sys.stderr)
        return 2
    except (DatabaseUnavailable, NotForProduction) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0
