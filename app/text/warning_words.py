"""Warnings by stable code, in English and Simplified Chinese: the one text of each (the API's `message`, the pages,
the PDF), rendered by app/text/messages.py `warning()`. Kept apart from app/text/messages.py, which holds every other
catalog of words, so that module stays within the module size; tests/test_messages.py checks both languages define the
same codes with the same fields.

Codes are emitted by app/estimator/memory/, performance.py, models.py and app/planner/ (explain.py, recommend.py,
misses.py, stacks.py, workload.py, serving_service.py), each with the figures its text names in `params` (`{slo}`:
the latency targets, as in MISSES). A key `code.variant` is the same code worded by its parameters
(app/text/messages.py `_warning_key`).
"""

from __future__ import annotations

WARNINGS: dict[str, dict[str, str]] = {
    "en": {
        "indicative_price": "Indicative price from the published range; final on consultation.",
        "fabric_priced_on_request": "{nodes} servers need the InfiniBand add-on, priced on consultation and not "
        "included in the cost.",
        "offload_over_pcie": "Offloading ({offload}) moves optimizer traffic over PCIe gen {pcie_gen} "
        "(~{pcie_gbs:.0f} GB/s achieved per GPU): expect the step to slow down by tens of percent.",
        "offload_slowdown": "Offload traffic over PCIe takes {share:.0%} of each step, making it {slowdown:.2f}× as "
        "long (the article measured 1.4-1.6× longer steps).",
        "offload_slowdown.activations": "Activation offload over PCIe takes {share:.0%} of each step beyond the "
        "compute it overlaps, making the step {slowdown:.2f}× as long: a smaller micro-batch, activation recompute or "
        "more GPU memory would cut it.",
        "host_ram_unknown": "Offload needs {offload_gib:,.0f} GiB of host RAM per server, and the server's host RAM "
        "is not known: give hardware.host_ram_gib, or choose a server whose host RAM the catalog lists.",
        "host_ram_exceeded": "Offload needs {offload_gib:,.0f} GiB of host RAM per server; the server has "
        "{host_ram_gib:,.0f} GiB, {host_ram_limit_gib:,.0f} GiB after the reserve for the OS, the training processes "
        "and their data loaders.",
        "host_load_unknown": "Loading the model needs {load_gib:,.0f} GiB of host RAM per server ({copies} × the "
        "whole {model_gib:,.0f} GiB model, held before ZeRO-3 shards it), and the server's host RAM is not known: "
        "give hardware.host_ram_gib, or choose a server whose host RAM the catalog lists.",
        "host_load_exceeded": "Loading the model needs {load_gib:,.0f} GiB of host RAM per server ({copies} × the "
        "whole {model_gib:,.0f} GiB model, held before ZeRO-3 shards it); the server has {host_ram_gib:,.0f} GiB, "
        "{host_ram_limit_gib:,.0f} GiB after the reserve for the OS, the training processes and their data loaders.",
        "memory_may_exceed": "The plan fits at its estimate of {total_gib:,.1f} GiB per GPU, but the high end of its "
        "memory range, {high_gib:,.1f} GiB, is above the {limit_gib:,.1f} GiB it may use: it may run out of memory; "
        "leave margin (activation checkpointing, a smaller micro-batch) or choose an option that fits at the high end.",
        "memory_may_exceed.levers": "The plan fits at its estimate of {total_gib:,.1f} GiB per GPU, but the high end "
        "of its memory range, {high_gib:,.1f} GiB, is above the {limit_gib:,.1f} GiB it may use: it may run out of "
        "memory; leave margin ({levers}) or choose an option that fits at the high end.",
        "memory_may_exceed.no_lever": "The plan fits at its estimate of {total_gib:,.1f} GiB per GPU, but the high "
        "end of its memory range, {high_gib:,.1f} GiB, is above the {limit_gib:,.1f} GiB it may use: it may run out "
        "of memory. Its micro-batch, activation recompute and loss leave no memory to give: choose an option that "
        "fits at the high end (more GPUs or a larger card).",
        "memory_pool_fills_card": "The plan fits at its estimate of {total_gib:,.1f} GiB per GPU, but the caching "
        "allocator's reserved pool (memory.as_measured_gib.reserved) reaches {reserved_gib:,.1f} GiB of the card's "
        "{capacity_gib:,.1f} GiB, above the {limit_gib:,.1f} GiB it may use: the run holds the card full, and a "
        "fragmented pool can fail a large request; leave margin or choose a plan whose pool fits.",
        "billing_within_range": "At the slow end of its time range ({slow_hours:,.0f} h) the job bills {slow_months} "
        "months instead of {months}: {slow_total} {currency} instead of {job_total}.",
        "term_longer_than_job": "The {term} term bills {months} months ({billed_hours:,.0f} h) for a job of "
        "{used_hours:,.1f} h: {share:.1%} of the billed time is used.",
        "term_longer_than_job.one_month": "The {term} term bills 1 month ({billed_hours:,.0f} h) for a job of "
        "{used_hours:,.1f} h: {share:.1%} of the billed time is used.",
        "over_monthly_budget": "Costs {monthly!m} a month, above the monthly budget of {budget!c}; the whole job, "
        "{job_total!m} (billed months: {months}), is within the job budget of {total_budget!c}.",
        "other_term_cheaper": "The {other_term} term costs this job less: {other_total!m} (billed months: "
        "{other_months}), against {job_total!m} (billed months: {months}) on the {term} term.",
        "host_ram_unconfirmed": "Needs {needed_gib:,.0f} GiB of host RAM per server ({host_gib:,.0f} GiB at the "
        "plan's host peak, plus the reserve for the OS, the training processes and their data loaders), and the "
        "catalog does not list this server's host RAM: confirm the server has it before the job starts.",
        "deadline_within_range": "The estimate of {days:,.1f} days meets the {deadline_days:g}-day deadline, but the "
        "slow end of its range, {slow_days:,.1f} days, does not: leave margin or choose a faster option.",
        "pipeline_bubble": "The pipeline bubble idles {bubble:.0%} of each step; more micro-batches or interleaved "
        "stages would shrink it.",
        "pipeline_few_microbatches": "{micro_batches} micro-batches for {pp} pipeline stages idle {bubble:.0%} of "
        "each step; use at least {wanted} (4 × pp ÷ virtual stages).",
        "global_batch_small": "A global batch of {global_batch:,} sequences over {gpus:,} GPUs gives each of the "
        "{dp:,} data-parallel ranks {steps} micro-batches of {micro_batch} per step for {pp} pipeline stages: MFU "
        "{mfu:.1%}. A global batch of {larger:,} ({larger_tokens_m:,.1f}M tokens, {wanted} micro-batches per rank) "
        "would reach {better:.1%} with the same plan; Llama 3 405B trained at up to 16M tokens per step (Dubey et al. "
        "2024 §3.4.1). A larger batch changes the optimisation: retune the learning rate.",
        "global_batch_small.one_stage": "A global batch of {global_batch:,} sequences over {gpus:,} GPUs gives each "
        "of the {dp:,} data-parallel ranks {steps} micro-batches of {micro_batch} per step for 1 pipeline stage: MFU "
        "{mfu:.1%}. A global batch of {larger:,} ({larger_tokens_m:,.1f}M tokens, {wanted} micro-batches per rank) "
        "would reach {better:.1%} with the same plan; Llama 3 405B trained at up to 16M tokens per step (Dubey et al. "
        "2024 §3.4.1). A larger batch changes the optimisation: retune the learning rate.",
        "global_batch_small.one_step": "A global batch of {global_batch:,} sequences over {gpus:,} GPUs gives each of "
        "the {dp:,} data-parallel ranks 1 micro-batch of {micro_batch} per step for {pp} pipeline stages: MFU "
        "{mfu:.1%}. A global batch of {larger:,} ({larger_tokens_m:,.1f}M tokens, {wanted} micro-batches per rank) "
        "would reach {better:.1%} with the same plan; Llama 3 405B trained at up to 16M tokens per step (Dubey et al. "
        "2024 §3.4.1). A larger batch changes the optimisation: retune the learning rate.",
        "global_batch_small.one_step_one_stage": "A global batch of {global_batch:,} sequences over {gpus:,} GPUs "
        "gives each of the {dp:,} data-parallel ranks 1 micro-batch of {micro_batch} per step for 1 pipeline stage: "
        "MFU {mfu:.1%}. A global batch of {larger:,} ({larger_tokens_m:,.1f}M tokens, {wanted} micro-batches per "
        "rank) would reach {better:.1%} with the same plan; Llama 3 405B trained at up to 16M tokens per step (Dubey "
        "et al. 2024 §3.4.1). A larger batch changes the optimisation: retune the learning rate.",
        "pp_uneven_layers": "The {layers} layers do not split evenly into {pp} pipeline stages; the largest stage "
        "({stage_layers} layers) sets memory and speed.",
        "tp_across_nodes": "Tensor parallel {tp} spans servers of {gpus_per_node} GPUs: every layer waits for the "
        "network. Keep it inside one server.",
        "kv_heads_replicated": "The {kv_heads} KV heads do not divide by tensor parallel {tp}: each rank keeps a copy "
        "of {kept_heads} of them, so K/V weights and cache are replicated.",
        "approximate_model": "The architecture was derived from a parameter count; memory is approximate.",
        "estimate_uncertain": "The architecture was derived from a parameter count: memory and speed are approximate.",
        "params_mismatch": "The stated parameter count ({stated:,.0f}) differs from the architecture's exact count "
        "({exact:,}) by {difference:+,.0f} ({relative:+.2%}); memory uses the exact count.",
        "ragged_batch": "The global batch is not a multiple of data parallel × micro-batch.",
        "global_batch_rounded": "The global batch {global_batch} is not a multiple of data parallel × micro-batch "
        "({step}): it was rounded to {rounded}, the nearest one that is.",
        "moe_experts_resident": "Every MoE expert is resident on each GPU (no expert parallel): memory follows the "
        "total parameters, compute the active ones.",
        "moe_low_concurrency_unvalidated": "{model} routes to {experts} small experts per layer: at {concurrency:.3g} "
        "sequence(s) in flight (at most {validated}) decode is not validated and this time per token is optimistic. "
        "Per-layer routing and grouped-GEMM kernels dominate there; published DeepSeek-V3/R1 FP8 measurements read "
        "23-33 ms per token at one sequence (SGLang, 16xH100: tenstorrent/tt-inference-server#356; 8 GPUs: "
        "sgl-project/sglang#2643) and 12.8 ms at 8 (SGLang v0.5.7, 8xH200: SemiAnalysisAI/InferenceX#870)",
        "quantised_checkpoint": "{repo} ships {scheme} weights; training is sized on 16-bit weights, so the launch "
        "needs a 16-bit copy: dequantise the checkpoint first (DeepSeek-V3: inference/fp8_cast_bf16.py in its "
        "repository) and load that copy.",
        "kv_cache_dominates": "The KV cache ({kv_cache_gib:.1f} GiB per GPU) is larger than the weights: batch and "
        "context length drive the memory.",
        "no_fit": "This plan does not fit in GPU memory, although ZeRO-3 over {dp} data-parallel GPUs would "
        "({zero3_gib:.1f} GiB per GPU).",
        "no_fit_zero3": "Does not fit in GPU memory even with ZeRO-3 over all {gpus} GPUs: {needed_gib:.1f} GiB per "
        "GPU needed, {limit_gib:.1f} GiB usable after the headroom.",
        "no_fit_zero3.activations": "{lead} Activations alone exceed the card: use full recompute, a smaller "
        "micro-batch, or tp/cp.",
        "no_fit_zero3.more_gpus": "{lead} About {fit_gpus:,} GPUs of this type would hold the sharded model states.",
        "no_fit_zero3.more_gpus_cards": "{lead} About {fit_gpus:,} GPUs "
        "of this type would hold the sharded model states; or a card with more memory: {cards}.",
        # Pipeline stages send s·h activations point to point per micro-batch; data parallelism all-reduces every
        # gradient per step (Narayanan et al. 2021, arXiv:2104.04473 §3.2: PP across servers, TP within a server)
        "ethernet_fabric": "Several servers over plain Ethernet (TCP): keep tensor parallelism inside a server; across "
        "servers, pipeline stages (a micro-batch's activations) bear it far better than data parallelism (every "
        "gradient each step).",
        "communication_bound": "Exposed communication takes longer than the compute it serves.",
        "scaling_rows_unfit": "One replica of this plan ({unit_gpus:,} GPU(s)) needs {needed_gib:,.1f} GiB per {gpu}, "
        "over the {limit_gib:,.1f} GiB it may use: {unfit:,} points of the table do not fit and show no throughput. "
        "The fewest GPUs on which the plan fits: {fit_gpus:,}; speed-up and efficiency count from there.",
        "scaling_superlinear": "Efficiency reaches {efficiency:.2f} at {gpus:,} GPUs ({link}) against "
        "{baseline_gpus:,}, above linear: each replica keeps its {micro_batches:,} micro-batch(es) a step, so the "
        "global batch grows with the GPUs, while ZeRO stage {zero_stage} shards the optimizer step over the "
        "data-parallel ranks, so each GPU's share of it shrinks as GPUs are added. A larger global_batch spreads the "
        "step over more micro-batches and brings the curve toward linear.",
        "scaling_none_fits": "One replica of this plan ({unit_gpus:,} GPU(s)) needs {needed_gib:,.1f} GiB per {gpu}, "
        "over the {limit_gib:,.1f} GiB it may use, and no point of the table fits (the leanest, {least_gpus:,} GPU(s), "
        "needs {least_gib:,.1f} GiB): none shows a throughput. Shard the model states (zero_stage 3), split the model "
        "(tp, pp), or choose a card with more memory; POST /estimate without a plan finds one that fits.",
        "precision_unsupported": "{gpu} lacks {precision}: it runs at {runs_as}, and speed is estimated so.",
        "no_stack": "No training stack gpu-sizer launches (DeepSpeed, FSDP/torchtitan, Megatron) runs {task} as "
        "{shape}, offload {offload}, recompute {recompute}, optimizer {optimizer}: these are the estimator's figures, "
        "not a launchable job.",
        "no_stack.levers": "No training stack gpu-sizer launches (DeepSpeed, FSDP/torchtitan, Megatron) runs the "
        "memory lever(s) {levers} for {task} as {shape}, offload {offload}, recompute {recompute}, optimizer "
        "{optimizer}: these are the estimator's figures, not a launchable job; without {levers} a stack runs the plan.",
        "fp8_not_launched": "No training stack offered here runs {task} in fp8: it is sized, priced and launched in "
        "{runs_as}.",
        "single_server_only": "{sku} has no InfiniBand or RoCE fabric joining its servers (only its network: "
        "{network}): the job cannot grow beyond one server.",
        "single_server_only.unlisted": "{sku} has no InfiniBand or RoCE fabric joining its servers (and the catalog "
        "lists no network for it): the job cannot grow beyond one server.",
        "starts_from_scratch": "Pretraining starts {model} from random weights: the launch does not load the released "
        "weights of {repo}. To go on training them on new text, ask for task continued_pretrain.",
        "no_kv_cache": "The weights and the engine's reserve leave GPU memory for {kv_cache_tokens:,} tokens of KV "
        "cache, less than one sequence of {context_len:,}: use more GPUs per replica, a smaller weight format or "
        "shorter requests.",
        "slo_missed": "At concurrency {concurrency:.1f} TTFT is {ttft} and TPOT {tpot}, missing "
        "{slo}: add replicas or GPUs per replica, or relax the targets.",
        "slo_missed_percentile": "At concurrency {concurrency:.1f} the {percentile} TTFT is about {ttft} and the "
        "{percentile} TPOT about {tpot} (a prompt at that percentile of the stated lengths meeting the queue's "
        "{percentile}; ttft_ms and tpot_ms are the steady state's), missing {slo}: add replicas or GPUs per replica, "
        "or relax the targets.",
        "slo_missed_peak": "At the peak load ({peak_rps:.3g} requests/s) the {percentile} TTFT is {ttft} "
        "and the {percentile} TPOT {tpot}, missing {slo}: add replicas or GPUs per replica, or relax the "
        "targets.",
        "slo_missed_saturated": "At the peak load ({peak_rps:.3g} requests/s) the replicas cannot keep up: the queue "
        "grows without bound ({percentile} TTFT {ttft} and growing), missing {slo}: add replicas or GPUs "
        "per replica, or relax the targets.",
        "prompts_over_limit": "About {share:.1%} of prompts (lengths through the stated input_tokens_p95), with their "
        "output, exceed the {limit:,} tokens one request may hold (max_model_len, or what one sequence's KV cache "
        "holds): the engine refuses them, and the latencies shown still count them. State a larger "
        "serving.max_request_tokens or use more GPUs per replica.",
        "concurrency_over_kv": "Concurrency {concurrency:,} exceeds the {max_concurrency:,} sequences one replica "
        "runs at these lengths (what its KV cache holds, or the engine's max_num_seqs): the others wait for a slot, "
        "adding about {wait_ms:,.0f} ms to each request's TTFT. {replicas:,} replicas of this shape, or more GPUs per "
        "replica for a larger KV cache, would run them all at once.",
    },
    "zh": {
        "indicative_price": "参考价，取自公开价格区间；最终价格以协商为准。",
        "fabric_priced_on_request": "{nodes} 台服务器需要 InfiniBand 附加项，其价格面议，未计入费用。",
        "offload_over_pcie": "卸载（{offload}）会让优化器数据经第 {pcie_gen} 代 PCIe 传输（每卡实际约 {pcie_gbs:.0f} "
        "GB/s）：每步可能慢数十个百分点。",
        "offload_slowdown": "经 PCIe 的卸载流量占每步时间的 {share:.0%}，每步时间变为 {slowdown:.2f} "
        "倍（文章测得每步时间为 1.4-1.6 倍）。",
        "offload_slowdown.activations": "激活值经 PCIe 卸载的时间在与计算重叠之外仍占每步的 {share:.0%}，每步时间变为 "
        "{slowdown:.2f} 倍：更小的微批、激活重计算或更大的显存可以减少它。",
        "host_ram_unknown": "卸载每台服务器需要 {offload_gib:,.0f} GiB 主机内存，但该服务器的主机内存未知：请给出 "
        "hardware.host_ram_gib，或选择目录列出主机内存的服务器。",
        "host_ram_exceeded": "卸载每台服务器需要 {offload_gib:,.0f} GiB 主机内存；服务器有 {host_ram_gib:,.0f} "
        "GiB，扣除操作系统、训练进程和数据加载的预留后只有 {host_ram_limit_gib:,.0f} GiB。",
        "host_load_unknown": "加载模型每台服务器需要 {load_gib:,.0f} GiB 主机内存（{copies} × 完整的 {model_gib:,.0f} "
        "GiB 模型，在 ZeRO-3 切分之前驻留），但该服务器的主机内存未知：请给出 "
        "hardware.host_ram_gib，或选择目录列出主机内存的服务器。",
        "host_load_exceeded": "加载模型每台服务器需要 {load_gib:,.0f} GiB 主机内存（{copies} × 完整的 "
        "{model_gib:,.0f} GiB 模型，在 ZeRO-3 切分之前驻留）；服务器有 {host_ram_gib:,.0f} "
        "GiB，扣除操作系统、训练进程和数据加载的预留后只有 {host_ram_limit_gib:,.0f} GiB。",
        "memory_may_exceed": "按估算每块 GPU {total_gib:,.1f} GiB，方案可以放下；但其显存区间的高端 {high_gib:,.1f} "
        "GiB 超过可用的 {limit_gib:,.1f} GiB：可能显存不足。请留出余量（激活重计算、更小的微批），"
        "或选择在区间高端也能放下的方案。",
        "memory_may_exceed.levers": "按估算每块 GPU {total_gib:,.1f} GiB，方案可以放下；但其显存区间的高端 "
        "{high_gib:,.1f} GiB 超过可用的 {limit_gib:,.1f} GiB：可能显存不足。请留出余量（{levers}），"
        "或选择在区间高端也能放下的方案。",
        "memory_may_exceed.no_lever": "按估算每块 GPU {total_gib:,.1f} GiB，方案可以放下；但其显存区间的高端 "
        "{high_gib:,.1f} GiB 超过可用的 {limit_gib:,.1f} GiB：可能显存不足。"
        "其微批、激活重计算和损失函数都已无法再省显存：请选择在区间高端也能放下的方案（更多 GPU 或更大显存的卡）。",
        "memory_pool_fills_card": "按估算每块 GPU {total_gib:,.1f} GiB，方案可以放下；但缓存分配器的预留显存池"
        "（memory.as_measured_gib.reserved）达到显卡 {capacity_gib:,.1f} GiB 中的 {reserved_gib:,.1f} GiB，超过可用的 "
        "{limit_gib:,.1f} GiB：运行时显卡将被占满，碎片化的显存池可能无法满足大块分配。请留出余量，"
        "或选择显存池也能放下的方案。",
        "billing_within_range": "按时间区间的慢端（{slow_hours:,.0f} 小时）计，任务需计费 {slow_months} 个月而非 "
        "{months} 个月：{slow_total} {currency}，而非 {job_total}。",
        "term_longer_than_job": "{term}租期计费 {months} 个月（{billed_hours:,.0f} 小时），而任务只需 "
        "{used_hours:,.1f} 小时：只用到计费时间的 {share:.1%}。",
        "term_longer_than_job.one_month": "{term}租期计费 1 个月（{billed_hours:,.0f} 小时），而任务只需 "
        "{used_hours:,.1f} 小时：只用到计费时间的 {share:.1%}。",
        "over_monthly_budget": "每月费用 {monthly!m}，超过每月预算 {budget!c}；任务计费 {months} 个月共 "
        "{job_total!m}，在任务预算 {total_budget!c} 之内。",
        "other_term_cheaper": "{other_term}租期对这个任务更便宜：计费 {other_months} 个月共 "
        "{other_total!m}，而{term}租期计费 {months} 个月共 {job_total!m}。",
        "host_ram_unconfirmed": "每台服务器需要 {needed_gib:,.0f} GiB 主机内存（方案的主机峰值 {host_gib:,.0f} "
        "GiB，加上操作系统、训练进程和数据加载的预留），而目录未列出这台服务器的主机内存："
        "任务开始前请确认服务器有这么多内存。",
        "deadline_within_range": "估算的 {days:,.1f} 天满足 {deadline_days:g} 天的截止期限，但其区间的慢端 "
        "{slow_days:,.1f} 天超出期限：请留出余量或选择更快的方案。",
        "pipeline_bubble": "流水线气泡让每步 {bubble:.0%} 的时间空闲；增加微批数量或使用交错流水线可以缩小气泡。",
        "pipeline_few_microbatches": "{pp} 级流水线只有 {micro_batches} 个微批，每步 {bubble:.0%} "
        "的时间空闲；至少使用 {wanted} 个微批（4 × pp ÷ 虚拟阶段数）。",
        "global_batch_small": "全局批 {global_batch:,} 条序列分到 {gpus:,} 张 GPU 上，{dp:,} 个数据并行 rank "
        "每步各只有 {steps} 个大小为 {micro_batch} 的微批（{pp} 级流水线）：MFU {mfu:.1%}。全局批为 "
        "{larger:,}（{larger_tokens_m:,.1f}M token，每个 rank {wanted} 个微批）时，同一方案的 MFU 可达 "
        "{better:.1%}；Llama 3 405B 训练时每步最多 16M token（Llama 3 技术报告 "
        "§3.4.1）。更大的批会改变优化过程：请重新调整学习率。",
        "global_batch_small.one_stage": "全局批 {global_batch:,} 条序列分到 {gpus:,} 张 GPU 上，{dp:,} 个数据并行 "
        "rank 每步各只有 {steps} 个大小为 {micro_batch} 的微批（1 级流水线）：MFU {mfu:.1%}。全局批为 "
        "{larger:,}（{larger_tokens_m:,.1f}M token，每个 rank {wanted} 个微批）时，同一方案的 MFU 可达 "
        "{better:.1%}；Llama 3 405B 训练时每步最多 16M token（Llama 3 技术报告 "
        "§3.4.1）。更大的批会改变优化过程：请重新调整学习率。",
        "global_batch_small.one_step": "全局批 {global_batch:,} 条序列分到 {gpus:,} 张 GPU 上，{dp:,} 个数据并行 rank "
        "每步各只有 1 个大小为 {micro_batch} 的微批（{pp} 级流水线）：MFU {mfu:.1%}。全局批为 "
        "{larger:,}（{larger_tokens_m:,.1f}M token，每个 rank {wanted} 个微批）时，同一方案的 MFU 可达 "
        "{better:.1%}；Llama 3 405B 训练时每步最多 16M token（Llama 3 技术报告 "
        "§3.4.1）。更大的批会改变优化过程：请重新调整学习率。",
        "global_batch_small.one_step_one_stage": "全局批 {global_batch:,} 条序列分到 {gpus:,} 张 GPU 上，{dp:,} "
        "个数据并行 rank 每步各只有 1 个大小为 {micro_batch} 的微批（1 级流水线）：MFU {mfu:.1%}。全局批为 "
        "{larger:,}（{larger_tokens_m:,.1f}M token，每个 rank {wanted} 个微批）时，同一方案的 MFU 可达 "
        "{better:.1%}；Llama 3 405B 训练时每步最多 16M token（Llama 3 技术报告 "
        "§3.4.1）。更大的批会改变优化过程：请重新调整学习率。",
        "pp_uneven_layers": "{layers} 层不能被 {pp} 级流水线整除；最大的一级（{stage_layers} 层）决定显存和速度。",
        "tp_across_nodes": "张量并行度 {tp} 超过每台服务器的 {gpus_per_node} 张 "
        "GPU，跨越了服务器：每一层都要等待网络。请将其限制在一台服务器内。",
        "kv_heads_replicated": "{kv_heads} 个 KV 头不能被张量并行度 {tp} 整除：每个 rank 保留其中 {kept_heads} "
        "个的副本，K/V 权重和缓存会被复制。",
        "approximate_model": "架构由参数量推算；显存为近似值。",
        "estimate_uncertain": "架构由参数量推算：显存和速度为近似值。",
        "params_mismatch": "给出的参数量（{stated:,.0f}）与架构的精确计数（{exact:,}）相差 "
        "{difference:+,.0f}（{relative:+.2%}）；显存按精确计数计算。",
        "ragged_batch": "全局批大小不是数据并行度 × 微批大小的整数倍。",
        "global_batch_rounded": "全局批大小 {global_batch} 不是数据并行 × 微批（{step}）的倍数：已取整为最近的倍数 "
        "{rounded}。",
        "moe_experts_resident": "每个 MoE 专家都常驻在每张 GPU 上（无专家并行）：显存取决于总参数量，"
        "计算量取决于激活参数量。",
        "moe_low_concurrency_unvalidated": "{model} 每层路由到 {experts} 个小专家：同时解码 {concurrency:.3g} "
        "条序列（已验证的至多 {validated} 条）时，解码未经验证，所示每 token 时间偏乐观。此时逐层路由和分组 GEMM "
        "内核占主导；公开的 DeepSeek-V3/R1 FP8 实测在单序列时每 token 23-33 ms（SGLang，16 张 "
        "H100：tenstorrent/tt-inference-server#356；8 张 GPU：sgl-project/sglang#2643），8 条序列时 12.8 ms（SGLang "
        "v0.5.7，8 张 H200：SemiAnalysisAI/InferenceX#870）",
        "quantised_checkpoint": "{repo} 发布的是 {scheme} 权重；训练按 16 位权重估算，启动配置需要 16 "
        "位副本：请先把检查点反量化（DeepSeek-V3：其仓库中的 inference/fp8_cast_bf16.py），再加载该副本。",
        "kv_cache_dominates": "KV 缓存（每卡 {kv_cache_gib:.1f} GiB）大于权重：批大小和上下文长度决定显存。",
        "no_fit": "该方案放不进显存，但在 {dp} 路数据并行上使用 ZeRO-3 可以（每卡 {zero3_gib:.1f} GiB）。",
        "no_fit_zero3": "即使在全部 {gpus} 张 GPU 上使用 ZeRO-3 也放不进显存：每卡需要 {needed_gib:.1f} "
        "GiB，扣除余量后可用 {limit_gib:.1f} GiB。",
        "no_fit_zero3.activations": "{lead}仅激活值就超出显卡容量：请使用完全重计算、更小的微批或 tp/cp。",
        "no_fit_zero3.more_gpus": "{lead}约 {fit_gpus:,} 张这种 GPU 可以容纳切分后的模型状态。",
        "no_fit_zero3.more_gpus_cards": "{lead}约 {fit_gpus:,} 张这种 GPU "
        "可以容纳切分后的模型状态；或换用显存更大的卡：{cards}。",
        "ethernet_fabric": "多台服务器通过普通以太网（TCP）互联：张量并行应留在一台服务器内；"
        "跨服务器时，流水线并行（每个微批次只传激活）比数据并行（每步传全部梯度）更能承受。",
        "communication_bound": "未被掩盖的通信时间超过了它所服务的计算时间。",
        "scaling_rows_unfit": "该方案的一个副本（{unit_gpus:,} 张 GPU）每张 {gpu} 需要 {needed_gib:,.1f} GiB，"
        "超过可用的 {limit_gib:,.1f} GiB：表中 {unfit:,} 个点放不下，不显示吞吐量。该方案放得下的最少 GPU 数："
        "{fit_gpus:,}，加速比与效率从该点算起。",
        "scaling_superlinear": "效率在 {gpus:,} 张 GPU（{link}）上达到 {efficiency:.2f}（相对 {baseline_gpus:,} 张），"
        "超过线性：每个副本每步保持 {micro_batches:,} 个微批次，全局批次随 GPU 数增长，而 ZeRO 阶段 {zero_stage} "
        "把优化器步骤分摊到各数据并行 rank，每张 GPU 承担的部分随 GPU 增加而减少。"
        "更大的 global_batch 让一步包含更多微批次，曲线会更接近线性。",
        "scaling_none_fits": "该方案的一个副本（{unit_gpus:,} 张 GPU）每张 {gpu} 需要 {needed_gib:,.1f} GiB，"
        "超过可用的 {limit_gib:,.1f} GiB，表中没有一个点放得下（最省的 {least_gpus:,} 张 GPU 也需要 "
        "{least_gib:,.1f} GiB）：都不显示吞吐量。请切分模型状态（zero_stage 3）、切分模型（tp、pp）或选择显存更大"
        "的卡；不带 plan 调用 POST /estimate 可找到放得下的方案。",
        "precision_unsupported": "{gpu} 不支持 {precision}：按 {runs_as} 运行并据此估算速度。",
        "no_stack": "gpu-sizer 启动的训练框架（DeepSpeed、FSDP/torchtitan、Megatron）都不能以 {shape}、卸载 "
        "{offload}、重计算 {recompute}、优化器 {optimizer} 运行 {task}：这些只是估算数字，不是可启动的任务。",
        "no_stack.levers": "gpu-sizer 启动的训练框架（DeepSpeed、FSDP/torchtitan、Megatron）在以 {shape}、卸载 "
        "{offload}、重计算 {recompute}、优化器 {optimizer} 运行 {task} 时都不支持内存选项 {levers}：这些只是估算数字，"
        "不是可启动的任务；去掉 {levers} 后即有框架可运行该方案。",
        "fp8_not_launched": "这里提供的训练框架都不以 fp8 运行 {task}：按 {runs_as} 估算、计价和启动。",
        "single_server_only": "{sku} 没有连接服务器的 InfiniBand 或 RoCE "
        "网络（只有其网络：{network}）：作业无法扩展到一台服务器之外。",
        "single_server_only.unlisted": "{sku} 没有连接服务器的 InfiniBand 或 RoCE "
        "网络（目录也未列出其网络）：作业无法扩展到一台服务器之外。",
        "starts_from_scratch": "预训练从随机权重开始训练 {model}：启动配置不会加载 {repo} "
        "已发布的权重。若要在新文本上继续训练这些权重，请选择任务 continued_pretrain（继续预训练）。",
        "no_kv_cache": "权重和推理引擎的预留只给 KV 缓存留下 {kv_cache_tokens:,} 个 token 的显存，不够一条 "
        "{context_len:,} token 的序列：请为每个副本使用更多 GPU、更小的权重格式或更短的请求。",
        "slo_missed": "并发 {concurrency:.1f} 时 TTFT 为 {ttft}、TPOT 为 {tpot}，达不到 "
        "{slo}：请增加副本或每个副本的 GPU，或放宽目标。",
        "slo_missed_percentile": "并发 {concurrency:.1f} 时 {percentile} TTFT 约为 {ttft}、{percentile} TPOT 约为 "
        "{tpot}（按所给长度分布中该百分位的提示词及该百分位的排队估算；ttft_ms 与 tpot_ms 为稳态值），达不到 {slo}："
        "请增加副本或每个副本的 GPU，或放宽目标。",
        "slo_missed_peak": "峰值负载（每秒 {peak_rps:.3g} 个请求）下 {percentile} TTFT 为 {ttft}、"
        "{percentile} TPOT 为 {tpot}，达不到 {slo}：请增加副本或每个副本的 GPU，或放宽目标。",
        "slo_missed_saturated": "峰值负载（每秒 {peak_rps:.3g} 个请求）下副本处理不过来：排队无限增长"
        "（{percentile} TTFT {ttft} 且仍在增长），达不到 {slo}：请增加副本或每个副本的 GPU，或放宽目标。",
        "prompts_over_limit": "约 {share:.1%} 的提示（按给定的 input_tokens_p95 分布）加上输出超过单个请求可容纳的 "
        "{limit:,} 个 token（max_model_len，或一条序列的 KV 缓存容量）：引擎会拒绝这些请求，"
        "而所示延迟仍把它们计算在内。请设置更大的 serving.max_request_tokens，或为每个副本使用更多 GPU。",
        "concurrency_over_kv": "并发 {concurrency:,} 超过一个副本在这些长度下能同时运行的 {max_concurrency:,} 条序列"
        "（受 KV 缓存容量或引擎的 max_num_seqs 限制）：其余请求排队等待空位，每个请求的 TTFT 约增加 {wait_ms:,.0f} ms。"
        "用 {replicas:,} 个同样的副本，或让每个副本用更多 GPU 以获得更大的 KV 缓存，才能让它们同时运行。",
    },
}

