"""What the results page shows for each option, in the page's language: plan in plain words,
explanation, translated warnings, costs per month / year / job, the memory bar, and the CSV rows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from app.estimator.presets import model_title
from app.planner.schemas import ModelOut, OptionOut, PlanOut, RecommendIn, RecommendOut
from app.text.i18n import Translator
from app.text.words import EXPLAIN_WORDS, plan_summary
from app.web.charts import MemoryBar, memory_bar

CSV_COLUMNS = (
    "rank",
    "sku",
    "gpu",
    "region",
    "nodes",
    "gpus_per_node",
    "total_gpus",
    "plan",
    "dp",
    "tp",
    "pp",
    "zero_stage",
    "offload",
    "recompute",
    "micro_batch",
    "memory_per_gpu_gib",
    "capacity_gib",
    "fits",
    "currency",
    "term",
    "units",
    "monthly_list",
    "monthly_effective",
    "annual",
    "months_billed",
    "job_total",
    "time_to_train_hours",
    "tokens_per_s",
    "mfu",
    "availability",
    "warnings",
)


@dataclass(frozen=True, slots=True)
class OptionView:
    option: OptionOut
    summary: str
    explanation: str
    warnings: list[tuple[str, str]]
    indicative: bool
    annual: Decimal
    bar: MemoryBar
    miss: str | None = None


def model_name(model_in: dict[str, Any], model: ModelOut, t: Translator) -> str:
    """The model as people name it ("Llama 3 8B", "Qwen/Qwen2.5-7B-Instruct"), never a preset id."""
    return model_title(model_in) or t("params_model", n=t.number(model.params / 1e9, 1))


def download_stem(request_in: RecommendIn, result: RecommendOut) -> str:
    """'llama-3-8b-lora', 'qwen-qwen2.5-7b-instruct-full_finetune', '7b-qlora': names a download after its job."""
    model = request_in.model
    size = model.params or result.model.params
    title = model.preset or model_title(model.model_dump(mode="json")) or f"{size / 1e9:.3g}b"
    slug = re.sub(r"[^a-z0-9.]+", "-", title.lower()).strip("-.")[:60] or "model"
    return f"{slug}-{request_in.task}"


def plan_words(plan: PlanOut, t: Translator) -> str:
    """The plan in the page's language; English is the API's own `plan.summary`."""
    return plan_summary(plan.model_dump(), t.lang)


def explanation(option: OptionOut, model: ModelOut, task: str, t: Translator, gpu_name: str, name: str) -> str:
    if t.lang == "en":
        return option.explanation
    w = EXPLAIN_WORDS[t.lang]
    memory = option.memory
    values = {
        "what": f"{name} {t('task_' + task)}",
        "gpu": gpu_name,
        "total": t.number(memory.per_gpu_gib["total"], 1),
        "capacity": t.number(memory.capacity_gib, 1),
        "plan": plan_words(option.plan, t),
        "gpus": option.total_gpus,
        "nodes": option.nodes,
    }
    return w["page_one" if option.total_gpus == 1 else "page_many"].format(**values)


def miss_words(option: OptionOut, t: Translator) -> str | None:
    """Why a near miss misses, in the page's language, from the planner's codes (app/text/messages.py)."""
    return t.misses([(m.code, m.params) for m in option.misses])


def option_view(
    option: OptionOut,
    model: ModelOut,
    task: str,
    t: Translator,
    gpu_names: dict[str, str],
    name: str = "",
) -> OptionView:
    codes = [w.code for w in option.warnings]
    return OptionView(
        option=option,
        summary=plan_words(option.plan, t),
        explanation=explanation(
            option, model, task, t, gpu_names.get(option.sku.gpu, option.sku.gpu), name or model.name
        ),
        warnings=[(w.code, t.warning(w.code, w.params)) for w in option.warnings if w.code != "indicative_price"],
        indicative="indicative_price" in codes,
        annual=Decimal(option.cost.annual_total),
        bar=memory_bar(option.memory),
        miss=miss_words(option, t),
    )


def csv_row(option: OptionOut) -> list[str]:
    plan, perf, cost = option.plan, option.performance, option.cost
    return [
        str(option.rank),
        option.sku.id,
        option.sku.gpu,
        option.sku.region,
        str(option.nodes),
        str(option.gpus_per_node),
        str(option.total_gpus),
        plan.summary,
        str(plan.dp),
        str(plan.tp),
        str(plan.pp),
        str(plan.zero_stage),
        plan.offload,
        plan.recompute,
        str(plan.micro_batch),
        f"{option.memory.per_gpu_gib['total']:.2f}",
        f"{option.memory.capacity_gib:.2f}",
        str(option.memory.fits).lower(),
        cost.currency,
        cost.term,
        str(cost.units),
        cost.monthly_list,
        cost.monthly_effective,
        cost.annual_total,
        "" if cost.months is None else str(cost.months),
        cost.job_total or "",
        "" if perf.time_to_train_hours is None else f"{perf.time_to_train_hours:.2f}",
        "" if perf.tokens_per_s is None else f"{perf.tokens_per_s:.0f}",
        "" if perf.mfu is None else f"{perf.mfu:.3f}",
        option.availability.status,
        " ".join(w.code for w in option.warnings),
    ]
