"""What an estimate assumes, as codes with parameters: the estimator states each assumption as a `Note` and never as a
sentence, so the API's English and the pages' Chinese are rendered from the same code and figures.

`ENGLISH` is the one English text of every code (the API's `assumptions`, `Note.text`); the other languages live in
the app's catalog (app/text/note_words.py), which imports this table rather than copying it, and
tests/test_messages.py checks that every code has a text in each language with the same fields. Templates use
`str.format` fields with format specs. A `Note` is frozen and hashable: the estimator builds the notes once per
cached shape and shares them between the plans that state the same.
"""

from __future__ import annotations

from typing import NamedTuple

NoteParams = tuple[tuple[str, str | int | float | bool], ...]


class Note(NamedTuple):
    """One assumption: a stable code and the figures its text carries (name, value pairs, in a fixed order). A named
    tuple, not a frozen dataclass: the estimator builds one per new shape, and a tuple is built several times faster."""

    code: str
    params: NoteParams = ()

    @property
    def text(self) -> str:
        """The English sentence (the API's `assumptions`)."""
        return (ENGLISH.get(self.code) or SCHEMES[self.code]).format(**dict(self.params))


def note(code: str, **params: str | int | float | bool) -> Note:
    """`Note(code, params)` from keyword arguments."""
    return Note(code, tuple(params.items()))


