"""Words of the option's assumption notes (`Option.assumption_codes`), English and Chinese, read through
`app.text.messages.assumption`: what a multi-server option assumes of its fabric, how far its speed is from the runs
that calibrated it, and what memory relief turned on."""

from __future__ import annotations

# What a multi-server option assumes about the fabric joining its servers (app/planner/mappers.py
# `fabric_assumptions`): the SKU's own, or its add-on, priced (in the cost and the quote) or on consultation; and how
# far its speed is from the runs that calibrated it (`calibration_assumptions`, app/estimator/performance.py
# UNCALIBRATED_SLOW); what memory relief turned on so that the memory range's high end fits the card, and its cost in
# speed (`relief_assumptions`, app/planner/relief.py `_over_card`).
ASSUMPTIONS: dict[str, dict[str, str]] = {
    "en": {
        "fabric_with_server": "The speed assumes {nodes} servers joined by {sku}'s {fabric} fabric at {gbps:g} "
        "Gb/s per server; the catalog sells no separate add-on for it.",
        "fabric_addon_priced": "The speed assumes {nodes} servers joined by {sku}'s {fabric} fabric at {gbps:g} "
        "Gb/s per server: its add-on {addon} ({addon_name}; {monthly!m} a month for the {nodes} servers) is in the "
        "cost and the quote.",
        "fabric_addon_on_consultation": "The speed assumes {nodes} servers joined by {sku}'s {fabric} fabric at "
        "{gbps:g} Gb/s per server: its add-on {addon} ({addon_name}) is in the quote, priced on consultation and "
        "not in the cost.",
        "uncalibrated_moe": "No run that calibrated the speed is an MoE model like this one: the range's slow end is "
        "widened to {factor:.2f}× the typical end (NeMo's Qwen3-30B-A3B runs reached 0.44-0.91× our estimate).",
        "uncalibrated_offload": "No run that calibrated the speed offloads states to host RAM: the range's slow end is "
        "widened to {factor:.2f}× the typical end (offloaded steps measured 1.4-1.6× as long).",
        "uncalibrated_gpu": "No run that calibrated the speed used this GPU generation (its efficiency constants are "
        "set by analogy): the range's slow end is widened to {factor:.2f}× the typical end (Hopper's and Ampere's "
        "fitted GEMM fractions differ by that much).",
        "uncalibrated_ampere_pretrain": "Pre-training on A100: whole published runs on 384-3,360 A100s, every "
        "restart included, ran at 0.66-1.21× our estimate of them (Llama 2 7B: 3,014 tokens/s per GPU, 0.80×; "
        "Llama 2 13B 0.77×): the range's slow end is widened to {factor:.2f}× the typical end, and its fast end is "
        "1.22× the point (LLaMA 65B, the fastest).",
        "memory_relief_layout": "The plan is {layout}, not {was_layout}.",
        "memory_relief_stack": "It runs on {stack_name}, not {was_stack_name}, which holds more memory for it.",
        "memory_relief_recompute": "Activation recompute is {recompute}, not {was}.",
        "memory_relief_micro_batch": "The micro-batch is {micro_batch}, not {was}.",
        "memory_relief_loss": "The loss is fused (no logits held), not the standard one.",
        "memory_relief_standard_loss": "The loss is the standard one, not fused.",
        "fused_loss_fit": "The loss is fused (Liger's fused cross-entropy in the Trainer; no logits held, no speed "
        "lost): with the standard loss the leanest plan here needs "
        "{needed_gib:.1f} GiB per GPU, more than the {limit_gib:.1f} GiB limit.",
    },
    "zh": {
        "fabric_with_server": "速度按 {nodes} 台服务器经 {sku} 的 {fabric} 网络互联"
        "（每台服务器 {gbps:g} Gb/s）估算；目录中没有单独的网络附加项。",
        "fabric_addon_priced": "速度按 {nodes} 台服务器经 {sku} 的 {fabric} 网络互联（每台服务器 {gbps:g} Gb/s）"
        "估算：其附加项 {addon}（{addon_name}；{nodes} 台服务器每月 {monthly!m}）已计入费用和报价。",
        "fabric_addon_on_consultation": "速度按 {nodes} 台服务器经 {sku} 的 {fabric} 网络互联"
        "（每台服务器 {gbps:g} Gb/s）估算：其附加项 {addon}（{addon_name}）已列入报价，价格面议，未计入费用。",
        "uncalibrated_moe": "校准速度所用的实测运行中没有类似的 MoE 模型：范围的慢端放宽到典型端的 {factor:.2f} 倍"
        "（NeMo 的 Qwen3-30B-A3B 实测为我们估计值的 0.44-0.91 倍）。",
        "uncalibrated_offload": "校准速度所用的实测运行都没有把训练状态卸载到主机内存：范围的慢端放宽到典型端的 "
        "{factor:.2f} 倍（实测卸载后的每步耗时为不卸载时的 1.4-1.6 倍）。",
        "uncalibrated_gpu": "校准速度所用的实测运行都没有用过这一代 GPU（其效率常数按类比设定）："
        "范围的慢端放宽到典型端的 {factor:.2f} 倍（Hopper 与 Ampere 拟合出的 GEMM 效率相差这么多）。",
        "uncalibrated_ampere_pretrain": "在 A100 上预训练：公开的完整预训练（384-3,360 块 A100，含所有重启）为我们对"
        "其估计的 0.66-1.21 倍（Llama 2 7B：每块 GPU 3,014 tokens/s，0.80 倍；Llama 2 13B 0.77 倍）："
        "范围的慢端放宽到典型端的 {factor:.2f} 倍，快端为点估计的 1.22 倍（LLaMA 65B，最快的一次）。",
        "memory_relief_layout": "方案为{layout}，而非{was_layout}。",
        "memory_relief_stack": "改用 {stack_name} 运行，而非占用显存更多的 {was_stack_name}。",
        "memory_relief_recompute": "激活重计算为 {recompute}，而非 {was}。",
        "memory_relief_micro_batch": "微批为 {micro_batch}，而非 {was}。",
        "memory_relief_loss": "损失函数为融合实现（不保留 logits），而非标准损失。",
        "memory_relief_standard_loss": "损失函数为标准实现，而非融合实现。",
        "fused_loss_fit": "损失函数为融合实现（Trainer 中为 Liger 的融合交叉熵；不保留 logits，不损失速度）："
        "使用标准损失时，此处最省显存的方案每块 GPU 也需 "
        "{needed_gib:.1f} GiB，超过 {limit_gib:.1f} GiB 的上限。",
    },
}

