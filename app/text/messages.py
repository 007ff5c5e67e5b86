"""Text for people rendered from stable codes and parameters, in English and Simplified Chinese: the
one catalog behind the API's `reason` and `miss_reason` texts, the web pages and the wizard's results.

The planner says *why* as data (a code and its parameters: GiB, GPU names, days, money as decimal
strings); this module turns that into sentences, so nothing downstream ever parses English back into
meaning. Templates use `str.format` fields with format specs; `{x!m}` is an amount of money in the
`currency` parameter, or in `x_currency` where the parameters give `x` a currency of its own (a quote's today's
price, `current_currency`), and `{x!c}` one in `compared_currency` (the request's), written by the caller's
money formatter (the API: `2800.00 CNY`; the web: `¥2,800.00`). Lists are joined with the
language's separator. Both languages define the same codes with the same fields
(tests/test_messages.py).
"""

from __future__ import annotations

import math
import string
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from app.estimator import error_words
from app.estimator.error_words import ESTIMATOR_ERRORS as ESTIMATOR_ERRORS  # re-exported: why the estimator refuses
from app.estimator.serving import KERNEL_GAPS
from app.estimator.specs import EstimatorError
from app.text.assumption_words import (
    ASSUMPTIONS as ASSUMPTIONS,  # re-exported: an option's assumption notes
    RELIEF_TAILS as RELIEF_TAILS,  # re-exported: the end of a memory-relief note
)
from app.text.hub_words import HUB as HUB  # re-exported: why a Hub model cannot be read or sized
from app.text.input_words import (
    BODY_REFUSALS as BODY_REFUSALS,  # re-exported: a body refused before its fields are read
    PATTERNS as PATTERNS,  # re-exported: what a pattern-constrained string allows
)
from app.text.launch_words import LAUNCH as LAUNCH  # re-exported: the launch's words are read as messages.LAUNCH
from app.text.note_words import (
    NOTES as NOTES,  # re-exported: an estimate's assumptions, read as messages.NOTES
    QUOTE_NOTES as QUOTE_NOTES,  # re-exported: a quote's notes
    SCHEMES as SCHEMES,  # re-exported: checkpoint formats
)
from app.text.quote_check_words import QUOTE_CHECKS as QUOTE_CHECKS  # re-exported: why POST /quotes refuses
from app.text.refusal_words import REFUSALS as REFUSALS  # re-exported: why the domain refuses
from app.text.warning_words import (
    MEMORY_LEVERS,
    NO_FIT_FUSED,
    NO_FIT_LEADS,
    VERBATIM,
    WARNINGS as WARNINGS,  # re-exported: warnings by code, read as messages.WARNINGS
)
from app.text.words import STACK_NAMES, latency, plan_summary, plurals, slo_named

MoneyFormat = Callable[[Any, str], str]

# The tasks (app/estimator/vocabulary.py `RequestTask`) in three forms: `label`, short, for the
# wizard's select and the results page's heading; `title`, for the quote's rows; `words`, inside the
# planner's explanation ("7B LoRA fine-tuning fits on one …").
_LABEL_EN = {
    "lora": "LoRA",
    "qlora": "QLoRA (4-bit base)",
    "full_finetune": "Full fine-tune",
    "continued_pretrain": "Continued pretraining",
    "pretrain": "Pretraining",
    "inference": "Inference",
    "serving": "Serving",
}
_LABEL_ZH = {
    "lora": "LoRA",
    "qlora": "QLoRA（4 位基座）",
    "full_finetune": "全参数微调",
    "continued_pretrain": "继续预训练",
    "pretrain": "预训练",
    "inference": "推理",
    "serving": "在线推理服务",
}
TASK_LABELS: dict[str, dict[str, dict[str, str]]] = {
    "label": {"en": _LABEL_EN, "zh": _LABEL_ZH},
    # A quote's row names the fine-tunes in full; the other tasks read as their label.
    "title": {
        "en": {**_LABEL_EN, "lora": "LoRA fine-tune", "qlora": "QLoRA fine-tune (4-bit base)"},
        "zh": {**_LABEL_ZH, "lora": "LoRA 微调", "qlora": "QLoRA 微调（4 位基座）"},
    },
    "words": {
        "en": {
            "lora": "LoRA fine-tuning",
            "qlora": "QLoRA fine-tuning",
            "full_finetune": "full fine-tuning",
            "continued_pretrain": "continued pretraining",
            "pretrain": "pretraining",
            "inference": "inference",
            "serving": "serving",
        },
        "zh": {
            "lora": "LoRA 微调",
            "qlora": "QLoRA 微调",
            "full_finetune": "全参数微调",
            "continued_pretrain": "继续预训练",
            "pretrain": "预训练",
            "inference": "推理",
            "serving": "在线推理服务",
        },
    },
}