# Sources: app/estimator/memory/assumptions.py (memory) and app/estimator/performance.py (speed), where each is stated.
ENGLISH: dict[str, str] = {
    # memory: what every estimate counts
    "worst_stage": "Bytes per GPU for the worst pipeline stage; capacity is the card's usable memory (CUDA context "
    "excluded).",
    "pipeline_1f1b": "1F1B: the first stage holds min(pp, micro-batches) in flight; the last stage holds the logits.",
    "other_buffers": "other = cuBLAS workspaces 0.25 GiB + NCCL buffers 0.5 GiB (multi-GPU) + 5% allocator "
    "fragmentation of activations.",
    "adamw_step_other": "other also holds {step_gib:.2f} GiB of torch AdamW's step temporary (its foreach step "
    "copies v: {temp_gib:.2f} GiB at the step, the rest in blocks the freed activations left).",
    "zero3_step_other": "other also holds {step_gib:.2f} GiB of DeepSpeed ZeRO-3's optimizer step: it copies each "
    "sub-group's gradients ({elements:.3g} elements at most) into a new flat tensor and casts it to the master's "
    "dtype, beside torch AdamW's copy of v where AdamW steps ({temp_gib:.2f} GiB at the step, the rest in blocks the "
    "freed activations left).",
    "deepspeed_buckets": "other also holds {bucket_gib:.2f} GiB of DeepSpeed ZeRO-1/2's gradient buckets through the "
    "backward (two of reduce_bucket_size {elements:.3g} elements, freed before the step).",
    "peak_backward_start": "One micro-batch a step, so the gradients are made in the backward and freed after the "
    "step: the peak is the backward's start (activations {activations_gib:.2f} GiB, no gradients yet), not the "
    "optimizer step (gradients {grads_gib:.2f} GiB + AdamW's step temporary {temp_gib:.2f} GiB, the activations "
    "freed), so gradients reads 0.",
    "peak_optimizer_step": "One micro-batch a step, so the gradients are made in the backward and freed after the "
    "step: the peak is the optimizer step (gradients {grads_gib:.2f} GiB + AdamW's step temporary {temp_gib:.2f} GiB, "
    "the activations freed), above the backward's start (activations {activations_gib:.2f} GiB, no gradients yet); "
    "gradients and other hold what the step needs beyond the activations' blocks.",
    # memory: the model states
    "inference_memory": "Inference: weights + KV cache (K and V per layer, kv heads × head_dim) + one layer's prefill "
    "working set and fp32 last-token logits.",
    "megatron_mixed": "Mixed precision {optimizer}, as Megatron-LM runs it: 16-bit weights + an fp32 main-gradient "
    "buffer + fp32 master and {optimizer} states ({per_param:g} B/param; 6 + {owned:g}/d with the distributed "
    "optimizer, Megatron-LM dist_optimizer docs).",
    "mixed_precision": "Mixed precision {optimizer}: 16-bit weights + 16-bit grads + fp32 master + {state:g} B of "
    "{optimizer} states ({per_param:g} B/param; ZeRO §3.1 counts 16 for Adam).",
    "pure_precision": "Pure {precision} training: weights, grads and {optimizer} states in the training dtype.",
    "paged_optimizer": "Paged optimizer (QLoRA §3, bitsandbytes): its states live in CUDA managed memory outside "
    "PyTorch's allocator, evicted to host RAM whenever the card needs the room and paged back for the step, so the "
    "total leaves them out (paged_optimizer_gib beside it); the device reading counts what stays on the card, "
    "torch's allocated and reserved readings never include them.",
    "lora_base": "{task}: frozen base in 16-bit; adapters r·(d_in+d_out) train with their own grads and states.",
    "lora_base_fp32": "{task}: frozen base in fp32 under torch.autocast (fp32_params: a model loaded without "
    "torch_dtype); adapters r·(d_in+d_out) train with their own grads and states.",
    "fp32_params": "fp32 parameters under torch.autocast (fp32_params): fp32 weights + fp32 grads + {state:g} B of "
    "{optimizer} state, no master copy ({per_param:g} B/param); FSDP gathers its units in fp32, the residual stream "
    "and checkpointed layer inputs are fp32, and the matmuls keep autocast's 16-bit weight copies.",
    "qlora_base": "{task}: frozen base in NF4 + {bits:.3g} bit/param of quantised constants (QLoRA §3); adapters "
    "r·(d_in+d_out) train with their own grads and states.",
    "qlora_base_double": "{task}: frozen base in NF4 + {bits:.3g} bit/param of double-quantised constants (QLoRA §3); "
    "adapters r·(d_in+d_out) train with their own grads and states.",
    "qlora_base_mixed": "{task}: frozen base in NF4 + {bits:.3g} bit/param of quantised constants (QLoRA §3); "
    "adapters r·(d_in+d_out) train with their own grads and states: 16-bit adapters and grads with fp32 states "
    "(QLoRA eq. 5).",
    "qlora_base_double_mixed": "{task}: frozen base in NF4 + {bits:.3g} bit/param of double-quantised constants "
    "(QLoRA §3); adapters r·(d_in+d_out) train with their own grads and states: 16-bit adapters and grads with fp32 "
    "states (QLoRA eq. 5).",
    "kbit_upcast": "PEFT prepare_model_for_kbit_training (TRL SFTTrainer, the QLoRA recipe): fp32 norms put the "
    "residual stream and the saved activations in fp32 (kbit_upcast=false: torchtune, litgpt, Unsloth; off by "
    "default for QLoRA sharded by ZeRO-3 / FSDP).",
    # memory: activations, sharding, offload and loading
    "activations": "Activations counted per saved tensor (Korthikanti et al. 2022 method), recompute={recompute}, "
    "flash_attention={flash}; unfused loss: fp32 log-probs + two fp32 gradients per logit.",
    "activations_lean_loss": "Activations counted per saved tensor (Korthikanti et al. 2022 method), "
    "recompute={recompute}, flash_attention={flash}; {loss} loss: no full-vocabulary fp32 logits are held.",
    "activations_megatron_loss": "Activations counted per saved tensor (Korthikanti et al. 2022 method), "
    "recompute={recompute}, flash_attention={flash}; Megatron-LM's vocab-parallel loss, fused or not: the 16-bit "
    "logits and their fp32 softmax, 6 bytes a logit.",
    "zero_sharded": "ZeRO stage {zero} shards over dp × cp (with hybrid sharding, dp_shard × cp), routed experts over "
    "dp × cp / ep; offload={offload}.",
    "zero_replicated": "ZeRO stage 0: every data-parallel rank holds the whole weights, gradients and optimizer "
    "states of its tp × pp part (routed experts split over ep); offload={offload}.",
    "zero2_fp32_grads": "ZeRO-2 gradients are fp32 shards (FSDP2 keeps them in the fp32 parameter dtype); "
    "DeepSpeed's 16-bit partition beside its fp32 copy at the step is counted where it outweighs the freed "
    "activations.",
    "adafactor_flat": "Adafactor on ZeRO's flat 1-D partitions cannot factor its second moment (transformers "
    "Adafactor._get_options): a full fp32 v per parameter.",
    "pipeline_sharded_grads": "Pipeline with sharded gradients: the reduce-scatter waits for the last micro-batch, "
    "so the stage's gradients stay whole in fp32 through the step (torch.distributed.pipelining, torchtitan).",
    "activation_offload": "Activation offload: saved activations wait in host RAM (counted in host_ram); the GPU "
    "holds two layers' worth, the one in use and the one in flight over PCIe.",
    "compiled": "torch.compile (compile): counted in the activations only, as fused pointwise ops recomputed in the "
    "backward save fewer tensors (none fewer under selective recompute, which recomputes them already); its speed-up "
    "is not modelled (the speed is the eager model's) and compile is otherwise passed to the launch.",
    "compiled_loss": "Loss compiled with the model (loss compiled): the cross-entropy keeps the 16-bit logits and "
    "makes their 16-bit gradient, 4 bytes a logit instead of the 12 of an eager fp32 cross-entropy; the launch "
    "compiles the loss too.",
    "host_load_every_rank": "Loading: every rank on the node holds the whole model as loaded in host RAM before "
    "ZeRO-3 shards it (host_load_gib); the host RAM gate counts the larger of that and the offloaded states.",
    "host_load_local_rank_0": "Loading: local rank 0 of each node holds the whole model as loaded in host RAM before "
    "ZeRO-3 shards it (host_load_gib); the host RAM gate counts the larger of that and the offloaded states.",
    # speed
    "bubble": "bubble: 1F1B adds (p−1)/v micro-batch times per step, p={pp}, v={virtual_stages}",
    "overlap": "overlapped collectives hide {hidden:.0%} of their time behind compute",
    "not_overlapped": "TP, PP and EP communication are not overlapped; gradients are reduced in 16-bit",
    "mfu_causal": "MFU counts causal attention (half the s×s score matrix, as NVIDIA NeMo's MFU formulas count it) "
    "against the precision's dense peak; mfu_full_attention counts the full matrix (Megatron-LM / PaLM appendix B)",
    "speed_range": "ranges: throughput from {low:.2f}× (a typical stack: HF Trainer or accelerate with DeepSpeed or "
    "FSDP) to {high:.2f}× (a tuned one: Megatron-LM, torchtitan, NeMo) of the point estimate; time and GPU-hours "
    "ranges run from the tuned stack with expected goodput to the typical one with a less reliable cluster",
    "goodput": "time_to_train_hours and gpu_hours include goodput: interruptions at Llama 3's 466 in 54 days on "
    "16,384 GPUs, checkpoint saves at Young's optimal interval, evaluation passes and start-up "
    "(app/estimator/data/goodput.json)",
    "tuning_typical": "speed at the range's typical end: the plan runs on a typical stack (HF Trainer or accelerate, "
    "PEFT, DeepSpeed or FSDP, default kernels)",
    "tuning_nemo": "speed at {factor:.2f}x the point: NeMo / Megatron-Bridge recipes (dense models)",
    "tuning_torchtitan": "speed at {factor:.2f}x the point: torchtitan's published runs (10, A100, H100 and H200) "
    "ran at the median of that",
    "tuning_trainer": "speed at {factor:.2f}x the point: the Hugging Face Trainer's published full fine-tuning runs "
    "(fms-acceleration, 4 on A100) ran at the median of that",
    "tuning_trainer_peft": "speed at {factor:.2f}x the point: the Hugging Face Trainer's published LoRA and QLoRA "
    "runs with PEFT (fms-acceleration, 15 on A100) ran at the median of that",
    "range_widened_moe": "no calibration run is an MoE model of this kind: the range's slow end is widened to "
    "{factor:.2f}× the typical end (NeMo's Qwen3-30B-A3B runs reached 0.44-0.91× our estimate of them)",
    "range_widened_offload": "no calibration run offloads states to host RAM: the range's slow end is widened to "
    "{factor:.2f}× the typical end (offloaded steps measured 1.4-1.6× as long)",
    "range_widened_gpu": "no calibration run used this GPU generation (its efficiency constants are set by analogy): "
    "the range's slow end is widened to {factor:.2f}× the typical end (Hopper's and Ampere's fitted GEMM fractions "
    "differ by that much)",
    "range_widened_ampere_pretrain": "pre-training on A100: whole published runs on 384-3,360 A100s, every restart "
    "included, ran at 0.66-1.21× our estimate of them (Llama 2 7B: 3,014 tokens/s per GPU, 0.80×): "
    "the range's slow end is widened to {factor:.2f}× the typical end, and its fast end is 1.22× the point (LLaMA 65B, "
    "the fastest)",
    "inference_speed": "prefill is compute-bound; decode is bound by max(weight + KV-cache reads / HBM, FLOPs / peak)",
    # the cluster: what /estimate filled in that the request's hardware left out (app/estimator/clusters.py)
    "hardware_one_gpu": "hardware: one {gpu} (give hardware.nodes for whole servers)",
    "hardware_usual_server": "hardware: {per_node} × {gpu} per node, as in the usual server ({server})",
    "hardware_largest_server": "hardware: {per_node} × {gpu} per node, as in the usual server (the GPU table's "
    "largest server)",
    "fabric_usual": "fabric: {fabric}, {nics} × {port_gbps:g} Gb/s = {gbps:g} Gb/s per node (the usual {server} "
    "cluster; override with hardware.inter_node_gbps or inter_node_fabric)",
    "fabric_usual_rail": "fabric: {fabric}, {nics} × {port_gbps:g} Gb/s = {gbps:g} Gb/s per node, one NIC per GPU, "
    "rail-optimised (the usual {server} cluster; override with hardware.inter_node_gbps or inter_node_fabric)",
    "fabric_ports": "fabric: {fabric} at {gbps:g} Gb/s per node ({ports:g} ports)",
    "host_ram_usual": "host RAM: {host_ram:,.0f} GiB per node, as in the usual server ({server}); give "
    "hardware.host_ram_gib to change it",
    "fabric_catalog": "fabric: {server} joined by its {fabric} option, {gbps:g} Gb/s per node (catalog)",
    "fabric_tcp": "fabric: {server} has no InfiniBand or RoCE; its network ({network}) carries the traffic between "
    "nodes at {gbps:g} Gb/s over TCP",
    "hardware_servers": "hardware: {nodes} × {server} ({per_node} GPUs, {link})",
    "hardware_servers_ram": "hardware: {nodes} × {server} ({per_node} GPUs, {link}, {host_ram:g} GiB host RAM)",
    # the plan and the SKU as /estimate reads them (app/planner/service.py, app/planner/workload.py)
    "sequence_parallel_on": "sequence parallel: on, as Megatron-LM and torchtitan run tensor parallelism (norms and "
    "dropout sharded along the sequence); say plan.sequence_parallel false to turn it off",
    "fused_loss_to_fit": "loss: fused (Liger through the Hugging Face Trainer): no plan holds the standard loss's "
    "full-vocabulary logits on these GPUs; Liger's fused loss never materialises them (Megatron-LM's "
    "--cross-entropy-loss-fusion keeps them as its unfused loss does)",
    "one_server_per_job": "{sku} is rented one server per job: no inter-node fabric joins its servers, so POST "
    "/quotes refuses a plan across them (quantity_one_server); this estimate is what its plain network would do",
    # serving (app/planner/serving_request.py): the engines, the simulation, the decode time, the default lengths
    "serving_engines": "engines at their documented defaults unless set: vLLM gpu_memory_utilization 0.9, block 16, "
    "max_num_seqs 1024 on GPUs of 70 GiB or more other than the A100, 256 elsewhere; SGLang mem_fraction_static "
    "0.88-0.79 by TP, chunked prefill 8192; TensorRT-LLM free-memory fraction 0.9",
    "serving_batching": "continuous batching with chunked prefill; for requests_per_s, latencies are simulated: "
    "Poisson arrivals shared at random among the replicas, each replica's scheduler (decodes first, prompts in chunks "
    "within max_num_batched_tokens, max_num_seqs, the KV cache reserved on admission) run on 1,200 seeded requests, "
    "the first 200 left out; meets_slo is judged on the SLO's percentile (p90 by default) at the peak",
    "serving_decode": "decode = max(weights + KV-cache reads / achieved HBM bandwidth, FLOPs / achieved compute) + "
    "engine overhead + TP all-reduce latency; constants fitted on published results (docs/validation-serving.md)",
    "serving_no_block": "no serving block was given: input_tokens {input_tokens}, output_tokens {output_tokens}, and "
    "the most sequences a replica holds (set serving.input_tokens, output_tokens and concurrency or requests_per_s)",
    "serving_tail_capped": "serving.{name}_p95 {p95} is {ratio}× the mean {mean}, a heavier tail than any lognormal "
    "with that mean has (its p95 is at most {most}× the mean): lengths are simulated from the widest one (p95 "
    "{modelled}), so the longest requests, and the latency and KV cache they take, are under-modelled",
    "replicas_share_nothing": "Replicas share nothing: separate servers need no InfiniBand or RoCE, only the ordinary "
    "network.",
    # serving: what a replica cannot run as asked (app/estimator/serving/estimate.py)
    "serving_max_model_len_over": "max_model_len {context_len} exceeds the {tokens} tokens the KV cache holds: the "
    "engine refuses to start; lower max_model_len or add GPUs",
    "serving_max_model_len_over_dp": "max_model_len {context_len} exceeds the {tokens} tokens one rank's KV cache "
    "holds (DP attention): the engine refuses to start; lower max_model_len or add GPUs",
    "serving_concurrency_over_seqs": "concurrency {wanted} exceeds the {limit} sequences a replica runs ({engine}'s "
    "max_num_seqs default of {seqs} on {gpu}): {limit} run and the others wait for a slot before their prefill",
    "serving_concurrency_over_kv": "concurrency {wanted} exceeds the {limit} sequences a replica runs (what its KV "
    "cache holds at these lengths): {limit} run and the others wait for a slot before their prefill",
    "serving_no_kv_room": "the weights leave no room for one sequence's KV cache",
    "serving_sequence_too_long": "one sequence of {context_len:,} tokens does not fit: the KV cache holds {tokens:,} "
    "tokens at TP {tp}; shorten input_tokens + output_tokens (or max_model_len), or use more or larger GPUs",
    "serving_sequence_too_long_dp": "one sequence of {context_len:,} tokens does not fit: the KV cache holds "
    "{tokens:,} tokens at one rank of DP attention / EP {tp}; shorten input_tokens + output_tokens (or "
    "max_model_len), or use more or larger GPUs",
    "serving_rate_over_capacity": "{replicas} replica(s) carry at most {carried:.3g} requests/s of the {offered:g} "
    "offered",
    "serving_rate_saturated": "{replicas} replica(s) carry about {carried:.3g} requests/s of the {offered:g} offered "
    "(saturated)",
}
# A checkpoint's stored format (app/estimator/checkpoints.py: `Checkpoint.scheme` the English, `scheme_note` the note)
SCHEMES: dict[str, str] = {
    "scheme_fp8_block": "block FP8 ({rows} x {cols} scales)",
    "scheme_fp8_channel": "FP8 (a scale per channel or tensor)",
    "scheme_fp8_fbgemm": "FP8 (fbgemm, a scale per channel)",
    "scheme_int": "{bits}-bit {name}",
    "scheme_int_group": "{bits}-bit {name} (group {group})",
    "scheme_ct_fp8": "compressed-tensors FP8 ({strategy} scales)",
    "scheme_ct_int": "compressed-tensors {bits}-bit integer ({strategy})",
    "scheme_bnb_4bit": "bitsandbytes {kind} (4-bit)",
    "scheme_bnb_8bit": "bitsandbytes LLM.int8() (8-bit)",
    "scheme_modelopt": "Model Optimizer {algo}",
    "scheme_unread": "{method} ({detail})",
    "scheme_method": "{method}",
}
