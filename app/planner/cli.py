"""`python -m app recommend`: the same ranking as POST /recommend, as a table in the terminal."""

from __future__ import annotations

import argparse
import json

from pydantic import ValidationError

from app.common.settings import Settings
from app.db.engine import build_engine, build_sessionmaker, check_connection
from app.estimator.specs import EstimatorError
from app.estimator.vocabulary import OBJECTIVES, TASKS, TERMS
from app.planner.schemas import CostOut, RecommendIn, RecommendOut
from app.planner.service import run_recommend


def add_recommend_command(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("recommend", help="rank rentable configurations for a workload (like POST /recommend)")
    model = p.add_mutually_exclusive_group(required=True)
    model.add_argument("--preset", help="a model preset id (GET /models), e.g. llama-2-7b")
    model.add_argument("--params", type=float, help="parameter count, e.g. 7e9 (architecture derived)")
    p.add_argument("--task", default="full_finetune", choices=TASKS)
    p.add_argument("--tokens", type=float, help="tokens to train on (gives time to train and job cost)")
    p.add_argument("--seq-len", type=int, default=2048)
    p.add_argument("--micro-batch", type=int)
    p.add_argument("--global-batch", type=int)
    p.add_argument("--objective", default="balanced", choices=OBJECTIVES)
    p.add_argument("--term", default="monthly", choices=TERMS)
    p.add_argument("--max-nodes", type=int, default=16)
    p.add_argument("--deadline-days", type=float)
    p.add_argument("--budget", help="maximum monthly budget, a decimal amount")
    p.add_argument("--total-budget", help="maximum job budget (the whole job's total), a decimal amount")
    p.add_argument("--currency", help="ISO 4217 code of the budget and the comparison; default CNY")
    p.add_argument("--gpu", action="append", default=[], help="allowed GPU type (repeatable)")
    p.add_argument("--region", action="append", default=[], help="allowed region (repeatable)")
    p.add_argument("--limit", type=int, default=5)
    p.add_argument("--json", action="store_true", help="print the JSON response instead of a table")


def request_from_args(args: argparse.Namespace) -> RecommendIn:
    model = {"preset": args.preset} if args.preset else {"params": args.params}
    constraints = {
        "objective": args.objective,
        "term": args.term,
        "max_nodes": args.max_nodes,
        "deadline_days": args.deadline_days,
        "max_monthly_budget": args.budget,
        "max_total_budget": args.total_budget,
        "currency": args.currency,
        "gpu_types": args.gpu,
        "regions": args.region,
        "limit": args.limit,
    }
    body = {
        "model": model,
        "task": args.task,
        "tokens": args.tokens,
        "seq_len": args.seq_len,
        "micro_batch": args.micro_batch,
        "global_batch": args.global_batch,
        "constraints": {k: v for k, v in constraints.items() if v is not None},
    }
    return RecommendIn.model_validate({k: v for k, v in body.items() if v is not None})


def format_table(result: RecommendOut) -> str:
    header = ("#", "SKU", "GPUs", "plan", "per month", "job total", "time", "warnings")
    rows = [header]
    for o in result.options + result.near_misses:
        hours = o.performance.time_to_train_hours
        rows.append(
            (
                str(o.rank or "-"),
                o.sku.id,
                f"{o.total_gpus} ({o.nodes} node{'s' * (o.nodes > 1)})",
                o.plan.summary,
                _per_month(o.cost),
                o.cost.job_total or "-",
                _time(hours),
                ", ".join(w.code for w in o.warnings) or "-",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)) for row in rows]
    for o in result.near_misses:
        lines.append(f"near miss {o.sku.id} × {o.total_gpus}: {o.miss_reason}")
    for r in result.rejected:
        lines.append(f"rejected {r.sku}: {r.reason}")
    return "\n".join(lines)


def _time(hours: float | None) -> str:
    """Days, or hours for a job shorter than a day (never "0.0 days")."""
    if hours is None:
        return "-"
    return f"{hours:.1f} h" if hours < 24 else f"{hours / 24:.1f} days"


def _per_month(cost: CostOut) -> str:
    """ "20000.00 USD (142000.00 CNY)" for a SKU priced in another currency than the comparison's."""
    own = f"{cost.monthly_effective} {cost.currency}"
    return f"{own} ({cost.converted.monthly_effective} {cost.converted.currency})" if cost.converted else own


def run_recommend_command(args: argparse.Namespace, settings: Settings) -> int:
    try:
        request = request_from_args(args)
    except ValidationError as exc:
        print(f"error: {exc.errors()[0]['msg']}")
        return 2
    engine = build_engine(settings.database_url)
    check_connection(engine)
    try:
        with build_sessionmaker(engine)() as session:
            result = run_recommend(session, request)
    except EstimatorError as exc:
        print(f"error: {exc}")
        return 2
    finally:
        engine.dispose()
    print(json.dumps(result.model_dump(mode="json"), indent=2) if args.json else format_table(result))
    return 0