# The end of the last `memory_relief_*` note of an option (mappers.relief_assumptions): what the plan found first
# risked and what the relief costs. "limit": its high end crossed the limit only; "card": the card itself;
# "slow_end": the price holds at the estimate, and the slow end of the time range bills more months.
RELIEF_TAILS: dict[str, dict[str, str]] = {
    "en": {
        "limit": " With the plan found first the high end of the memory range, {high_gib} GiB, is above the "
        "{limit_gib} GiB it may use. The step is {slower_pct} % slower, at the same price, at the slow end of the time "
        "range too.",
        "card": " With the plan found first the high end of the memory range, {high_gib} GiB, is above the card's "
        "{capacity_gib} GiB. The step is {slower_pct} % slower, at the same price, at the slow end of the time range "
        "too.",
        "slow_end": " With the plan found first the high end of the memory range, {high_gib} GiB, is above the card's "
        "{capacity_gib} GiB. The step is {slower_pct} % slower, at the same price at the estimate; at the slow end of "
        "its time range the job bills {slow_months} months, not {was_slow_months}.",
    },
    "zh": {
        "limit": "若用最初找到的方案，显存范围的高端 {high_gib} GiB 超过可用的 {limit_gib} GiB。每步慢 {slower_pct}%，"
        "价格不变（按时间区间的慢端也不变）。",
        "card": "若用最初找到的方案，显存范围的高端 {high_gib} GiB 超过显卡的 {capacity_gib} GiB。每步慢 "
        "{slower_pct}%，价格不变（按时间区间的慢端也不变）。",
        "slow_end": "若用最初找到的方案，显存范围的高端 {high_gib} GiB 超过显卡的 {capacity_gib} GiB。每步慢 "
        "{slower_pct}%，按估算价格不变；但按时间区间的慢端，任务需计费 {slow_months} 个月而非 {was_slow_months} 个月。",
    },
}