# Why a catalog SKU yields no option (app/planner/option.py, `RejectionCode`). `gpu_memory` without a
# measured plan (`needed_gib`) reads as `no_plan`; `where` is filled from gpus, gpu_name and nodes.
REJECTIONS: dict[str, dict[str, str]] = {
    "en": {
        "gpu_type": "GPU type {gpu_type} is not among the requested {requested}",
        "region": "offered in {regions}, not in {requested}",
        "no_fabric": "no InfiniBand or RoCE fabric is available for this SKU",
        "no_plan": "no parallel plan fits on {where}",
        "gpu_memory": "does not fit: the leanest plan on {where} still needs {needed_gib:.1f} GiB per GPU, "
        "more than the {limit_gib:.1f} GiB left of {usable_gib:.1f} GiB usable after the {headroom:.0%} headroom",
        "host_ram": "does not fit: the leanest plan on {where} offloads {offload_gib:,.0f} GiB of host RAM per "
        "node; the node has {host_ram_gib:,.0f} GiB, {host_ram_limit_gib:,.0f} GiB after the reserve for the OS, "
        "the training processes and their data loaders",
        "host_ram_load": "does not fit: loading the model on {where} needs {load_gib:,.0f} GiB of host RAM per node "
        "({copies} × the whole {model_gib:,.0f} GiB model, held before ZeRO-3 shards it); the node has "
        "{host_ram_gib:,.0f} GiB, {host_ram_limit_gib:,.0f} GiB after the reserve for the OS, the training processes "
        "and their data loaders",
        "host_ram_load_unknown": "loading the model on {where} needs {load_gib:,.0f} GiB of host RAM per node "
        "({copies} × the whole {model_gib:,.0f} GiB model, held before ZeRO-3 shards it), and the node's host RAM is "
        "not known: the catalog lists none for this SKU",
        "batch_split": "the global batch of {global_batch} sequences does not split over {where}: no "
        "data-parallel degree × micro-batch divides it; give a global_batch that {gpus} divides",
        "kernels": "{kernel_gap}",
        "max_nodes": "{replicas} replica(s) of {replica_gpus} GPU(s) exceed the SKU's max_nodes {max_nodes}",
        "max_nodes_cards": "{replicas} replica(s) of {replica_gpus} GPU(s) exceed the SKU's card counts",
        "pp_speculative": "the model needs a replica pipelined across this SKU's servers, and {engine} does not "
        "start speculative decoding ({method}) in a pipelined replica: use larger GPUs, another engine, or no "
        "speculation",
        "no_kv_cache": "the weights leave no room for a KV cache at any tensor-parallel degree this SKU offers",
        "no_kv_cache_one_server": "the weights leave no room for a KV cache at any tensor-parallel degree this SKU "
        "offers; the SKU has no fabric to pipeline one replica across servers",
        "time_budget": "not searched: the time budget ran out",
        "disaggregated_pools": "no prefill and decode pools within max_nodes {max_nodes} servers meet the SLO at "
        "the peak",
        "disaggregated_spanning": "a prefill or decode replica of this model would span {servers} servers of this "
        "SKU (no tensor-parallel degree within one server holds it); disaggregated pools whose replicas span "
        'servers are not sized: use colocated replicas (serving.disaggregated false or "auto") or larger GPUs',
        "exchange_rate": "priced in {currency}, and no exchange rate from {currency} to {target} is set, so it "
        "cannot be compared with the other prices (python -m app set-exchange-rate {currency} {target} RATE)",
        "levers_fp8": "fp8_params keeps the trained weights in FP8, and on {gpu_name} this job runs in {runs_as}: drop "
        "fp8_params, or choose a GPU with FP8 math (H100, H200)",
        "levers_host_ram": "activation_offload keeps activations in host RAM, and the catalog lists none for "
        "{where}: turn it off, or choose a SKU whose host RAM is listed",
        "levers_unsupported": "no stack runs the memory levers {levers} together on {where} (the stacks that run "
        "each: {runs}): drop or change one of them",
    },
    "zh": {
        "gpu_type": "GPU 型号 {gpu_type} 不在所选型号（{requested}）之中",
        "region": "仅在 {regions} 提供，不在所选地域（{requested}）",
        "no_fabric": "该 SKU 没有 InfiniBand 或 RoCE 网络",
        "no_plan": "在 {where} 上没有可行的并行方案",
        "gpu_memory": "放不下：{where} 上最省显存的方案仍需每卡 {needed_gib:.1f} GiB，"
        "超过可用 {usable_gib:.1f} GiB 扣除 {headroom:.0%} 余量后的 {limit_gib:.1f} GiB",
        "host_ram": "放不下：{where} 上最省显存的方案每个节点需要卸载 {offload_gib:,.0f} GiB 到主机内存；"
        "节点有 {host_ram_gib:,.0f} GiB，扣除操作系统、训练进程和数据加载的预留后只有 {host_ram_limit_gib:,.0f} GiB",
        "host_ram_load": "放不下：在 {where} 上加载模型每个节点需要 {load_gib:,.0f} GiB 主机内存（{copies} × 完整的 "
        "{model_gib:,.0f} GiB 模型，在 ZeRO-3 切分之前驻留）；节点有 {host_ram_gib:,.0f} GiB，"
        "扣除操作系统、训练进程和数据加载的预留后只有 {host_ram_limit_gib:,.0f} GiB",
        "host_ram_load_unknown": "在 {where} 上加载模型每个节点需要 {load_gib:,.0f} GiB 主机内存（{copies} × 完整的 "
        "{model_gib:,.0f} GiB 模型，在 ZeRO-3 切分之前驻留），但节点的主机内存未知：目录未列出该 SKU 的主机内存",
        "batch_split": "全局批 {global_batch} 条序列无法在 {where} 上均分：没有数据并行度 × 微批能整除它；"
        "请把 global_batch 设为 {gpus} 的倍数",
        "kernels": "{kernel_gap}",
        "max_nodes": "{replicas} 个副本（每个 {replica_gpus} 张 GPU）超出该 SKU 的节点上限 max_nodes {max_nodes}",
        "max_nodes_cards": "{replicas} 个副本（每个 {replica_gpus} 张 GPU）超出该 SKU 可租的卡数",
        "pp_speculative": "该模型在此 SKU 上需要跨服务器的流水线副本，而 {engine} 不能在流水线副本中启动推测解码"
        "（{method}）：请使用更大的 GPU、其他引擎，或不用推测解码",
        "no_kv_cache": "权重占满了显存：该 SKU 提供的任何张量并行度下都没有留给 KV 缓存的空间",
        "no_kv_cache_one_server": "权重占满了显存：该 SKU 提供的任何张量并行度下都没有留给 KV 缓存的空间；"
        "该 SKU 没有 InfiniBand 或 RoCE 网络，无法把一个副本以流水线方式跨服务器部署",
        "time_budget": "未搜索：时间预算已用完",
        "disaggregated_pools": "在 max_nodes {max_nodes} 台服务器以内，"
        "没有能在峰值下满足延迟目标的预填充池与解码池组合",
        "disaggregated_spanning": "该模型的预填充或解码副本在此 SKU 上需要跨 {servers} 台服务器"
        "（单台服务器内的任何张量并行度都放不下）；副本跨服务器的分离式池不在测算范围内："
        "请使用共置副本（serving.disaggregated 设为 false 或 "
        '"auto"）或更大的 GPU',
        "exchange_rate": "以 {currency} 计价，且未设置从 {currency} 到 {target} 的汇率，无法与其他价格比较"
        "（python -m app set-exchange-rate {currency} {target} RATE）",
        "levers_fp8": "fp8_params 以 FP8 保存训练权重，而此任务在 {gpu_name} 上以 {runs_as} 运行：请去掉 fp8_params，"
        "或选择支持 FP8 计算的 GPU（H100、H200）",
        "levers_host_ram": "activation_offload 把激活值放到主机内存，而目录没有列出 {where} 的主机内存："
        "请关闭该选项，或选择列出主机内存的 SKU",
        "levers_unsupported": "在 {where} 上没有一个训练框架能同时运行显存选项 {levers}（各选项可用的框架：{runs}）："
        "请去掉或更换其中之一",
    },
}

