"""The words of a launch (a serving option's, and a training launch's checkpoint conversion), in English and
Simplified Chinese, by code (app/text/messages.py renders them with `launch()`; tests/test_messages.py checks both
languages define the same codes). Kept apart from app/text/messages.py, which holds every other catalog of words, so
that module stays within the module size."""

from __future__ import annotations

# A serving option's launch (app/planner/serving_launch.py): how its replicas and a replica's servers are started
# (`layout_*`) and what the command assumes (the rest). Commands and flags stay as the engines spell them.
LAUNCH: dict[str, dict[str, str]] = {
    "en": {
        "layout_replicas": "{replicas} replica(s) of {gpus} GPU(s): {per_node} per server, each pinned with "
        "CUDA_VISIBLE_DEVICES to its own GPUs and listening on its own port, behind a load balancer",
        "layout_vllm": "{replicas} replica(s) of {nodes} servers: TP {tp} inside each server, {pp} pipeline stages "
        "across servers joined by {fabric}; vLLM runs each replica as one Ray cluster (ray start --head on the first "
        "server, ray start --address on the others, the command on the head), behind a load balancer",
        "layout_sglang": "{replicas} replica(s) of {nodes} servers: TP {tp} inside each server, {pp} pipeline stages "
        "across servers joined by {fabric}; every server of a replica runs the command with its own --node-rank (0 on "
        "the head, whose address --dist-init-addr names, to {last}); the head serves HTTP, behind a load balancer",
        "layout_trt-llm": "{replicas} replica(s) of {nodes} servers: TP {tp} inside each server, {pp} pipeline stages "
        "across servers joined by {fabric}; each replica is one MPI job of {ranks} ranks over its servers (mpirun or "
        "srun, every rank under trtllm-llmapi-launch); rank 0 serves HTTP, behind a load balancer",
        "layout_vllm_tp": "{replicas} replica(s) of {nodes} servers: one TP {tp} group over all their GPUs, joined by "
        "{fabric}; vLLM runs each replica as one Ray cluster (ray start --head on the first server, ray start "
        "--address on the others, the command on the head), behind a load balancer",
        "layout_sglang_tp": "{replicas} replica(s) of {nodes} servers: one TP {tp} group over all their GPUs, joined "
        "by {fabric}; every server of a replica runs the command with its own --node-rank (0 on the head, whose "
        "address --dist-init-addr names, to {last}); the head serves HTTP, behind a load balancer",
        "layout_trt-llm_tp": "{replicas} replica(s) of {nodes} servers: one TP {tp} group over all their GPUs, joined "
        "by {fabric}; each replica is one MPI job of {ranks} ranks over its servers (mpirun or srun, every rank under "
        "trtllm-llmapi-launch); rank 0 serves HTTP, behind a load balancer",
        "layout_sglang_ep": "{replicas} replica(s) of {gpus} GPUs (one server per replica), run with DP attention: "
        "{ranks} attention data-parallel ranks, one per GPU, each with its own KV cache and scheduler (a request runs "
        "on one rank; --max-running-requests is the replica's, {rank_seqs} per rank), and the {experts} routed "
        "experts split {ranks} ways (expert parallel, {per_rank} per GPU): every MoE layer sends each token to its "
        "experts' GPUs and back, an all-to-all dispatch and combine (DeepEP) over NVLink; behind a load balancer",
        "layout_sglang_ep_nodes": "{replicas} replica(s) of {nodes} servers ({ranks} GPUs), run with DP attention: "
        "{ranks} attention data-parallel ranks, one per GPU, each with its own KV cache and scheduler (a request runs "
        "on one rank; --max-running-requests is the replica's, {rank_seqs} per rank), and the {experts} routed experts "
        "split {ranks} ways (expert parallel, {per_rank} per GPU): every MoE layer sends each token to its experts' "
        "GPUs and back, an all-to-all dispatch and combine (DeepEP) over NVLink inside a server and {fabric} across "
        "servers; every server of a replica runs the command with its own --node-rank (0 on the head, whose address "
        "--dist-init-addr names, to {last}); the head serves HTTP, behind a load balancer",
        "layout_vllm_ep": "{replicas} replica(s) of {gpus} GPUs (one server per replica): vLLM runs {ranks} engines "
        "per replica (--data-parallel-size {ranks}, one per GPU, attention data-parallel), each with its own KV cache "
        "and scheduler (--max-num-seqs is each engine's: {rank_seqs}), behind the replica's API server, which spreads "
        "the requests over them; the {experts} routed experts are split {ranks} ways (--enable-expert-parallel, "
        "{per_rank} per GPU): every MoE layer sends each token to its experts' GPUs and back, an all-to-all dispatch "
        "and combine over NVLink, and an engine with no request runs empty steps to keep in step; behind a load "
        "balancer",
        "layout_disaggregated": "{prefill_replicas} prefill replica(s) of TP {prefill_tp} and {decode_replicas} "
        "decode replica(s) of TP {decode_tp}, on separate servers joined by {fabric}: each request is prefilled on "
        "one, its KV sent to one decode replica, which streams the output; the router (one --prefill per prefill "
        "replica, one --decode per decode replica) is the load balancer",
        "layout_disaggregated_vllm": "{prefill_replicas} prefill replica(s) of TP {prefill_tp} and {decode_replicas} "
        "decode replica(s) of TP {decode_tp}, on separate servers joined by {fabric}: each request is prefilled on "
        "one, its KV read by one decode replica through NixlConnector (UCX over the fabric), which streams the output; "
        "every server sets VLLM_NIXL_SIDE_CHANNEL_HOST to its own address, and the proxy (one --prefiller-hosts and "
        "--prefiller-ports entry per prefill replica, one --decoder-hosts and --decoder-ports entry per decode "
        "replica) is the load balancer",
        "layout_disaggregated_trt-llm": "{prefill_replicas} context (prefill) replica(s) of TP {prefill_tp} and "
        "{decode_replicas} generation (decode) replica(s) of TP {decode_tp}, on separate servers joined by {fabric}: "
        "each request is prefilled on one, its KV sent by the cache transceiver to one generation replica, which "
        "streams the output; trtllm-serve disaggregated (every replica's URL under context_servers or "
        "generation_servers of its config) is the load balancer",
        "trtllm_disaggregated": "{options} holds `cache_transceiver_config: {{backend: DEFAULT}}` on every server and "
        "also `disable_overlap_scheduler: true` on the context servers; {config} sets hostname and port (0.0.0.0, "
        "8000) and lists `context_servers: {{num_instances, urls}}` and `generation_servers: {{num_instances, urls}}` "
        "(the URL of each replica, as launch.instances lists them)",
        "shared_servers_prefill": "{per_server} prefill replicas share each prefill server: each line of the prefill "
        "command is one of them, pinned with CUDA_VISIBLE_DEVICES to its own GPUs and listening on its own ports; "
        "every prefill server runs the same lines, and launch.instances lists each replica's server, GPUs and URL",
        "shared_servers_decode": "{per_server} decode replicas share each decode server: each line of the decode "
        "command is one of them, pinned with CUDA_VISIBLE_DEVICES to its own GPUs and listening on its own ports; "
        "every decode server runs the same lines, and launch.instances lists each replica's server, GPUs and URL",
        "vllm_toy_proxy": "the router command is the reference proxy of vLLM's NixlConnector guide, a file of vLLM's "
        "source tree ({proxy}), not in the vllm wheel: fetch it from the vLLM repository at the commit "
        "launch.versions names; one process, no health checks or retries: use it to validate the pools, and put a "
        "production prefill/decode router in its place to serve (vLLM's releases package none; vllm-router, a "
        "separate vllm-project package: --vllm-pd-disaggregation --prefill URL --decode URL; or llm-d)",
        "no_fabric": "Replicas share nothing: separate servers need no InfiniBand or RoCE, only the ordinary network.",
        "pipeline": "Each replica's {pp} pipeline stages pass activations between servers over the SKU's {fabric} (a "
        "few MB a step: far less than tensor parallelism across servers would need); rent the SKU's {fabric} add-on "
        "for every server (quote `addons`; see the option's warnings for its price); replicas still share nothing.",
        "tensor_across": "Each replica's TP {tp} group spans {nodes} servers: every layer's two all-reduces cross the "
        "SKU's {fabric} (tens of µs each, where NVLink takes a few; the latency figures count it); rent the SKU's "
        "{fabric} add-on for every server (quote `addons`; see the option's warnings for its price); replicas still "
        "share nothing.",
        "ep_across": "Each replica's {ranks} ranks span {nodes} servers: every MoE layer's all-to-all dispatch and "
        "combine carry the tokens routed to experts on other servers over the SKU's {fabric} (the latency figures "
        "count it); rent the SKU's {fabric} add-on for every server (quote `addons`; see the option's warnings for its "
        "price); replicas still share nothing.",
        "as_shipped": "{repo} ships {scheme} weights: {engine} reads its quantization_config and serves them as they "
        "are (no --quantization flag), the format this option is sized on",
        "engine_cannot_read": "{engine} does not load {method} checkpoints such as {repo}: serve a {fmt} checkpoint of "
        "the model in a format it reads",
        "other_format": "{repo} ships {scheme} weights, not the {fmt} this option is sized on: serve a {fmt} "
        "checkpoint of the model (from the 16-bit original; a dequantised copy for 16-bit weights)",
        "int4": "int4 needs a 4-bit AWQ or GPTQ checkpoint (group 128) of {repo}; the engine reads its "
        "quantization_config and picks the Marlin kernels itself (no --quantization flag)",
        "int8": "int8 weight-only needs an 8-bit GPTQ checkpoint of {repo}; the engine reads its "
        "quantization_config and picks the Marlin kernels itself (no --quantization flag)",
        "fp8_online": "--quantization fp8 quantises the 16-bit checkpoint of {repo} on load; on GPUs with FP8 tensor "
        "cores the GEMMs run in FP8",
        "trtllm_quantise": "quantise {repo} with TensorRT Model Optimizer first (examples/llm_ptq/hf_ptq.py "
        "--qformat {qformat}{kv}) and serve the exported checkpoint",
        "trtllm_kv": "{options} holds `kv_cache_config: {{dtype: fp8}}` (the FP8 KV cache the sizing assumes)",
        "trtllm_srun": "under Slurm: srun -N {nodes} --ntasks-per-node {per_node} --mpi=pmix trtllm-llmapi-launch "
        "trtllm-serve … (the same arguments)",
        "static": "{engine} always batches continuously: the static-batching figures describe a fixed batch run "
        "offline; the server admits requests as they come",
        "variant": "serves the {variant} model {repo} (model.variant; the preset's {other} model is {other_repo})",
        "checkpoint_unknown": "{placeholder}: no repository is known for {model} (a pasted config.json or an "
        "architecture names none), so put the local path or Hugging Face repository of your checkpoint there (give "
        "model.hf_id to have it named)",
        "length_context": "--{flag} {length:,}: the model's context, so any request up to it is accepted (state "
        "serving.max_request_tokens to cap it)",
        "length_cache": "--{flag} {length:,}: the most KV cache one sequence may use holds (one replica's; under DP "
        "attention one rank's); the model's context is {context:,} tokens (longer requests need more GPUs per replica)",
        "length_unknown": "no context length is known for this model: the engine derives --{flag} from its "
        "config.json, and refuses to start if one replica's KV cache ({cache:,} tokens) holds less",
        "prefix_vllm": "--enable-prefix-caching: automatic prefix caching (on by default since vLLM V1; stated for "
        "older releases); {rate:.0%} of prompt tokens are assumed found in it and not prefilled, each request's KV "
        "still counted whole",
        "prefix_sglang": "SGLang's radix cache is on by default (--disable-radix-cache would turn it off); {rate:.0%} "
        "of prompt tokens are assumed found in it and not prefilled, each request's KV still counted whole",
        "prefix_trt-llm": "TensorRT-LLM reuses KV blocks by default (kv_cache_config enable_block_reuse: true); "
        "{rate:.0%} of prompt tokens are assumed found in it and not prefilled, each request's KV still counted whole",
        "speculative": "speculative decoding ({method}): {k} drafted token(s) a step, each accepted with the stated "
        "{accept:.0%}, so {tokens:.2f} tokens a step on average; measure the acceptance on your traffic (the engine's "
        "spec-decode metrics) before relying on it",
        "draft_head": "{draft} stands for an EAGLE-3 draft head trained for {repo} (one published for it, or trained "
        "with EAGLE's or SpecForge's code): a head trained for another model is not accepted",
        "trtllm_speculative": "{options} holds `speculative_config: {config}`",
        "convert_bf16": "{repo} ships {scheme} weights and training runs on 16-bit ones: run convert_checkpoint "
        "first (one GPU, {gib:,.0f} GiB more disk, about {hours:.1f} h at the assumed disk speed) and load {output} "
        "wherever this launch names {repo}",
        # a training launch's continued pretraining (app/planner/launch/common.py `_task_notes`)
        "continued_pretrain": "Continued pretraining: mix replay of text like the original pretraining data into the "
        "new corpus (about 5 % for new text in the same language and domain, about 25 % for a new language or a "
        "distant domain) to keep what the model knows; the learning rate re-warms to {lr:g} and decays again over "
        "this run.",
        "continued_pretrain_capped": "Continued pretraining: mix replay of text like the original pretraining data "
        "into the new corpus (about 5 % for new text in the same language and domain, about 25 % for a new language "
        "or a distant domain) to keep what the model knows; the learning rate re-warms to {lr:g}, the peak {model} "
        "was pre-trained with (published; the default re-warm peak is {default:g}, which would exceed it), and decays "
        "again over this run.",
        # a Megatron-LM full fine-tune where Megatron-Bridge has no SFT recipe
        # (app/planner/launch/megatron_lm.py `_megatron_notes`)
        "megatron_raw_finetune": "This full fine-tune runs Megatron-LM's pretrain_gpt.py on raw tokenized documents: "
        "no prompt-completion format and no loss masking, so the model also learns to predict the prompts. Put the "
        "instruction data in as whole texts, or mask the prompts yourself.",
        # a training launch's notes (app/planner/launch/): what to do before launching, what is left to fill
        "hostfile": "hostfile: one line per server, '<hostname> slots={gpus_per_node}', {nodes} lines, reachable by "
        "passwordless ssh (pdsh); put the deepspeed_env lines, if any, in .deepspeed_env in the home directory of the "
        "launching user, which the runner exports to every server.",
        "zero3_no_gather": "stage3_gather_16bit_weights_on_model_save is false: gathering the whole model "
        "({size_gib:,.0f} GiB) into rank 0's host RAM at each save would not fit in the {free_gib:,.0f} GiB the plan "
        "leaves free on node 0. The Trainer then saves the checkpoint as ZeRO shards (DeepSpeed save_checkpoint); "
        "convert it after training with the zero_to_fp32.py script DeepSpeed writes into the checkpoint folder "
        "(python zero_to_fp32.py <checkpoint_dir> <output_dir> --safe_serialization).",
        "moe_leaf": "Set {env} to the model's sparse MoE block class: ZeRO-3 must gather that block whole, since "
        "routing changes which experts run from step to step (deepspeed.utils.set_z3_leaf_modules).",
        "trainer_sgd": "The Trainer's sgd is torch.optim.SGD without momentum (transformers "
        "get_optimizer_cls_and_kwargs); the estimate counts a momentum buffer, so it holds less than sized.",
        "torchtitan_download": "Download {repo} with scripts/download_hf_assets.py (weights and tokenizer) into "
        "model.hf_assets_path; register the dataset at training.dataset_path.",
        "bridge_data": "Put the training data as prompt-completion JSONL ('input', 'output') under /data/{slug} "
        "(dataset.dataset_root). checkpoint.pretrained_checkpoint takes the local Hugging Face model directory of "
        "{repo} or a converted Megatron checkpoint.",
        "bridge_no_tokens": "No token count was given: add train.train_iters (tokens ÷ (global batch × sequence "
        "length)); the learning-rate decay and warm-up follow it.",
        "megatron_convert": "Convert the Hugging Face weights of {repo} to a Megatron checkpoint in "
        "/checkpoints/{slug}-mcore first (Megatron-Bridge, or Megatron-LM tools/checkpoint/convert.py), with the same "
        "tensor and pipeline sizes. To resume after an interruption, relaunch with --load {save} and without "
        "--finetune.",
        "megatron_tokenize": "Tokenize the dataset with tools/preprocess_data.py and the same tokenizer into "
        "/data/{slug}_text_document.",
        "megatron_no_tokens": "No token count was given: add --train-iters (tokens ÷ (global batch × sequence "
        "length)).",
        "megatron_yarn": "config.json's YaRN states {stated}; Megatron-LM's arguments set no such field "
        "(MLATransformerConfig keeps original_max_position_embeddings 4096, beta_fast 32, beta_slow 1): set it in the "
        "model provider.",
        "megatron_rope": "config.json scales RoPE the {kind} way (factor {factor:g}); Megatron-LM's arguments have no "
        "flag for it: set it in the model provider.",
        "bridge_fp8_blockwise": "FP8 runs through Megatron-Bridge's bf16_with_fp8_subchannel_scaling_mixed recipe "
        "(blockwise scaling, Hopper): the weights stay bf16 and the gradients reduce in fp32, as sized. The speed "
        "assumes the FP8 speed-up fitted on per-tensor scaled runs; no blockwise-scaled run was among them.",
    },
    "zh": {
        "layout_replicas": "{replicas} 个副本，每个 {gpus} 张 GPU：每台服务器 {per_node} 个，各自用 "
        "CUDA_VISIBLE_DEVICES "
        "绑定自己的 GPU、监听自己的端口，前置负载均衡",
        "layout_vllm": "{replicas} 个副本，每个占 {nodes} 台服务器：服务器内张量并行 {tp}，跨服务器 {pp} 级流水线，经 "
        "{fabric} 互联；vLLM 把每个副本作为一个 Ray 集群运行（第一台服务器 ray start --head，其余 ray start "
        "--address，命令在头节点执行），前置负载均衡",
        "layout_sglang": "{replicas} 个副本，每个占 {nodes} 台服务器：服务器内张量并行 {tp}，跨服务"
        "器 {pp} 级流水线，经 "
        "{fabric} 互联；副本的每台服务器都运行该命令，各带自己的 --node-rank（头节点为 0，其地址由 --dist-init-addr "
        "指定，其余到 {last}）；头节点提供 HTTP 服务，前置负载均衡",
        "layout_trt-llm": "{replicas} 个副本，每个占 {nodes} 台服务器：服务器内张量并行 {tp}，跨服务"
        "器 {pp} 级流水线，经 "
        "{fabric} 互联；每个副本是一个跨其服务器的 {ranks} 进程 MPI 作业（mpirun 或 srun，每个进程由 "
        "trtllm-llmapi-launch 启动）；0 号进程提供 HTTP 服务，前置负载均衡",
        "layout_vllm_tp": "{replicas} 个副本，每个占 {nodes} 台服务器：一个张量并行 {tp} 组覆盖其全部 GPU，经 "
        "{fabric} 互联；vLLM 把每个副本作为一个 Ray 集群运行（第一台服务器 ray start --head，其余 ray start "
        "--address，命令在头节点执行），前置负载均衡",
        "layout_sglang_tp": "{replicas} 个副本，每个占 {nodes} 台服务器：一个张量并行 {tp} 组覆盖其全部 GPU，经 "
        "{fabric} 互联；副本的每台服务器都运行该命令，各带自己的 --node-rank（头节点为 0，其地址由 --dist-init-addr "
        "指定，其余到 {last}）；头节点提供 HTTP 服务，前置负载均衡",
        "layout_trt-llm_tp": "{replicas} 个副本，每个占 {nodes} 台服务器：一个张量并行 {tp} 组覆盖其全部 GPU，经 "
        "{fabric} 互联；每个副本是一个跨其服务器的 {ranks} 进程 MPI 作业（mpirun 或 srun，每个进程由 "
        "trtllm-llmapi-launch 启动）；0 号进程提供 HTTP 服务，前置负载均衡",
        "layout_sglang_ep": "{replicas} 个副本，每个 {gpus} 张 GPU、各占一台服务器，以数据并行注意力运行：{ranks} 个"
        "注意力数据并行 rank，每张 GPU 一个，各有自己的 KV 缓存与调度器（一个请求只在一个 rank 上运行；"
        "--max-running-requests 是整个副本的，每个 rank {rank_seqs} 个），{experts} 个路由专家按 {ranks} 路切分"
        "（专家并行，每张 GPU {per_rank} 个）：每个 MoE 层把每个 token 发往其专家所在的 GPU 再取回，即一次 all-to-all "
        "分发与合并（DeepEP），经 NVLink 进行；前置负载均衡",
        "layout_sglang_ep_nodes": "{replicas} 个副本，每个占 {nodes} 台服务器（{ranks} 张 GPU），以数据并行注意力运行："
        "{ranks} 个注意力数据并行 rank，每张 GPU 一个，各有自己的 KV 缓存与调度器（一个请求只在一个 rank 上运行；"
        "--max-running-requests 是整个副本的，每个 rank {rank_seqs} 个），{experts} 个路由专家按 {ranks} 路切分"
        "（专家并行，每张 GPU {per_rank} 个）：每个 MoE 层把每个 token 发往其专家所在的 GPU 再取回，即一次 all-to-all "
        "分发与合并（DeepEP），服务器内经 NVLink、跨服务器经 {fabric}；副本的每台服务器都运行该命令，各带自己的 "
        "--node-rank（头节点为 0，其地址由 --dist-init-addr 指定，其余到 {last}）；头节点提供 HTTP 服务，前置负载均衡",
        "layout_vllm_ep": "{replicas} 个副本，每个 {gpus} 张 GPU、各占一台服务器：vLLM 在每个副本中运行 {ranks} 个引擎"
        "（--data-parallel-size {ranks}，每张 GPU 一个，注意力数据并行），各有自己的 KV 缓存与调度器（--max-num-seqs "
        "是每个引擎的：{rank_seqs}），由副本的 API 服务器把请求分给它们；{experts} 个路由专家按 {ranks} 路切分"
        "（--enable-expert-parallel，每张 GPU {per_rank} 个）：每个 MoE 层把每个 token 发往其专家所在的 GPU 再取回，"
        "即一次 all-to-all 分发与合并，经 NVLink 进行；没有请求的引擎运行空步以保持同步；前置负载均衡",
        "layout_disaggregated": "{prefill_replicas} 个预填充副本（张量并行 {prefill_tp}）与 "
        "{decode_replicas} 个解码副本（张量并行 {decode_tp}）分布在不同服务器上，经 {fabric} 互联："
        "每个请求在预填充副本上预填充，其 KV 发送到一个解码副本并由其流式输出；"
        "路由器（每个预填充副本一个 --prefill，每个解码副本一个 --decode）即负载均衡",
        "layout_disaggregated_vllm": "{prefill_replicas} 个预填充副本（张量并行 {prefill_tp}）与 "
        "{decode_replicas} 个解码副本（张量并行 {decode_tp}）分布在不同服务器上，经 {fabric} 互联："
        "每个请求在预填充副本上预填充，其 KV 由一个解码副本经 NixlConnector（在该网络上走 UCX）读取并由其流式输出；"
        "每台服务器将 VLLM_NIXL_SIDE_CHANNEL_HOST 设为自己的地址，代理（每个预填充副本一项 --prefiller-hosts 与 "
        "--prefiller-ports，每个解码副本一项 --decoder-hosts 与 --decoder-ports）即负载均衡",
        "layout_disaggregated_trt-llm": "{prefill_replicas} 个上下文（预填充）副本（张量并行 {prefill_tp}）与 "
        "{decode_replicas} 个生成（解码）副本（张量并行 {decode_tp}）分布在不同服务器上，经 {fabric} 互联："
        "每个请求在上下文副本上预填充，其 KV 由缓存收发器发送到一个生成副本并由其流式输出；"
        "trtllm-serve disaggregated（其配置的 context_servers 或 generation_servers 列出每个副本的 URL）即负载均衡",
        "trtllm_disaggregated": "{options} 在每台服务器上写入 `cache_transceiver_config: {{backend: DEFAULT}}`，"
        "上下文服务器另写入 `disable_overlap_scheduler: true`；{config} 设定 hostname 与 port（0.0.0.0、8000），"
        "并列出 `context_servers: {{num_instances, urls}}` 与 `generation_servers: {{num_instances, urls}}`"
        "（各副本的 URL，见 launch.instances）",
        "shared_servers_prefill": "每台预填充服务器运行 {per_server} 个预填充副本：预填充命令的每一行是其中一个，用 "
        "CUDA_VISIBLE_DEVICES 绑定自己的 GPU、监听自己的端口；每台预填充服务器运行相同的几行，"
        "launch.instances 列出每个副本的服务器、GPU 与 URL",
        "shared_servers_decode": "每台解码服务器运行 {per_server} 个解码副本：解码命令的每一行是其中一个，用 "
        "CUDA_VISIBLE_DEVICES 绑定自己的 GPU、监听自己的端口；每台解码服务器运行相同的几行，"
        "launch.instances 列出每个副本的服务器、GPU 与 URL",
        "vllm_toy_proxy": "路由命令是 vLLM NixlConnector 指南中的参考代理，是 vLLM 源码树中的文件（{proxy}），"
        "不在 vllm 的 wheel 包里：请按 launch.versions 所列提交从 vLLM 仓库获取；它是单进程，没有健康检查和重试："
        "可用于验证两个池，正式服务时请换成生产级的预填充/解码路由（vLLM 的发行版不带路由；vllm-router 是 "
        "vllm-project 的独立软件包：--vllm-pd-disaggregation --prefill URL --decode URL；或 llm-d）",
        "no_fabric": "副本之间不共享任何状态：分布在不同服务器上无需 InfiniBand 或 RoCE，普通网络即可。",
        "pipeline": "每个副本的 {pp} 级流水线经该 SKU 的 {fabric} 在服务器间传递激活（每步几 MB，远少于跨服务器张量并行"
        "所需）；每台服务器都需租用该 SKU 的 {fabric} 附加项（报价 `addons`；价格见方案警告）；副本之间仍不共享状态。",
        "tensor_across": "每个副本的张量并行 {tp} 组跨 {nodes} 台服务器：每层的两次 all-reduce 都经该 SKU 的 {fabric} "
        "跨服务器进行（每次数十微秒，NVLink 仅需几微秒；延迟数据已计入）；每台服务器都需租用该 SKU 的 {fabric} 附加项"
        "（报价 `addons`；价格见方案警告）；副本之间仍不共享状态。",
        "ep_across": "每个副本的 {ranks} 个 rank 跨 {nodes} 台服务器：每个 MoE 层的 all-to-all 分发与合并把路由到其他"
        "服务器上专家的 token 经该 SKU 的 {fabric} 传送（延迟数据已计入）；每台服务器都需租用该 SKU 的 {fabric} 附加项"
        "（报价 `addons`；价格见方案警告）；副本之间仍不共享状态。",
        "as_shipped": "{repo} 发布的是 {scheme} 权重：{engine} 读取其 quantization_config 并原样加载（不加 "
        "--quantization 参数），本方案即按此格式估算",
        "engine_cannot_read": "{engine} 无法加载 {repo} 这类 {method} 检查点：请使用该模型的、它能读"
        "取格式的 {fmt} 检查点",
        "other_format": "{repo} 发布的是 {scheme} 权重，而非本方案估算所用的 {fmt}：请使用该模型的 {fmt} 检查点"
        "（由 16 位原始权重量化；16 位权重则需反量化后的副本）",
        "int4": "int4 需要 {repo} 的 4 位 AWQ 或 GPTQ 检查点（分组 128）；引擎读取其 quantization_config 并自行选用 "
        "Marlin 内核（不加 --quantization 参数）",
        "int8": "int8 仅权重量化需要 {repo} 的 8 位 GPTQ 检查点；引擎读取其 quantization_config 并自行选用 Marlin 内核"
        "（不加 --quantization 参数）",
        "fp8_online": "--quantization fp8 在加载时把 {repo} 的 16 位检查点量化为 FP8；在有 FP8 张量"
        "核心的 GPU 上矩阵乘法"
        "以 FP8 运行",
        "trtllm_quantise": "先用 TensorRT Model Optimizer 量化 {repo}（examples/llm_ptq/hf_ptq.py --qformat "
        "{qformat}{kv}），再加载导出的检查点",
        "trtllm_kv": "{options} 写入 `kv_cache_config: {{dtype: fp8}}`（即估算所用的 FP8 KV 缓存）",
        "trtllm_srun": "在 Slurm 下：srun -N {nodes} --ntasks-per-node {per_node} --mpi=pmix trtllm-llmapi-launch "
        "trtllm-serve …（参数相同）",
        "static": "{engine} 总是连续批处理：静态批处理的数据描述的是离线运行的固定批次；服务会随到随收请求",
        "variant": "加载 {variant} 模型 {repo}（model.variant；该预设的 {other} 模型是 {other_repo}）",
        "checkpoint_unknown": "{placeholder}：{model} 没有已知的仓库（粘贴的 config.json 或架构参数不含仓库），"
        "请在此处填入您的检查点的本地路径或 Hugging Face 仓库（给出 model.hf_id 即可自动填入）",
        "length_context": "--{flag} {length:,}：模型的上下文长度，不超过它的请求都会被接受（可用 "
        "serving.max_request_tokens 设上限）",
        "length_cache": "--{flag} {length:,}：一条序列可用的 KV 缓存（单个副本的；DP 注意力下为单个 rank 的）"
        "最多能容纳的长度；模型上下文为 {context:,} token"
        "（更长的请求需要每个副本更多 GPU）",
        "length_unknown": "该模型的上下文长度未知：引擎从其 config.json 推出 --{flag}，若单个副本的 KV 缓存"
        "（{cache:,} token）放不下则拒绝启动",
        "prefix_vllm": "--enable-prefix-caching：自动前缀缓存（vLLM V1 起默认开启；为旧版本显式写出）；假定 "
        "{rate:.0%} 的提示 token 命中缓存、无需预填充，每个请求的 KV 仍按完整长度计",
        "prefix_sglang": "SGLang 的基数树缓存默认开启（--disable-radix-cache 可关闭）；假定 {rate:.0%} 的提示 token "
        "命中缓存、无需预填充，每个请求的 KV 仍按完整长度计",
        "prefix_trt-llm": "TensorRT-LLM 默认复用 KV 块（kv_cache_config enable_block_reuse: true）；假定 {rate:.0%} "
        "的提示 token 命中缓存、无需预填充，每个请求的 KV 仍按完整长度计",
        "speculative": "投机解码（{method}）：每步草拟 {k} 个 token，每个按给定的 {accept:.0%} 接受率被接受，平均每步 "
        "{tokens:.2f} 个 token；请先在实际流量上测量接受率（引擎的投机解码指标）再据此决策",
        "draft_head": "{draft} 指为 {repo} 训练的 EAGLE-3 草稿头（已发布的，或用 EAGLE 或 SpecForge 代码训练）："
        "为其他模型训练的草稿头不会被接受",
        "trtllm_speculative": "{options} 写入 `speculative_config: {config}`",
        "convert_bf16": "{repo} 发布的是 {scheme} 权重，而训练使用 16 位权重：先运行 convert_checkpoint（一张 GPU，"
        "另需 {gib:,.0f} GiB 磁盘，按假定的磁盘速度约 {hours:.1f} 小时），并在本启动配置中凡用 {repo} 处"
        "改为加载 {output}",
        "continued_pretrain": "继续预训练：在新语料中混入与原预训练数据相近的文本作回放（同语言、同领域的新文本约 5 %，"
        "新语言或差异较大的领域约 25 %），以保留模型已有的知识；学习率重新预热到 {lr:g}，并在本次运行中再次衰减。",
        "continued_pretrain_capped": "继续预训练：在新语料中混入与原预训练数据相近的文本作回放（同语言、"
        "同领域的新文本约 5 %，新语言或差异较大的领域约 25 %），以保留模型已有的知识；"
        "学习率重新预热到 {lr:g}，即 {model} 公开的预训练峰值学习率"
        "（默认的重新预热峰值 {default:g} 会超过它），并在本次运行中再次衰减。",
        "megatron_raw_finetune": "此次全参数微调用 Megatron-LM 的 pretrain_gpt.py 在分词后的原始文档上训练："
        "没有提示-补全格式，也没有损失掩码，模型也会学习预测提示部分。请把指令数据作为完整文本放入，或自行屏蔽提示部分。",
        "hostfile": "hostfile：每台服务器一行，'<hostname> slots={gpus_per_node}'，共 {nodes} 行，可经免密 ssh（pdsh）"
        "访问；如有 deepspeed_env 的行，放入启动用户主目录下的 .deepspeed_env，运行器会把它导出到每台服务器。",
        "zero3_no_gather": "stage3_gather_16bit_weights_on_model_save 设为 false：每次保存时把整个模型"
        "（{size_gib:,.0f} GiB）收集到 rank 0 的主机内存，放不进该方案在节点 0 上留出的 {free_gib:,.0f} GiB。"
        "Trainer 因此把检查点保存为 ZeRO 分片（DeepSpeed save_checkpoint）；训练结束后用 DeepSpeed 写入检查点目录的 "
        "zero_to_fp32.py 脚本转换（python zero_to_fp32.py <checkpoint_dir> <output_dir> --safe_serialization）。",
        "moe_leaf": "把 {env} 设为模型稀疏 MoE 模块的类名：ZeRO-3 必须整块收集该模块，因为路由每一步都会改变运行哪些"
        "专家（deepspeed.utils.set_z3_leaf_modules）。",
        "trainer_sgd": "Trainer 的 sgd 是不带动量的 torch.optim.SGD（transformers get_optimizer_cls_and_kwargs）；"
        "估算计入了动量缓冲，因此实际占用少于估算。",
        "torchtitan_download": "用 scripts/download_hf_assets.py 把 {repo}（权重与分词器）下载到 "
        "model.hf_assets_path；在 training.dataset_path 登记数据集。",
        "bridge_data": "把训练数据以提示-补全 JSONL（'input'、'output'）放在 /data/{slug} 下（dataset.dataset_root）。"
        "checkpoint.pretrained_checkpoint 填 {repo} 的本地 Hugging Face 模型目录，或转换好的 Megatron 检查点。",
        "bridge_no_tokens": "未给出 token 数：请添加 train.train_iters（token 数 ÷（全局批大小 × 序列长度））；"
        "学习率的衰减与预热随之确定。",
        "megatron_convert": "先把 {repo} 的 Hugging Face 权重转换为 Megatron 检查点，放在 /checkpoints/{slug}-mcore"
        "（用 Megatron-Bridge，或 Megatron-LM 的 tools/checkpoint/convert.py），张量并行与流水线大小保持一致。"
        "中断后续训时，用 --load {save} 重新启动，并去掉 --finetune。",
        "megatron_tokenize": "用 tools/preprocess_data.py 和同一个分词器把数据集分词到 /data/{slug}_text_document。",
        "megatron_no_tokens": "未给出 token 数：请添加 --train-iters（token 数 ÷（全局批大小 × 序列长度））。",
        "megatron_yarn": "config.json 的 YaRN 设定了 {stated}；Megatron-LM 的参数没有对应字段（MLATransformerConfig "
        "保持 original_max_position_embeddings 4096、beta_fast 32、beta_slow 1）：请在 model_provider 中设置。",
        "megatron_rope": "config.json 以 {kind} 方式缩放 RoPE（系数 {factor:g}）；Megatron-LM 的参数没有对应选项："
        "请在 model_provider 中设置。",
        "bridge_fp8_blockwise": "FP8 通过 Megatron-Bridge 的 bf16_with_fp8_subchannel_scaling_mixed 配方运行"
        "（分块缩放，Hopper）：权重保持 bf16，梯度以 fp32 规约，与估算一致。速度按逐张量缩放的实测 FP8 加速拟合，"
        "其中没有分块缩放的运行。",
    },
}
