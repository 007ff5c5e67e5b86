"""English and Simplified Chinese for the web pages: the message catalog, language negotiation,
and number / money / duration formatting (Babel's CLDR data).

Why a dict catalog rather than gettext .po/.mo files: two languages and a couple of hundred short
strings, keyed by id rather than by English sentence; a dict needs no extract/compile step in the
build, and tests/web/test_i18n.py checks that both languages define exactly the same keys and
placeholders. Formatting of numbers and money goes through Babel, so grouping and symbols follow
each locale.

Text the planner and the estimator state as codes with parameters (warnings, rejections, near misses, an
estimate's assumptions) is worded in app/text/messages.py, the same catalog the API's English comes from.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from babel.numbers import format_decimal, get_currency_precision, get_currency_symbol
from starlette.requests import Request

from app.estimator.vocabulary import LANGUAGES
from app.text import messages, words
from app.text.i18n_admin import ADMIN_EN, ADMIN_ZH
from app.text.i18n_serve import SERVE_EN, SERVE_ZH

LANGS = LANGUAGES
LOCALES = words.LOCALES  # each language's Babel locale: one table (app/text/words.py), for pages and plan words alike
HTML_LANG = {"en": "en", "zh": "zh-CN"}

EN: dict[str, str] = {
    "brand": "gpu-sizer",
    "tagline": "Which GPU servers to rent for your model, how to split the work, and what it costs.",
    "skip": "Skip to content",
    "switch_lang": "中文",
    "switch_lang_label": "切换到中文",
    "nav_wizard": "Size a job",
    "nav_api": "API",
    "wizard_title": "Size a GPU rental for your model",
    "wizard_intro": "Three steps: the model, the task, the job. Every field has a sensible default; "
    "the results page can be bookmarked and shared.",
    "step_model": "1. The model",
    "step_task": "2. The task",
    "step_job": "3. The job",
    "source": "How do you describe the model?",
    "source_preset": "A known model",
    "source_params": "A parameter count",
    "source_hub": "A Hugging Face model id",
    "source_config": "A pasted config.json",
    "preset": "Model",
    "preset_filter": "Filter the list",
    "preset_filter_hint": "Type part of a name, e.g. llama 70",
    "params_b": "Parameters (billions)",
    "params_hint": "The architecture is derived from the count: memory is approximate.",
    "hf_config": "Hugging Face config.json",
    "hf_config_hint": "Paste the model's config.json (JSON object).",
    "hf_id": "Hugging Face model id",
    "hf_id_hint": "As on huggingface.co, e.g. Qwen/Qwen2.5-7B-Instruct: its config.json is read from the Hub.",
    "task": "Task",
    "advanced": "Advanced settings",
    "seq_len": "Sequence length (tokens)",
    "micro_batch": "Micro-batch per GPU",
    "global_batch": "Global batch (sequences)",
    "auto_hint": "Leave empty to let the planner choose.",
    "precision": "Precision",
    "optimizer": "Optimizer",
    "opt_adamw": "AdamW",
    "opt_adamw_8bit": "AdamW 8-bit",
    "opt_lion": "Lion",
    "opt_sgd": "SGD with momentum",
    "opt_adafactor": "Adafactor",
    "lora_rank": "LoRA rank",
    "lora_hint": "Used for LoRA and QLoRA only.",
    "tokens_b": "Tokens to train (billions)",
    "tokens_hint": "Or give the dataset size and epochs below. Without tokens there is no time to finish.",
    "dataset_tokens_b": "Dataset size (billions of tokens)",
    "epochs": "Epochs",
    "deadline_days": "Deadline (days)",
    "start_date": "Rental start",
    "start_date_hint": "The first day of the rental (YYYY-MM-DD), from today to a year ahead; default today. What is "
    "free is counted from it, and a quote starts on it.",
    "budget": "Monthly budget (¥)",
    "total_budget": "Job budget (¥)",
    "total_budget_hint": "What the whole job may cost; when given, it decides (a dearer month that finishes sooner "
    "can cost less).",
    "other_term_total": "On the {term} term: {total} ({billed})",
    "term_name_monthly": "monthly",
    "term_name_annual": "annual",
    "term": "Rental term",
    "term_monthly": "Monthly",
    "term_annual": "Annual (discounted)",
    "regions": "Regions",
    "gpu_types": "GPU types",
    "any_hint": "None ticked: any.",
    "objective": "Rank by",
    "objective_balanced": "Balanced (cost and time)",
    "objective_cheapest": "Cheapest",
    "objective_fastest": "Fastest",
    "submit": "Show configurations",
    "optional": "optional",
    "errors_title": "Please correct the fields marked below.",
    "results_title": "Recommended configurations",
    "results_for": "{model} · {task} · {params} parameters",
    "edit": "Change the inputs",
    "no_options": "No configuration meets the constraints.",
    "option": "Option {rank}",
    "gpus_nodes": "{gpus} × {gpu}",
    "cards": "{n} cards",
    "cards_one": "{n} card",
    "servers": "{n} servers",
    "servers_one": "{n} server",
    "monthly": "Per month",
    "annual": "Per year (annual term)",
    "job_total": "Whole job",
    "job_months": "{months} months billed",
    "job_months_one": "{months} month billed",
    "list_price": "list {price}",
    "time_to_finish": "Time to finish",
    "time_range": "{fast} (tuned stack) to {slow} (typical stack)",
    "gpu_hours_range": "{low}–{high} GPU-hours, goodput {goodput}",
    "no_tokens": "give tokens to train",
    "throughput": "Throughput",
    "tokens_per_s": "{n} tokens/s",
    "mfu": "MFU {n}",
    "plan": "Parallel plan",
    "why": "Why this plan",
    "warnings": "Warnings",
    "option_assumptions": "What the speed assumes",
    "memory": "Memory per GPU",
    "memory_of": "{total} of {capacity} GiB",
    "memory_fits": "fits",
    "memory_no_fit": "does not fit",
    "mem_weights": "weights",
    "mem_gradients": "gradients",
    "mem_optimizer": "optimizer",
    "mem_activations": "activations",
    "mem_kv_cache": "KV cache",
    "mem_other": "other",
    "mem_capacity": "capacity",
    "mem_limit": "limit after the headroom",
    "gib": "{n} GiB",
    "region": "Region",
    "availability": "Availability",
    "availability_not tracked": "not tracked; confirmed with the quote",
    "availability_available": "{free} free in {region} from {start}",
    "availability_later": "{free} free in {region} over the rental; the units it needs are free from {start}",
    "availability_unavailable": "{free} free in {region}: the region does not have the units it needs",
    "capacity_title": "Capacity",
    "capacity_intro": "Per SKU and region, month by month: the most units accepted quotes, issued quotes (still valid) "
    "and maintenance hold on one day of the month, and the units free on every day of it.",
    "capacity_other_lang": "中文",
    "capacity_accepted": "accepted quotes",
    "capacity_issued": "issued quotes",
    "capacity_maintenance": "maintenance",
    "capacity_free": "free",
    "capacity_month": "month",
    "capacity_total_node": "{total} servers exist",
    "capacity_total_card": "{total} cards exist",
    "capacity_none": "No SKU's units are tracked yet: set the units that exist on a SKU's page (Inventory).",
    "capacity_bar": "{accepted} accepted, {issued} issued, {maintenance} in maintenance, {free} free",
    "capacity_bar_overbooked": "{accepted} accepted, {issued} issued, {maintenance} in maintenance, {free} free, "
    "{overbooked} overbooked (held beyond the units that exist)",
    "capacity_overbooked": "overbooked",
    "indicative": "Indicative price: from the published range, final on consultation.",
    "plus_fabric": "+ fabric on consultation",
    "fabric_consultation_note": "The servers are joined by a fabric add-on priced on consultation: the totals "
    "leave it out.",
    "download_launch": "Download launch config (JSON)",
    "request_quote": "Request a quote",
    "chart_title": "Cost versus time",
    "chart_desc": "Each point is a configuration: the whole job's cost (log scale) against hours to finish "
    "(log scale). "
    "The line joins the Pareto front: nothing else is both cheaper and faster.",
    "chart_x": "hours to finish",
    "chart_y": "cost",
    "chart_no_time": "Give the tokens to train to compare time to finish.",
    "pareto": "Pareto front",
    "pareto_item": "{sku}, {gpus} GPUs: {cost}, {time}",
    "pareto_item_one": "{sku}, {gpus} GPU: {cost}, {time}",
    "near_misses": "Near misses",
    "near_misses_intro": "Configurations just outside the constraints.",
    "rejected": "Rejected",
    "rejected_intro": "Catalog SKUs that cannot run this job, and why.",
    "assumptions": "Assumptions",
    "assumptions_intro": "Every number rests on these; the API states them with each answer.",
    "assumption_bytes": "Memory is counted in bytes per GPU from the architecture (weights, gradients, optimizer "
    "states, activations, buffers) and shown in GiB (2^30 bytes).",
    "assumption_efficiency": "Speed uses each GPU's dense peak at the chosen precision times an efficiency "
    "calibrated on published training runs; communication uses measured bus bandwidths.",
    "assumption_overheads": "Overheads: CUDA context excluded from capacity, allocator fragmentation and "
    "communication buffers included in “other”.",
    "assumption_details": "The estimator's own statements",
    "uncertainty": "Uncertainty: memory is typically within 10% of a measured run; time to finish within "
    "about ±30% (kernels, data loading and failures vary). Prices are the catalog's list prices in force today.",
    "billing_note": "Whole months of the chosen term are billed (a month is 30 days); "
    "without tokens, the price is per month.",
    "script_title": "Script it",
    "script_intro": "The same request as JSON for POST /recommend, and as a curl command.",
    "json_body": "POST /recommend body",
    "curl": "curl command",
    "copy": "Copy",
    "copied": "Copied",
    "csv": "Download the options as CSV",
    "search_stats": "{n} configurations searched.",
    "quote_title": "Request a quote",
    "quote_intro": "We will price option {rank} from the catalog as it stands now and open the printable quote.",
    "customer_name": "Your name",
    "company": "Company",
    "email": "Email",
    "months": "Months",
    "months_hint_annual": "An annual term takes whole years (12, 24, …).",
    "months_hint_monthly": "A monthly term takes whole months (1, 2, 3, …).",
    "issue_quote": "Issue the quote",
    "addons": "Add-ons",
    "addons_hint": "Options sold with this server; one priced on consultation is listed on the quote "
    "but not added to the total.",
    "back_to_results": "Back to the results",
    "option_missing": "That option is no longer in the results; pick one again.",
    "option_range": "must be a whole number from 1 to {n}, an option's rank in the results",
    "option_none": "the results have no options to pick from",
    "not_found_title": "Page not found",
    "not_found_text": "There is no page at this address.",
    "server_error_title": "Something went wrong",
    "server_error_text": "An unexpected error occurred; it has been logged. Please try again.",
    "error_title": "Error {status}",
    "home": "Start a new sizing",
    "request_id": "Request id: {id}",
    "err_number": "Enter a number.",
    "err_max_digits": "Use at most {n} digits in all.",
    "err_max_places": "Use at most {n} decimal places.",
    "err_decimal_string": "Write the amount in digits with a decimal point, such as {example}: no exponent.",
    "err_whole_digits": "Use at most {n} digits before the decimal point.",
    "err_integer": "Enter a whole number.",
    "err_required": "This field is required.",
    "err_hidden_characters": "Must not contain control or bidirectional formatting characters.",
    "err_json": "This is not valid JSON: {detail}",
    "err_json_object": "Paste a JSON object ({ … }).",
    "err_choice": "Choose one of the listed values.",
    "err_gt": "Must be greater than {limit}.",
    "err_ge": "Must be at least {limit}.",
    "err_lt": "Must be less than {limit}.",
    "err_le": "Must be at most {limit}.",
    "err_max_length": "Use at most {n} characters.",
    "err_min_length": "Use at least {n} characters.",
    "err_email": "Enter a valid email address.",
    "err_billions": "Enter a number, e.g. 2 or 0.1 (billions), or 100M.",
    "err_item": "{field}: {message}",
    "preset_no_match": "No model matches “{query}”: change the filter or clear it.",
    "chart_no_options": "No configuration meets the constraints, so there is nothing to plot; the near misses "
    "below show what it would take.",
    "chart_front_note": "The front stops where paying more saves less than {saving} ({n} faster, dearer "
    "configurations left out).",
    "params_model": "A {n}-billion-parameter model",
    "minutes": "{m} min",
    "hours": "{n} h",
    "footer": "Figures are estimates from cited formulas; see the assumptions on each results page.",
}

ZH: dict[str, str] = {
    "brand": "gpu-sizer",
    "tagline": "为您的模型选择要租用的 GPU 服务器、并行方案及费用。",
    "skip": "跳到正文",
    "switch_lang": "English",
    "switch_lang_label": "Switch to English",
    "nav_wizard": "估算任务",
    "nav_api": "API",
    "wizard_title": "为您的模型估算 GPU 租用方案",
    "wizard_intro": "三步：模型、任务、作业。每个字段都有合理的默认值；结果页可以收藏和分享。",
    "step_model": "1. 模型",
    "step_task": "2. 任务",
    "step_job": "3. 作业",
    "source": "如何描述模型？",
    "source_preset": "常见模型",
    "source_params": "参数量",
    "source_hub": "Hugging Face 模型 ID",
    "source_config": "粘贴 config.json",
    "preset": "模型",
    "preset_filter": "筛选列表",
    "preset_filter_hint": "输入名称的一部分，例如 llama 70",
    "params_b": "参数量（十亿）",
    "params_hint": "架构由参数量推算：显存为近似值。",
    "hf_config": "Hugging Face config.json",
    "hf_config_hint": "粘贴模型的 config.json（JSON 对象）。",
    "hf_id": "Hugging Face 模型 ID",
    "hf_id_hint": "与 huggingface.co 上的写法相同，例如 Qwen/Qwen2.5-7B-Instruct：将从 Hub 读取其 config.json。",
    "task": "任务",
    "advanced": "高级设置",
    "seq_len": "序列长度（token）",
    "micro_batch": "每卡微批大小",
    "global_batch": "全局批大小（序列）",
    "auto_hint": "留空由规划器选择。",
    "precision": "精度",
    "optimizer": "优化器",
    "opt_adamw": "AdamW",
    "opt_adamw_8bit": "8 位 AdamW",
    "opt_lion": "Lion",
    "opt_sgd": "带动量的 SGD",
    "opt_adafactor": "Adafactor",
    "lora_rank": "LoRA 秩",
    "lora_hint": "仅用于 LoRA 和 QLoRA。",
    "tokens_b": "训练 token 数（十亿）",
    "tokens_hint": "或在下方填写数据集大小和轮数。没有 token 数则无法估算完成时间。",
    "dataset_tokens_b": "数据集大小（十亿 token）",
    "epochs": "轮数",
    "deadline_days": "截止期限（天）",
    "start_date": "租期开始",
    "start_date_hint": "租期的第一天（年-月-日），从今天到一年后；默认今天。"
    "空闲数量从这一天起计算，报价也从这一天开始。",
    "budget": "每月预算（¥）",
    "total_budget": "任务预算（¥）",
    "total_budget_hint": "整个任务最多花费多少；填写后以它为准（更贵但更快完成的月份可能总价更低）。",
    "other_term_total": "{term}租期：{total}（{billed}）",
    "term_name_monthly": "月付",
    "term_name_annual": "年付",
    "term": "租期",
    "term_monthly": "月付",
    "term_annual": "年付（有折扣）",
    "regions": "地域",
    "gpu_types": "GPU 型号",
    "any_hint": "不勾选表示不限。",
    "objective": "排序依据",
    "objective_balanced": "均衡（费用与时间）",
    "objective_cheapest": "最便宜",
    "objective_fastest": "最快",
    "submit": "查看配置",
    "optional": "可选",
    "errors_title": "请修改下面标出的字段。",
    "results_title": "推荐配置",
    "results_for": "{model} · {task} · {params} 参数",
    "edit": "修改输入",
    "no_options": "没有满足约束条件的配置。",
    "option": "方案 {rank}",
    "gpus_nodes": "{gpus} × {gpu}",
    "cards": "{n} 张卡",
    "cards_one": "{n} 张卡",
    "servers": "{n} 台服务器",
    "servers_one": "{n} 台服务器",
    "monthly": "每月",
    "annual": "每年（年付）",
    "job_total": "整个作业",
    "job_months": "计费 {months} 个月",
    "job_months_one": "计费 {months} 个月",
    "list_price": "标价 {price}",
    "time_to_finish": "完成时间",
    "time_range": "{fast}（调优框架）至 {slow}（常用框架）",
    "gpu_hours_range": "{low}–{high} GPU 小时，有效率 {goodput}",
    "no_tokens": "请填写训练 token 数",
    "throughput": "吞吐量",
    "tokens_per_s": "每秒 {n} token",
    "mfu": "MFU {n}",
    "plan": "并行方案",
    "why": "为什么这样切分",
    "warnings": "注意事项",
    "option_assumptions": "速度所依据的假设",
    "memory": "每卡显存",
    "memory_of": "{total} / {capacity} GiB",
    "memory_fits": "放得下",
    "memory_no_fit": "放不下",
    "mem_weights": "权重",
    "mem_gradients": "梯度",
    "mem_optimizer": "优化器状态",
    "mem_activations": "激活值",
    "mem_kv_cache": "KV 缓存",
    "mem_other": "其他",
    "mem_capacity": "容量",
    "mem_limit": "留出余量后的上限",
    "gib": "{n} GiB",
    "region": "地域",
    "availability": "库存",
    "availability_not tracked": "未跟踪；报价时确认",
    "availability_available": "{region} 自 {start} 起空闲 {free} 个",
    "availability_later": "{region} 整个租期内空闲 {free} 个；所需数量自 {start} 起空闲",
    "availability_unavailable": "{region} 空闲 {free} 个：该地域总数不足所需数量",
    "capacity_title": "容量",
    "capacity_intro": "按 SKU 和地域逐月显示：已接受报价、已出具（仍有效）报价和维护在当月任一天占用的最多数量，"
    "以及当月每天都空闲的数量。",
    "capacity_other_lang": "English",
    "capacity_accepted": "已接受报价",
    "capacity_issued": "已出具报价",
    "capacity_maintenance": "维护",
    "capacity_free": "空闲",
    "capacity_month": "月份",
    "capacity_total_node": "共 {total} 台服务器",
    "capacity_total_card": "共 {total} 张卡",
    "capacity_none": "尚未跟踪任何 SKU 的数量：请在 SKU 页面（库存）设置现有数量。",
    "capacity_bar": "已接受 {accepted}，已出具 {issued}，维护 {maintenance}，空闲 {free}",
    "capacity_bar_overbooked": "已接受 {accepted}，已出具 {issued}，维护 {maintenance}，空闲 {free}，"
    "超售 {overbooked}（占用超出现有数量）",
    "capacity_overbooked": "超售",
    "indicative": "参考价：取自公开价格区间，最终价格以协商为准。",
    "plus_fabric": "+ 组网费用面议",
    "fabric_consultation_note": "服务器之间经网络附加项互联，其价格面议，未计入各项合计。",
    "download_launch": "下载启动配置（JSON）",
    "request_quote": "申请报价",
    "chart_title": "费用与时间",
    "chart_desc": "每个点代表一种配置：整个作业的费用（对数坐标）与完成小时数（对数坐标）。"
    "连线为帕累托前沿：没有其他配置既更便宜又更快。",
    "chart_x": "完成小时数",
    "chart_y": "费用",
    "chart_no_time": "填写训练 token 数即可比较完成时间。",
    "pareto": "帕累托前沿",
    "pareto_item": "{sku}，{gpus} 张 GPU：{cost}，{time}",
    "pareto_item_one": "{sku}，{gpus} 张 GPU：{cost}，{time}",
    "near_misses": "差一点满足的配置",
    "near_misses_intro": "略超出约束条件的配置。",
    "rejected": "已排除",
    "rejected_intro": "无法运行该作业的 SKU 及原因。",
    "assumptions": "假设",
    "assumptions_intro": "所有数字都基于以下假设；API 的每个响应都会列出它们。",
    "assumption_bytes": "显存按架构逐卡计算字节数（权重、梯度、优化器状态、激活值、缓冲区），以 GiB（2^30 字节）显示。",
    "assumption_efficiency": "速度按各 GPU 在所选精度下的稠密峰值乘以根据公开训练记录校准的效率估算；"
    "通信采用实测总线带宽。",
    "assumption_overheads": "开销：容量不含 CUDA 上下文，分配器碎片和通信缓冲计入“其他”。",
    "assumption_details": "估算器给出的说明",
    "uncertainty": "不确定性：显存通常与实测相差 10% 以内；完成时间约 ±30%（算子、数据加载和故障各不相同）。"
    "价格为目录当前标价。",
    "billing_note": "按所选租期的整月计费（每月按 30 天计）；未填写 token 数时，显示每月价格。",
    "script_title": "脚本化",
    "script_intro": "同一请求的 JSON 请求体（POST /recommend）和 curl 命令。",
    "json_body": "POST /recommend 请求体",
    "curl": "curl 命令",
    "copy": "复制",
    "copied": "已复制",
    "csv": "下载方案 CSV",
    "search_stats": "共搜索 {n} 种配置。",
    "quote_title": "申请报价",
    "quote_intro": "我们将按当前目录为方案 {rank} 定价，并打开可打印的报价单。",
    "customer_name": "姓名",
    "company": "公司",
    "email": "电子邮箱",
    "months": "月数",
    "months_hint_annual": "年付租期按整年计（12、24……）。",
    "months_hint_monthly": "月付租期按整月计（1、2、3……）。",
    "issue_quote": "生成报价单",
    "addons": "附加项",
    "addons_hint": "随该服务器提供的选项；价格面议的附加项会列在报价单上，但不计入合计。",
    "back_to_results": "返回结果",
    "option_missing": "该方案已不在结果中，请重新选择。",
    "option_range": "须为 1 到 {n} 之间的整数，即方案在结果中的名次",
    "option_none": "结果中没有可选的方案",
    "not_found_title": "页面不存在",
    "not_found_text": "这个地址没有页面。",
    "server_error_title": "出错了",
    "server_error_text": "发生了意外错误，已记录。请重试。",
    "error_title": "错误 {status}",
    "home": "重新开始估算",
    "request_id": "请求编号：{id}",
    "err_number": "请输入数字。",
    "err_max_digits": "总位数不能超过 {n} 位。",
    "err_max_places": "小数位数不能超过 {n} 位。",
    "err_decimal_string": "请用数字和小数点填写金额，例如 {example}，不要用科学计数法。",
    "err_whole_digits": "整数部分不能超过 {n} 位。",
    "err_integer": "请输入整数。",
    "err_required": "此字段为必填项。",
    "err_hidden_characters": "不能包含控制字符或双向文本格式字符。",
    "err_json": "不是有效的 JSON：{detail}",
    "err_json_object": "请粘贴一个 JSON 对象（{ … }）。",
    "err_choice": "请从列出的选项中选择。",
    "err_gt": "必须大于 {limit}。",
    "err_ge": "不能小于 {limit}。",
    "err_lt": "必须小于 {limit}。",
    "err_le": "不能大于 {limit}。",
    "err_max_length": "不能超过 {n} 个字符。",
    "err_min_length": "至少需要 {n} 个字符。",
    "err_email": "请输入有效的电子邮箱地址。",
    "err_billions": "请输入数字，例如 2 或 0.1（十亿），或 100M、1亿。",
    "err_item": "{field}：{message}",
    "preset_no_match": "没有与“{query}”匹配的模型：请修改或清空筛选条件。",
    "chart_no_options": "没有满足约束条件的配置，因此无从绘图；下方差一点满足的配置说明了需要什么条件。",
    "chart_front_note": "付更多钱只能节省不到 {saving} 时，前沿就此截止（省略了 {n} 个更快但更贵的配置）。",
    "params_model": "{n}B 参数的模型",
    "minutes": "{m} 分钟",
    "hours": "{n} 小时",
    "footer": "数字均为依据所引公式的估算；请参阅每个结果页上的假设。",
}

REGIONS: dict[str, dict[str, str]] = messages.REGION_WORDS

EN.update(SERVE_EN)
ZH.update(SERVE_ZH)
EN.update(ADMIN_EN)
ZH.update(ADMIN_ZH)
for _lang, _table in (("en", EN), ("zh", ZH)):
    _table.update({f"task_{task}": label for task, label in messages.TASK_LABELS["label"][_lang].items()})
CATALOGS = {"en": EN, "zh": ZH}


def negotiate(request: Request, posted: object = None) -> str:
    """A form's posted `lang` wins (`posted`, a page's language kept across its form); then `?lang=`; then the first
    supported language in Accept-Language (by q); else English."""
    if isinstance(posted, str) and posted in LANGS:
        return posted
    asked = request.query_params.get("lang")
    if asked in LANGS:
        return asked
    choices: list[tuple[float, int, str]] = []
    for index, part in enumerate(request.headers.get("accept-language", "").split(",")):
        tag, _, params = part.strip().partition(";")
        quality = 1.0
        if params.strip().startswith("q="):
            try:
                quality = float(params.strip()[2:])
            except ValueError:
                quality = 0.0
        primary = tag.strip().lower().split("-")[0]
        if primary in LANGS and quality > 0:
            choices.append((-quality, index, primary))
    return min(choices)[2] if choices else "en"


class Translator:
    """`t("key", n=3)` → the language's string with its placeholders filled; plus formatters."""

    def __init__(self, lang: str) -> None:
        self.lang = lang if lang in LANGS else "en"
        self.locale = LOCALES[self.lang]
        self.html_lang = HTML_LANG[self.lang]
        self.messages = CATALOGS[self.lang]

    def __call__(self, key: str, **values: Any) -> str:
        text = self.messages.get(key, EN.get(key, key))
        return text.format(**values) if values else text

    def plural(self, key: str, count: int, **values: Any) -> str:
        """`key_one` for a count of 1 where the language has it (Chinese does not inflect)."""
        return self(f"{key}_one" if count == 1 and f"{key}_one" in self.messages else key, **values)

    def has(self, key: str) -> bool:
        return key in self.messages

    def warning(self, code: str, params: Mapping[str, Any]) -> str:
        """A warning in the page's language from its code and figures (every code is worded: tests/test_messages.py)."""
        return messages.warning(code, params, self.lang)

    def note(self, code: str, params: Mapping[str, Any]) -> str:
        """What an estimate assumes, in the page's language (app/text/note_words.py)."""
        return messages.note(code, params, self.lang)

    def rejection(self, code: str, params: Mapping[str, Any], fallback: str) -> str:
        """Why a SKU yields no option, in the page's language; the API's English for a code the catalog
        does not word (the serving search's `kernels` and `capacity`, which carry no parameters)."""
        try:
            return messages.rejection(code, params, self.lang, self.money)
        except (KeyError, IndexError):
            return fallback

    def assumption(self, code: str, params: Mapping[str, Any]) -> str:
        """What an option assumes beyond its plan (its fabric, its distance from the calibration runs), in the page's
        language (app/text/messages.py ASSUMPTIONS)."""
        return messages.assumption(code, params, self.lang, self.money)

    def misses(self, reasons: list[tuple[str, Mapping[str, Any]]]) -> str | None:
        return messages.misses(reasons, self.lang, self.money)

    def launch(self, text: Mapping[str, Any]) -> str:
        """A serving launch's layout or note ({"code", "params"}), in the page's language."""
        return messages.launch(str(text["code"]), text["params"], self.lang)

    def region(self, slug: str) -> str:
        return REGIONS[self.lang].get(slug, slug)

    def number(self, value: float | int | Decimal, digits: int = 0) -> str:
        pattern = "#,##0" + ("." + "#" * digits if digits else "")
        return format_decimal(value, format=pattern, locale=self.locale)

    def money(self, amount: str | Decimal | None, currency: str) -> str:
        """'¥2,800.00': the yuan sign for CNY in both languages (CLDR's English 'CN¥' is unfamiliar)."""
        if amount is None:
            return "—"
        places = get_currency_precision(currency)
        pattern = "#,##0" + ("." + "0" * places if places else "")
        symbol = "¥" if currency == "CNY" else get_currency_symbol(currency, locale=self.locale)
        return symbol + format_decimal(Decimal(str(amount)), format=pattern, locale=self.locale)

    def money_short(self, amount: float, currency: str) -> str:
        """Axis labels: ¥30k / ¥1.6M in English, ¥3万 / ¥160万 in Chinese."""
        symbol = "¥" if currency == "CNY" else get_currency_symbol(currency, locale=self.locale)
        if self.lang == "zh" and amount >= 10_000:
            return f"{symbol}{self.number(amount / 10_000, 1)}万"
        if amount >= 1_000_000:
            return f"{symbol}{self.number(amount / 1_000_000, 1)}M"
        if amount >= 1_000:
            return f"{symbol}{self.number(amount / 1_000, 1)}k"
        return f"{symbol}{self.number(amount)}"

    def duration(self, hours: float | None) -> str:
        """Minutes under an hour, hours and minutes under two days, then days."""
        if hours is None or not math.isfinite(hours):
            return self("no_tokens")
        return words.duration(hours, self.lang)

    def axis_hours(self, hours: float) -> str:
        """A tick on the time axis: minutes below an hour, else whole hours."""
        if hours < 1:
            return self("minutes", m=self.number(hours * 60))
        return self("hours", n=self.number(hours, 1))

    def gib(self, value: float) -> str:
        return self("gib", n=self.number(value, 1))

    def percent(self, fraction: float | None) -> str:
        return "—" if fraction is None else f"{self.number(fraction * 100, 0)}%"
