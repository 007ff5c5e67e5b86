"""What an estimate assumes, by code (app/estimator/notes.py: the estimator's `Note`), and what a quote notes beside
its lines, in English and Simplified Chinese (app/text/messages.py renders them with `note()` and `quote_note()`;
tests/test_messages.py checks both languages define the same codes with the same fields). An estimate's English is
the estimator's own table, the API's `assumptions`, imported and not copied. Kept apart from app/text/messages.py, which
holds every other catalog of words, so that module stays within the module size."""

from __future__ import annotations

from app.estimator.notes import ENGLISH, SCHEMES as SCHEMES_EN
from app.text.launch_words import LAUNCH

NOTES: dict[str, dict[str, str]] = {
    "en": ENGLISH,
    "zh": {
        # memory: what every estimate counts
        "worst_stage": "按最差的流水线阶段计算每块 GPU 的字节数；容量为显卡的可用显存（不含 CUDA 上下文）。",
        "pipeline_1f1b": "1F1B：第一个阶段同时在途的微批数为 pp 与微批数中的较小者；最后一个阶段持有 logits。",
        "other_buffers": "其他 = cuBLAS 工作区 0.25 GiB + NCCL 缓冲 0.5 GiB（多卡）+ 激活值 5% 的分配器碎片。",
        "adamw_step_other": "其他还包含 torch AdamW 更新步的 {step_gib:.2f} GiB 临时内存（其 foreach 更新会复制 v："
        "更新步时共 {temp_gib:.2f} GiB，其余占用已释放的激活值留下的内存块）。",
        "zero3_step_other": "其他还包含 DeepSpeed ZeRO-3 优化器更新步的 {step_gib:.2f} GiB：它把每个子组的梯度"
        "（最多 {elements:.3g} 个元素）复制成新的扁平张量并转换为主权重的数据类型，若由 torch AdamW 更新则另有其 v 的"
        "副本（更新步时共 {temp_gib:.2f} GiB，其余占用已释放的激活值留下的内存块）。",
        "deepspeed_buckets": "其他还包含 DeepSpeed ZeRO-1/2 在反向传播期间的 {bucket_gib:.2f} GiB 梯度桶（两个各 "
        "reduce_bucket_size {elements:.3g} 个元素，更新步前释放）。",
        "peak_backward_start": "每步只有一个微批，梯度在反向传播中生成、更新步后释放：峰值出现在反向传播开始时"
        "（激活值 {activations_gib:.2f} GiB，尚无梯度），而非优化器更新步（梯度 {grads_gib:.2f} GiB + AdamW 更新步临时"
        "内存 {temp_gib:.2f} GiB，激活值已释放），因此梯度显示为 0。",
        "peak_optimizer_step": "每步只有一个微批，梯度在反向传播中生成、更新步后释放：峰值出现在优化器更新步（梯度 "
        "{grads_gib:.2f} GiB + AdamW 更新步临时内存 {temp_gib:.2f} GiB，激活值已释放），高于反向传播开始时（激活值 "
        "{activations_gib:.2f} GiB，尚无梯度）；梯度和其他两项计入更新步超出激活值内存块的部分。",
        # memory: the model states
        "inference_memory": "推理：权重 + KV 缓存（每层 K 和 V，kv 头数 × head_dim）+ 一层的预填充工作集和 fp32 的"
        "末位 token 的 logits。",
        "megatron_mixed": "混合精度 {optimizer}，按 Megatron-LM 的做法：16 位权重 + fp32 主梯度缓冲 + fp32 主权重和 "
        "{optimizer} 状态（每参数 {per_param:g} B；使用分布式优化器时为 6 + {owned:g}/d，见 Megatron-LM 的 "
        "dist_optimizer 文档）。",
        "mixed_precision": "混合精度 {optimizer}：16 位权重 + 16 位梯度 + fp32 主权重 + {state:g} B 的 {optimizer} 状态"
        "（每参数 {per_param:g} B；ZeRO §3.1 对 Adam 计 16 B）。",
        "pure_precision": "纯 {precision} 训练：权重、梯度和 {optimizer} 状态均为训练精度。",
        "paged_optimizer": "分页优化器（QLoRA §3，bitsandbytes）：其状态位于 PyTorch 分配器之外的 CUDA 统一（托管）"
        "内存中，显卡需要空间时换出到主机内存，更新步时再换回，因此总量不计入它们（另见 paged_optimizer_gib）；"
        "设备读数计入仍留在显卡上的部分，torch 的 allocated 和 reserved 读数从不包含它们。",
        "lora_base": "{task}：冻结的基座为 16 位；适配器 r·(d_in+d_out) 以自己的梯度和状态训练。",
        "lora_base_fp32": "{task}：在 torch.autocast 下冻结的基座为 fp32（fp32_params：加载模型时未指定 torch_dtype）；"
        "适配器 r·(d_in+d_out) 以自己的梯度和状态训练。",
        "fp32_params": "torch.autocast 下的 fp32 参数（fp32_params）：fp32 权重 + fp32 梯度 + {state:g} B 的 "
        "{optimizer} 状态，无主权重副本（每参数 {per_param:g} B）；FSDP 以 fp32 聚合各单元，"
        "残差流和检查点保存的层输入为 fp32，矩阵乘法保留 autocast 生成的 16 位权重副本。",
        "qlora_base": "{task}：冻结的基座为 NF4 + 每参数 {bits:.3g} 位的量化常数（QLoRA §3）；适配器 r·(d_in+d_out) "
        "以自己的梯度和状态训练。",
        "qlora_base_double": "{task}：冻结的基座为 NF4 + 每参数 {bits:.3g} 位的双重量化常数（QLoRA §3）；适配器 "
        "r·(d_in+d_out) 以自己的梯度和状态训练。",
        "qlora_base_mixed": "{task}：冻结的基座为 NF4 + 每参数 {bits:.3g} 位的量化常数（QLoRA §3）；适配器 "
        "r·(d_in+d_out) 以自己的梯度和状态训练：16 位适配器和梯度，fp32 状态（QLoRA 式 5）。",
        "qlora_base_double_mixed": "{task}：冻结的基座为 NF4 + 每参数 {bits:.3g} 位的双重量化常数（QLoRA §3）；"
        "适配器 r·(d_in+d_out) 以自己的梯度和状态训练：16 位适配器和梯度，fp32 状态（QLoRA 式 5）。",
        "kbit_upcast": "PEFT 的 prepare_model_for_kbit_training（TRL 的 SFTTrainer，QLoRA 的做法）：fp32 的归一化层"
        "使残差流和保存的激活值为 fp32（kbit_upcast=false：torchtune、litgpt、Unsloth；由 ZeRO-3 / FSDP 切分的 "
        "QLoRA 默认关闭）。",
        # memory: activations, sharding, offload and loading
        "activations": "激活值按每个保存的张量计算（Korthikanti 等 2022 年的方法），recompute={recompute}，"
        "flash_attention={flash}；未融合的损失：fp32 对数概率 + 每个 logit 两个 fp32 梯度。",
        "activations_lean_loss": "激活值按每个保存的张量计算（Korthikanti 等 2022 年的方法），recompute={recompute}，"
        "flash_attention={flash}；{loss} 损失：不保存全词表的 fp32 logits。",
        "activations_megatron_loss": "激活值按每个保存的张量计算（Korthikanti 等 2022 年的方法），"
        "recompute={recompute}，flash_attention={flash}；Megatron-LM 的词表并行损失（融合与否相同）："
        "16 位 logits 及其 fp32 softmax，每个 logit 6 字节。",
        "zero_sharded": "ZeRO 阶段 {zero} 在 dp × cp 上切分（混合切分时为 dp_shard × cp），路由专家在 dp × cp / ep "
        "上切分；offload={offload}。",
        "zero_replicated": "ZeRO 阶段 0：每个数据并行 rank 持有其 tp × pp 部分的全部权重、梯度和优化器状态"
        "（路由专家按 ep 切分）；offload={offload}。",
        "zero2_fp32_grads": "ZeRO-2 的梯度是 fp32 分片（FSDP2 按 fp32 参数类型保存）；DeepSpeed 在更新步时与 fp32 "
        "副本并存的 16 位分区，在其超过释放的激活值时计入。",
        "adafactor_flat": "在 ZeRO 的扁平一维分区上，Adafactor 无法分解其二阶矩（transformers 的 "
        "Adafactor._get_options）：每个参数一个完整的 fp32 v。",
        "pipeline_sharded_grads": "流水线并切分梯度：reduce_scatter 要等最后一个微批，因此该阶段的梯度在整个更新步中"
        "以 fp32 完整保留（torch.distributed.pipelining，torchtitan）。",
        "activation_offload": "激活值卸载：保存的激活值驻留在主机内存（计入 host_ram）；GPU 只保留两层的量："
        "正在使用的一层和正经 PCIe 传输的一层。",
        "compiled": "torch.compile（compile）：只计入激活值，因为在反向中重计算的融合逐点运算保存的张量更少"
        "（选择性重计算下不会更少，它已重计算这些运算）；其加速未建模（速度按 eager 模式计），compile 另外传给"
        "启动配置。",
        "compiled_loss": "损失与模型一起编译（loss compiled）：交叉熵保留 16 位 logits 并生成其 16 位梯度，"
        "每个 logit 4 字节，而非 eager fp32 交叉熵的 12 字节；启动配置也编译损失。",
        "host_load_every_rank": "加载：节点上的每个 rank 在 ZeRO-3 切分之前都在主机内存中持有完整的已加载模型"
        "（host_load_gib）；主机内存检查取它与卸载状态中的较大者。",
        "host_load_local_rank_0": "加载：每个节点的本地 0 号 rank 在 ZeRO-3 切分之前在主机内存中持有完整的已加载模型"
        "（host_load_gib）；主机内存检查取它与卸载状态中的较大者。",
        # speed
        "bubble": "流水线气泡：1F1B 每步增加 (p−1)/v 个微批时间，p={pp}，v={virtual_stages}",
        "overlap": "可重叠的集合通信有 {hidden:.0%} 的时间被计算掩盖",
        "not_overlapped": "TP、PP 和 EP 通信不与计算重叠；梯度以 16 位归约",
        "mfu_causal": "MFU 按因果注意力计（s×s 分数矩阵的一半，与 NVIDIA 的 NeMo 的 MFU 公式一致），对照该精度的"
        "稠密峰值；mfu_full_attention 按完整矩阵计（Megatron-LM / PaLM 附录 B）",
        "speed_range": "区间：吞吐量为点估计的 {low:.2f}×（常见技术栈：HF Trainer 或 accelerate，搭配 DeepSpeed 或 "
        "FSDP）到 {high:.2f}×（调优的技术栈：Megatron-LM、torchtitan、NeMo）；时间和 GPU 小时的区间从调优技术栈"
        "加预期有效训练时间占比，到常见技术栈加可靠性较差的集群",
        "goodput": "time_to_train_hours 和 gpu_hours 已计入有效训练时间占比：中断次数按 Llama 3 在 16,384 块 GPU "
        "上 54 天 466 次计，检查点按 Young 的最优间隔保存，另含评估和启动时间（app/estimator/data/goodput.json）",
        "tuning_typical": "速度取区间的常见端：方案运行在常见技术栈上（HF Trainer 或 accelerate、PEFT、DeepSpeed 或 "
        "FSDP、默认内核）",
        "tuning_nemo": "速度为点估计的 {factor:.2f}x：NeMo / Megatron-Bridge 的配方（稠密模型）",
        "tuning_torchtitan": "速度为点估计的 {factor:.2f}x：torchtitan 公开的实测运行（10 次，A100、H100 和 H200）"
        "的中位数",
        "tuning_trainer": "速度为点估计的 {factor:.2f}x：Hugging Face Trainer 公开的全参数微调实测运行"
        "（fms-acceleration，A100 上 4 次）的中位数",
        "tuning_trainer_peft": "速度为点估计的 {factor:.2f}x：Hugging Face Trainer 搭配 PEFT 公开的 LoRA 和 QLoRA "
        "实测运行（fms-acceleration，A100 上 15 次）的中位数",
        "range_widened_moe": "校准速度的实测运行中没有这类 MoE 模型：区间的慢端放宽到常见端的 {factor:.2f}×"
        "（NeMo 的 Qwen3-30B-A3B 实测为我们估计值的 0.44-0.91×）",
        "range_widened_offload": "校准速度的实测运行都没有把状态卸载到主机内存：区间的慢端放宽到常见端的 "
        "{factor:.2f}×（实测卸载后每步耗时为 1.4-1.6 倍）",
        "range_widened_gpu": "校准速度的实测运行都没有用过这一代 GPU（其效率常数按类比设定）：区间的慢端放宽到常见端的 "
        "{factor:.2f}×（Hopper 与 Ampere 拟合出的 GEMM 效率相差这么多）",
        "range_widened_ampere_pretrain": "在 A100 上预训练：公开的完整预训练（384-3,360 块 A100，含所有重启）为我们对其"
        "估计的 0.66-1.21×（Llama 2 7B：每块 GPU 3,014 tokens/s，0.80×；Llama 2 13B 0.77×）：区间的慢端放宽到常见端的 "
        "{factor:.2f}×，快端为点估计的 1.22×（LLaMA 65B，最快的一次）",
        "inference_speed": "预填充受计算限制；解码受 max（（权重 + KV 缓存读取）/ HBM 带宽，FLOPs / 峰值）限制",
        # the cluster
        "hardware_one_gpu": "硬件：一张 {gpu}（给出 hardware.nodes 即按整台服务器计）",
        "hardware_usual_server": "硬件：每台服务器 {per_node} × {gpu}，与常见服务器（{server}）相同",
        "hardware_largest_server": "硬件：每台服务器 {per_node} × {gpu}，按 GPU 表中最大的服务器计",
        "fabric_usual": "网络：{fabric}，{nics} × {port_gbps:g} Gb/s = 每台服务器 {gbps:g} Gb/s（常见的 {server} "
        "集群；可用 hardware.inter_node_gbps 或 inter_node_fabric 覆盖）",
        "fabric_usual_rail": "网络：{fabric}，{nics} × {port_gbps:g} Gb/s = 每台服务器 {gbps:g} Gb/s，"
        "每块 GPU 一张网卡，轨道优化（常见的 {server} 集群；可用 hardware.inter_node_gbps 或 inter_node_fabric 覆盖）",
        "fabric_ports": "网络：{fabric}，每台服务器 {gbps:g} Gb/s（{ports:g} 个端口）",
        "host_ram_usual": "主机内存：每台服务器 {host_ram:,.0f} GiB，与常见服务器（{server}）相同；"
        "给出 hardware.host_ram_gib 可更改",
        "fabric_catalog": "网络：{server} 经其 {fabric} 选项互联，每台服务器 {gbps:g} Gb/s（目录）",
        "fabric_tcp": "网络：{server} 没有 InfiniBand 或 RoCE；服务器之间的流量经其网络（{network}）以 {gbps:g} Gb/s "
        "的 TCP 传输",
        "hardware_servers": "硬件：{nodes} × {server}（{per_node} 块 GPU，{link}）",
        "hardware_servers_ram": "硬件：{nodes} × {server}（{per_node} 块 GPU，{link}，主机内存 {host_ram:g} GiB）",
        # the plan and the SKU
        "sequence_parallel_on": "序列并行：开启，与 Megatron-LM 和 torchtitan 运行张量并行的方式相同（归一化和 dropout "
        "沿序列切分）；设 plan.sequence_parallel 为 false 可关闭",
        "fused_loss_to_fit": "损失：融合（Hugging Face Trainer 下用 Liger）：在这些 GPU 上没有方案能容纳标准损失的"
        "全词表 logits；Liger 的融合损失从不完整生成它们（Megatron-LM 的 --cross-entropy-loss-fusion 与其非融合损失"
        "一样保留它们）",
        "one_server_per_job": "{sku} 每个作业只租一台服务器：没有节点间网络连接其服务器，因此 POST /quotes "
        "会拒绝跨服务器的方案（quantity_one_server）；此估算是其普通网络下的结果",
        # serving
        "serving_engines": "推理引擎按其文档默认值运行（除非另行设置）：vLLM gpu_memory_utilization 0.9、block 16，"
        "max_num_seqs 在 70 GiB 及以上的 GPU（A100 除外）上为 1024、其他为 256；SGLang mem_fraction_static 按 TP "
        "为 0.88-0.79，分块预填充 8192；TensorRT-LLM 空闲显存比例 0.9",
        "serving_batching": "连续批处理并分块预填充；给出 requests_per_s 时，延迟由模拟得出：泊松到达随机分配给各副本，"
        "每个副本的调度器（先解码，提示按块处理，受 max_num_batched_tokens 与 max_num_seqs 限制，准入时预留 KV 缓存）"
        "运行 1,200 个固定种子的请求，去掉前 200 个；meets_slo 按 SLO 的百分位（默认 p90）在峰值时判断",
        "serving_decode": "解码 = max（权重 + KV 缓存读取 / 实际 HBM 带宽，FLOPs / 实际算力）+ 引擎开销 + 张量并行 "
        "AllReduce 延迟；常数按公开结果拟合（docs/validation-serving.md）",
        "serving_no_block": "未给出 serving 块：input_tokens {input_tokens}、output_tokens {output_tokens}，"
        "并发取一个副本能容纳的最多序列数（可设置 serving.input_tokens、output_tokens 以及 concurrency 或 "
        "requests_per_s）",
        "serving_tail_capped": "serving.{name}_p95 {p95} 是均值 {mean} 的 {ratio} 倍，"
        "尾部比任何同均值的对数正态分布都重（其 p95 至多为均值的 {most} 倍）："
        "长度按最宽的对数正态分布（p95 {modelled}）模拟，因此最长的请求及其造成的延迟和占用的 KV 缓存被低估",
        "replicas_share_nothing": LAUNCH["zh"]["no_fabric"],  # the launch's note, the same words
        # serving: what a replica cannot run as asked
        "serving_max_model_len_over": "max_model_len {context_len} 超过 KV 缓存能容纳的 {tokens} 个 token："
        "引擎无法启动；请降低 max_model_len 或增加 GPU",
        "serving_max_model_len_over_dp": "max_model_len {context_len} 超过一个 rank 的 KV 缓存能容纳的 {tokens} 个 "
        "token（DP 注意力）：引擎无法启动；请降低 max_model_len 或增加 GPU",
        "serving_concurrency_over_seqs": "并发 {wanted} 超过一个副本同时运行的 {limit} 个序列（{engine} 在 {gpu} 上的 "
        "max_num_seqs 默认值 {seqs}）：{limit} 个运行，其余在预填充前等待空位",
        "serving_concurrency_over_kv": "并发 {wanted} 超过一个副本同时运行的 {limit} 个序列（在这些长度下其 KV 缓存能"
        "容纳的数量）：{limit} 个运行，其余在预填充前等待空位",
        "serving_no_kv_room": "权重占满显存，放不下一个序列的 KV 缓存",
        "serving_sequence_too_long": "一个 {context_len:,} token 的序列放不下：TP {tp} 下 KV 缓存只能容纳 {tokens:,} "
        "个 token；请缩短 input_tokens + output_tokens（或 max_model_len），或使用更多或更大的 GPU",
        "serving_sequence_too_long_dp": "一个 {context_len:,} token 的序列放不下：DP 注意力 / EP {tp} 下一个 rank 的 "
        "KV 缓存只能容纳 {tokens:,} 个 token；请缩短 input_tokens + output_tokens（或 max_model_len），或使用更多或"
        "更大的 GPU",
        "serving_rate_over_capacity": "{replicas} 个副本最多承载 {carried:.3g} 请求/秒，低于提供的 {offered:g}",
        "serving_rate_saturated": "{replicas} 个副本约承载 {carried:.3g} 请求/秒，低于提供的 {offered:g}（已饱和）",
    },
}