# What a GPU/engine lacks to run a serving request's formats (a `kernels` rejection's `gap`): the English is
# the estimator's own (its errors are worded without the app), the Chinese is here.
KERNELS: dict[str, dict[str, str]] = {
    "en": KERNEL_GAPS,
    "zh": {
        "fp8_math": "{gpu} 没有 FP8 张量核心；请使用 bf16 或 fp16 计算",
        "fp8_kv_volta": "{gpu} 没有 FP8 KV 缓存内核；请使用 fp16",
        "weights_volta": "{engine} 在 {gpu}（计算能力 7.0）上没有 {weight_format} 内核",
        "fp8_weights": "{engine} 仅在有 FP8 张量核心的 GPU 上运行 FP8 权重",
        "trt_fp8_kv": "trt-llm 的 FP8 KV 缓存需要 FP8 张量核心（SM89 及以上）；{gpu} 没有",
    },
}

# Why a configuration that fits is a near miss rather than an option (app/planner/misses.py, `MissCode`;
# training: app/planner/recommend.py, serving: app/planner/serving.py). `budget` with `converted_monthly`
# (priced in another currency than the request's) reads as `budget_converted`; `{slo}` is the latency
# targets set (`slo_ttft_ms`, `slo_tpot_ms`), worded by SLO. A deadline's days (or hours) are rounded up to the
# one decimal shown (`_rounded_up`), so a plan that misses its deadline never reads as meeting it.
MISSES: dict[str, dict[str, str]] = {
    "en": {
        "deadline": "fits, but needs {days:.1f} days (deadline {deadline_days:g})",
        "deadline_hours": "fits, but needs {hours:.1f} hours (deadline {deadline_days:g} days)",
        "quote_months": "fits, but bills {months} months, more than the {max_months} a quote rents: re-plan on more "
        "GPUs",
        "capacity": "fits, but needs {units_words} of {sku} in {region}; {free_words} free from {start_date}, all "
        "{units_words} from {free_from}",
        "capacity_never": "fits, but needs {units_words} of {sku} in {region}; {free_words} free from {start_date}, "
        "and the region does not have {units_words}",
        "budget": "fits, but costs {monthly!m} a month (budget {budget!c})",
        "inefficient": "fits, but is not a sensible way to run this job: MFU {mfu:.1%} (below {min_mfu:.0%}), "
        "{exposed_comm_s:,.1f} s of exposed communication against {compute_s:,.1f} s of compute a step; {helps}",
        "model_parallel_unneeded": "fits, but splits the model (tensor parallel {tp} × pipeline {pp}) only to fill "
        "{gpus} GPUs the global batch of {global_batch} sequences does not divide over, while its training states, "
        "{states_gib:,.1f} GiB, fit one GPU's {limit_gib:,.1f} GiB: fewer GPUs run it by data parallelism alone",
        "budget_converted": "fits, but costs {monthly!m} ({converted_monthly!c}) a month (budget {budget!c})",
        "budget_job": "fits, but costs {monthly!m} a month (budget {budget!c}); the whole job costs {job_total!m} "
        "(billed months: {months})",
        "total_budget": "fits, but the whole job costs {job_total!m} (billed months: {months}; job budget {budget!c})",
        "total_budget_converted": "fits, but the whole job costs {job_total!m} ({converted_job_total!c}) (billed "
        "months: {months}; job budget {budget!c})",
        "slo_one_request": "even one request at a time misses {slo}: TTFT {ttft}, TPOT {tpot} "
        "(a faster GPU, more tensor parallelism or a smaller weight format is needed)",
        "slo_one_request_percentile": "even one request at a time misses {slo}: the {percentile} TTFT is {ttft} and "
        "the {percentile} TPOT {tpot}, on the longest prompts of the mix (a faster GPU, more tensor parallelism or a "
        "smaller weight format is needed)",
        "slo_peak": "at the peak load TTFT is {ttft} and TPOT {tpot}, missing {slo}",
        "slo_peak_percentile": "at the peak load the {percentile} TTFT is {ttft} and the {percentile} TPOT "
        "{tpot} with as many replicas as the SKU rents, missing {slo}",
        "slo_peak_saturated": "at the peak load the replicas the SKU rents cannot keep up: the queue grows without "
        "bound (the {percentile} TTFT has no bound), missing {slo}",
        # the same at the peak where no latency target is set (nothing to miss but the load)
        "peak_saturated": "at the peak load the replicas the SKU rents cannot keep up: the queue grows without bound "
        "(the {percentile} TTFT has no bound)",
        "peak_percentile": "at the peak load the {percentile} TTFT is {ttft} and the {percentile} TPOT {tpot} with as "
        "many replicas as the SKU rents",
        "peak_load": "{replicas} replicas carry {carried:.3g} of the {offered:.3g} requests/s peak",
        "max_nodes": "the peak needs about {replicas:,} replicas of {replica_gpus} GPUs, more than the {most:,} that "
        "max_nodes {max_nodes} rents: shown with {most:,}",
        "max_nodes_cards": "the peak needs about {replicas:,} replicas of {replica_gpus} GPUs, more than the {most:,} "
        "the SKU's largest card count holds: shown with {most:,}",
        "sequence_too_long": "one sequence of {context_len:,} tokens does not fit: the KV cache holds "
        "{kv_cache_tokens:,} tokens at TP {tp}; shorten input_tokens + output_tokens (or max_model_len), or use "
        "more or larger GPUs",
        "kv_slots": "a replica runs {max_concurrency:,} of the {concurrency:,} sequences asked at once; the others "
        "wait for a slot, so TTFT is {ttft} and TPOT {tpot}, missing {slo}: {replicas:,} "
        "replicas of this shape would run them all",
        "kv_slots_wait": "a replica runs {max_concurrency:,} of the {concurrency:,} sequences asked at once; the "
        "others wait for a slot, so TTFT is {ttft} and TPOT {tpot}: {replicas:,} replicas of this "
        "shape would run them all (or give requests_per_s, and the replicas are sized for the load)",
        "pp_speculative": "without speculative decoding: on this SKU the model needs a replica pipelined across "
        "servers, and {engine} runs no speculative decoding ({method}) across pipeline stages, so this deployment "
        "serves it without speculation (larger GPUs or another engine would keep it)",
        "bf16_for_fp8": "in bf16, not the FP8 asked: {gpu} has no FP8 kernels under {engine}, and this bf16 "
        "deployment meets the targets for less than any FP8 option",
        "bf16_for_fp8_kv": "with a {kv} KV cache, not the FP8 KV cache asked: {gpu} has no FP8 KV-cache kernels under "
        "{engine}; the {weights} weights are kept, and this deployment meets the targets for less than any FP8 option",
        "bf16_for_fp8_math": "with {math} math, not the FP8 math asked: {gpu} has no FP8 kernels under {engine}; the "
        "{weights} weights are kept, and this deployment meets the targets for less than any FP8 option",
        "fp8_weights_bf16_math": "FP8 weights kept, with bf16 math, not the FP8 math asked: {gpu} has no FP8 tensor "
        "cores, so {engine} runs the FP8 weights weight-only (Marlin: 8-bit weight reads, 16-bit GEMMs), and this "
        "deployment meets the targets for less than any FP8-math option",
    },
    "zh": {
        "deadline": "放得下，但需要 {days:.1f} 天（截止期限 {deadline_days:g} 天）",
        "deadline_hours": "放得下，但需要 {hours:.1f} 小时（截止期限 {deadline_days:g} 天）",
        "quote_months": "放得下，但需计费 {months} 个月，超过报价最多可租的 {max_months} 个月：请改用更多 GPU 重新规划",
        "capacity": "放得下，但需要{region}的 {units_words}（{sku}），自 {start_date} 起只有 {free_words}空闲；"
        "{units_words}自 {free_from} 起空闲",
        "capacity_never": "放得下，但需要{region}的 {units_words}（{sku}），自 {start_date} 起只有 {free_words}空闲；"
        "该地域总数不足 {units_words}",
        "budget": "放得下，但每月费用 {monthly!m}（预算 {budget!c}）",
        "inefficient": "放得下，但不是运行这项作业的合理方式：MFU {mfu:.1%}（低于 {min_mfu:.0%}），"
        "每步未被掩盖的通信 {exposed_comm_s:,.1f} 秒，计算仅 {compute_s:,.1f} 秒；{helps}",
        "model_parallel_unneeded": "放得下，但拆分模型（张量并行 {tp} × 流水线并行 {pp}）只是为了填满 {gpus} 块 GPU"
        "（全局批 {global_batch} 条序列无法在其上均分），而其训练状态仅 {states_gib:,.1f} GiB，单块 GPU 的 "
        "{limit_gib:,.1f} GiB 即可容纳：更少的 GPU 仅用数据并行即可运行",
        "budget_converted": "放得下，但每月费用 {monthly!m}（{converted_monthly!c}）（预算 {budget!c}）",
        "budget_job": "放得下，但每月费用 {monthly!m}（预算 {budget!c}）；任务计费 {months} 个月，共 {job_total!m}",
        "total_budget": "放得下，但任务计费 {months} 个月共 {job_total!m}（任务预算 {budget!c}）",
        "total_budget_converted": "放得下，但任务计费 {months} 个月共 {job_total!m}（{converted_job_total!c}）"
        "（任务预算 {budget!c}）",
        "slo_one_request": "即使一次只处理一个请求也达不到 {slo}：TTFT {ttft}，TPOT {tpot}"
        "（需要更快的 GPU、更高的张量并行度或更小的权重格式）",
        "slo_one_request_percentile": "即使一次只处理一个请求也达不到 {slo}：在请求组合中最长的提示上，{percentile} "
        "TTFT 为 {ttft}、{percentile} TPOT 为 {tpot}（需要更快的 GPU、更高的张量并行度或更小的权重格式）",
        "slo_peak": "峰值负载下 TTFT 为 {ttft}、TPOT 为 {tpot}，达不到 {slo}",
        "slo_peak_percentile": "峰值负载下，即使用到该 SKU 可租的全部副本，{percentile} TTFT 为 {ttft}、"
        "{percentile} TPOT 为 {tpot}，达不到 {slo}",
        "slo_peak_saturated": "峰值负载下，该 SKU 可租的副本处理不过来：排队无限增长（{percentile} TTFT "
        "没有上限），达不到 {slo}",
        "peak_saturated": "峰值负载下，该 SKU 可租的副本处理不过来：排队无限增长（{percentile} TTFT 没有上限）",
        "peak_percentile": "峰值负载下，即使用到该 SKU 可租的全部副本，{percentile} TTFT 为 {ttft}、"
        "{percentile} TPOT 为 {tpot}",
        "peak_load": "{replicas} 个副本只能承载峰值 {offered:.3g} 请求/秒中的 {carried:.3g} 请求/秒",
        "max_nodes": "峰值约需 {replicas:,} 个副本（每个 {replica_gpus} 张 GPU），超过节点上限 max_nodes {max_nodes} "
        "可租的 {most:,} 个：按 {most:,} 个副本展示",
        "max_nodes_cards": "峰值约需 {replicas:,} 个副本（每个 {replica_gpus} 张 GPU），超过该 SKU 最大卡数可容纳的 "
        "{most:,} 个：按 {most:,} 个副本展示",
        "sequence_too_long": "一条 {context_len:,} token 的序列放不下：张量并行度 {tp} 下 KV 缓存只能容纳 "
        "{kv_cache_tokens:,} 个 token；请缩短 input_tokens + output_tokens（或 max_model_len），或使用更多或更大的 GPU",
        "kv_slots": "一个副本只能同时运行所要求的 {concurrency:,} 条序列中的 {max_concurrency:,} 条；其余排队等待空位，"
        "因此 TTFT 为 {ttft}、TPOT 为 {tpot}，达不到 {slo}：同样形态的 {replicas:,} 个副本才能全部"
        "同时运行",
        "kv_slots_wait": "一个副本只能同时运行所要求的 {concurrency:,} 条序列中的 {max_concurrency:,} 条；其余排队等待"
        "空位，因此 TTFT 为 {ttft}、TPOT 为 {tpot}：同样形态的 {replicas:,} 个副本才能全部同时运行"
        "（或给出 requests_per_s，按负载确定副本数）",
        "pp_speculative": "不用推测解码：在此 SKU 上该模型需要跨服务器的流水线副本，而 {engine} 不能在流水线阶段间"
        "运行推测解码（{method}），因此本部署不用推测解码（更大的 GPU 或其他引擎才能保留它）",
        "bf16_for_fp8": "以 bf16 而非所要求的 FP8 运行：{gpu} 在 {engine} 下没有 FP8 内核，而本 bf16 部署满足延迟目标，"
        "且比任何 FP8 方案都便宜",
        "bf16_for_fp8_kv": "KV 缓存以 {kv} 而非所要求的 FP8 保存：{gpu} 在 {engine} 下没有 FP8 KV 缓存内核；"
        "权重仍为 {weights}，本部署满足延迟目标，且比任何 FP8 方案都便宜",
        "bf16_for_fp8_math": "以 {math} 而非所要求的 FP8 计算：{gpu} 在 {engine} 下没有 FP8 内核；"
        "权重仍为 {weights}，本部署满足延迟目标，且比任何 FP8 方案都便宜",
        "fp8_weights_bf16_math": "保留 FP8 权重、以 bf16 计算，而非所要求的 FP8 计算：{gpu} 没有 FP8 张量核心，"
        "{engine} 以仅权重 FP8 方式运行（Marlin：按 8 位读取权重，16 位矩阵乘），本部署满足延迟目标，且比任何 FP8 "
        "计算方案都便宜",
    },
}

