"""What every stack's launch block shares: the job it is written from, the batch arithmetic, the run's length and
schedule, the model's repository and file-name slug, the LoRA settings, and the notes (codes and parameters). PURE."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from app.estimator.params import count_params
from app.estimator.specs import GpuSpec, LoraSpec, MemoryBreakdown, ModelSpec, Performance, Plan, Workload
from app.estimator.vocabulary import LORA_TARGETS
from app.text.messages import launch as launch_text

TORCH_DTYPE = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32", "fp8": "bfloat16"}


@dataclass(frozen=True, slots=True)
class Schedule:
    """Peak learning rate and warm-up of a run, by task. AdamW with beta1 0.9, beta2 0.95, weight decay 0.1,
    gradient clipping 1.0 and a cosine decay to a tenth of the peak, as Llama 2 was trained (Touvron et al.
    2023 §2.2); the customer tunes the rate, the launch block only has to start a sane run."""

    lr: float
    warmup_fraction: float


SCHEDULES = {
    "pretrain": Schedule(
        3e-4, 0.03
    ),  # Llama 2 7B/13B peak (§2.2, Table 1), by size: peak_lr; warm-up: PRETRAIN_WARMUP_ITERS
    # Continued pretraining re-warms the rate and decays it again over the new tokens, which with replay of the
    # original data matches re-training from scratch (Ibrahim et al. 2024, "Simple and Scalable Strategies to
    # Continually Pre-train Large Language Models", arXiv:2403.08763); a lower peak forgets less of the upstream
    # data (Gupta et al. 2023, "Continual Pre-Training of LLMs: How to (re)warm your model?", arXiv:2308.04014),
    # so the peak is Llama 2's 34B/70B pretraining peak, half the 7B one (Touvron et al. 2023 Table 1: 1.5e-4), and
    # never above the peak the model itself was pre-trained with where its publisher states it (`peak_lr`); the
    # warm-up's length mattered little there, so a short 1 % of the run
    "continued_pretrain": Schedule(1.5e-4, 0.01),
    "full_finetune": Schedule(2e-5, 0.03),  # Llama 2 SFT: 2e-5, cosine (§3.1); warm-up ratio 0.03: Stanford Alpaca
    "lora": Schedule(2e-4, 0.03),  # QLoRA's 2e-4 for 7B-13B adapters (Dettmers et al. 2023, App. B.2), ratio 0.03
    "qlora": Schedule(2e-4, 0.03),
}


PRETRAIN_WARMUP_ITERS = 2000  # Llama 2's warm-up (§2.2); a shorter run warms up over its first 3 %
MIN_LR_RATIO = 0.1  # cosine decay to 10 % of the peak (Llama 2 §2.2)


def accumulation_steps(plan: Plan, global_batch: int) -> int:
    return max(1, global_batch // (plan.dp * plan.micro_batch))


def train_iters(workload: Workload, global_batch: int) -> int | None:
    """Optimizer steps that train on `workload.tokens`: tokens ÷ (global batch × sequence length), rounded up;
    None without a token count."""
    if not workload.tokens or not global_batch:
        return None
    return max(1, math.ceil(workload.tokens / (global_batch * workload.seq_len)))


def warmup_steps(workload: Workload, iters: int) -> int:
    """Learning-rate warm-up: the task's share of the run (SCHEDULES), pretraining at most Llama 2's 2,000 steps."""
    steps = max(1, math.ceil(iters * SCHEDULES.get(workload.task, SCHEDULES["full_finetune"]).warmup_fraction))
    return min(PRETRAIN_WARMUP_ITERS, steps) if workload.task == "pretrain" else steps


def save_interval(iters: int, performance: Performance | None) -> int:
    """Steps between checkpoints: the estimator's checkpoint interval (Young's optimum, app/estimator/goodput.py)
    over the step time; the whole run when the estimate has none."""
    goodput = performance.goodput if performance is not None else None
    step = performance.step_time_s if performance is not None else None
    if goodput is None or not step:
        return iters
    return max(1, min(iters, math.floor(goodput.checkpoint_interval_hours * 3600 / step)))


@dataclass(frozen=True, slots=True)
class RunSchedule:
    """The run's length and learning-rate schedule, which every stack states in its own terms: `iters` optimizer steps
    (`train_iters`; None without a token count, and then no `save_interval` or `warmup_steps` either), the peak `lr`
    (`peak_lr`) decaying to `min_lr` (MIN_LR_RATIO), and the warm-up as steps (`warmup_steps`) or as the task's share
    of the run (`warmup_fraction`, SCHEDULES)."""

    iters: int | None
    save_interval: int | None
    warmup_steps: int | None
    warmup_fraction: float
    lr: float
    min_lr: float


def run_schedule(
    model: ModelSpec, workload: Workload, global_batch: int, performance: Performance | None = None
) -> RunSchedule:
    iters = train_iters(workload, global_batch)
    lr = peak_lr(model, workload)
    return RunSchedule(
        iters,
        None if iters is None else save_interval(iters, performance),
        None if iters is None else warmup_steps(workload, iters),
        SCHEDULES.get(workload.task, SCHEDULES["full_finetune"]).warmup_fraction,
        lr,
        lr * MIN_LR_RATIO,
    )


def _repo(model: ModelSpec) -> str:
    """The Hugging Face repository the weights and tokenizer come from, or a local path to fill in."""
    return model.hf_repo or f"/models/{_slug(model)}-hf"


def _slug(model: ModelSpec) -> str:
    """A file-name-safe name for the model's checkpoint and data directories."""
    name = (model.hf_repo or model.name).rsplit("/", 1)[-1].lower()
    return re.sub(r"[^a-z0-9._-]+", "-", name).strip("-") or "model"