# The memory levers `memory_may_exceed` advises (app/planner/padded_band.py `memory_levers`): those still open to the
# plan, each in its words.
MEMORY_LEVERS: dict[str, dict[str, str]] = {
    "en": {
        "recompute": "full activation recompute",
        "micro_batch": "a smaller micro-batch",
        "fused_loss": "the fused loss",
        "qlora": "QLoRA (task qlora: the frozen base in 4-bit NF4)",
    },
    "zh": {
        "recompute": "完全激活重计算",
        "micro_batch": "更小的微批",
        "fused_loss": "融合损失函数",
        "qlora": "QLoRA（task 设为 qlora：冻结的基座权重以 4 位 NF4 存储）",
    },
}

# The sentence a GPU no-fit warning of a stated plan ends with where the fused loss alone makes it fit (`fused_gib`:
# app/planner/service.py `_fused_fit_advice`), the lever the automatic plan takes first (app/text/messages.py warning).
NO_FIT_FUSED: dict[str, str] = {
    "en": ' With the fused loss (plan.loss "fused": Liger\'s fused linear cross-entropy, no whole-sequence logits) '
    "the same plan needs {fused_gib:,.1f} GiB per GPU and fits.",
    "zh": "改用融合损失函数（plan.loss 设为 fused：Liger 融合线性交叉熵，不保留整段序列的 logits）后，"
    "同一方案每卡需要 {fused_gib:,.1f} GiB，可以放下。",
}