# A serving request's latency targets, as `{slo}` in a text: the targets set, joined by `and`.
SLO: dict[str, dict[str, str]] = {
    "en": {"slo_ttft_ms": "TTFT ≤ {slo_ttft_ms:g} ms", "slo_tpot_ms": "TPOT ≤ {slo_tpot_ms:g} ms", "and": " and "},
    "zh": {"slo_ttft_ms": "TTFT ≤ {slo_ttft_ms:g} 毫秒", "slo_tpot_ms": "TPOT ≤ {slo_tpot_ms:g} 毫秒", "and": " 且 "},
}

# A constraint naming what the catalog does not hold (app/planner/service.py): the API's `errors[].type` is the
# code and `errors[].params` its `unknown` and `allowed` lists; the wizard words them here.
UNKNOWN: dict[str, dict[str, str]] = {
    "en": {
        "unknown_gpu_type": "no GPU type {unknown} in the catalog; GPU type ids: {allowed}",
        "unknown_region": "no SKU is offered in {unknown}; regions: {allowed}",
        "unknown_currency": "no price in the catalog converts into {unknown} (no exchange rate is set); prices "
        "compare in: {allowed}",
    },
    "zh": {
        "unknown_gpu_type": "目录中没有 GPU 型号 {unknown}；可选的型号 ID：{allowed}",
        "unknown_region": "没有 SKU 在 {unknown} 提供；可选地域：{allowed}",
        "unknown_currency": "目录中没有价格能换算成 {unknown}（未设置汇率）；可比较的币种：{allowed}",
    },
}