# What a quote notes beside its lines (app/quotes/service.py; kept in the quote's snapshot as codes and parameters,
# its `notes` the English): an indicative price, an add-on priced on consultation, servers no fabric it rents joins.
QUOTE_NOTES: dict[str, dict[str, str]] = {
    "en": {
        "indicative": "Indicative price: the catalog gives this price for reference; the final price is confirmed on "
        "consultation.",
        "addon_on_consultation": "{addon}: priced on consultation, not included in the total.",
        "line_on_consultation": "Priced on consultation; not included in the total",
        "term_discount": "{term} term: {percent}% off the monthly list price",
        "servers_not_joined": "{nodes} separate servers of {sku}: no inter-node fabric joins them (only its network: "
        "{network}), so they suit separate jobs or serving replicas, not one job across the servers.",
        "servers_without_fabric": "{nodes} servers of {sku} without {addon}: they are not joined by its {fabric} "
        "fabric (only by its network: {network}), so they suit separate jobs, not one job across the servers.",
        "units_not_reserved": "Not reserved: {units_words} of {sku} in {region} were free when this quote was issued, "
        "but none is held for it; the units are reserved only when our sales team confirms the quote.",
        "price_at_start": "Priced at the list price in force on the rental's first day, {start_date}: "
        "{monthly_list!m} a month from {effective_from} (today's: {current!m}).",
    },
    "zh": {
        "indicative": "参考价：目录给出的价格仅供参考，最终价格以协商为准。",
        "addon_on_consultation": "{addon}：价格面议，未计入合计。",
        "line_on_consultation": "价格面议；未计入合计",
        "term_discount": "{term}：在月度标价上优惠 {percent}%",
        "servers_not_joined": "{nodes} 台互相独立的 {sku} 服务器：没有服务器间网络连接它们（只有其网络：{network}），"
        "因此适合各自独立的作业或推理副本，而不是跨服务器的一个作业。",
        "servers_without_fabric": "{nodes} 台 {sku} 服务器，未租用 {addon}：它们没有经其 {fabric} 网络互联"
        "（只有其网络：{network}），因此适合各自独立的作业，而不是跨服务器的一个作业。",
        "units_not_reserved": "未预留：本报价开具时{region}有 {units_words}（{sku}）空闲，但并未为本报价保留；"
        "须经我们的销售团队确认报价后才会预留。",
        "price_at_start": "按租期首日（{start_date}）生效的标价计价："
        "自 {effective_from} 起每月 {monthly_list!m}（当前标价：{current!m}）。",
    },
}

# A checkpoint's stored format, inside a warning or a launch note about it (its `scheme_note` parameter).
SCHEMES: dict[str, dict[str, str]] = {
    "en": SCHEMES_EN,
    "zh": {
        "scheme_fp8_block": "分块 FP8（每 {rows} x {cols} 块一个缩放因子）",
        "scheme_fp8_channel": "FP8（每通道或每张量一个缩放因子）",
        "scheme_fp8_fbgemm": "FP8（fbgemm，每通道一个缩放因子）",
        "scheme_int": "{bits} 位 {name}",
        "scheme_int_group": "{bits} 位 {name}（每组 {group} 个）",
        "scheme_ct_fp8": "compressed-tensors 的 FP8（按 {strategy} 缩放）",
        "scheme_ct_int": "compressed-tensors 的 {bits} 位整数（{strategy}）",
        "scheme_bnb_4bit": "bitsandbytes 的 {kind}（4 位）",
        "scheme_bnb_8bit": "bitsandbytes 的 LLM.int8()（8 位）",
        "scheme_modelopt": "ModelOpt 的 {algo}",
        "scheme_unread": "{method}（{detail}）",
        "scheme_method": "{method}",
    },
}