# The first sentence of `no_fit_zero3`'s variants (app/text/messages.py `_no_fit_lead`): "zero3" where the plan's own
# total is ZeRO-3's figure, "own" where it is more (each reading named: the plan's total, the gate's
# `per_gpu_gib.total`, and ZeRO-3's over every GPU), "one" on one GPU, where ZeRO-3 shards nothing.
NO_FIT_LEADS: dict[str, dict[str, str]] = {
    "en": {
        "zero3": "Does not fit in GPU memory even with ZeRO-3 over all {gpus} GPUs: {needed_gib:.1f} GiB per GPU "
        "needed, {limit_gib:.1f} GiB usable after the headroom.",
        "own": "Does not fit in GPU memory: the plan needs {total_gib:.1f} GiB per GPU (its total), {limit_gib:.1f} "
        "GiB usable after the headroom; even ZeRO-3 over all {gpus} GPUs would need {needed_gib:.1f} GiB per GPU.",
        "one": "Does not fit in GPU memory: the plan needs {total_gib:.1f} GiB on its one GPU (its total), "
        "{limit_gib:.1f} GiB usable after the headroom; on one GPU ZeRO-3 has nothing to shard.",
    },
    "zh": {
        "zero3": "即使在全部 {gpus} 张 GPU 上使用 ZeRO-3 也放不进显存：每卡需要 {needed_gib:.1f} GiB，扣除余量后可用 "
        "{limit_gib:.1f} GiB。",
        "own": "放不进显存：该方案每卡需要 {total_gib:.1f} GiB（其总量），扣除余量后可用 {limit_gib:.1f} GiB；"
        "即使在全部 {gpus} 张 GPU 上使用 ZeRO-3，每卡仍需 {needed_gib:.1f} GiB。",
        "one": "放不进显存：该方案在其唯一一张 GPU 上需要 {total_gib:.1f} GiB（其总量），扣除余量后可用 "
        "{limit_gib:.1f} GiB；只有一张 GPU 时 ZeRO-3 无从切分。",
    },
}

# Warnings whose English is the estimator's own sentence, rendered as it writes it, without making "noun(s)" agree
# with its count (app/text/words.py `plurals`). None now: moe_low_concurrency_unvalidated,
# app/estimator/serving/rules.py's note, agrees its "sequence(s)" as plurals does (tests/test_warning_words.py holds
# the two equal).
VERBATIM: frozenset[str] = frozenset()