# Why POST /estimate finds no plan for a global batch (app/planner/service.py `_batch_split`): the micro-batch does
# not divide it, or no data-parallel degree × micro-batch on the GPUs asked for does.
BATCH_SPLITS: dict[str, dict[str, str]] = {
    "en": {
        "micro_batch_split": "micro_batch {micro_batch} does not divide the global batch of {global_batch} sequences, "
        "so no data-parallel degree steps on whole micro-batches: give a micro_batch that divides {global_batch} "
        "(e.g. {fits}), or a global_batch that is a multiple of {micro_batch}.",
        "gpus_batch_split": "the global batch of {global_batch} sequences does not split over {gpus} × {gpu}: no "
        "data-parallel degree × micro-batch divides it, with or without tensor and pipeline parallel. Give a "
        "global_batch that {gpus} divides (e.g. {multiple}), or a GPU count that divides {global_batch}.",
    },
    "zh": {
        "micro_batch_split": "micro_batch {micro_batch} 不能整除 {global_batch} 条序列的全局批，任何数据并行度都无法"
        "按整个微批迭代：请给出能整除 {global_batch} 的 micro_batch（如 {fits}），或 {micro_batch} 整数倍的 "
        "global_batch。",
        "gpus_batch_split": "{global_batch} 条序列的全局批无法在 {gpus} × {gpu} 上切分：无论是否使用张量并行和流水线"
        "并行，都没有数据并行度 × 微批能整除它。请给出能被 {gpus} 整除的 global_batch（如 {multiple}），"
        "或能整除 {global_batch} 的 GPU 数量。",
    },
}

WHERE: dict[str, dict[str, str]] = {
    "en": {"one": "{gpus} × {gpu_name}", "nodes": "{gpus} × {gpu_name} on {nodes} nodes"},
    "zh": {"one": "{gpus} × {gpu_name}", "nodes": "{gpus} × {gpu_name}，共 {nodes} 个节点"},
}
LIST_SEP = error_words.LIST_SEPARATORS  # the one table of how a list is joined in each language

# The catalog's regions as people read them (app/data/catalog.yaml region ids); app.text.i18n.REGIONS is this table.
REGION_WORDS: dict[str, dict[str, str]] = {
    "en": {"shenzhen": "Shenzhen", "singapore": "Singapore", "los-angeles": "Los Angeles"},
    "zh": {"shenzhen": "深圳", "singapore": "新加坡", "los-angeles": "洛杉矶"},
}

# A count of the units a SKU rents (its rental_unit, app/estimator/vocabulary.py RentalUnit): whole servers or
# single cards.
UNIT_WORDS: dict[str, dict[str, tuple[str, str]]] = {
    "en": {"node": ("{n} server", "{n} servers"), "card": ("{n} card", "{n} cards")},
    "zh": {"node": ("{n} 台服务器", "{n} 台服务器"), "card": ("{n} 张卡", "{n} 张卡")},
}


# The verb that agrees with a count of units ("1 server is", "2 servers are"): `{units_are}` in a capacity text.
# Chinese has no agreement to make: its texts carry the field too (both languages word the same fields), empty.
UNITS_VERB: dict[str, tuple[str, str]] = {"en": ("is", "are"), "zh": ("", "")}


def unit_words(n: int, unit: str, lang: str) -> str:
    """`n` units of a SKU renting by `unit` (node or card): "2 servers", "2 台服务器"."""
    bare = "{n}" if lang == "en" else "{n} 个"
    one, many = UNIT_WORDS[lang].get(unit, (bare, bare))
    return (one if n == 1 else many).format(n=n)


def _place_words(params: Mapping[str, Any], values: dict[str, Any], lang: str) -> None:
    """A region id as its name, and counts of units in their words, where a text carries them (capacity texts)."""
    if isinstance(params.get("region"), str):
        values["region"] = REGION_WORDS[lang].get(params["region"], params["region"])
    if "units" in params and ("free_units" in params or "unit" in params):  # no `unit` (older texts): a bare count
        unit = str(params.get("unit") or "")
        values["units_words"] = unit_words(int(params["units"] or 0), unit, lang)
        values["units_are"] = UNITS_VERB[lang][int(params["units"] or 0) != 1]
        if "free_units" in params:
            values["free_words"] = unit_words(int(params["free_units"] or 0), unit, lang)


