"""Why the estimator refuses an input, in English and Chinese: one text per code, its figures as {fields}.

`EstimatorError.of(code, field=..., **params)` raises with the English text as its message (the API's `message`,
the command line's); `app.text.messages.estimator_error` words the same code in the page's language. A list or tuple
among the params is joined with the language's separator before the text is formatted (`words`). Data only: the
estimator reads it, and a test (tests/test_messages.py) checks both languages carry the same codes and fields.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

LIST_SEPARATORS = {"en": ", ", "zh": "、"}

ESTIMATOR_ERRORS: dict[str, dict[str, str]] = {
    "en": {
        # an explicit architecture (app/estimator/models.py)
        "positive_integer": "{name} must be a positive integer, got {value}.",
        "model_dim_absurd": "{name}={value} is absurd (at most {most}).",
        "model_heads_divide": "hidden ({hidden}) must be divisible by heads ({heads}) unless head_dim is given.",
        "model_head_dim_positive": "head_dim must be positive, got {head_dim}.",
        "model_kv_heads_divide": "kv_heads ({kv_heads}) must divide heads ({heads}) (1 = MQA, heads = MHA, else GQA).",
        "model_moe_negative": "MoE counts must not be negative.",
        "model_experts_per_token": "experts_per_token must be between 1 and experts ({experts}), got "
        "{experts_per_token}.",
        "model_moe_layers": "moe_layers ({moe_layers}) cannot exceed layers ({layers}).",
        "model_expert_ffn": "expert_ffn must be in 1..{most}.",
        "model_params_positive": "params must be a positive number, got {params}.",
        "model_params_mismatch": "params={params:,.0f} disagrees with the architecture, which has exactly "
        "{exact:,} parameters ({relative:+.1%}); fix the architecture or omit params.",
        "model_tied_embeddings": "tied_embeddings must be true or false.",
        "model_too_large": "The architecture has {total:,.0f} parameters; at most {most:,.0f} are supported.",
        "model_too_small": "The architecture has {total:,.0f} parameters, outside the supported range {least:,.0f} "
        "to {most:,.0f}.",
        "model_params_finite": "params must be a finite number, got {params}.",
        "model_params_range": "params={params:,.0f} is outside the supported range {least:,.0f} to {most:,.0f}.",
        # a Hugging Face config.json (app/estimator/models.py)
        "hf_config_missing": "hf_config for model_type {model_type!r} is missing required keys: {missing}.",
        "hf_config_count": "hf_config.{key} must be an integer from {least} to {most}, got {value}.",
        "hf_config_number": "hf_config.{key} must be a finite number of at most {most} in size, got {value}.",
        "hf_config_at_least": "hf_config.{key} must be at least {least}, got {value}.",
        "hf_config_flag": "hf_config.{key} must be true or false (a JSON boolean, not a string or number), "
        "got {value}.",
        "hf_config_mlp_only_layers": "hf_config.mlp_only_layers must be a list of layer indices.",
        "hf_config_object": "hf_config must be a JSON object (the contents of config.json).",
        "hf_config_model_type": "Unknown hf_config model_type {model_type!r}; supported: {supported}.",
        "hf_config_malformed": "hf_config has a malformed value: {detail}.",
        # presets and GPUs (app/estimator/presets.py, hardware.py)
        "preset_unknown_close": "Unknown model preset {preset!r}; closest: {close}.",
        "preset_unknown": "Unknown model preset {preset!r}; known: {known}.",
        "variant_unknown": "{preset} has no {variant} variant (one of {allowed}); name another repository with "
        "model.hf_id",
        "variant_single": "{preset} has no {variant} variant (none: it ships one repository); name another "
        "repository with model.hf_id",
        "gpu_unknown_close": "Unknown GPU type {gpu!r}. Did you mean {close}? Allowed: {allowed}.",
        "gpu_unknown": "Unknown GPU type {gpu!r}. Allowed: {allowed}.",
        # fabrics (app/estimator/clusters.py, interconnects.py)
        "fabric_usual_unknown": "no usual fabric is known for {gpu}: give hardware.inter_node_gbps or "
        "inter_node_fabric",
        "server_rate_unknown": "the catalog states no network rate for {server}: give hardware.inter_node_gbps",
        "intra_link_unknown": "unknown intra-node link {link!r}; known: {known}",
        "fabric_unknown": "unknown fabric {fabric!r}; known: {known}",
        "multi_node_rate": "a multi-node group needs hardware.inter_node_gbps",
        # a choice among named values (app/estimator/specs.py require_choice)
        "choice": "{name} must be one of {allowed}",
        # a workload and a plan (app/estimator/memory/rules.py)
        "integer_range": "{name} must be an integer in {allowed}, got {value}.",
        "at_most": "{name} must be at most {most}.",
        "kbit_upcast_qlora": "kbit_upcast applies to task qlora only.",
        "lora_rank_hidden": "lora.rank ({rank}) must not exceed the hidden size ({hidden}).",
        "lora_dropout": "lora.dropout must be in [0, 1), got {dropout}.",
        "lora_targets": "lora.targets must be a non-empty list of {allowed} or 'all-linear'; got {unknown}.",
        "zero_stage": "zero_stage must be 0, 1, 2 or 3.",
        "tp_heads": "tp={tp} does not divide the {heads} attention heads; allowed tp: {allowed}.",
        "pp_layers": "pp={pp} exceeds the {layers} layers.",
        "virtual_stages_pp": "virtual_stages={virtual_stages} needs pp > 1: the interleaved schedule splits pipeline "
        "stages, and Megatron-LM refuses it on one stage; use virtual_stages 1 or a pp of 2 or more.",
        "virtual_stages_layers": "pp × virtual_stages ({pp} × {virtual_stages}) exceeds the number of layers "
        "({layers}): each virtual stage holds at least one layer, so with pp {pp} virtual_stages is at most {most}. "
        "Uneven first and last stages (Megatron-LM --decoder-first-pipeline-num-layers and "
        "--decoder-last-pipeline-num-layers) are not sized.",
        "ep_dense": "ep > 1 needs a mixture-of-experts model.",
        "ep_experts": "ep={ep} must divide the {experts} experts and fit inside dp × tp.",
        "cp_eager_attention": "cp={cp} needs fused attention (flash or sdpa): context parallelism passes keys and "
        "values around a ring inside the fused kernels, and no stack runs it with eager attention.",
        "ep_grid": "ep={ep} must divide dp × cp = {dp_cp}: with plan.expert_tp unset the experts keep tp={tp} "
        "(Megatron's default), and tp × ep × pp must divide the GPUs; to spread the experts over the tp ranks, set "
        "plan.expert_tp (allowed: {allowed}) on the megatron stack.",
        "expert_tp_grid": "expert_tp={expert_tp} × ep={ep} × pp={pp} must divide the {gpus} GPUs (Megatron's expert "
        "grid); allowed expert_tp: {allowed}.",
        "expert_tp_stack": "expert_tp={expert_tp} (other than tp={tp}) runs on the megatron stack only "
        "(Megatron-LM --expert-tensor-parallel-size, Megatron-Bridge), which does not run this plan; leave it unset "
        "or equal to tp.",
        "offload_params_zero3": "offloading parameters needs zero_stage 3 (FSDP FULL_SHARD).",
        "dp_shard_divide": "dp_shard={shard} must divide dp={dp}; allowed dp_shard: {allowed}.",
        "dp_shard_zero3": "dp_shard={shard} < dp={dp} (hybrid sharding) needs zero_stage 3 (FSDP HYBRID_SHARD).",
        "cp_seq_len": "cp={cp} must divide seq_len ({seq_len}).",
        "loss_compiled": "loss compiled is the cross-entropy compiled with the model: it needs compile true.",
        "fp8_params_task": "fp8_params stores the trained weights in FP8: it needs precision fp8 and a pretrain or "
        "full_finetune task; got precision {precision}, task {task}.",
        "fp32_params_task": "fp32_params keeps the parameters in fp32 under torch.autocast to a 16-bit dtype: it needs "
        "precision bf16 or fp16 with mixed precision and a pretrain, full_finetune or lora task, without fp8_params; "
        "got precision {precision}, task {task}.",
        "plan_cluster_gpus": "The plan needs dp×tp×pp×cp = {gpus} GPUs; the cluster has {cluster}.",
        "optimizer_in_backward_task": "optimizer_in_backward steps the trained weights: it needs a full training task.",
        "optimizer_in_backward_gpu": "optimizer_in_backward runs on one GPU without ZeRO.",
        "optimizer_in_backward_batch": "optimizer_in_backward steps every micro-batch: the global batch must be the "
        "micro-batch ({micro_batch}), got {global_batch}.",
        # speculative decoding's draft model (app/estimator/serving_levers.py)
        "draft_vocab": "the draft model must share the target's tokenizer: {draft} has a vocabulary of "
        "{draft_vocab:,} tokens, {target} {target_vocab:,}; name a draft with the same vocabulary size",
        "draft_size": "the draft model must be at most {share:.0%} of the target's parameters to speed it up: {draft} "
        "has {draft_b:.1f}B, {target} {target_b:.1f}B",
        # a plan and the GPU's math (app/estimator/performance.py)
        "precision_peak": "{gpu} has no {precision} peak",
        "plan_gpus": "plan uses {gpus} GPUs but the cluster has {cluster}",
        "scaling_replica": "one replica of the plan (tp × pp × cp) runs on {replica} GPUs, and the scaling table "
        "adds whole replicas from {smallest} GPUs ({first_nodes} servers of {gpus_per_node}) to {largest} "
        "({last_nodes} servers): a replica must divide {smallest} GPUs; estimate a plan of {replica} GPUs with "
        "POST /estimate",
        "micro_batch_positive": "micro_batch and seq_len must be positive",
        "seq_len_context": "seq_len {seq_len:,} exceeds the model's context of {limit:,} tokens "
        "(max_position_embeddings in its config.json, extended by its rope_scaling): the launch trains at the "
        "config's positions; to train a longer context, give model.hf_config with the RoPE scaling that extends it "
        "(e.g. rope_scaling yarn with its factor), or shorten seq_len",
        "global_batch_micro_batch": "global_batch {global_batch:,} must be at least micro_batch ({micro_batch:,}): "
        "an optimizer step takes whole micro-batches on every GPU",
        # the request as the planner reads it (app/planner/service.py, schemas.py, workload.py)
        "fp8_params_gpu": "{gpu} has no {precision}: runs as {runs_as}; fp8_params stores the trained weights in FP8, "
        "so it needs a run in fp8: drop it, or choose a GPU with FP8 math (H100, H200)",
        "fp8_params_stack": "No training stack here runs {task} in fp8: sized and launched in {runs_as}; fp8_params "
        "stores the trained weights in FP8, so it needs a run in fp8: drop it, or choose a GPU with FP8 math (H100, "
        "H200)",
        "fp8_params_precision": "fp8_params stores the trained weights in FP8, so it needs precision fp8 (on a GPU "
        "with FP8 math)",
        "loss_chunked": "no stack this service launches runs a chunked cross-entropy (app/planner/levers.py): use "
        "fused (Liger on the Trainer, Megatron-LM's fused cross-entropy) or compiled",
        "levers_together": "no stack this service launches runs the memory levers {levers} together on any plan of "
        "this job (the stacks that run each: {runs}; app/planner/levers.py): drop or change one of them",
        "serving_training_levers": "plan sets training memory levers; serving sizes its own engine",
        "serving_task_workload": 'task "serving" is sized by the serving estimator',
        "hub_config_unread": "the config of {hf_id} was not read from the Hub",
        # serving (app/planner/serving_request.py, serving_split.py, serving_service.py, serving.py, serving_disagg.py)
        "serving_training_lever": "{name} {value} is a training setting serving does not size: a serving plan is tp "
        "× pp per replica and dp replicas; leave {name} at {default}",
        # plan.ep on a serving plan: expert parallel serving runs with DP attention (app/planner/serving_request.py)
        "serving_ep_model": "ep {ep}: expert parallel serving runs with DP attention on MLA MoE models (DeepSeek "
        "V2/V3 family) only, and this model is not one: leave ep at 1",
        "serving_ep_engine": "ep {ep}: expert parallel serving runs with DP attention under SGLang or vLLM, not "
        "{engine}: leave ep at 1 or pick one of those engines",
        "serving_ep_speculative": "ep {ep}: expert parallel serving with DP attention is sized without speculative "
        "decoding: drop speculative or leave ep at 1",
        "serving_ep_batching": "ep {ep}: expert parallel serving with DP attention is sized with continuous batching "
        "only: leave ep at 1",
        "serving_ep_tp": "ep {ep}: expert parallel serving runs with DP attention, ep equal to tp on one pipeline "
        "stage (tp {tp}, pp {pp} here): set ep to tp with pp 1, or leave ep at 1",
        "serving_precision": "serving runs fp16, bf16 or fp8 math, not {precision}; set precision",
        "serving_kv_precision": "kv_cache_precision must be one of {allowed} for serving",
        "serving_mtp_absent": "mtp runs the checkpoint's own multi-token-prediction layers (config.json "
        "num_nextn_predict_layers, as DeepSeek-V3/R1 ship): this model has none; use eagle3, ngram or draft_model",
        "serving_checkpoint_format": "the checkpoint's quantization_config ({scheme}) is no format serving sizes "
        "({allowed}): state weights to size the checkpoint you will serve",
        "serving_length_short": "{name} {length:,} is shorter than input_tokens + output_tokens ({total:,}), the "
        "mean request",
        "serving_length_context": "{name} {length:,} exceeds the model's context of {limit:,} tokens "
        "(max_position_embeddings in its config.json)",
        "serving_request_context": "input_tokens + output_tokens = {total:,} exceeds the model's context of "
        "{limit:,} tokens (max_position_embeddings in its config.json); shorten the prompt or the output",
        "serving_sequence_kv": "one sequence of {context:,} tokens does not fit the KV cache on {where}: it holds at "
        "most {tokens:,} tokens (TP {tp}); shorten input_tokens + output_tokens, or add GPUs",
        "serving_no_kv": "{model} leaves no room for a KV cache on {where} at any tensor-parallel degree within a "
        "server; add GPUs, use a smaller weight format, or a larger GPU",
        "serving_no_kv_nodes": "{model} leaves no room for a KV cache on {where} at any tensor-parallel degree "
        "within a server or pipeline across the servers; add GPUs, use a smaller weight format, or a larger GPU",
        "serving_estimate_disaggregated": "/estimate sizes the plan given as colocated replicas; disaggregated "
        "pools are sized by /recommend",
        "serving_static_rate": "batching static is sized at a stated concurrency only (a fixed batch run offline): "
        "an offered requests_per_s is simulated with continuous batching, which every engine's server runs; allowed "
        "with requests_per_s: continuous",
        "serving_acceptance_rate": "acceptance_rate must be at least 0 and below 1 (at 1 every drafted token would "
        "be accepted, an unbounded speed-up)",
        "serving_pp_speculative": "{engine} does not start speculative decoding ({method}) in a replica split into "
        "{pp} pipeline stages (at the release the launch pins, its server refuses or fails on a speculative "
        "algorithm across pipeline stages): use a replica "
        "without pipeline stages (tensor parallel within a server, or larger GPUs), another engine, or no speculation",
        "serving_plan_gpus": "plan uses dp × tp × pp = {gpus} GPUs but the hardware has {hardware}",
        "serving_tp_heads": "tp {tp} must divide the model's {heads} attention heads (and its {kv_heads} KV heads "
        "must divide or be divided by it)",
        "serving_pp_layers": "pp {pp} exceeds the model's {layers} layers",
        "serving_rate_needed": "replicas_for_slo needs requests_per_s",
        "at_least_one": "{name} must be at least 1",
        "serving_rate_positive": "requests_per_s must be positive",
        "serving_memory_utilization": "gpu_memory_utilization must be between 0.05 and 0.99",
        "serving_max_model_len": "max_model_len ({length}) is shorter than input_tokens + output_tokens ({total})",
        "serving_prefix_rate": "prefix_cache_hit_rate must be between 0 and 1",
        "serving_prefix_engine": "{engine} runs no prefix cache",
        "serving_speculative_tokens": "num_speculative_tokens must be between 1 and {most}",
        "serving_draft_needed": "draft_model needs the draft model",
        "serving_levers_continuous": "the prefix cache and speculative decoding are modelled on the engines' "
        "continuous batching (current releases) only; set serving.batching to continuous",
        "serving_no_sequence": "one sequence of {context:,} tokens does not fit: the KV cache holds {tokens:,} tokens "
        "at TP {tp}; shorten input_tokens + output_tokens (or max_model_len), or use more or larger GPUs",
        "serving_no_sequence_rank": "one sequence of {context:,} tokens does not fit: under DP attention / EP {tp} "
        "a sequence lives on one rank, whose KV cache holds {tokens:,} tokens; shorten input_tokens + output_tokens "
        "(or max_model_len), or use more or larger GPUs",
        "serving_dp_attention_servers": "{engine} runs DP attention with expert parallel on one server here: ep {ep} "
        "spans more than its {gpus_per_node} GPUs; use ep {gpus_per_node} or fewer (with hardware.nodes 1), or engine "
        "sglang",
        "serving_no_kv_room": "{model}'s {format} weights take {weights_gib:.1f} GiB per GPU at TP {tp} × PP {pp}, "
        "leaving no KV cache in the {budget_gib:.1f} GiB {engine} uses of {gpu}'s {gpu_gib:g} GiB; use more GPUs "
        "per replica, a smaller weight format or a larger GPU",
        "serving_plan_degrees": "tp, pp and replicas must be at least 1",
        "disaggregated_engine": "disaggregated prefill/decode launches are built for {engines} here, not {engine}",
        "disaggregated_load": "disaggregated pools are sized for an offered load (serving.requests_per_s) with "
        "continuous batching",
        # /estimate's search (app/planner/service.py): what it tried, and what would fit (NO_PLAN_PARTS)
        "no_plan_fits": "{model} does not fit on {gpus} × {gpu} with any plan ({tried}). {advice}",
    },
    "zh": {
        "positive_integer": "{name} 必须是正整数，收到 {value}。",
        "model_dim_absurd": "{name}={value} 不合理（最多 {most}）。",
        "model_heads_divide": "未给出 head_dim 时，hidden（{hidden}）必须能被 heads（{heads}）整除。",
        "model_head_dim_positive": "head_dim 必须为正数，收到 {head_dim}。",
        "model_kv_heads_divide": "kv_heads（{kv_heads}）必须整除 heads（{heads}）"
        "（1 为 MQA，等于 heads 为 MHA，其余为 GQA）。",
        "model_moe_negative": "MoE 的各项数量不能为负。",
        "model_experts_per_token": "experts_per_token 必须在 1 到 experts（{experts}）之间，收到 {experts_per_token}。",
        "model_moe_layers": "moe_layers（{moe_layers}）不能超过 layers（{layers}）。",
        "model_expert_ffn": "expert_ffn 必须在 1..{most} 之间。",
        "model_params_positive": "params 必须是正数，收到 {params}。",
        "model_params_mismatch": "params={params:,.0f} 与架构不符：该架构恰有 {exact:,} 个参数（{relative:+.1%}）；"
        "请修正架构或不填 params。",
        "model_tied_embeddings": "tied_embeddings 必须为 true 或 false。",
        "model_too_large": "该架构有 {total:,.0f} 个参数；最多支持 {most:,.0f} 个。",
        "model_too_small": "该架构有 {total:,.0f} 个参数，超出支持范围 {least:,.0f} 至 {most:,.0f}。",
        "model_params_finite": "params 必须是有限数，收到 {params}。",
        "model_params_range": "params={params:,.0f} 超出支持范围 {least:,.0f} 至 {most:,.0f}。",
        "hf_config_missing": "model_type 为 {model_type!r} 的 hf_config 缺少必需的键：{missing}。",
        "hf_config_count": "hf_config.{key} 必须是 {least} 到 {most} 之间的整数，收到 {value}。",
        "hf_config_number": "hf_config.{key} 必须是绝对值不超过 {most} 的有限数，收到 {value}。",
        "hf_config_at_least": "hf_config.{key} 至少为 {least}，收到 {value}。",
        "hf_config_flag": "hf_config.{key} 必须为 true 或 false（JSON 布尔值，不能是字符串或数字），收到 {value}。",
        "hf_config_mlp_only_layers": "hf_config.mlp_only_layers 必须是层序号的列表。",
        "hf_config_object": "hf_config 必须是 JSON 对象（config.json 的内容）。",
        "hf_config_model_type": "不支持的 hf_config model_type {model_type!r}；支持：{supported}。",
        "hf_config_malformed": "hf_config 中有格式错误的值：{detail}。",
        "preset_unknown_close": "未知的模型预设 {preset!r}；最接近的：{close}。",
        "preset_unknown": "未知的模型预设 {preset!r}；可选：{known}。",
        "variant_unknown": "{preset} 没有 {variant} 版本（可选：{allowed}）；请用 model.hf_id 指定其他仓库",
        "variant_single": "{preset} 没有 {variant} 版本（它只发布一个仓库）；请用 model.hf_id 指定其他仓库",
        "gpu_unknown_close": "未知的 GPU 型号 {gpu!r}。是否指 {close}？可选：{allowed}。",
        "gpu_unknown": "未知的 GPU 型号 {gpu!r}。可选：{allowed}。",
        "fabric_usual_unknown": "{gpu} 没有已知的常用网络：请给出 hardware.inter_node_gbps 或 inter_node_fabric",
        "server_rate_unknown": "目录未写明 {server} 的网络速率：请给出 hardware.inter_node_gbps",
        "intra_link_unknown": "未知的节点内互联 {link!r}；可选：{known}",
        "fabric_unknown": "未知的网络 {fabric!r}；可选：{known}",
        "multi_node_rate": "多节点组需要 hardware.inter_node_gbps",
        "choice": "{name} 必须是以下之一：{allowed}",
        "integer_range": "{name} 必须是 {allowed} 之间的整数，收到 {value}。",
        "at_most": "{name} 最多为 {most}。",
        "kbit_upcast_qlora": "kbit_upcast 只适用于 qlora 任务。",
        "lora_rank_hidden": "lora.rank（{rank}）不能超过隐藏维度（{hidden}）。",
        "lora_dropout": "lora.dropout 必须在 [0, 1) 之间，收到 {dropout}。",
        "lora_targets": "lora.targets 必须是由 {allowed} 或 'all-linear' 组成的非空列表；收到 {unknown}。",
        "zero_stage": "zero_stage 必须是 0、1、2 或 3。",
        "tp_heads": "tp={tp} 不能整除 {heads} 个注意力头；可选 tp：{allowed}。",
        "pp_layers": "pp={pp} 超过 {layers} 层。",
        "virtual_stages_pp": "virtual_stages={virtual_stages} 需要 pp > 1：交错调度拆分的是流水线阶段，只有一个阶段时 "
        "Megatron-LM 会拒绝；请把 virtual_stages 设为 1，或把 pp 设为 2 及以上。",
        "virtual_stages_layers": "pp × virtual_stages（{pp} × {virtual_stages}）超过层数（{layers}）："
        "每个虚拟阶段至少要有一层，所以 pp 为 {pp} 时 virtual_stages 至多为 {most}。首末阶段层数不均（Megatron-LM 的 "
        "--decoder-first-pipeline-num-layers 和 --decoder-last-pipeline-num-layers）不在估算范围内。",
        "ep_dense": "ep > 1 需要混合专家（MoE）模型。",
        "ep_experts": "ep={ep} 必须整除 {experts} 个专家，且不超过 dp × tp。",
        "cp_eager_attention": "cp={cp} 需要融合注意力（flash 或 sdpa）：上下文并行在融合内核中沿环传递键和值，"
        "没有任何训练栈能在 eager 注意力下运行它。",
        "ep_grid": "ep={ep} 必须整除 dp × cp = {dp_cp}：未设置 plan.expert_tp 时专家沿用 tp={tp}（Megatron 的默认值），"
        "tp × ep × pp 必须整除 GPU 数；若要把专家分布到各 tp rank 上，请在 megatron 栈上设置 plan.expert_tp"
        "（可选：{allowed}）。",
        "expert_tp_grid": "expert_tp={expert_tp} × ep={ep} × pp={pp} 必须整除 {gpus} 张 GPU"
        "（Megatron 的专家并行网格）；可选 expert_tp：{allowed}。",
        "expert_tp_stack": "expert_tp={expert_tp}（不同于 tp={tp}）只在 megatron 栈上运行（Megatron-LM "
        "--expert-tensor-parallel-size、Megatron-Bridge），而该栈不运行此方案；请不设或设为与 tp 相同。",
        "offload_params_zero3": "卸载参数需要 zero_stage 3（FSDP FULL_SHARD）。",
        "dp_shard_divide": "dp_shard={shard} 必须整除 dp={dp}；可选 dp_shard：{allowed}。",
        "dp_shard_zero3": "dp_shard={shard} < dp={dp}（混合分片）需要 zero_stage 3（FSDP HYBRID_SHARD）。",
        "cp_seq_len": "cp={cp} 必须整除 seq_len（{seq_len}）。",
        "loss_compiled": "loss 为 compiled 表示交叉熵与模型一同编译：需要 compile 为 true。",
        "fp8_params_task": "fp8_params 以 FP8 存储训练权重：需要 precision 为 fp8，且任务为 pretrain 或 full_finetune；"
        "收到 precision {precision}、任务 {task}。",
        "fp32_params_task": "fp32_params 在 torch.autocast 转为 16 位精度时保持 fp32 参数：需要 precision 为 "
        "bf16 或 fp16 且为混合精度，任务为 pretrain、full_finetune 或 lora，且不与 fp8_params 同用；"
        "收到 precision {precision}、任务 {task}。",
        "plan_cluster_gpus": "方案需要 dp×tp×pp×cp = {gpus} 张 GPU；集群有 {cluster} 张。",
        "optimizer_in_backward_task": "optimizer_in_backward 在反向中更新训练权重：需要全量训练任务。",
        "optimizer_in_backward_gpu": "optimizer_in_backward 只在单张 GPU、不用 ZeRO 时运行。",
        "optimizer_in_backward_batch": "optimizer_in_backward 每个微批次都更新：全局批次必须等于微批次"
        "（{micro_batch}），收到 {global_batch}。",
        "draft_vocab": "草稿模型必须与目标模型共用分词器：{draft} 的词表有 {draft_vocab:,} 个 token，{target} 有 "
        "{target_vocab:,} 个；请选择词表大小相同的草稿模型",
        "draft_size": "草稿模型的参数量最多为目标模型的 {share:.0%} 才能加速：{draft} 有 {draft_b:.1f}B，{target} 有 "
        "{target_b:.1f}B",
        "precision_peak": "{gpu} 没有 {precision} 算力峰值",
        "plan_gpus": "方案使用 {gpus} 张 GPU，但集群有 {cluster} 张",
        "scaling_replica": "方案的一个副本（tp × pp × cp）需要 {replica} 张 GPU，而扩展表以整个副本递增，从 {smallest} "
        "张 GPU（{first_nodes} 台每台 {gpus_per_node} 张的服务器）到 {largest} 张（{last_nodes} 台服务器）："
        "副本的 GPU 数必须整除 {smallest}；{replica} 张 GPU 的方案请用 POST /estimate 估算",
        "micro_batch_positive": "micro_batch 和 seq_len 必须为正数",
        "seq_len_context": "seq_len {seq_len:,} 超过模型的上下文 {limit:,} tokens（config.json 中的 "
        "max_position_embeddings，含其 rope_scaling 的扩展）：启动配置按该配置的位置长度训练；要训练更长的上下文，"
        "请在 model.hf_config 中给出扩展它的 RoPE 缩放（如 rope_scaling yarn 及其系数），或缩短 seq_len",
        "global_batch_micro_batch": "global_batch {global_batch:,} 不能小于 micro_batch（{micro_batch:,}）："
        "每个优化器步在每块 GPU 上都由完整的微批次组成",
        "fp8_params_gpu": "{gpu} 不支持 {precision}：按 {runs_as} 运行；fp8_params 以 FP8 存储训练权重，需要以 fp8 "
        "运行：请去掉它，或选择支持 FP8 计算的 GPU（H100、H200）",
        "fp8_params_stack": "本服务的训练栈都不以 fp8 运行 {task}：按 {runs_as} 估算和启动；fp8_params 以 FP8 存储训练"
        "权重，需要以 fp8 运行：请去掉它，或选择支持 FP8 计算的 GPU（H100、H200）",
        "fp8_params_precision": "fp8_params 以 FP8 存储训练权重，需要 precision 为 fp8（且 GPU 支持 FP8 计算）",
        "loss_chunked": "本服务启动的训练栈都不运行分块交叉熵（app/planner/levers.py）：请用 fused（Trainer 上的 "
        "Liger、Megatron-LM 的融合交叉熵）或 compiled",
        "levers_together": "本服务启动的训练栈在此任务的任何方案上都不能同时运行显存选项 {levers}"
        "（各自的训练栈：{runs}；app/planner/levers.py）：请去掉或更换其中之一",
        "serving_training_levers": "plan 设置了训练用的显存选项；推理服务按其引擎自行估算",
        "serving_task_workload": '任务 "serving" 由推理估算器估算',
        "hub_config_unread": "未能从 Hub 读取 {hf_id} 的配置",
        "serving_training_lever": "{name} {value} 是训练设置，推理不估算它：推理方案是每个副本 tp × pp、共 dp 个副本；"
        "请将 {name} 保持为 {default}",
        "serving_ep_model": "ep {ep}：专家并行推理只在 MLA 结构的 MoE 模型（DeepSeek V2/V3 系列）上配合 DP attention "
        "运行，此模型不是：请将 ep 保持为 1",
        "serving_ep_engine": "ep {ep}：专家并行推理配合 DP attention 只在 SGLang 或 vLLM 下运行，{engine} 不支持："
        "请将 ep 保持为 1，或改用这两种引擎之一",
        "serving_ep_speculative": "ep {ep}：配合 DP attention 的专家并行推理不含投机解码：请去掉 speculative，"
        "或将 ep 保持为 1",
        "serving_ep_batching": "ep {ep}：配合 DP attention 的专家并行推理只按连续批处理估算：请将 ep 保持为 1",
        "serving_ep_tp": "ep {ep}：专家并行推理配合 DP attention 运行，ep 须等于 tp 且只有一个流水线阶段"
        "（此处 tp {tp}、pp {pp}）：请将 ep 设为 tp 并令 pp 为 1，或将 ep 保持为 1",
        "serving_precision": "推理以 fp16、bf16 或 fp8 计算，不支持 {precision}；请设置 precision",
        "serving_kv_precision": "推理的 kv_cache_precision 必须是以下之一：{allowed}",
        "serving_mtp_absent": "mtp 使用检查点自带的多 token 预测层（config.json 的 num_nextn_predict_layers，"
        "DeepSeek-V3/R1 附带）：此模型没有；请用 eagle3、ngram 或 draft_model",
        "serving_checkpoint_format": "检查点的 quantization_config（{scheme}）不是推理能估算的格式（{allowed}）："
        "请设置 weights 以估算你要部署的检查点",
        "serving_length_short": "{name} {length:,} 短于 input_tokens + output_tokens（{total:,}），即平均请求",
        "serving_length_context": "{name} {length:,} 超过模型的上下文 {limit:,} tokens（config.json 中的 "
        "max_position_embeddings）",
        "serving_request_context": "input_tokens + output_tokens = {total:,} 超过模型的上下文 {limit:,} tokens"
        "（config.json 中的 max_position_embeddings）；请缩短提示或输出",
        "serving_sequence_kv": "一条 {context:,} tokens 的序列放不进 {where} 的 KV 缓存：它最多容纳 {tokens:,} tokens"
        "（TP {tp}）；请缩短 input_tokens + output_tokens，或增加 GPU",
        "serving_no_kv": "{model} 在 {where} 上以服务器内任何张量并行度都没有 KV 缓存的空间；请增加 GPU、"
        "使用更小的权重格式或更大的 GPU",
        "serving_no_kv_nodes": "{model} 在 {where} 上以服务器内任何张量并行度、或跨服务器流水线，都没有 KV 缓存的空间；"
        "请增加 GPU、使用更小的权重格式或更大的 GPU",
        "serving_estimate_disaggregated": "/estimate 按给定方案估算共置副本；"
        "分离的 prefill/decode 池由 /recommend 估算",
        "serving_static_rate": "static 批处理只按给定并发估算（离线运行的固定批次）："
        "给定 requests_per_s 时按连续批处理模拟，这也是各引擎服务端实际运行的方式；"
        "与 requests_per_s 一起只允许 continuous",
        "serving_acceptance_rate": "acceptance_rate 须不小于 0 且小于 1（为 1 时每个草稿 token 都被接受，加速无上限）",
        "serving_pp_speculative": "{engine} 不能在切分为 {pp} 个流水线阶段的副本中启动推测解码（{method}）"
        "（在启动命令锁定的版本中，其服务端拒绝或无法在流水线阶段间运行推测算法）："
        "请使用不分流水线阶段的副本（服务器内张量并行，或更大的 GPU）、"
        "换用其他引擎，或不用推测解码",
        "serving_plan_gpus": "方案使用 dp × tp × pp = {gpus} 张 GPU，但硬件有 {hardware} 张",
        "serving_tp_heads": "tp {tp} 必须整除模型的 {heads} 个注意力头（其 {kv_heads} 个 KV 头必须整除它或被它整除）",
        "serving_pp_layers": "pp {pp} 超过模型的 {layers} 层",
        "serving_rate_needed": "replicas_for_slo 需要 requests_per_s",
        "at_least_one": "{name} 至少为 1",
        "serving_rate_positive": "requests_per_s 必须为正数",
        "serving_memory_utilization": "gpu_memory_utilization 必须在 0.05 到 0.99 之间",
        "serving_max_model_len": "max_model_len（{length}）短于 input_tokens + output_tokens（{total}）",
        "serving_prefix_rate": "prefix_cache_hit_rate 必须在 0 到 1 之间",
        "serving_prefix_engine": "{engine} 不运行前缀缓存",
        "serving_speculative_tokens": "num_speculative_tokens 必须在 1 到 {most} 之间",
        "serving_draft_needed": "draft_model 需要指定草稿模型",
        "serving_levers_continuous": "前缀缓存与投机解码只按引擎的连续批处理（当前版本）建模；请把 serving.batching "
        "设为 continuous",
        "serving_no_sequence": "一条 {context:,} tokens 的序列放不下：TP {tp} 时 KV 缓存只容纳 {tokens:,} tokens；"
        "请缩短 input_tokens + output_tokens（或 max_model_len），或使用更多或更大的 GPU",
        "serving_no_sequence_rank": "一条 {context:,} tokens 的序列放不下：DP 注意力 / EP {tp} 下一条序列只在一个 rank "
        "上，其 KV 缓存只容纳 {tokens:,} tokens；请缩短 input_tokens + output_tokens（或 max_model_len），"
        "或使用更多或更大的 GPU",
        "serving_dp_attention_servers": "此处 {engine} 只在一台服务器上运行 DP 注意力加专家并行："
        "ep {ep} 超出了一台服务器的 {gpus_per_node} 张 GPU；请使用不超过 {gpus_per_node} 的 ep"
        "（hardware.nodes 设为 1），或改用 sglang 引擎",
        "serving_no_kv_room": "{model} 的 {format} 权重在 TP {tp} × PP {pp} 时每张 GPU 占 {weights_gib:.1f} GiB，"
        "在 {engine} 使用的 {budget_gib:.1f} GiB（{gpu} 共 {gpu_gib:g} GiB）中没有留下 KV 缓存；请每个副本使用更多 "
        "GPU、更小的权重格式或更大的 GPU",
        "serving_plan_degrees": "tp、pp 和副本数都至少为 1",
        "disaggregated_engine": "分离式 prefill/decode 启动在此只支持 {engines}，不支持 {engine}",
        "disaggregated_load": "分离式资源池按给定负载（serving.requests_per_s）及连续批处理估算",
        "no_plan_fits": "{model} 在 {gpus} × {gpu} 上没有可行的方案（{tried}）。{advice}",
    },
}

# `no_plan_fits`'s parts: what the search tried (`offload_tried`, `fused_tried`), and what would fit, by the leanest
# plan's figures (`would_fit`: more GPUs of the type, or a larger card; a shorter sequence where its activations alone
# exceed the card; servers with more host RAM where only the host runs short). Both languages carry the same keys.
NO_PLAN_PARTS: dict[str, dict[str, str]] = {
    "en": {
        "tried": "ZeRO-3 and recompute included; offload not tried: give hardware.host_ram_gib",
        "tried_fused": "ZeRO-3, recompute and the fused loss included; offload not tried: give hardware.host_ram_gib",
        "tried_offload": "ZeRO-3, recompute and offload included",
        "tried_offload_fused": "ZeRO-3, recompute, offload and the fused loss included",
        "no_plan": "No parallel layout of the model could be sized on these GPUs.",
        "gpu_memory": "The leanest needs {needed_gib:,.1f} GiB per GPU; the card has {limit_gib:,.1f} GiB usable "
        "after the headroom.",
        "more_gpus": "The leanest needs {needed_gib:,.1f} GiB per GPU; the card has {limit_gib:,.1f} GiB usable "
        "after the headroom. About {fit_gpus:,} GPUs of this type would hold the sharded model states.",
        "more_gpus_cards": "The leanest needs {needed_gib:,.1f} GiB per GPU; the card has {limit_gib:,.1f} GiB "
        "usable after the headroom. About {fit_gpus:,} GPUs of this type would hold the sharded model states; or a "
        "card with more memory: {cards}.",
        "activations": "The leanest needs {needed_gib:,.1f} GiB per GPU; the card has {limit_gib:,.1f} GiB usable "
        "after the headroom, and its activations alone ({activations_gib:,.1f} GiB) exceed it: a shorter sequence "
        "than {seq_len:,} tokens, more GPUs to split it over (context parallel), or a card with more memory.",
        "host_ram": "The leanest fits in GPU memory, but its offload needs {host_gib:,.0f} GiB of host RAM per "
        "node; the node has {host_ram_gib:,.0f} GiB, {host_ram_limit_gib:,.0f} GiB after the reserve for the OS and "
        "the training processes: servers with more host RAM, or more servers to shard the states over.",
        "host_ram_load": "The leanest fits in GPU memory, but loading the model needs {load_gib:,.0f} GiB of host RAM "
        "per node ({copies} rank(s) on the node each hold the whole {model_gib:,.0f} GiB model before ZeRO-3 shards "
        "it); the node has {host_ram_gib:,.0f} GiB, {host_ram_limit_gib:,.0f} GiB after the reserve: servers with "
        "more host RAM.",
        "host_ram_unknown": "The leanest fits in GPU memory, but its offload needs {host_gib:,.0f} GiB of host RAM "
        "per node, and the node's host RAM is not known: give hardware.host_ram_gib, or a server whose host RAM the "
        "catalog lists.",
        "host_ram_unknown_load": "The leanest fits in GPU memory, but loading the model needs {load_gib:,.0f} GiB of "
        "host RAM per node ({copies} rank(s) on the node each hold the whole {model_gib:,.0f} GiB model before "
        "ZeRO-3 shards it), and the node's host RAM is not known: give hardware.host_ram_gib, or a server whose "
        "host RAM the catalog lists.",
    },
    "zh": {
        "tried": "已包括 ZeRO-3 和重计算；未尝试卸载：请给出 hardware.host_ram_gib",
        "tried_fused": "已包括 ZeRO-3、重计算和融合损失函数；未尝试卸载：请给出 hardware.host_ram_gib",
        "tried_offload": "已包括 ZeRO-3、重计算和卸载",
        "tried_offload_fused": "已包括 ZeRO-3、重计算、卸载和融合损失函数",
        "no_plan": "在这些 GPU 上无法为该模型确定任何并行布局。",
        "gpu_memory": "最省显存的方案每卡需要 {needed_gib:,.1f} GiB；扣除余量后显卡可用 {limit_gib:,.1f} GiB。",
        "more_gpus": "最省显存的方案每卡需要 {needed_gib:,.1f} GiB；扣除余量后显卡可用 {limit_gib:,.1f} GiB。"
        "约 {fit_gpus:,} 张这种 GPU 可以容纳切分后的模型状态。",
        "more_gpus_cards": "最省显存的方案每卡需要 {needed_gib:,.1f} GiB；扣除余量后显卡可用 {limit_gib:,.1f} GiB。"
        "约 {fit_gpus:,} 张这种 GPU 可以容纳切分后的模型状态；或换用显存更大的显卡：{cards}。",
        "activations": "最省显存的方案每卡需要 {needed_gib:,.1f} GiB；扣除余量后显卡可用 {limit_gib:,.1f} GiB，"
        "仅激活值（{activations_gib:,.1f} GiB）就已超出：请使用短于 {seq_len:,} tokens 的序列、用更多 GPU "
        "切分序列（上下文并行），或换用显存更大的显卡。",
        "host_ram": "最省显存的方案放得进显存，但其卸载每个节点需要 {host_gib:,.0f} GiB 主机内存；节点有 "
        "{host_ram_gib:,.0f} GiB，为操作系统和训练进程预留后可用 {host_ram_limit_gib:,.0f} GiB：请选用主机内存更大的"
        "服务器，或用更多服务器切分模型状态。",
        "host_ram_load": "最省显存的方案放得进显存，但加载模型每个节点需要 {load_gib:,.0f} GiB 主机内存（节点上 "
        "{copies} 个 rank 在 ZeRO-3 切分前各持有完整的 {model_gib:,.0f} GiB 模型）；节点有 {host_ram_gib:,.0f} GiB，"
        "预留后可用 {host_ram_limit_gib:,.0f} GiB：请选用主机内存更大的服务器。",
        "host_ram_unknown": "最省显存的方案放得进显存，但其卸载每个节点需要 {host_gib:,.0f} GiB 主机内存，而节点的"
        "主机内存未知：请给出 hardware.host_ram_gib，或选用目录列出主机内存的服务器。",
        "host_ram_unknown_load": "最省显存的方案放得进显存，但加载模型每个节点需要 {load_gib:,.0f} GiB 主机内存（节点"
        "上 {copies} 个 rank 在 ZeRO-3 切分前各持有完整的 {model_gib:,.0f} GiB 模型），而节点的主机内存未知：请给出 "
        "hardware.host_ram_gib，或选用目录列出主机内存的服务器。",
    },
}


def render(code: str, params: Mapping[str, Any], lang: str = "en") -> str:
    """The text of `code` in `lang` ("en" or "zh"), its lists joined with the language's separator."""
    sep = LIST_SEPARATORS[lang]
    values = {k: sep.join(map(str, v)) if isinstance(v, list | tuple) else v for k, v in params.items()}
    if code == "no_plan_fits":
        parts = NO_PLAN_PARTS[lang]
        tried = "tried" + ("_offload" if params["offload_tried"] else "") + ("_fused" if params["fused_tried"] else "")
        values |= {"tried": parts[tried], "advice": parts[params["would_fit"]].format(**values)}
    return ESTIMATOR_ERRORS[lang][code].format(**values)