def _lora(workload: Workload) -> LoraSpec:
    return workload.lora or LoraSpec()


def _alpha(lora: LoraSpec) -> float:
    return lora.alpha if lora.alpha is not None else 2.0 * lora.rank


def lora_targets(lora: LoraSpec, names: Any) -> list[str]:
    """Module names for the LoRA targets, each once, in our target order."""
    chosen = LORA_TARGETS if "all-linear" in lora.targets else tuple(t for t in LORA_TARGETS if t in lora.targets)
    return list(dict.fromkeys(name for t in chosen for name in names(t)))


# Pretraining from scratch: the peak falls with the model's size. Active parameters (an MoE's per-token width sets
# its update's scale) up to each bound, the peak its publisher used at that size: Llama 2 7B/13B 3e-4 and 34B/70B
# 1.5e-4 (Touvron et al. 2023, arXiv:2307.09288, Table 1), Llama 3.1 405B 8e-5 (The Llama 3 Herd of Models,
# arXiv:2407.21783, Table 3); a model whose publisher states its own peak (pretrain_peak_lr) is launched at that.
PRETRAIN_PEAK_BY_SIZE = ((20e9, 3e-4), (200e9, 1.5e-4), (math.inf, 8e-5))


def peak_lr(model: ModelSpec, workload: Workload) -> float:
    """The run's peak learning rate: the task's (SCHEDULES). Pretraining from scratch starts at the peak the model
    was pre-trained with where its publisher states it (ModelSpec.pretrain_peak_lr, data/presets.json), else at the
    peak published for its size (PRETRAIN_PEAK_BY_SIZE): a 405B model at the 7B peak of 3e-4, nearly 4x Llama 3.1
    405B's own 8e-5, risks divergence (review R5-6). Continued pretraining re-warms to at most that published peak,
    so a large model is not pushed past its own."""
    lr = SCHEDULES.get(workload.task, SCHEDULES["full_finetune"]).lr
    if workload.task == "pretrain":
        if model.pretrain_peak_lr is not None:
            return model.pretrain_peak_lr
        active = count_params(model).active
        return next(peak for bound, peak in PRETRAIN_PEAK_BY_SIZE if active <= bound)
    if workload.task == "continued_pretrain" and model.pretrain_peak_lr is not None:
        return min(lr, model.pretrain_peak_lr)
    return lr


@dataclass(frozen=True)
class Job:
    """What every stack's launch block is written from: the model, the workload, the plan, the servers it
    runs on, and the plan's estimate (which sets how often a run saves)."""

    model: ModelSpec
    workload: Workload
    plan: Plan
    nodes: int
    gpus_per_node: int
    global_batch: int
    performance: Performance | None
    memory: MemoryBreakdown | None = None  # the plan's per-GPU breakdown: host RAM used and left on a node
    gpu: GpuSpec | None = None  # the GPU it runs on: where fp8 runs on Megatron-Bridge (`_bridge_sft`)

    def world(self) -> dict[str, Any]:
        return {"world_size": self.nodes * self.gpus_per_node, "data_parallel_size": self.plan.dp}

    def torchrun(self, target: str) -> str:
        return (
            f"torchrun --nnodes={self.nodes} --nproc-per-node={self.gpus_per_node} --rdzv-backend=c10d "
            f"--rdzv-endpoint=$MASTER_ADDR:29500 {target}"
        )


# A launch note: its code in the launch's catalog (app/text/launch_words.py LAUNCH, en and zh) and its parameters.
LaunchNote = dict[str, Any]


def _note(code: str, **params: Any) -> LaunchNote:
    return {"code": code, "params": params}


def _notes_out(notes: list[LaunchNote]) -> dict[str, Any]:
    """A launch block's `notes` in English, and `texts` with their codes and parameters (a page words them in its
    reader's language, as a serving launch's)."""
    return {"notes": [launch_text(n["code"], n["params"]) for n in notes], "texts": {"notes": notes}}


def _task_notes(model: ModelSpec, workload: Workload) -> list[LaunchNote]:
    """What the task asks of the data, whatever the stack: continued pretraining mixes replay into the new text
    (Ibrahim et al. 2024, arXiv:2403.08763: replaying 5 % of the original distribution kept the loss on it for a weak
    shift, English to English; a stronger shift, English to German, needed 25 %) and re-warms to `peak_lr`, which
    names the model's published peak where that caps it (app/text/launch_words.py, en and zh)."""
    if workload.task != "continued_pretrain":
        return []
    lr, default = peak_lr(model, workload), SCHEDULES["continued_pretrain"].lr
    if lr < default:
        return [_note("continued_pretrain_capped", lr=lr, default=default, model=_repo(model))]
    return [_note("continued_pretrain", lr=lr)]