REASON_SEP = {"en": "; ", "zh": "；"}


def plain_money(amount: Any, currency: str) -> str:
    """The API's money in text: the decimal string and its ISO 4217 code."""
    return f"{amount} {currency}"


class _Formatter(string.Formatter):
    def __init__(self, params: Mapping[str, Any], money: MoneyFormat) -> None:
        self.params = params
        self.money = money
        self._field = ""

    def get_field(self, field_name: str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Any:
        self._field = field_name  # string.Formatter converts each field right after it gets it
        return super().get_field(field_name, args, kwargs)

    def convert_field(self, value: Any, conversion: str | None) -> Any:
        if conversion == "m":  # its own currency where it has one (review R7-2), else the text's
            own = self.params.get(f"{self._field}_currency")
            return self.money(value, str(own or self.params.get("currency", "")))
        if conversion == "c":
            return self.money(value, str(self.params.get("compared_currency", "")))
        return super().convert_field(value, conversion)


def _render(template: str, params: Mapping[str, Any], lang: str, money: MoneyFormat, *, agree: bool = True) -> str:
    values = {k: LIST_SEP[lang].join(map(str, v)) if isinstance(v, list | tuple) else v for k, v in params.items()}
    _place_words(params, values, lang)
    if "gpu_name" in params:
        values["where"] = WHERE[lang]["nodes" if params.get("nodes", 1) > 1 else "one"].format(**params)
    if "scheme_note" in params:
        values["scheme"] = scheme(params, lang)
    if "gap" in params:
        values["kernel_gap"] = KERNELS[lang][params["gap"]].format(**values)
    for name in ("ttft", "tpot"):  # a reached latency in a unit that reads (a queue's minutes are not ms)
        if isinstance(params.get(f"{name}_ms"), int | float):
            values[name] = latency(params[f"{name}_ms"], lang)
    targets = [SLO[lang][name].format(**params) for name in slo_named(params)]
    if targets:
        values["slo"] = SLO[lang]["and"].join(targets)
    if "!m}" in template or "!c}" in template:
        text = _Formatter(params, money).vformat(template, (), values)
    else:
        text = template.format(**values)  # no money in it: the plain (C) formatter, about ten times faster
    return plurals(text) if agree and "(s)" in template else text


def scheme(params: Mapping[str, Any], lang: str) -> str:
    """A checkpoint's format in `lang`, from the `scheme_note` (code and parameters) a warning or launch note carries;
    its English `scheme` where it carries none."""
    found = params.get("scheme_note")
    if not found:
        return str(params.get("scheme", ""))
    return SCHEMES[_lang(lang)][found["code"]].format(**found["params"])


def _lang(lang: str) -> str:
    return lang if lang in REJECTIONS else "en"


def rejection(code: str, params: Mapping[str, Any], lang: str = "en", money: MoneyFormat = plain_money) -> str:
    """Why a SKU yields no option, in `lang`."""
    lang = _lang(lang)
    return _render(REJECTIONS[lang][_rejection_key(code, params)], params, lang, money)


def _rejection_key(code: str, params: Mapping[str, Any]) -> str:
    """The catalog entry of a rejection: some codes read differently by which parameters they carry."""
    if code == "gpu_memory" and "one_server" in params:  # serving: the weights leave no KV cache
        return "no_kv_cache_one_server" if params["one_server"] else "no_kv_cache"
    if code == "gpu_memory" and "needed_gib" not in params:
        return "no_plan"
    if code == "levers_unsupported" and "runs_as" in params:  # fp8_params where the job runs in 16 bits
        return "levers_fp8"
    if code == "levers_unsupported" and params.get("host_ram_unknown"):  # activation offload, host RAM unlisted
        return "levers_host_ram"
    if code == "max_nodes" and "max_nodes" not in params:
        return "max_nodes_cards"
    if code == "host_ram" and "load_gib" in params:  # the load, not the offload, sets the host peak
        return "host_ram_load" if "host_ram_gib" in params else "host_ram_load_unknown"
    return code


# What would help an `inefficient` plan (app/planner/efficiency.py), joined into its near miss's `{helps}`.
EFFICIENCY_HELPS: dict[str, dict[str, str]] = {
    "en": {
        "lead": "what would help: ",
        "none": "no change of plan on this SKU helps",
        "fewer_servers": "fewer servers (less traffic between them)",
        "faster_fabric": "a faster fabric between the servers (more or faster ports per server)",
        "more_gpu_memory": "GPUs with more memory, so that the states need no offload",
        "lora": "LoRA instead of training every weight",
    },
    "zh": {
        "lead": "可行的改进：",
        "none": "在此 SKU 上换用其他并行方案也无济于事",
        "fewer_servers": "减少服务器数量（减少服务器间的通信）",
        "faster_fabric": "服务器之间使用更快的网络（每台服务器更多或更快的网口）",
        "more_gpu_memory": "使用显存更大的 GPU，使训练状态无需卸载",
        "lora": "改用 LoRA，而不是训练全部权重",
    },
}


def _efficiency_helps(params: Mapping[str, Any], lang: str) -> Mapping[str, Any]:
    """An `inefficient` miss's params with `helps` (codes) worded in `lang`."""
    words = EFFICIENCY_HELPS[lang]
    helps = [words[code] for code in params.get("helps", [])]
    text = words["lead"] + LIST_SEP[lang].join(helps) if helps else words["none"]
    return {**params, "helps": text}


def _miss_key(code: str, params: Mapping[str, Any]) -> str:
    """The catalog entry of a miss: a budget priced in another currency, a job shorter than a day in hours."""
    if code == "budget" and "converted_monthly" in params:
        return "budget_converted"
    if code == "budget" and "job_total" in params:
        return "budget_job"
    if code == "total_budget" and "converted_job_total" in params:
        return "total_budget_converted"
    if code == "deadline" and "hours" in params and params["days"] < 1:
        return "deadline_hours"
    if code == "capacity" and params.get("free_from") is None:
        return "capacity_never"
    if code == "bf16_for_fp8" and "changed" in params:  # the weights asked are kept: only the KV cache or the math
        return f"bf16_for_fp8_{params['changed']}"
    if code == "max_nodes" and "max_nodes" not in params:  # a SKU rented by the card
        return "max_nodes_cards"
    if code == "slo_one_request" and "percentile" in params:  # judged on the percentile of a mix of lengths
        return "slo_one_request_percentile"
    if code == "slo_peak" and "percentile" in params:  # the simulated percentile at the peak
        missed = "slo_peak_" if slo_named(params) else "peak_"  # no target set: the load alone is missed
        return missed + ("saturated" if params.get("saturated") else "percentile")
    return code


def _rounded_up(params: Mapping[str, Any]) -> Mapping[str, Any]:
    """A deadline miss's days and hours as shown: rounded up to their one decimal and above the deadline, never
    to a figure that meets it (1.452 days against 1 reads 1.5, not 1; days rounded to the deadline itself in the
    params read a tenth above it)."""
    deadline = params["deadline_days"]
    shown = {"days": _tenth_above(params["days"], deadline)}
    if "hours" in params:
        shown["hours"] = _tenth_above(params["hours"], deadline * 24)
    return {**params, **shown}


def _tenth_above(value: float, limit: float) -> float:
    """`value` rounded up to a tenth, and at least the first tenth above `limit` (the value exceeds it)."""
    shown = _tenth_up(value)
    return shown if shown > limit else _tenth_up(limit + 0.01)


def _tenth_up(value: float) -> float:
    return math.ceil(round(value * 10, 6)) / 10  # round first: 1.1 * 10 is 11.000000000000002


def misses(
    reasons: Sequence[tuple[str, Mapping[str, Any]]], lang: str = "en", money: MoneyFormat = plain_money
) -> str | None:
    """Why a fitting plan misses the request's deadline or budget, in `lang` (None: it misses nothing)."""
    lang = _lang(lang)
    texts = []
    for code, params in reasons:
        key = _miss_key(code, params)
        if code == "deadline":
            params = _rounded_up(params)
        elif code == "inefficient":
            params = _efficiency_helps(params, lang)
        texts.append(_render(MISSES[lang][key], params, lang, money))
    return REASON_SEP[lang].join(texts) or None


def hub(code: str, params: Mapping[str, Any], lang: str = "en") -> str:
    """Why a Hugging Face model id could not be read or sized, in `lang` (the estimator's refusal of its config by
    its code and figures; a reason kept as text by an older release as it is)."""
    lang = _lang(lang)
    why = params.get("reason")
    if isinstance(why, Mapping):
        params = {
            **params,
            "reason": estimator_text(why["code"], why["params"], lang) if "code" in why else why["message"],
        }
    return _render(HUB[lang][code], params, lang, plain_money)


def unknown(code: str, params: Mapping[str, Any], lang: str = "en") -> str:
    """A constraint's GPU types or regions the catalog does not hold, and those it does, in `lang`."""
    lang = _lang(lang)
    words = {key: LIST_SEP[lang].join(str(item) for item in params.get(key, ())) for key in ("unknown", "allowed")}
    return UNKNOWN[lang][code].format(**words)


def refusal(code: str, params: Mapping[str, Any], lang: str = "en") -> str:
    """Why the domain refuses a request (app/text/refusal_words.py: not found, scope, search, webhook URL, PDF)."""
    lang = _lang(lang)
    return _render(REFUSALS[lang][code], params, lang, plain_money)


def estimator_error(exc: EstimatorError, lang: str = "en") -> str:
    """Why the estimator refused an input, in `lang`: its code's text (app/estimator/error_words.py) where it
    carries one, else its own (English) message."""
    return str(exc) if exc.code is None else estimator_text(exc.code, exc.params, lang)


def estimator_text(code: str, params: Mapping[str, Any], lang: str = "en") -> str:
    """The text of an estimator refusal's code (app/estimator/error_words.py) with its figures, in `lang`."""
    return error_words.render(code, params, _lang(lang))


def estimator_error_item(exc: EstimatorError) -> dict[str, Any]:
    """The API's `errors[]` entry of an estimator refusal: the field, the English message and, where the error
    carries one, its code as `type` with its figures as `params` (a client words it from them)."""
    if exc.code is None:
        return {"field": exc.field or "body", "message": str(exc), "type": "estimator"}
    return {"field": exc.field or "body", "message": str(exc), "type": exc.code, "params": exc.params}


def batch_split(code: str, params: Mapping[str, Any], lang: str = "en") -> str:
    """Why no plan steps on the global batch asked for, in `lang`."""
    return BATCH_SPLITS[_lang(lang)][code].format(**params)


# A rental term's name inside a sentence (`other_term_cheaper` names both terms).
TERM_NAMES: dict[str, dict[str, str]] = {
    "en": {"monthly": "monthly", "annual": "annual"},
    "zh": {"monthly": "月付", "annual": "年付"},
}


def warning(code: str, params: Mapping[str, Any], lang: str = "en", money: MoneyFormat = plain_money) -> str:
    """A warning's text, in `lang`, from its code and the figures it carries: the API's `message` (English), the
    pages and the PDF (`money`: how its amounts read there)."""
    lang = _lang(lang)
    if "term" in params:  # other_term_cheaper, term_longer_than_job
        names = TERM_NAMES[lang]
        params = {**params, "term": names[params["term"]]}
        if "other_term" in params:
            params["other_term"] = names[params["other_term"]]
    if code == "memory_may_exceed" and "levers" in params:  # the levers still open to the plan, in their words
        params = {**params, "levers": [MEMORY_LEVERS[lang][lever] for lever in params["levers"]]}
    if code == "no_fit_zero3":  # its first sentence, by the readings it names
        params = {**params, "lead": _no_fit_lead(params, lang)}
    text = _render(WARNINGS[lang][_warning_key(code, params)], params, lang, money, agree=code not in VERBATIM)
    if code in ("no_fit", "no_fit_zero3") and "fused_gib" in params:  # the fused loss alone makes the plan fit
        text += NO_FIT_FUSED[lang].format(**params)
    return text


def _no_fit_lead(params: Mapping[str, Any], lang: str) -> str:
    """`no_fit_zero3`'s first sentence (NO_FIT_LEADS): on one GPU, or where the plan's own total is more than ZeRO-3's
    figure, both readings named; a warning stored before `total_gib` was carried reads ZeRO-3's."""
    if "total_gib" not in params:
        return NO_FIT_LEADS[lang]["zero3"].format(**params)
    lead = "one" if params["gpus"] == 1 else "own" if params["total_gib"] > params["needed_gib"] + 0.05 else "zero3"
    return NO_FIT_LEADS[lang][lead].format(**params)


def _warning_key(code: str, params: Mapping[str, Any]) -> str:
    """The catalog entry of a warning: `code`, or `code.variant` where its parameters change the sentence."""
    if code == "no_fit_zero3" and params.get("activations_exceed"):
        return "no_fit_zero3.activations"
    if code == "no_fit_zero3" and "fit_gpus" in params:
        return "no_fit_zero3.more_gpus_cards" if params.get("cards") else "no_fit_zero3.more_gpus"
    if code == "memory_may_exceed" and "levers" in params:
        return "memory_may_exceed.levers" if params["levers"] else "memory_may_exceed.no_lever"
    if code == "offload_slowdown" and params.get("activations"):
        return "offload_slowdown.activations"
    if code == "no_stack" and params.get("levers"):
        return "no_stack.levers"
    if code == "single_server_only" and not params.get("network"):
        return "single_server_only.unlisted"
    if code == "term_longer_than_job" and params.get("months") == 1:
        return "term_longer_than_job.one_month"
    if code == "global_batch_small" and (params.get("steps") == 1 or params.get("pp") == 1):
        one = [part for part, n in (("one_step", params.get("steps")), ("one_stage", params.get("pp"))) if n == 1]
        return "global_batch_small." + "_".join(one)
    return code


def assumption(code: str, params: Mapping[str, Any], lang: str = "en", money: MoneyFormat = plain_money) -> str:
    """What an option assumes beyond its plan (the fabric joining its servers), in `lang`."""
    lang = _lang(lang)
    if code == "memory_relief_layout":  # the two layouts in the words of a plan's summary
        was = {key.removeprefix("was_"): value for key, value in params.items() if key.startswith("was_")}
        params = {**params, "layout": plan_summary(params, lang), "was_layout": plan_summary(was, lang)}
    if code == "memory_relief_stack":  # the stacks by their names (docs/stacks.md)
        params = {
            **params,
            "stack_name": STACK_NAMES[lang][params["stack"]],
            "was_stack_name": STACK_NAMES[lang][params["was_stack"]],
        }
    text = _render(ASSUMPTIONS[lang][code], params, lang, money)
    tail = params.get("relief")  # the last memory_relief_* note of an option (RELIEF_TAILS)
    return text + RELIEF_TAILS[lang][tail].format(**params) if isinstance(tail, str) else text


def quote_check(code: str, params: Mapping[str, Any], lang: str = "en") -> str:
    """Why a quote's quantity, months or add-ons do not carry its plan or what its SKU rents, in `lang`."""
    lang = _lang(lang)
    if code == "slo_not_met" and "pool" in params:  # app/quotes/pool_load.py: one pool of a disaggregated plan
        code = "slo_not_met_pool" + ("" if "needed" in params else "_replan")
    elif code == "slo_not_met":  # app/quotes/plan_check.py: at the peak (saturated or not), or at a concurrency
        code = "slo_not_met_concurrency" if "concurrency" in params else code
        code += "_saturated" if params.get("saturated") else ""
        code += "" if "needed" in params else "_replan"
    if code == "plan_no_stack" and params.get("levers"):  # the memory levers are what no stack runs
        code = "plan_no_stack_levers"
    if code.startswith("plan_host_ram") and params.get("loading"):  # the model's load sets the host peak
        code += "_loading"
    if "reason" in params:  # the estimator's refusal (app/quotes/plan_check.py `_estimator_refusal`), in `lang`
        why = params["reason"]
        params = {
            **params,
            "reason": estimator_text(why["code"], why["params"], lang) if "code" in why else why["message"],
        }
    if code == "capacity_taken" and params.get("next_free_date") is None:  # the region has fewer than asked,
        # or has them only from a day beyond the booking window (app.capacity.service.taken)
        late = params.get("next_free_reason") == "beyond_booking_window"
        code = "capacity_taken_beyond" if late else "capacity_taken_never"
    return _render(QUOTE_CHECKS[lang][code], params, lang, plain_money)


def launch(code: str, params: Mapping[str, Any], lang: str = "en") -> str:
    """A serving launch's layout or note (app/planner/serving_launch.py), in `lang`."""
    lang = _lang(lang)
    template = LAUNCH[lang][code]
    text = template.format(**({**params, "scheme": scheme(params, lang)} if "scheme_note" in params else params))
    return plurals(text) if "(s)" in template else text


def note(code: str, params: Mapping[str, Any], lang: str = "en") -> str:
    """What an estimate assumes (app/estimator/notes.py), in `lang`."""
    return NOTES[_lang(lang)][code].format(**params)


# An option's warnings a quote freezes as notes, worded as the option's warnings: its term's (app.quotes.service
# `_term_notes`) and the caveats on a serving quote's latency (app.quotes.caveats). A quote keeps no float: the figures
# named here are kept as decimal strings (`frozen_params`) and read back as numbers to word them.
FROZEN_WARNINGS: dict[str, tuple[str, ...]] = {
    "other_term_cheaper": (),
    "term_longer_than_job": ("used_hours", "share"),
    "moe_low_concurrency_unvalidated": ("concurrency",),
    "prompts_over_limit": ("share",),
    "concurrency_over_kv": ("wait_ms",),
}


def frozen_params(code: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """A frozen warning's figures as a quote keeps them: those FROZEN_WARNINGS names as decimal strings (4 places)."""
    decimals = FROZEN_WARNINGS[code]
    return {k: f"{float(v):.4f}" if k in decimals else v for k, v in params.items()}


def quote_note(code: str, params: Mapping[str, Any], lang: str = "en", money: MoneyFormat = plain_money) -> str:
    """A quote's note, in `lang` (a term by its name: `Annual term` / `年付`); an option's warning frozen on the
    quote (FROZEN_WARNINGS: its term's, its latency's caveats) in the option's words. `money`: how its amounts read
    (the API's plain decimal and code; the printed quote groups them as its lines do: app.quotes.printing)."""
    lang = _lang(lang)
    if code in FROZEN_WARNINGS:  # a quote keeps no float: its figures as strings
        decimals = FROZEN_WARNINGS[code]
        return warning(code, {k: float(v) if k in decimals else v for k, v in params.items()}, lang, money)
    if "term" in params:
        name = TERM_NAMES[lang][params["term"]]
        params = {**params, "term": name[:1].upper() + name[1:]}
    values = dict(params)
    _place_words(params, values, lang)  # a region by its name, units in words (units_not_reserved)
    return _Formatter(params, money).vformat(QUOTE_NOTES[lang][code], (), values)
