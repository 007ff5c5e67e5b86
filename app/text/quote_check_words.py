"""Why POST /quotes refuses a request, in English and Chinese: the text of each code that the quote checks
(app/quotes/plan_check.py, app/quotes/service.py) and the capacity check emit. Read as messages.QUOTE_CHECKS."""

from __future__ import annotations

# Why POST /quotes refuses a quantity, months or add-ons (app/quotes/plan_check.py for the plan it carries,
# app/quotes/service.py for what the SKU rents): the API's `errors[].type` is the code and `errors[].params` its
# figures. Quantities are whole servers (or one of a card SKU's card counts): never a fraction of a server, and
# several only where a fabric joins them. Months bill 30 days each (app/planner/offers.py DAYS_PER_BILLED_MONTH)
# and must carry the hours the plan takes on the quantity quoted; an annual term's are whole years. A plan that
# joins servers rents the add-on that provides their fabric, where the catalog sells the fabric as one.
QUOTE_CHECKS: dict[str, dict[str, str]] = {
    "en": {
        "quantity_servers": "quantity {quantity} rents {rented} GPUs ({quantity} × {sku}, {gpus_per_node} GPUs a "
        "server) but the plan runs on dp × tp × pp × cp = {gpus} GPUs; quote quantity {servers}",
        "quantity_pools": "quantity {quantity} rents {rented} GPUs ({quantity} × {sku}, {gpus_per_node} GPUs a "
        "server) but the disaggregated plan's pools run on {prefill_gpus} prefill and {decode_gpus} decode GPUs, each "
        "pool on servers of its own: {servers} servers; quote quantity {servers}",
        "quantity_cards": "quantity {quantity} rents {rented} cards of {sku} but the plan runs on dp × tp × pp × cp "
        "= {gpus} GPUs; quote quantity {gpus}",
        "quantity_elsewhere": "quantity {quantity} rents {rented} GPUs of {sku} but the plan runs on dp × tp × pp × "
        "cp = {gpus} GPUs, which {sku} cannot rent exactly (the fewest that carry the plan: quantity {fits_quantity}, "
        "{fits_gpus} GPUs, {idle} of them idle); quote {alt_sku} with quantity {alt_quantity}, which rents {gpus} "
        "GPUs, or re-plan for {fits_gpus} GPUs",
        "quantity_replan": "quantity {quantity} rents {rented} GPUs of {sku} but the plan runs on dp × tp × pp × cp "
        "= {gpus} GPUs, which {sku} cannot rent exactly and no other SKU of its GPU rents either; quantity "
        "{fits_quantity} ({fits_gpus} GPUs) carries the plan with {idle} GPUs idle: re-plan for {fits_gpus} GPUs",
        "quantity_unrentable": "quantity {quantity} rents {rented} GPUs of {sku} but the plan runs on dp × tp × pp × "
        "cp = {gpus} GPUs, more than {sku} rents ({most_gpus} at most) and an amount no SKU of its GPU rents exactly",
        "quantity_beyond": "quantity {quantity} rents {rented} GPUs of {sku} but the plan runs on dp × tp × pp × cp "
        "= {gpus} GPUs, more than {sku} rents ({most_gpus} at most); quote {alt_sku} with quantity {alt_quantity}, "
        "which rents {gpus} GPUs",
        "months_short": "months {months} bills {billed_hours} h ({months} × 30 days) but the plan takes {hours:.1f} h "
        "on quantity {quantity} of {sku}; quote months {fewest_months}, the fewest that carry it",
        "months_beyond": "months {months} bills {billed_hours} h ({months} × 30 days) but the plan takes {hours:.1f} h "
        "on quantity {quantity} of {sku}, {fewest_months} months: more than a quote rents ({max_months} months at "
        "most); re-plan on more GPUs",
        "months_annual": "an annual term takes whole years (12, 24, …), got {months}; quote months {quote_months}",
        "quantity_card_counts": "{sku} is rented by the card within one server: {card_counts} cards, not {quantity}; "
        "for more, quote a whole server",
        "quantity_one_server": "{sku} is rented one server at a time ({gpus_per_node} GPUs) for one job: no "
        "inter-node fabric joins its servers, so the plan cannot run across quantity {quantity}; quote quantity 1 "
        "for the job, or a SKU with an InfiniBand or RoCE fabric for more GPUs",
        "fabric_addon_missing": "quantity {quantity} of {sku}: the plan joins its {quantity} servers over the "
        "{fabric} fabric, which the add-on {addon} ({addon_name}) provides, and addons does not rent it; add {addon} "
        "to addons for the {quantity} servers, or re-plan on one server",
        "capacity_taken": "{units_words} of {sku} {units_are} not free in {region} from {start_date}: "
        "{free_words} free over the whole rental; all {units_words} from {next_free_date}",
        "capacity_taken_never": "{units_words} of {sku} {units_are} not free in {region} from {start_date}: "
        "{free_words} free over the whole rental, and the region does not have {units_words}",
        "capacity_taken_beyond": "{units_words} of {sku} {units_are} not free in {region} from {start_date}: "
        "{free_words} free over the whole rental, and not free for the whole rental from any start up to "
        "{last_start_date} "
        "(quotes start at most a year ahead)",
        "accept_needs_sales": "quote {quote} holds no units: accepting it reserves {units_words} of {sku} in "
        "{region}, which our sales team confirms; please ask sales to accept it (an API key with quotes:write, "
        "or an admin)",
        # accepting a quote that is no longer issued (app/quotes/service.py accept_quote)
        "accept_expired": "quote {quote} expired on {expired_on} and can no longer be accepted; ask for a new quote",
        "accept_cancelled": "quote {quote} was cancelled and can no longer be accepted",
        # an admin cancelling a quote that is no longer issued (app/quotes/service.py cancel_quote)
        "cancel_accepted": "quote {quote} is accepted; only an issued quote can be cancelled",
        "cancel_expired": "quote {quote} is expired; only an issued quote can be cancelled",
        # what the SKU rents and the request names (app/quotes/service.py): the SKU, its price, quantity, add-ons,
        # region; and GET /quotes's filters
        "sku_unknown": "SKU {sku_id!r} is not in the catalog; active SKUs: {active}",
        "sku_retired": "SKU {sku_id!r} is retired and can no longer be quoted; active SKUs: {active}",
        "sku_unpriced": "{sku} has no price in force; it is quoted on consultation",
        "quantity_max": "at most {max_nodes} servers per quote; larger clusters are quoted on consultation",
        "addons_repeated": "each add-on may be listed once",
        "addons_unknown": "{unknown} not offered with {sku}; allowed: {allowed}",
        "addons_none_offered": "{unknown} not offered with {sku}; allowed: none",
        "region_not_offered": "{sku} is offered in {regions}, not {asked!r}",
        "status_unknown": "{status!r} is not a quote status; use one of {statuses}",
        "page_bounds": "limit must be 1–500 and offset ≥ 0",
        # a disaggregated plan's pools and a training plan's batch (app/quotes/plan_check.py)
        "pools_cards": "disaggregated pools run on whole servers joined by a fabric; {sku} rents cards",
        "pool_tp_spans": "tp {tp} spans servers of {sku} ({gpus_per_node} GPUs a server): a replica runs within one",
        "pools_not_serving": "pools are a serving deployment's: set workload.task to serving",
        "pools_no_load": "disaggregated pools are checked against the traffic they carry: state "
        "workload.serving.requests_per_s (the offered load, as /recommend sized the pools for)",
        "batch_split": "{global_batch} sequences do not split over dp {dp} × micro_batch {micro_batch} = {step} per "
        "accumulation step; a launch needs a multiple of {step}: {below} or {above}",
        # a serving plan below its own traffic (app/quotes/plan_check.py `_check_serving_slo`): `needed` replicas of
        # the same shape carry it on `quantity`; `_replan`: no count of this shape does (or a concurrency per replica)
        "slo_not_met": "the plan's {replicas} replica(s) miss {slo} at the peak of {peak_rps:,.3g} requests/s: the "
        "{percentile} TTFT is {ttft} and TPOT {tpot}; {needed} replicas of this shape meet it: "
        "quote plan.dp {needed} on quantity {quantity}",
        "slo_not_met_replan": "the plan's {replicas} replica(s) miss {slo} at the peak of {peak_rps:,.3g} requests/s: "
        "the {percentile} TTFT is {ttft} and TPOT {tpot}, and no replica count of this shape "
        "meets it: re-plan with /recommend, or relax the targets",
        "slo_not_met_saturated": "the plan's {replicas} replica(s) cannot keep up with the peak of {peak_rps:,.3g} "
        "requests/s (utilization {utilization:.2f}: the queue grows without bound); {needed} replicas of this shape "
        "carry it: quote plan.dp {needed} on quantity {quantity}",
        "slo_not_met_saturated_replan": "the plan's {replicas} replica(s) cannot keep up with the peak of "
        "{peak_rps:,.3g} requests/s (utilization {utilization:.2f}: the queue grows without bound), and no replica "
        "count of this shape carries it: re-plan with /recommend, or lower the traffic",
        # a disaggregated plan's pool below the traffic (app/quotes/pool_load.py): `needed` replicas of its TP carry it
        "slo_not_met_pool": "the {pool} pool's {replicas} replica(s) of TP {tp} miss {slo} at the peak of "
        "{peak_rps:,.3g} requests/s (peak utilization {utilization:.2f}; from 1 the queue grows without bound); "
        "{needed} replicas of TP {tp} carry it: quote plan.pools.{pool}.replicas {needed} (gpus {gpus}) on quantity "
        "{quantity}",
        "slo_not_met_pool_replan": "the {pool} pool's {replicas} replica(s) of TP {tp} miss {slo} at the peak of "
        "{peak_rps:,.3g} requests/s (peak utilization {utilization:.2f}), and no replica count of TP {tp} meets it: "
        "re-plan with /recommend, or relax the targets",
        # a plan the SKU cannot run (app/quotes/plan_check.py `_check_fits`): its memory, its host RAM (`_loading`: the
        # model's load sets the peak, else an offload), no stack; the estimator's own refusal words `reason`
        "plan_gpu_memory": "does not fit {sku}: Needs {needed_gib:.1f} GiB per GPU; the card has {capacity_gib:.1f} "
        "GiB usable, {limit_gib:.1f} GiB after the {headroom:.0%} headroom.",
        "plan_host_ram": "does not fit {sku}: Offload needs {offload_gib:,.0f} GiB of host RAM per node; the node "
        "has {host_ram_gib:,.0f} GiB, {limit_gib:,.0f} GiB after {reserve_gib:,.0f} GiB kept for the OS, the "
        "training processes and their data loaders.",
        "plan_host_ram_loading": "does not fit {sku}: Loading the model needs {load_gib:,.0f} GiB of host RAM per "
        "node ({copies} rank(s) on the node each hold the whole {model_gib:,.0f} GiB model before ZeRO-3 shards "
        "it); the node has {host_ram_gib:,.0f} GiB, {limit_gib:,.0f} GiB after {reserve_gib:,.0f} GiB kept for the "
        "OS, the training processes and their data loaders.",
        "plan_host_ram_unknown": "cannot be checked on {sku}: Offload needs {offload_gib:,.0f} GiB of host RAM per "
        "node, and the node's host RAM is not known: give hardware.host_ram_gib, or a server whose host RAM the "
        "catalog lists.",
        "plan_host_ram_unknown_loading": "cannot be checked on {sku}: Loading the model needs {load_gib:,.0f} GiB "
        "of host RAM per node ({copies} rank(s) on the node each hold the whole {model_gib:,.0f} GiB model before "
        "ZeRO-3 shards it), and the node's host RAM is not known: give hardware.host_ram_gib, or a server whose "
        "host RAM the catalog lists.",
        "plan_no_stack": "cannot be quoted on {sku}: No training stack runs {task} of this model as {shape}, "
        "offload {offload}, recompute {recompute}, optimizer {optimizer} (docs/stacks.md).",
        "plan_no_stack_levers": "cannot be quoted on {sku}: No training stack runs the memory lever(s) {levers} for "
        "{task} of this model as {shape}, offload {offload}, recompute {recompute}, optimizer {optimizer} "
        "(docs/stacks.md); without {levers} a stack runs the plan.",
        "plan_not_fit": "does not fit {sku}: {reason}",
        "plan_refused": "{reason}",
        # a workload quoted without the plan it runs (app/quotes/plan_check.py `check_quote`)
        "plan_required": "a quote for a workload states the plan it runs: post the `quote` body of a /recommend option "
        "(plan with dp/tp/pp/cp, or pools), or drop the workload to quote the hardware alone",
        "slo_not_met_concurrency_replan": "at {concurrency:,} sequences per replica the TTFT is {ttft} and "
        "TPOT {tpot}, missing {slo}: re-plan with /recommend, or relax the targets",
    },
    "zh": {
        "quantity_servers": "数量 {quantity} 租用 {rented} 张 GPU（{quantity} × {sku}，"
        "每台服务器 {gpus_per_node} 张），但方案运行在 dp × tp × pp × cp = {gpus} 张 GPU 上；请报价数量 {servers}",
        "quantity_pools": "数量 {quantity} 租用 {rented} 张 GPU（{quantity} × {sku}，每台服务器 {gpus_per_node} 张），"
        "但分离式方案的 prefill 池用 {prefill_gpus} 张 GPU、decode 池用 {decode_gpus} 张 GPU，各池占用各自的服务器："
        "共 {servers} 台；请报价数量 {servers}",
        "quantity_cards": "数量 {quantity} 租用 {sku} 的 {rented} 张卡，但方案运行在 dp × tp × pp × cp = {gpus} 张 "
        "GPU 上；请报价数量 {gpus}",
        "quantity_elsewhere": "数量 {quantity} 租用 {sku} 的 {rented} 张 GPU，但方案运行在 dp × tp × pp × cp = "
        "{gpus} 张 GPU 上，{sku} 无法正好租出这么多（能承载该方案的最少数量：{fits_quantity}，即 {fits_gpus} 张 GPU，"
        "其中 {idle} 张空闲）；请按数量 {alt_quantity} 报价 {alt_sku}（正好 {gpus} 张 GPU），或按 {fits_gpus} 张 GPU "
        "重新规划",
        "quantity_replan": "数量 {quantity} 租用 {sku} 的 {rented} 张 GPU，但方案运行在 dp × tp × pp × cp = "
        "{gpus} 张 GPU 上，{sku} 无法正好租出这么多，同型号 GPU 的其他 SKU 也不能；数量 {fits_quantity}"
        "（{fits_gpus} 张 GPU）可以承载该方案，但有 {idle} 张空闲：请按 {fits_gpus} 张 GPU 重新规划",
        "quantity_unrentable": "数量 {quantity} 租用 {sku} 的 {rented} 张 GPU，但方案运行在 dp × tp × pp × cp = "
        "{gpus} 张 GPU 上，超过 {sku} 可租的上限（{most_gpus} 张），同型号 GPU 也没有 SKU 正好租出这么多",
        "quantity_beyond": "数量 {quantity} 租用 {sku} 的 {rented} 张 GPU，但方案运行在 dp × tp × pp × cp = "
        "{gpus} 张 GPU 上，超过 {sku} 可租的上限（{most_gpus} 张）；请按数量 {alt_quantity} 报价 {alt_sku}"
        "（正好 {gpus} 张 GPU）",
        "months_short": "月数 {months} 计费 {billed_hours} 小时（{months} × 30 天），但方案在 {sku} 数量 {quantity} 上"
        "需要 {hours:.1f} 小时；请报价月数 {fewest_months}（能覆盖该任务的最少月数）",
        "months_beyond": "月数 {months} 计费 {billed_hours} 小时（{months} × 30 天），但方案在 {sku} 数量 {quantity} 上"
        "需要 {hours:.1f} 小时，即 {fewest_months} 个月，超过报价可租的上限（{max_months} 个月）；"
        "请用更多 GPU 重新规划",
        "months_annual": "年付租期须为整年（12、24……个月），而不是 {months} 个月；请报价月数 {quote_months}",
        "quantity_card_counts": "{sku} 按卡租用，卡都在同一台服务器内：可租 {card_counts} 张卡，不能租 {quantity} 张；"
        "需要更多请报价整台服务器",
        "quantity_one_server": "{sku} 每次只租一台服务器（{gpus_per_node} 张 GPU）用于一个作业：没有节点间网络连接"
        "它的服务器，方案无法跨数量 {quantity} 台运行；请为该作业报价数量 1，或选择有 InfiniBand 或 RoCE 网络的 SKU "
        "以获得更多 GPU",
        "fabric_addon_missing": "{sku} 数量 {quantity}：方案通过 {fabric} 网络把 {quantity} 台服务器连成一体，"
        "该网络由附加项 {addon}（{addon_name}）提供，而 addons 没有租用它；请把 {addon} 加入 addons"
        "（用于这 {quantity} 台服务器），或按一台服务器重新规划",
        "capacity_taken": "{region}自 {start_date} 起没有 {units_words}{units_are}（{sku}）可用：整个租期内只有 "
        "{free_words}空闲；{units_words}自 {next_free_date} 起空闲",
        "capacity_taken_never": "{region}自 {start_date} 起没有 {units_words}{units_are}（{sku}）可用：整个租期内只有 "
        "{free_words}空闲，且该地域总数不足 {units_words}",
        "capacity_taken_beyond": "{region}自 {start_date} 起没有 {units_words}{units_are}（{sku}）可用：整个租期内只有 "
        "{free_words}空闲，且在 {last_start_date} 之前开始的租期都无法整期空闲（报价最多提前一年开始）",
        "accept_needs_sales": "报价 {quote} 未预留任何设备：接受它将在{region}预留 {units_words}（{sku}），"
        "须由我们的销售团队确认；请联系销售接受此报价（持有 quotes:write 权限的 API 密钥，或管理员）",
        "accept_expired": "报价 {quote} 已于 {expired_on} 过期，无法再接受；请索取新的报价",
        "accept_cancelled": "报价 {quote} 已取消，无法再接受",
        "cancel_accepted": "报价 {quote} 已被接受，无法取消；只有已出具的报价可以取消",
        "cancel_expired": "报价 {quote} 已过期，无法取消；只有已出具的报价可以取消",
        "sku_unknown": "SKU {sku_id!r} 不在目录中；在售 SKU：{active}",
        "sku_retired": "SKU {sku_id!r} 已下架，不能再报价；在售 SKU：{active}",
        "sku_unpriced": "{sku} 目前没有生效的价格，需协商报价",
        "quantity_max": "每份报价最多 {max_nodes} 台服务器；更大的集群需协商报价",
        "addons_repeated": "每个附加项只能列出一次",
        "addons_unknown": "{sku} 不提供 {unknown}；可选：{allowed}",
        "addons_none_offered": "{sku} 不提供 {unknown}，也没有其他可选附加项",
        "region_not_offered": "{sku} 的供应地区为 {regions}，不包括 {asked!r}",
        "status_unknown": "{status!r} 不是报价状态；可用：{statuses}",
        "page_bounds": "limit 须在 1–500 之间，offset 不得小于 0",
        "pools_cards": "预填充与解码分离的资源池须运行在由网络连成一体的整台服务器上；{sku} 按卡租用",
        "pool_tp_spans": "tp {tp} 跨越了 {sku} 的多台服务器（每台 {gpus_per_node} 张 GPU）："
        "一个副本只能在一台服务器内运行",
        "pools_not_serving": "资源池属于在线推理部署：请把 workload.task 设为 serving",
        "pools_no_load": "分离式资源池要按其承载的流量核对：请给出 workload.serving.requests_per_s（即 /recommend "
        "据以规划资源池的给定负载）",
        "batch_split": "{global_batch} 条序列无法按 dp {dp} × micro_batch {micro_batch} = 每个累积步 {step} 条切分；"
        "启动需要 {step} 的整数倍：{below} 或 {above}",
        "slo_not_met": "方案的 {replicas} 个副本在每秒 {peak_rps:,.3g} 个请求的峰值下达不到 {slo}："
        "{percentile} TTFT 为 {ttft}、TPOT 为 {tpot}；同样形态的 {needed} 个副本可以达到："
        "请按 plan.dp {needed}、数量 {quantity} 报价",
        "slo_not_met_replan": "方案的 {replicas} 个副本在每秒 {peak_rps:,.3g} 个请求的峰值下达不到 {slo}：{percentile} "
        "TTFT 为 {ttft}、TPOT 为 {tpot}，且同样形态的任何副本数都达不到：请用 /recommend 重新"
        "规划，或放宽目标",
        "slo_not_met_saturated": "方案的 {replicas} 个副本处理不过每秒 {peak_rps:,.3g} 个请求的峰值（利用率 "
        "{utilization:.2f}：排队无限增长）；同样形态的 {needed} 个副本可以承载：请按 plan.dp {needed}、数量 {quantity} "
        "报价",
        "slo_not_met_saturated_replan": "方案的 {replicas} 个副本处理不过每秒 {peak_rps:,.3g} 个请求的峰值（利用率 "
        "{utilization:.2f}：排队无限增长），且同样形态的任何副本数都承载不了：请用 /recommend 重新规划，或降低流量",
        "slo_not_met_pool": "{pool} 池的 {replicas} 个 TP {tp} 副本在每秒 {peak_rps:,.3g} 个请求的峰值下达不到 {slo}"
        "（峰值利用率 {utilization:.2f}；达到 1 起排队无限增长）；{needed} 个 TP {tp} 副本可以承载：请按 "
        "plan.pools.{pool}.replicas {needed}（gpus {gpus}）、数量 {quantity} 报价",
        "slo_not_met_pool_replan": "{pool} 池的 {replicas} 个 TP {tp} 副本在每秒 {peak_rps:,.3g} 个请求的峰值下达不到 "
        "{slo}（峰值利用率 {utilization:.2f}），且 TP {tp} 的任何副本数都达不到：请用 /recommend 重新规划，或放宽目标",
        "plan_gpu_memory": "{sku} 放不下：每块 GPU 需要 {needed_gib:.1f} GiB；该卡可用 {capacity_gib:.1f} GiB，留出 "
        "{headroom:.0%} 余量后为 {limit_gib:.1f} GiB。",
        "plan_host_ram": "{sku} 放不下：卸载每个节点需要 {offload_gib:,.0f} GiB 主机内存；节点有 {host_ram_gib:,.0f}"
        " GiB，为操作系统、训练进程及其数据加载器保留 {reserve_gib:,.0f} GiB 后为 {limit_gib:,.0f} GiB。",
        "plan_host_ram_loading": "{sku} 放不下：加载模型每个节点需要 {load_gib:,.0f} GiB 主机内存（节点上 {copies} "
        "个进程在 ZeRO-3 切分前各持有完整的 {model_gib:,.0f} GiB 模型）；节点有 {host_ram_gib:,.0f} GiB，为操作系统"
        "、训练进程及其数据加载器保留 {reserve_gib:,.0f} GiB 后为 {limit_gib:,.0f} GiB。",
        "plan_host_ram_unknown": "无法在 {sku} 上核对：卸载每个节点需要 {offload_gib:,.0f} GiB 主机内存，而节点的主"
        "机内存未知：请给出 hardware.host_ram_gib，或选择目录列出了主机内存的服务器。",
        "plan_host_ram_unknown_loading": "无法在 {sku} 上核对：加载模型每个节点需要 {load_gib:,.0f} GiB 主机内存（节"
        "点上 {copies} 个进程在 ZeRO-3 切分前各持有完整的 {model_gib:,.0f} GiB 模型），而节点的主机内存未知：请给出 "
        "hardware.host_ram_gib，或选择目录列出了主机内存的服务器。",
        "plan_no_stack": "无法在 {sku} 上报价：没有训练框架能以 {shape}、卸载 {offload}、重计算 {recompute}、优化器 "
        "{optimizer} 运行此模型的 {task}（docs/stacks.md）。",
        "plan_no_stack_levers": "无法在 {sku} 上报价：以 {shape}、卸载 {offload}、重计算 {recompute}、"
        "优化器 {optimizer} 运行此模型的 {task} 时，没有训练框架支持内存选项 {levers}（docs/stacks.md）；"
        "去掉 {levers} 后即有框架可运行该方案。",
        "plan_not_fit": "{sku} 放不下：{reason}",
        "plan_refused": "{reason}",
        "plan_required": "为工作负载报价需要写明它运行的方案：请提交 /recommend 某个选项的 `quote` 请求体"
        "（含 dp/tp/pp/cp 或 pools 的 plan），或去掉 workload，只为硬件报价",
        "slo_not_met_concurrency_replan": "每个副本 {concurrency:,} 条序列时 TTFT 为 {ttft}、TPOT 为 "
        "{tpot}，达不到 {slo}：请用 /recommend 重新规划，或放宽目标",
    },
}
