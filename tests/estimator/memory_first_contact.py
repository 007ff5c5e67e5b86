"""Peak memory of published runs recorded at first contact: rows from sources no earlier case used, written down with
their configuration and citation BEFORE any change they could motivate. The estimator's figure on each row at the
commit that added it is kept in `tests/estimator/data/memory_first_contact.json` (written by
`benchmarks/validation.py --record-first-contact`), and `docs/validation.md` reports that figure as the
out-of-sample error; anything measured after a change the rows motivated is fitted.

Sources (each a project that measured its own runs and says with what):

  [ms-swift]   modelscope/ms-swift docs/source_en/LLM/Benchmark.md at commit 46922151 (one A100 80GB, CUDA 11.8,
               torch 2.1.1, flash_attn 2.3.4, bitsandbytes 0.41.3): `swift sft` on cls-fudan-news-zh (3,234 +- 2,548
               tokens a sample, max 19,548, truncated to max_length, so the longest batches are max_length), batch 1,
               gradient checkpointing and flash attention on, LoRA r=8 (alpha 32, dropout 0.05) on the default
               targets (Qwen's fused c_attn, Llama's q, k, v), gradient accumulation 16, bf16 weights, torch AdamW.
               "GPU Memory (GiB)" = swift's `get_max_cuda_memory`: torch.cuda.max_memory_reserved() over the run
               (swift/trainers, summed over devices only for device-map model parallel; single-GPU rows only here).
               Full fine-tuning keeps bf16 weights and AdamW states (no fp32 master), which a 7.7B model on 80 GB
               implies (8 B/param = 62 GB). Qwen (v1) runs its own remote code: attention through flash-attn, or an
               eager s x s softmax without it; cross-entropy on the bf16 logits, which the Trainer's bf16 autocast
               runs in fp32 (cross_entropy is on torch.autocast's float32 list: a fp32 copy, fp32 log-probs and
               gradients, the standard loss's 12 bytes a logit). Batches are padded per batch from a dataset of varied
               lengths (Workload.varied_lengths). The Qwen LoRA max-length rows and the full fine-tune rows were
               written at 97e4d198b (truncation_strategy truncation_left, the whole dataset at max_length <= 2048 and
               1,000 samples above: scripts/benchmark/test_memory_time/run_single.py); the Yi rows at 4312aeb28, whose
               common settings no longer name truncation_left, so its default 'delete' drops samples longer than
               max_length (swift/llm/utils/template.py). Yi runs transformers' LlamaForCausalLM with flash attention
               2 (swift/llm/utils/model.py get_model_tokenizer_with_flash_attn: config._attn_implementation
               "flash_attention_2"; transformers 4.36, as sft.py's "fix transformers==4.36" implies), Qwen its remote
               code with flash-attn (config.use_flash_attn True; the pair at 2,048 tokens with checkpointing reads
               27.74 with it and 27.71 GiB without). The "Quantization" table also
               has int4 (gptq) rows: Qwen-*-Chat-Int4 checkpoints read 4-bit from disk, beside int4 (bnb), which
               bitsandbytes quantises on the GPU while the model loads.
  [torchao]    pytorch/ao docs/source/workflows/training.md at b8708a2 ("e2e training benchmarks": torchtitan
               llama3_8b.toml, 8 GPUs, FSDP2, local batch 1, sequence 8192, torch.compile, per-op selective
               activation checkpointing) and torchao/prototype/float8nocompile/README.md at d99785c (torchtitan,
               Llama 3 8B, 8 H100, sequence 4096, no / full activation checkpointing; local batch 1, the
               llama3_8b.toml default then - plan assumed). "Peak Memory (GB)" is the largest `memory: X GiB` of
               torchtitan's step log (benchmarks/float8/training/parse_torchtitan_logs.py), which torchtitan fills
               from torch.cuda.max_memory_reserved(): reserved, GiB.
  [qwen-readme] QwenLM/Qwen README.md at 712d922, "Profiling of Memory and Speed": one A100-SXM4-80G, CUDA 11.8,
               PyTorch 2.0, flash attention 2, batch 1, gradient accumulation 8, inputs padded to the length
               (finetune.py pads to model_max_length), gradient checkpointing; LoRA r=64 (alpha 16, dropout 0.05) on
               c_attn, c_proj, w1, w2 (every linear but the head) of the chat models with bf16 weights; Q-LoRA on the
               GPTQ Int4 chat models in fp16 under DeepSpeed ZeRO-2 (finetune/finetune_qlora_single_gpu.sh), with
               PEFT's prepare_model_for_kbit_training, which skips its fp32 casts for a GPTQ model (peft/utils/other.py
               `is_gptq_quantized`): 16-bit activations (kbit_upcast=False); under DeepSpeed the Trainer runs no
               autocast ("deepspeed ... manage their own half precision", transformers trainer.py), so the remote
               code's CrossEntropyLoss takes the fp16 logits without an upcast (Plan.no_upcast_loss, stated after
               first contact, which read the Q-LoRA rows with the upcast loss). The reading is not named ("memory
               (GB)"); it is read as the device figure (the process's whole footprint, as nvidia-smi shows), the
               reading a table of a finetune script that logs no memory itself would take.
  [trainy-whitefiber] pytorch/torchtitan benchmarks/llama3-8b_h200_202506_trainy-whitefiber.md at 4a61bd8: the
               memory column ("Memory(GiB)", torchtitan's max reserved) of the two runs whose throughput
               validation_cases.py already uses; memory rows from it are new (Llama 3.1 8B, 32 and 64 H200, FSDP,
               local batch 2, seq 8192, selective AC, torch.compile, Float8 linears with Float8 FSDP all-gather).
  [universal-llm-trainer] ljm565/universal-llm-trainer docs/gpu_test.md at 9efd14b5 (torch 2.5.1, transformers 4.49.0;
               one or two A100 or H100): its own trainer over transformers' AutoModelForCausalLM and PEFT, batch 2 x
               8,192 tokens with no padding, bf16 weights (bit: bfloat16), torch AdamW on the bf16 parameters (no fp32
               master), Hugging Face gradient checkpointing, attention left to transformers' default (sdpa;
               attn_implementation null), nn.CrossEntropyLoss on the 16-bit logits reshaped (a copy) after the model's
               forward, with autocast off (every config sets amp_training: False and src/trainer/trainer.py runs the
               forward under torch.autocast(enabled=self.amp); the model is called without labels, so transformers
               returns the lm_head's bf16 logits with no fp32 upcast: Plan.no_upcast_loss, stated after first contact,
               which read these rows with the upcast loss; under QLoRA PEFT's prepare_model_for_kbit_training leaves the
               head fp32, so those logits are fp32); LoRA r=8 (alpha 16, dropout 0.05) on every linear layer but the
               head (config_lora/), gradient accumulation 32; QLoRA = bitsandbytes NF4 with double quantisation and bf16
               compute (config_quant/bnb_4bit.yaml) through PEFT's prepare_model_for_kbit_training
               (src/trainer/build.py); the two-GPU rows are PyTorch FSDP with CPUOffload (parameters, gradients and
               optimizer on the host). "Peak Mem." is the trainer's progress-bar figure, torch.cuda.memory_reserved() /
               1e9 on rank 0 after each step (src/trainer/trainer.py): reserved, in GB (the "Model Mem." column, 16 for
               Llama 3.1 8B's 16.06e9 bf16 bytes, shows the unit is 1e9 bytes although the header says GiB), converted
               to GiB here. Llama 3 8B rows repeat Llama 3.1 8B's figures and are left out; Gemma 2 9B QLoRA ran out of
               memory (no figure).
  [megatron-bridge] NVIDIA-NeMo/Megatron-Bridge at 067f987d, skills/nemo-mbridge-perf-memory-tuning/SKILL.md
               ("Measured Results": Llama 3 70B SFT on 32 H100 80GB, FP8 current scaling, TP 4 PP 4 VPP 5 DP 2, MBS 1,
               GBS 32, seq 4096, and the same with PP 8 / TP 8; VPP 10 in its text) and
               skills/nemo-mbridge-perf-activation-recompute/SKILL.md ("Historical Measurement", Bridge PR #3107: the
               core_attn baseline and core_attn + layernorm). The recipe is perf_recipes/llama/h100/llama3.py
               `llama3_70b_sft_32gpu_h100_fp8cs_config`: distributed optimizer, grad_reduce_in_fp32 False (bf16 gradient
               buffers, perf_recipes/_common.py `_perf_precision`), fp8_param_gather True (training/mixed_precision.py
               `bf16_with_fp8_current_scaling_mixed`), sequence parallel, Transformer Engine fused cross-entropy
               (`_benchmark_common`: cross_entropy_fusion_impl "te"), CUDA graphs over the MLP, inputs padded to 4096.
               "Peak Mem (GB)" is Bridge's logged peak of torch.cuda.memory_stats()["allocated_bytes.all.peak"]
               (training/utils/train_utils.py, bytes / 1e9): allocated, decimal GB, converted to GiB here.
  [torchtitan-nvfp4] pytorch/torchtitan torchtitan/components/quantization/nvfp4.md at 73aed7f6: the BF16 and MXFP8
               runs of its 200M-token evidence (the NVFP4 runs are not a precision the estimator models): Llama 3 8B, 4
               Blackwell GPUs, FSDP 4, local batch 32 x 2048, "eager + torch.compile" of the model only
               (CompileConfig components ["model"]), selective (per-op) AC (config_registry.py llama3_8b); Qwen3 8B,
               FSDP 4, local batch 16 x 2048, same compile and AC. "Memory" / "Peak Reserved Memory" is torchtitan's
               max reserved, GiB; the percentages (179.94 GiB = 97.6 %) imply a ~184 GiB card, a GB200, which the
               catalog lacks: modelled on the B200 (the figure compared does not depend on the card; the fit judgement
               does).
  [torchao-moe] pytorch/ao torchao/prototype/moe_training/README.md at 5e79e5ed, "End-to-end training benchmark with
               TorchTitan: Llama4 Scout vs bfloat16 baseline": 4 B200, FSDP 4 x EP 4, no AC, torch.compile, seq 8192,
               local batch 8, Llama 4 Scout shapes cut to 2 layers (16 routed experts top-1 + 1 shared, expert width
               8192). "Max Memory (GiB)" is torchtitan's max reserved.
  [fsdp-qlora] AnswerDotAI/fsdp_qlora benchmarks_03_2024.md at 23fafdfb ("Benchmarking QLoRA+FSDP", runs of
               February and March 2024): train.py (as at 50efa1e, 2024-03-26) on two RTX 3090 (the 7B, 34B and 70B
               case study) or two RTX 4090 (the rows that section adds: CPU offload at batch 10 and 12, Mistral 7B),
               24 GB each, modelled on the catalog's RTX 4090 (same 24 GB; the figure compared does not depend on the
               card). The template command: --dataset dummy (every sample longer than the context, truncated to it:
               batches of one length), --use_gradient_checkpointing True --reentrant_checkpointing True (each decoder
               layer wrapped by torch's checkpoint_wrapper), gradient accumulation 1, precision bf16 (weights, LoRA
               adapters and torch AdamW states all bf16, no FSDP mixed-precision policy), attention sdpa, the
               transformers LlamaForCausalLM loss (fp32 logits upcast, early 2024). LoRA: PEFT r=64, alpha 16, dropout
               0.1 on q, k, v, gate, up, down (not o_proj). QLoRA: every linear of the decoder layers a bitsandbytes
               Linear4bit (NF4, compress_statistics default: double quantisation, quant_storage bf16), embeddings and
               head bf16, PEFT's get_peft_model without prepare_model_for_kbit_training (16-bit activations).
               FSDP FULL_SHARD over the 2 GPUs unless the row says DDP (ShardingStrategy.NO_SHARD) or CPU offload
               (CPUOffload(offload_params=True): parameters and gradients on the host, the optimizer steps there).
               "Peak Memory (GiB)" is torch.cuda.max_memory_reserved() / 2**30 on rank 0 (the post: "the reported peak
               reserved memory"); for two LoRA rows the post also gives the allocated peak (8.28 and 9.16 GiB).
  [torchtune-2403] pytorch/torchtune README.md at 5cbc1967b (2024-03-28), "Finetuning resource requirements": Llama 2
               7B on the linked recipes/configs/llama2/*.yaml of that commit, batch 2 of tatsu-lab/alpaca (no
               max_seq_len: batches padded to their longest sample, 1,304 tokens at most, as litgpt counts Alpaca's
               longest Llama 2 example), dtype bf16 (weights, LoRA adapters, AdamW states bf16), LoRA r=8; QLoRA =
               torchtune's NF4 (torchao NF4Tensor, its scalers quantised: double quantisation) on q, k, v, o and the
               MLP; cross-entropy on the decoder's fp32 output (TransformerDecoder `.float()`). "Peak memory per GPU is
               as reported by torch.cuda.max_memory_reserved()" (decimal GB, utils.memory_stats_log / 1e9, converted
               to GiB here), measured on A100s with torch.cuda.set_per_process_memory_fraction limiting them to the
               card named. The A6000 full fine-tune row (bitsandbytes PagedAdamW, optimizer_in_bwd) was cited before
               by tests/estimator/test_memory_qlora.py as a gate check only (fits on 48 GiB), never compared. Two
               weeks later the README (fef3ed10d, 2024-04-16) replaced both FSDP rows' figures (LoRA 14.17 -> 20.95
               GB, full fine-tune 12.01 -> 22.9 GB: 12.01 GB is less than the bf16 weights, gradients and AdamW
               states of 6.7B parameters on each of 4 GPUs) with Alpaca cut at 512 tokens; those later figures were
               seen while these rows were written and are not rows here.

  [liger-hf-fsdp] linkedin/Liger-Kernel, pull request #199 (refs/pull/199/head; the logs were removed by the PR's
               "Clean up" commit 99f801c2 before it merged): examples/huggingface/results/*.log at 1dce7fd4c945 (runs
               of 2024-09-10/11), written by examples/huggingface/run_patching_methods.sh through training.py and
               callback.py of the same commit (transformers 4.44.2, requirements.txt; trl's SFTTrainer on
               tatsu-lab/alpaca with max_seq_length 512, DataCollatorForCompletionOnlyLM padding each batch to its
               longest sample, pad_to_multiple_of 16; the model loaded with torch_dtype bfloat16, attention left to
               transformers' default, sdpa). torchrun on 4 GPUs of one node, `--fsdp "full_shard auto_wrap"` with
               config/fsdp_config.json (backward_prefetch backward_pre, forward_prefetch, activation_checkpointing:
               each decoder layer wrapped, its input kept), `--bf16` (accelerate's FSDP mixed precision upcasts the
               bf16-loaded flat parameters to fp32, accelerate/accelerator.py `prepare_model`, v0.30.0 (PR #2674) on:
               "Upcasted low precision parameters ... because mixed precision turned on in FSDP": fp32 sharded
               weights, gradients and AdamW states), torch AdamW, no gradient accumulation, the Trainer's loss (logits
               upcast to fp32). The per-device batch is not in every log's script version: it is the one the log's
               token counts allow, each step's num_input_tokens_seen (summed over the 4 ranks) being a multiple of 16
               x 4 x batch with padded lengths within 512 (24 for Gemma 7B and Qwen2 7B, 32 for Mistral 7B, 128 for
               Phi-3.5 mini, each as the script's BATCH_SIZE reads at the commit that added its logs; 32 for Llama 3
               8B, whose commit's script names Gemma's 24, which its token counts rule out); seq_len is the longest
               step's padded length averaged over the ranks (tokens / (4 x batch), rounded up to 16), a lower bound of
               rank 0's longest batch. `use_liger True` rows: AutoLigerKernelForCausalLM (the "pre_init" runs; the two
               other patching routes of the PR patch the same kernels), whose defaults swap in RoPE, RMSNorm,
               SwiGLU/GeGLU and the fused linear cross-entropy (no logits). The card is not named; 78,378 MiB reserved
               implies an 80 GB card, modelled on the A100 80GB SXM (the figures compared do not depend on it).
               Readings: the callback's total_peak_memory_allocated_MB and total_peak_memory_reserved_MB, torch.cuda
               max_memory_allocated / max_memory_reserved on rank 0 over steps 2 to the last (peaks reset at each
               step's start), in MiB (2**20). Left out: Gemma 2 2B (final-logit soft-capping, Liger's non-fused
               cross-entropy for it, eager attention by default), Mixtral and Qwen2-VL (no figures), and the "old"
               Phi-3 logs that later runs replaced.

  [torchtune-tutorials] pytorch/torchtune docs/source/tutorials/lora_finetune.rst at ff594c231 (PR #702, 2024-04-15),
               "Trading off memory and model performance with LoRA": Llama 2 7B on recipes/configs/llama2/
               7B_lora_single_device.yaml of that commit (one GPU, batch 2 of yahma/alpaca-cleaned with train_on_input,
               alpaca_cleaned_dataset's max_seq_len 512 (torchtune/datasets/_alpaca.py): batches padded to their
               longest sample, 512 tokens at most; gradient accumulation 64, dtype bf16 (weights, LoRA adapters and
               torch AdamW states bf16), enable_activation_checkpointing True, nn.CrossEntropyLoss on the decoder's
               fp32 output) with four LoRA layouts: Q and V or "all layers" (q, k, v, output_proj, the MLP and the
               output head: apply_lora_to_mlp, apply_lora_to_output), rank 8 (alpha 16) or 64 (alpha 128). "Peak
               Memory" is the training figure of utils.memory_stats_log, torch.cuda.max_memory_reserved() / 1e9 (the
               QLoRA tutorial of the same day, docs/source/tutorials/qlora_finetune.rst at 0914d5cfb, gives the Q and
               V rank-8 run's 15.57 GB as "Peak memory reserved, training"): reserved, decimal GB, converted to GiB.
               The card is not named; modelled on the A100 80GB (the figure compared does not depend on it). The
               head's adapter (r x (4096 + 32000) parameters) is not a LoRA target the estimator takes; the "all
               layers" rows are stated without it (0.3M / 2.3M parameters). Left out: the QLoRA tutorial's training
               figure (9.29 GB, the figure torchtune-2403 already records from the README) and both tutorials'
               "model init" figures (no training step).

  [torchtitan-773] pytorch/torchtitan issue #773 ("PP InterleavedZeroBubble schedule shows low TPS and high memory
               usage", opened 2025-01-03 by tianyu-l): the 512-GPU Llama 3.1 405B runs of
               benchmarks/llama3_h100_202412_torchtitan.md Table 5 (FSDP 8 x TP 8 x PP 8, H100 96 GB, local batch 32,
               global batch 256, seq 8192, full activation checkpointing) with a third schedule,
               ScheduleInterleavedZeroBubble, "memory: 89.73GiB(94.45%)", run without torch.compile, async TP and
               Float8 ("not compatible"): bf16, not compiled. torchtitan's "memory:" is max_reserved_gib
               (train.py at 90567fc9, the commit of 2025-01-10): reserved, GiB. A multi-stage schedule gets two
               stages per rank when no split is given (torchtitan/parallelisms/pipelining_utils.py
               generate_split_points at 90567fc9), micro-batches = total stages unless set, so micro-batch 1 as in
               Table 5. The estimator has no zero-bubble schedule: the plan it can state is interleaved 1F1B with two
               virtual stages (zero bubble keeps weight-gradient inputs longer, so this row is expected to read
               low). The 1F1B and Interleaved1F1B figures of the same issue (82.46, 72.69 GiB) are Table 5's runs,
               already in tests/estimator/published_cases.py, and are not rows here. Left out, with the reason
               decided before any estimate was run: H-Huang's Llama 3 8B PP 8 rows of 2025-01-13 (batch 16, seq
               512): on 8 GPUs with PP 8 torchtitan at 90567fc9 applies neither FSDP nor autocast (parallelize_llama
               applies FSDP only when dp_shard > 1), so rank 0 (stages 0 and 8: the embedding and 4 layers, 1.40 B
               parameters) holds 20.8 GiB of fp32 weights, gradients and AdamW states, more than the 15.86 GiB its
               full-AC row reads: the configuration stated is not the one that ran.

  [torchtune-flags] pytorch/torchtune README.md at 1814feb17 (PR #2003, 2024-11-18), "Optimization flags": Llama 3.2
               3B on one A100 (80 GB: the packed rows read 60.0 GiB), batch 2, tokenizer.max_seq_len 4096, dtype bf16
               (weights, gradients and optimizer states bf16, no fp32 master), no gradient accumulation, each
               technique added on top of the previous one. The baseline is full_finetune_single_device with the
               README's levers all off (as each later row names the one it adds): tatsu-lab/alpaca unpacked, batches
               padded to their longest sample (Alpaca's longest is 1,304 tokens as litgpt counts it with Llama 2's
               tokenizer; Llama 3's tokenizer needs fewer, so the length stated is an upper bound), nn.CrossEntropyLoss
               on the decoder's fp32 output (TransformerDecoder `self.output(h).float()`), no compile, no activation
               checkpointing, torch.optim.AdamW stepped after the backward. Then dataset.packed (2 x 4096 tokens),
               compile (recipes/full_finetune_single_device.py compiles each layer and, `if self._compile`, the loss:
               training.compile_loss), CEWithChunkedOutputLoss, activation checkpointing, optimizer_in_bwd, activation
               offloading and 8-bit AdamW (read as bitsandbytes AdamW8bit, the README's name, not the config's paged
               variant). "LoRA" and "QLoRA" are lora_finetune_single_device with 3B_lora_single_device /
               3B_qlora_single_device (r=64, alpha 128, dropout 0, on q, v, output_proj and the MLP; torch AdamW;
               torchtune NF4 via torchao) under the README's command for the final row: packed, compile, chunked CE,
               activation checkpointing and offloading, batch 2 x 4096. "Peak Memory Active (GiB)" is torchtune's
               training.get_memory_stats `active_bytes.all.peak` / 2**30: allocated blocks (read as allocated), GiB.

  [atorch-llama2] intelligent-machine-learning/dlrover atorch/examples/llama2/README.md at 3a442b728b7d (2023-11-22,
               "update HFU"; the same figures at ab277965c, 2024-01-22), "Performance": Llama 2 7B on A100 80GB, 8 a
               node (NVLink, 800 Gb/s RDMA), with the scripts of that commit. FSDP rows: fsdp_llama2_entry.sh /
               fsdp_llama2.py, the model built from its config (AutoModelForCausalLM.from_config: fp32 parameters),
               atorch's auto_accelerate with "module_replace" (its flash-attention Llama attention), PyTorch FSDP
               (atorch_wrap_cls LlamaDecoderLayer, limit_all_gathers, use_orig_params, forward_prefetch; full shard
               of the fp32 parameters, gradients and torch.optim.AdamW states, default foreach step, zero_grad after
               each step), precision bf16_amp (torch.autocast bf16, no FSDP mixed-precision policy), checkpoint of
               every LlamaDecoderLayer, wikitext-2 grouped into blocks of 4,096 tokens (one length), batch 4 a GPU, no
               accumulation, transformers' LlamaForCausalLM loss on its labels (logits upcast to fp32). USE_LORA: PEFT
               0.4.0 LoRA r=16 (alpha 16, dropout 0.05) on q, k, v, o of the fp32 model (frozen base in fp32; at first
               contact the estimator could not state it, since then Plan.fp32_params). DS 3D rows: ds_3d_llama2_entry.sh
               / ds_3d_llama2.py, DeepSpeed pipeline (PipelineModule, activation_checkpoint_interval 1) x atorch's
               Megatron-style tensor parallel (vocabulary-parallel embedding and cross-entropy), ZeRO-1, fp16 with fp32
               master weights (ds_config "fp16" enabled), torch.optim.AdamW (zero_allow_untested_optimizer), flash
               attention (module_replace), micro-batch 8 x 4,096 and 64 accumulation steps as the table states; the
               model is transformers' LlamaModel (no lm_head) whose logits DeepSpeed3DParallelConfig's default tie_first
               computes on the tied vocabulary-parallel embedding (a tied head). "Mem Max allocated(MB)" is
               example_utils.report_memory: torch.cuda.max_memory_allocated() / 2**20 on rank 0 (the first pipeline
               stage) after each step, never reset (allocated, MiB, converted to GiB here). Stated since, as the
               code of that commit ran (atorch/requirements.txt: transformers 4.31.0, deepspeed 0.10.0): the FSDP
               loop keeps `outputs`, fp32 logits, through the backward (Plan.kept_logits_bytes 4); the 3D rows' loss
               upcasts and runs atorch's vocab_parallel_cross_entropy (Plan.upcast_vocab_parallel_loss) and the
               pipeline engine keeps two micro-batches' fp16 outputs on the last stage (kept_logits_bytes 2 x 2).

  [fms-granite] foundation-model-stack/fms-acceleration scripts/benchmarks/refs/a100_80gb_granite.csv at fc78b55b6
               (2024-10-18, "Fix Low CPU Memory Mode Issues for Quantized Peft", the last commit that wrote its rows;
               the table fms-acceleration's README links for GraniteCausalLM), run by benchmark.py, defaults.yaml,
               accelerate.yaml and scenarios-granite.yaml of that commit with refs/requirements_granite.txt (torch
               2.4.1, transformers 4.45.2, accelerate 0.34.2, peft 0.12.0, bitsandbytes 0.43.3, flash-attn 2.6.3,
               fms-hf-tuning b33634c8): the same harness as the fms-acceleration rows (validation_cases.FMS_RUNS),
               another model and a table no row has used. ibm/PowerLM-3b (GraniteForCausalLM) on A100 80GB,
               alpaca-cleaned packed to 4,096 tokens (benchmark.py --packing_matrix True, --max_seq_len_matrix
               4096), FlashAttention-2 (defaults.yaml use_flash_attn), gradient checkpointing, gradient accumulation
               1, torch AdamW, bf16 weights; full fine-tuning and LoRA without autocast (no bf16 flag, accelerate
               mixed_precision 'no'), QLoRA (framework_config baseline-peft-bnb: bitsandbytes NF4, PEFT LoRA) with
               bf16 autocast; LoRA r=16 (alpha 16, dropout 0.1) on q, k, v, o; per-device batch 4 or 8 on one GPU,
               2 or 4 on two (accelerate FSDP FULL_SHARD, backward_prefetch BACKWARD_PRE). The transformers loss of
               that release divides the bf16 logits by logits_scaling and upcasts them (the standard fp32 loss).
               PowerLM-3B's shape is its paper's (Shen et al. 2024, "Power Scheduler", arXiv 2408.13359, Table 4:
               hidden 2304, 40 layers, 36 heads of 64, 36 KV heads, SwiGLU width 9216, 3.5B parameters); the
               vocabulary is Granite's 49,152 with the head tied to the embedding (40 layers hold 3.40B, one 49,152 x
               2304 table 0.11B: 3.51B; an untied head would make 3.62B). Readings: mem_peak_torch_mem_alloc_in_bytes,
               the Trainer's memory metrics summed over its stages (torch.cuda.max_memory_allocated on rank 0,
               benchmark.py extract_gpu_memory_metrics), bytes read as GiB. Left out, decided before any estimate:
               the fms plugin rows (foak-fast-kernels, accelerated-peft-bnb and -foak: fused kernels and fms's own
               QLoRA loading, which the estimator does not model) and the table's nvidia-smi column
               (mem_nvidia_mem_reserved), as the fms-acceleration rows left it.

  [megatron-release] NVIDIA/Megatron-LM tests/functional_tests/test_cases at d98e8a64d (2026-08-22): the "release"
               tests' model_config.yaml and golden values (the runs NVIDIA's CI trains for each release and keeps to
               compare later runs against): gpt/gpt3_15b_8t_release (a Nemotron-4 15B shape: 32 layers, hidden 6144,
               48 heads, 8 query groups, squared-ReLU MLP of 4 x 6144 without a gate, the 256k nemotron_2 vocabulary,
               untied head; TP 8 with sequence parallel, PP 1, micro-batch 4 x 4,096, global batch 384 at the start),
               mixtral/mixtral_8x7b_alltoall_tp2pp4ep4_release (Mixtral 8x7B's shape with the same 256k vocabulary:
               TP 2 with sequence parallel, PP 4, EP 4, micro-batch 1 x 4,096, global batch 1,024),
               mixtral/mixtral_8x7b_tp1pp4ep8vpp8_release (TP 2, expert TP 1, PP 4 with one layer a virtual stage, EP
               8, global batch 256) and mixtral/mixtral_8x22b_tp2pp8ep8vpp1_release (Mixtral 8x22B's shape, 256k
               vocabulary, TP 2, PP 8, EP 8, global batch 256). Every one: bf16 with Megatron's fp32 main-gradient
               buffer (no --grad-reduce-in-bf16), the distributed optimizer (Adam), Transformer Engine layers with
               flash attention, no activation recompute (no --recompute-* flag), grouped-GEMM experts with the
               alltoall dispatcher, and the plain vocab-parallel cross-entropy (no --cross-entropy-loss-fusion:
               language_module.py calls tensor_parallel.vocab_parallel_cross_entropy, which upcasts the logits to
               fp32: Plan.upcast_vocab_parallel_loss). Readings: "mem-max-allocated-bytes", the tensorboard scalar
               training.py logs from torch.cuda.memory_stats()["allocated_bytes.all.peak"] (never reset) on the
               tensorboard rank, the last rank (world_size - 1: the last pipeline stage); the row is the largest value
               of the golden file (dev container on DGX H100, lts container on DGX A100 80GB), bytes read as GiB.
               The GPU count is not published (the release recipes that name nodes are not in the repository). The
               data-parallel size is stated from the same files' other reading, mem-allocated-bytes (the allocated
               memory between steps: weights, gradient buffer and optimizer shards), as the power of two that
               Megatron's model-state bytes (2 + 4 + 12 / d a parameter, docs dist_optimizer.md, experts sharded over
               their own expert-data-parallel group) put nearest it: 16 for every run (128 GPUs; 256 for 8x22B),
               decided before any estimate. Left out before any estimate: the GB200 runs (no GB200 in the catalog),
               the DeepSeek-V3 proxies (MLA with multi-token prediction) and Nemotron 3 (hybrid Mamba).

  [axolotl-examples] axolotl-ai-cloud/axolotl examples/*/README.md, each at the commit that wrote its figure, with
               the example config of the same commit: examples/llama-2 at dc71d887 (2023-08-03: qlora.yml, "about 17
               GB of VRAM during training if using qlora", RTX 4090), examples/llama-3 at 15f7910d (2024-04-18:
               qlora-fsdp-70b.yaml, "Dual GPU @ 21GB VRAM"), examples/devstral at 8c6a6ea6 (2025-07-08: "about 21GB
               VRAM"), examples/magistral at eac4a61f (2025-06-12: "about 24GB VRAM"), examples/magistral/think at
               09959fac (2025-09-18: 19.1 GiB), examples/ministral at 2b66ee18 (2025-12-04: 8.76 GiB), examples/olmo3
               at 372f664c (2025-12-25: 11.3 GiB). Stated by the configs: the model, bitsandbytes 4-bit loading
               (axolotl loaders/model.py: NF4 with bnb_4bit_use_double_quant True, bf16 compute), LoRA rank, alpha,
               dropout and targets (lora_target_linear: every linear but the head), sequence_len, micro_batch_size,
               gradient accumulation, sample packing (multipack: each micro-batch packed to sequence_len; with
               pad_to_sequence_len one length exactly, without it up to it: read as one length, assumed), the
               optimizer (adamw_torch; adamw_bnb_8bit and adamw_8bit: bitsandbytes 8-bit AdamW; paged_adamw_32bit),
               gradient_checkpointing (non-reentrant since builders/base.py `use_reentrant: False`; reentrant in 2023),
               flash_attention (xformers_attention in 2023, memory-efficient attention: no s x s scores), the
               CutCrossEntropyPlugin (Apple's cut cross-entropy: the head and the loss fused, Plan.fused_loss) and, for
               the 70B row, FSDP FULL_SHARD over 2 GPUs with fsdp_offload_params. Derived from axolotl's code at those
               commits: from 2025 axolotl calls PEFT's prepare_model_for_kbit_training and then casts every module
               named "norm" back to the 16-bit dtype (loaders/model.py `_convert_embedding_modules_dtype`): 16-bit
               activations (kbit_upcast=False); the 2023 code recast the norms only under flash_attention
               (utils/models.py), so the xformers Llama 2 row keeps PEFT's fp32 norms (kbit_upcast default on), and
               ran bitsandbytes before 0.43 (Workload.bnb_fp16_dequant); FSDP QLoRA skips the preparation.
               Assumed: the card (H100 80GB for the 2025 rows, RTX 4090 for the two "24 GB" rows: the figure compared
               does not depend on it, the fit judgement does); the reading, which no README names: the 2025 rows as
               max reserved (axolotl logs memory/device_reserved = torch.cuda.max_memory_reserved, and its gpt-oss
               and gemma4 READMEs of the same months call their figures "peak reserved memory"), the 2023-2024 "VRAM"
               rows as the device (nvidia-smi); "GB" read as GiB. Model shapes: Llama 2 7B and Llama 3 70B presets;
               Devstral-Small-2505, Magistral-Small-2506 and -2507 are Mistral Small 3.1's text model (40 layers,
               hidden 5120, 32 heads of 128, 8 KV heads, SwiGLU 32768, vocabulary 131,072, untied: 23.6B);
               Ministral-8B-Instruct-2410 (36 layers, hidden 4096, 32 heads, 8 KV heads, SwiGLU 12288, vocabulary
               131,072: 8.0B); Olmo-3-7B (32 layers, hidden 4096, 32 heads, no GQA, SwiGLU 11008, the dolma2
               tokenizer's 100,278 rows: 7.3B; its q/k norms are not a term here), all as remembered from their
               config.json files, which could not be read here (assumed). Left out before any estimate: rows of 8-bit
               (LLM.int8) bases (examples/llama-2 lora.yml, llama-3 lora-8b.yml, mistral-small), mixture-of-experts,
               hybrid (Mamba, linear attention) and vision models, and models whose shape could not be stated.
  [deepspeed-examples] deepspeedai/DeepSpeedExamples: training/bf16_master_weight/README.md at a43031e5 (2026-03-04)
               with train.py and configs/*.json of that commit: DeepSpeed ZeRO-3 on 4 H100, train.py's
               SimpleTransformerModel (32 post-LayerNorm blocks of nn.MultiheadAttention, hidden 4096, 32 heads, a
               GELU MLP of 4 x 4096, learned positions, an untied output Linear over the GPT-2 tokenizer's 50,257
               rows: 6.86B, as the README says), batch 1 x 512 (wikitext padded to max_length), torch's checkpoint of
               every block (use_reentrant=False), nn.CrossEntropyLoss on the logits, which the loop holds through
               loss.backward() (Plan.kept_logits_bytes). "Baseline (fp32 master)" = bf16 enabled, no autocast: bf16
               weights and activations, fp32 master weights, gradients and AdamW states, the loss on the bf16 logits
               (no upcast); "BF16 low-precision" = bf16_master_weights_and_grads and bf16_optimizer_states under
               torch.autocast(bf16), which runs cross_entropy in fp32. nn.MultiheadAttention in training computes its
               s x s weights explicitly (eager attention). "Peak Memory" is the SUMMARY line's peak_mem_bytes,
               torch.cuda.max_memory_allocated() (train.py get_memory_stats, printed / 2**30 as "GB"): allocated, GiB.
               Its "Allocated Memory" column is torch.cuda.memory_allocated() after the run, not a peak: not a row.
               And applications/DeepSpeed-Chat/training/step1_supervised_finetuning/training_log_output/
               opt-1.3b-globalBatchSize128.log at 3a77097a (2023-04-21): facebook/opt-1.3b, `main.py --zero_stage 2
               --per_device_train_batch_size 8 --max_seq_len 512 --gradient_accumulation_steps 1` (the log's first
               line), DeepSpeed fp16 with fp32 master weights (utils/ds_utils.py get_train_ds_config), no gradient
               checkpointing, dropout on, every sample padded to 512 (data_utils.py padding="max_length"), the
               transformers OPT loss on its fp16 logits (no upcast, no autocast under DeepSpeed fp16), `outputs` held
               through model.backward(loss) (kept fp16 logits). Global batch 128 = 8 a GPU x 16 GPUs (stated by the
               file name and the command; the card is not named: A100 40GB assumed, as DeepSpeed-Chat's single-node
               recipes name it). "MaxMemAllocated" is DeepSpeed's ThroughputTimer figure,
               get_accelerator().max_memory_allocated() / 1024**3 (deepspeed/utils/timer.py): allocated, GiB.

  [ms-swift-examples] ms-swift's example scripts and Megatron-SWIFT benchmark tables: the rows and their sources
               are in tests/estimator/memory_first_contact_swift.py (this module would pass 800 lines).
  [megatron-functional] Megatron-LM's functional tests other than the release tests (the memory_speed 7B cases and
               small GPT cases): rows and sources in tests/estimator/memory_first_contact_megatron_tests.py.
  [hf-blog-ulysses] the Hugging Face blog's Ulysses sequence-parallelism benchmark (Qwen3-4B under DeepSpeed ZeRO-3
               with the optimizer on the host, 1 GPU and SP 4, 8K to 96K tokens): rows and source in
               tests/estimator/memory_first_contact_hf_ulysses.py.
  [colossalchat] ColossalChat's "Hardware Requirements" (Llama 2 7B on H800s under ColossalAI's LowLevelZero ZeRO-2,
               with and without the optimizer on the host, full fine-tune, LoRA and SimPO at 2,048 tokens; allocated):
               rows and source in tests/estimator/memory_first_contact_colossalchat.py.
  [torchtune-2405] torchtune's README table of May 2024 (Llama 2 7B on RTX 4090s at batch 4 x 2,048, Llama 2 70B on 8
               A100 at 4 x 4,096; QLoRA, LoRA and full fine-tune, FSDP where more than one GPU): rows and source in
               tests/estimator/memory_first_contact_torchtune_2405.py.
  [peft-metamathqa] PEFT's method comparison on MetaMathQA (Llama 3.2 3B bf16 on one L40S, batch 4 x up to 768 tokens
               padded per batch, no checkpointing; LoRA at several ranks and targets, three LoRA variants, full
               fine-tune; reserved): rows and source in tests/estimator/memory_first_contact_peft_metamath.py.
  [automodel-ac] NeMo AutoModel's gradient-checkpointing guide (Llama 3.2 1B full fine-tune on H100s at 8 x 2,048:
               one GPU, FSDP2 over 8, + activation checkpointing, + fused linear cross-entropy; allocated): rows and
               source in tests/estimator/memory_first_contact_automodel_ac.py.
  [torchao-tutorial] torchao's float8 pre-training tutorial (torchtitan Llama 3 8B, FSDP 8, 1 x 8,192, compile with
               the loss, op-level selective AC; bf16, float8 rowwise and tensorwise; reserved): rows and source in
               tests/estimator/memory_first_contact_torchao_tutorial.py.
  [litgpt-lora-tutorial] lit-gpt's LoRA / QLoRA tutorial tables of August 2023 (StableLM 3B at 4 x 1,034 and Llama 2
               7B at 1 x 1,304 tokens of Alpaca on one A100, LoRA r=8 on q, v, bf16-mixed or bf16-true, with and
               without bitsandbytes NF4; allocated): rows and source in
               tests/estimator/memory_first_contact_litgpt_lora_tutorial.py.
  [torchtitan-165] torchtitan's FSDP1 / FSDP2 parity runs of March 2024 (commit 83c879f1, PR #165: Llama 7B on 8
               H100, FSDP 8 at 8 x 2,048 eager and compiled, full or per-op selective AC, and FSDP 4 x TP 2 at 16 x
               2,048; peak active and reserved): rows and source in
               tests/estimator/memory_first_contact_torchtitan_fsdp2.py.

`levers` names what each run used that moves the peak and that the estimator may or may not model (attention
implementation, loss implementation, compile, activation offload, FP8 parameters).
"""

from __future__ import annotations

from dataclasses import replace

from app.estimator.hardware import get_gpu
from app.estimator.presets import get_preset
from app.estimator.specs import GIB, Cluster, LoraSpec, ModelSpec, Plan, Workload
from tests.estimator.memory_first_contact_automodel_ac import automodel_ac
from tests.estimator.memory_first_contact_colossalchat import colossalchat
from tests.estimator.memory_first_contact_hf_ulysses import hf_blog_ulysses
from tests.estimator.memory_first_contact_litgpt_lora_tutorial import litgpt_lora_tutorial
from tests.estimator.memory_first_contact_megatron_tests import megatron_functional
from tests.estimator.memory_first_contact_peft_metamath import peft_metamathqa
from tests.estimator.memory_first_contact_row import FirstContactCase
from tests.estimator.memory_first_contact_swift import ms_swift_examples
from tests.estimator.memory_first_contact_torchao_tutorial import torchao_tutorial
from tests.estimator.memory_first_contact_torchtitan_fsdp2 import torchtitan_fsdp2
from tests.estimator.memory_first_contact_torchtune_2405 import torchtune_2405
from tests.estimator.validation_cases import _fms_run

A100_80 = get_gpu("a100-80g-sxm")
H100 = get_gpu("h100-80g-sxm")
H200 = get_gpu("h200-141g-sxm")
B200 = get_gpu("b200-180g-sxm")

MS_SWIFT = (
    "modelscope/ms-swift docs/source_en/LLM/Benchmark.md at 46922151e06cdfc110882e182757674f12352f2c "
    "(A100 80GB, torch 2.1.1; GPU Memory (GiB) = torch.cuda.max_memory_reserved)"
)
TORCHAO_TRAINING = (
    "pytorch/ao docs/source/workflows/training.md at b8708a2dd3a6a5150a198fbf3772ca9e968570ca, 'e2e training "
    "benchmarks' (torchtitan llama3_8b, 8 GPUs, FSDP2, batch 1 x 8192, compile, per-op SAC; torchtitan max reserved)"
)
TORCHAO_NOCOMPILE = (
    "pytorch/ao torchao/prototype/float8nocompile/README.md at d99785c0fdaa1dbfdbaf57923326edf2b8a7f1f8 "
    "(torchtitan Llama 3 8B, 8 H100, seq 4096; torchtitan max reserved)"
)
QWEN_README = (
    "QwenLM/Qwen README.md at 712d922eceea9a9388375fc51ee97ec971eb13bb, 'Profiling of Memory and Speed' "
    "(one A100-SXM4-80G, batch 1, flash attention 2, gradient checkpointing; reading not named, read as the device)"
)
UNIVERSAL_LLM_TRAINER = (
    "ljm565/universal-llm-trainer docs/gpu_test.md at 9efd14b514148b765cf188d301093542307a4827 (batch 2 x 8192, "
    "gradient checkpointing; Peak Mem. = torch.cuda.memory_reserved() / 1e9 on rank 0, GB converted to GiB)"
)
MEGATRON_BRIDGE = (
    "NVIDIA-NeMo/Megatron-Bridge at 067f987df03b8355b03192d88d70f1709fedf51a, skills/nemo-mbridge-perf-memory-tuning/"
    "SKILL.md and skills/nemo-mbridge-perf-activation-recompute/SKILL.md (Llama 3 70B SFT, 32 H100, FP8 current "
    "scaling; Peak Mem (GB) = max allocated / 1e9)"
)
TORCHTITAN_NVFP4 = (
    "pytorch/torchtitan torchtitan/components/quantization/nvfp4.md at 73aed7f6c09c04041dae2d2c185bb4c6384ebb3f "
    "(Llama 3 8B and Qwen3 8B, FSDP 4, seq 2048, compile, selective AC; torchtitan max reserved GiB)"
)
TORCHAO_MOE = (
    "pytorch/ao torchao/prototype/moe_training/README.md at 5e79e5ed3434aa04281931039da1bab338c415b3 (torchtitan "
    "Llama 4 Scout shapes, 2 layers, 4 B200, FSDP 4 x EP 4, seq 8192, local batch 8, no AC, compile; max reserved GiB)"
)
TRAINY = (
    "pytorch/torchtitan benchmarks/llama3-8b_h200_202506_trainy-whitefiber.md at "
    "4a61bd87d3c7e92bcfeb5d5464d9e6bd13ef440a (Memory(GiB): torchtitan max reserved at iteration 100)"
)

LIGER_PR199 = (
    "linkedin/Liger-Kernel pull request #199, examples/huggingface/results/*.log at "
    "1dce7fd4c945cada18b6a86be0050cd03de21180 (transformers 4.44.2 SFTTrainer, FSDP full_shard on 4 GPUs with "
    "activation checkpointing, Alpaca cut at 512; callback.py total peaks of max_memory_allocated / reserved, MiB)"
)

FSDP_QLORA = (
    "AnswerDotAI/fsdp_qlora benchmarks_03_2024.md at 23fafdfb4af403d0808038adafbfd74de265d33a (train.py as at 50efa1e; "
    "2 x RTX 3090 or 4090, dummy data of one length, reentrant gradient checkpointing, bf16; Peak Memory (GiB) = "
    "torch.cuda.max_memory_reserved / 2**30)"
)
TORCHTUNE_2403 = (
    "pytorch/torchtune README.md at 5cbc1967b, 'Finetuning resource requirements' (Llama 2 7B, batch 2 of Alpaca, "
    "bf16; peak memory per GPU = torch.cuda.max_memory_reserved / 1e9, GB converted to GiB)"
)

TORCHTUNE_TUTORIALS = (
    "pytorch/torchtune docs/source/tutorials/lora_finetune.rst at ff594c231 (Llama 2 7B, 7B_lora_single_device, "
    "batch 2 of Alpaca cut at 512 tokens, bf16; Peak Memory = torch.cuda.max_memory_reserved / 1e9, GB to GiB)"
)

TORCHTITAN_773 = (
    "pytorch/torchtitan issue #773 (2025-01-03, tianyu-l): Llama 3.1 405B, 512 H100 96 GB, FSDP 8 x TP 8 x PP 8, "
    "local batch 32 x 8192, full AC, ScheduleInterleavedZeroBubble without compile, async TP or Float8; "
    "torchtitan 'memory:' = max reserved GiB (train.py at 90567fc9)"
)

TORCHTUNE_FLAGS = (
    "pytorch/torchtune README.md at 1814feb17a9038e1a8053ce93111bd26774a8db6, 'Optimization flags' (Llama 3.2 3B, "
    "one A100, batch 2, max_seq_len 4096, bf16, techniques added in turn; Peak Memory Active = "
    "active_bytes.all.peak, GiB)"
)

ATORCH_LLAMA2 = (
    "intelligent-machine-learning/dlrover atorch/examples/llama2/README.md at "
    "3a442b728b7dca69bc5bccaa0bfb36e7b8ee152c, 'Performance' (Llama 2 7B, A100 80GB, FSDP bf16 autocast or DeepSpeed "
    "3D fp16 ZeRO-1, seq 4096, checkpointing; Mem Max allocated(MB) = torch.cuda.max_memory_allocated / 2**20)"
)

FMS_GRANITE = (
    "foundation-model-stack/fms-acceleration scripts/benchmarks/refs/a100_80gb_granite.csv at "
    "fc78b55b65446fbade0306ac2e619a6182bfea47 (ibm/PowerLM-3b, A100 80GB, alpaca-cleaned packed to 4,096 tokens, "
    "gradient checkpointing; mem_peak_torch_mem_alloc_in_bytes = torch.cuda.max_memory_allocated, bytes to GiB)"
)

# PowerLM-3B (Shen et al. 2024, arXiv 2408.13359, Table 4), Granite's 49,152-token vocabulary, head tied to the
# embedding (module docstring, [fms-granite])
POWERLM_3B = ModelSpec(
    name="powerlm-3b", layers=40, hidden=2304, heads=36, kv_heads=36, ffn=9216, vocab=49152, tied_embeddings=True
)

MEGATRON_RELEASE = (
    "NVIDIA/Megatron-LM tests/functional_tests/test_cases at d98e8a64ddf34856e74b24714e3bedb2f5a39553, gpt/"
    "gpt3_15b_8t_release and mixtral/*_release model_config.yaml with golden_values_dev_dgx_h100.json and "
    "golden_values_lts_dgx_a100.json (no recompute, distributed optimizer; mem-max-allocated-bytes = "
    "torch.cuda.memory_stats()['allocated_bytes.all.peak'] on the last rank, bytes to GiB)"
)

# Megatron-LM's gpt3_15b_8t_release shape (model_config.yaml at d98e8a64d: --num-layers 32, --hidden-size 6144,
# --num-attention-heads 48, --num-query-groups 8, --squared-relu without --swiglu: two matrices of the default
# 4 x hidden, written as the two-matrix "gelu" MLP; the nemotron_2_256k tokenizer's 256,000 rows, divisible by
# 128 x TP 8 so unpadded; --untie-embeddings-and-output-weights)
MEGATRON_GPT_15B = ModelSpec(
    name="megatron-gpt3-15b",
    layers=32,
    hidden=6144,
    heads=48,
    kv_heads=8,
    ffn=24576,
    vocab=256000,
    mlp="gelu",
    # --apply-layernorm-1p: LayerNorm (Megatron's default --normalization), stated after first contact, which read it
    # as RMSNorm (an eager RMSNorm's fp32 copy of its input, which a LayerNorm does not keep)
    norm="layernorm",
)

# Qwen (v1) remote code, from each model's config.json on the Hugging Face Hub (Qwen/Qwen-*-Chat): RMSNorm, SwiGLU
# (w1, w2 of width intermediate_size / 2, c_proj), fused c_attn with bias, untied head, full multi-head attention.
QWEN1_1_8B = ModelSpec(
    name="qwen-1.8b", layers=24, hidden=2048, heads=16, kv_heads=16, ffn=5504, vocab=151936, qkv_bias=True
)
QWEN1_7B = ModelSpec(
    name="qwen-7b", layers=32, hidden=4096, heads=32, kv_heads=32, ffn=11008, vocab=151936, qkv_bias=True
)
QWEN1_14B = ModelSpec(
    name="qwen-14b", layers=40, hidden=5120, heads=40, kv_heads=40, ffn=13696, vocab=152064, qkv_bias=True
)
QWEN1_72B = ModelSpec(
    name="qwen-72b", layers=80, hidden=8192, heads=64, kv_heads=64, ffn=24576, vocab=152064, qkv_bias=True
)
# Yi (01-ai/Yi-6B-Chat, Yi-34B-Chat config.json): the Llama architecture with grouped-query attention.
YI_6B = ModelSpec(name="yi-6b", layers=32, hidden=4096, heads=32, kv_heads=4, ffn=11008, vocab=64000)
YI_34B = ModelSpec(name="yi-34b", layers=60, hidden=7168, heads=56, kv_heads=8, ffn=20480, vocab=64000)


def _ms_swift() -> list[FirstContactCase]:
    cases = []
    one = Cluster(gpu=A100_80)
    swift_loss = "loss: Qwen remote code CrossEntropyLoss on bf16 logits, fp32 under the Trainer's bf16 autocast"
    for model, targets, rows, loss in (
        (QWEN1_1_8B, ("q", "k", "v"), ((512, 6.99), (1024, 10.71), (2048, 16.35), (4096, 23.80), (8192, 37.03)), 1),
        (QWEN1_7B, ("q", "k", "v"), ((512, 18.01), (1024, 21.73), (2048, 27.74), (4096, 35.31), (8192, 48.41)), 1),
        (QWEN1_14B, ("q", "k", "v"), ((512, 30.14), (1024, 34.43), (2048, 40.14), (4096, 47.95), (8192, 60.74)), 1),
        (YI_6B, ("q", "k", "v"), ((512, 13.72), (1024, 15.44), (2048, 16.95), (4096, 28.25), (8192, 43.81)), 0),
        (YI_34B, ("q", "k", "v"), ((512, 66.72), (1024, 69.10), (2048, 71.34), (4096, 78.72)), 0),
    ):
        for seq, published in rows:
            cases.append(
                FirstContactCase(
                    f"ms-swift {model.name} LoRA r=8, batch 1 x {seq}, A100",
                    "ms-swift",
                    MS_SWIFT,
                    model,
                    Workload(
                        task="lora",
                        seq_len=seq,
                        global_batch=16,
                        lora=LoraSpec(rank=8, alpha=32, targets=targets, dropout=0.05),
                        varied_lengths=True,
                    ),
                    Plan(micro_batch=1, recompute="full"),
                    one,
                    published,
                    "reserved",
                    "attention: flash-attn 2; "
                    + (swift_loss if loss else "loss: transformers LlamaForCausalLM, fp32 logits"),
                )
            )
    for model, rows in (
        (QWEN1_1_8B, ((512, 18.16), (1024, 18.62), (2048, 35.11), (4096, 31.62), (8192, 38.93))),
        (QWEN1_7B, ((512, 73.37), (1024, 73.64), (2048, 74.26), (4096, 78.76))),
    ):
        for seq, published in rows:
            cases.append(
                FirstContactCase(
                    f"ms-swift {model.name} full fine-tune (bf16 AdamW), batch 1 x {seq}, A100",
                    "ms-swift",
                    MS_SWIFT,
                    model,
                    Workload(
                        task="full_finetune", mixed_precision=False, seq_len=seq, global_batch=16, varied_lengths=True
                    ),
                    Plan(micro_batch=1, recompute="full"),
                    one,
                    published,
                    "reserved",
                    "attention: flash-attn 2; " + swift_loss,
                )
            )
    lora8 = LoraSpec(rank=8, alpha=32, targets=("q", "k", "v"), dropout=0.05)
    base = Workload(task="lora", seq_len=2048, global_batch=16, lora=lora8, varied_lengths=True)
    for batch, published in ((2, 43.11), (4, 63.81), (8, 76.14)):
        cases.append(
            FirstContactCase(
                f"ms-swift qwen-7b LoRA r=8, batch {batch} x 2048, A100",
                "ms-swift",
                MS_SWIFT,
                QWEN1_7B,
                Workload(task="lora", seq_len=2048, global_batch=16 * batch, lora=lora8, varied_lengths=True),
                Plan(micro_batch=batch, recompute="full"),
                one,
                published,
                "reserved",
                "attention: flash-attn 2; " + swift_loss,
            )
        )
    for flash, checkpointing, published in ((True, False, 37.70), (False, True, 27.71), (False, False, 57.67)):
        cases.append(
            FirstContactCase(
                f"ms-swift qwen-7b LoRA r=8, batch 1 x 2048, flash attention {'on' if flash else 'off'}, "
                f"gradient checkpointing {'on' if checkpointing else 'off'}, A100",
                "ms-swift",
                MS_SWIFT,
                QWEN1_7B,
                base,
                Plan(micro_batch=1, recompute="full" if checkpointing else "none", flash_attention=flash),
                one,
                published,
                "reserved",
                ("attention: flash-attn 2; " if flash else "attention: Qwen eager (s x s scores); ") + swift_loss,
            )
        )
    for label, lora, published in (
        ("r=2 on c_attn", LoraSpec(rank=2, alpha=32, targets=("q", "k", "v"), dropout=0.05), 27.72),
        ("r=64 on c_attn", LoraSpec(rank=64, alpha=32, targets=("q", "k", "v"), dropout=0.05), 27.85),
        ("r=8 on all linear layers", LoraSpec(rank=8, alpha=32, targets=("all-linear",), dropout=0.05), 27.87),
    ):
        cases.append(
            FirstContactCase(
                f"ms-swift qwen-7b LoRA {label}, batch 1 x 2048, A100",
                "ms-swift",
                MS_SWIFT,
                QWEN1_7B,
                Workload(task="lora", seq_len=2048, global_batch=16, lora=lora, varied_lengths=True),
                Plan(micro_batch=1, recompute="full"),
                one,
                published,
                "reserved",
                "attention: flash-attn 2; " + swift_loss,
            )
        )
    for model, published in ((QWEN1_7B, 23.85), (QWEN1_14B, 30.05), (QWEN1_72B, 74.87)):
        cases.append(
            FirstContactCase(
                f"ms-swift {model.name} QLoRA (bitsandbytes int4) r=8, batch 1 x 2048, A100",
                "ms-swift",
                MS_SWIFT,
                model,
                # swift's own LoRA tuner (tuner_backend "swift") never calls PEFT's prepare_model_for_kbit_training
                # (swift/llm/sft.py and tuner.py at cfcb67265, the commit that added the table: only
                # model.enable_input_require_grads()): no fp32 casts, 16-bit activations
                # bitsandbytes 0.41.3.post2 (the table's environment): fp16 quantisation state under swift's bf16
                # compute dtype (bnb_4bit_comp_dtype AUTO = dtype, swift/llm/utils/argument.py `select_bnb`), two
                # dequantised copies a matmul (Workload.bnb_fp16_dequant; stated after first contact)
                Workload(
                    task="qlora",
                    seq_len=2048,
                    global_batch=16,
                    lora=lora8,
                    varied_lengths=True,
                    kbit_upcast=False,
                    bnb_fp16_dequant=True,
                ),
                Plan(micro_batch=1, recompute="full"),
                one,
                published,
                "reserved",
                "attention: flash-attn 2; " + swift_loss + "; bitsandbytes NF4 dequantisation",
            )
        )
    # the same table's int4 (gptq) rows: the Qwen-*-Chat-Int4 checkpoints (auto_gptq 0.5.1), 4-bit weights read from
    # the checkpoint, not quantised at load; swift's own LoRA on them, no k-bit preparation (kbit_upcast=False)
    for model, published in ((QWEN1_7B, 19.21), (QWEN1_14B, 23.30), (QWEN1_72B, 54.86)):
        cases.append(
            FirstContactCase(
                f"ms-swift {model.name} QLoRA (gptq int4) r=8, batch 1 x 2048, A100",
                "ms-swift",
                MS_SWIFT,
                model,
                Workload(
                    task="qlora", seq_len=2048, global_batch=16, lora=lora8, varied_lengths=True, kbit_upcast=False
                ),
                Plan(micro_batch=1, recompute="full"),
                one,
                published,
                "reserved",
                "attention: flash-attn 2; " + swift_loss + "; GPTQ int4 weights (auto-gptq)",
            )
        )
    return cases


def _torchao() -> list[FirstContactCase]:
    cases = []
    llama3 = get_preset("llama-3-8b").model
    for gpu, rows in (
        (
            H100,
            (("bfloat16", "bf16", 47.65), ("float8 tensorwise, float8 all-gather", "fp8", 47.77),
             ("float8 rowwise, bf16 all-gather", "fp8", 47.79)),
        ),
        (
            B200,
            (("bfloat16", "bf16", 33.71), ("float8 tensorwise, float8 all-gather", "fp8", 33.38),
             ("mxfp8 cublas", "fp8", 33.88), ("mxfp8 cublas rceil", "fp8", 33.88), ("float8 rowwise", "fp8", 33.72)),
        ),
    ):  # fmt: skip
        for name, precision, published in rows:
            cases.append(
                FirstContactCase(
                    f"torchao torchtitan Llama 3 8B {name}, FSDP 8, batch 1 x 8192, {gpu.name}",
                    "torchao",
                    TORCHAO_TRAINING,
                    llama3,
                    Workload(task="pretrain", precision=precision, seq_len=8192, global_batch=8),  # type: ignore[arg-type]
                    # the B200 runs' torchtitan (6fc499f, August 2025) compiles the loss with the model (PR #1033);
                    # the H100 runs' (0.0.2, PyTorch 2.7.0a0) did not yet
                    Plan(
                        dp=8,
                        zero_stage=3,
                        recompute="selective",
                        micro_batch=1,
                        compiled=True,
                        compiled_loss=gpu is B200,
                    ),
                    Cluster(gpu=gpu, gpus_per_node=8),
                    published,
                    "reserved",
                    "attention: sdpa (flash); loss: torchtitan cross-entropy on fp32 logits"
                    + (", compiled with the model; " if gpu is B200 else "; ")
                    + "compile; "
                    + ("float8 all-gather (fp8 params)" if "float8 all-gather" in name else "bf16 all-gather"),
                )
            )
    for ac, recompute, rows in (
        ("no AC", "none", (("bfloat16 eager", "bf16", False, 53.12), ("float8nocompile", "fp8", False, 52.7),
                           ("float8 + compile", "fp8", True, 46.64))),
        ("full AC", "full", (("bfloat16 eager", "bf16", False, 28.07), ("float8nocompile", "fp8", False, 28.07),
                             ("float8 + compile", "fp8", True, 28.03))),
    ):  # fmt: skip
        for name, precision, compiled, published in rows:
            cases.append(
                FirstContactCase(
                    f"torchao torchtitan Llama 3 8B {name}, {ac}, FSDP 8, batch 1 x 4096, H100",
                    "torchao",
                    TORCHAO_NOCOMPILE,
                    llama3,
                    Workload(task="pretrain", precision=precision, seq_len=4096, global_batch=8),  # type: ignore[arg-type]
                    Plan(dp=8, zero_stage=3, recompute=recompute, micro_batch=1, compiled=compiled),  # type: ignore[arg-type]
                    Cluster(gpu=H100, gpus_per_node=8),
                    published,
                    "reserved",
                    "attention: sdpa (flash); loss: torchtitan cross-entropy on fp32 logits; "
                    + ("compile" if compiled else "eager"),
                )
            )
    return cases


def _qwen_readme() -> list[FirstContactCase]:
    cases = []
    lengths = (256, 512, 1024, 2048, 4096, 8192)
    lora = LoraSpec(rank=64, alpha=16, targets=("all-linear",), dropout=0.05)
    one = Cluster(gpu=A100_80)
    for model, method, gib in (
        (QWEN1_1_8B, "LoRA", (6.7, 7.4, 8.4, 11.0, 16.2, 21.8)),
        (QWEN1_1_8B, "Q-LoRA", (5.8, 6.0, 6.6, 7.8, 10.2, 15.8)),
        (QWEN1_7B, "LoRA", (20.1, 20.4, 21.5, 23.8, 29.7, 36.6)),
        (QWEN1_7B, "Q-LoRA", (11.5, 11.5, 12.3, 13.9, 16.9, 23.5)),
        (QWEN1_14B, "LoRA", (34.6, 35.1, 35.3, 37.4, 42.5, 55.2)),
        (QWEN1_14B, "Q-LoRA", (18.7, 18.4, 18.9, 19.9, 23.0, 27.9)),
        (QWEN1_72B, "Q-LoRA", (61.4, 61.4, 62.9, 64.1, 68.0, 75.6)),
    ):
        qlora = method == "Q-LoRA"
        for seq, published in zip(lengths, gib, strict=True):
            cases.append(
                FirstContactCase(
                    f"Qwen README {model.name} {method} r=64, batch 1 x {seq}, A100",
                    "qwen-readme",
                    QWEN_README,
                    model,
                    Workload(
                        task="qlora" if qlora else "lora",
                        precision="fp16" if qlora else "bf16",
                        seq_len=seq,
                        global_batch=8,
                        lora=lora,
                        kbit_upcast=False if qlora else None,
                    ),
                    # stated after first contact: under DeepSpeed the Trainer runs no autocast, so the remote code's
                    # cross-entropy takes the fp16 logits as they are (Plan.no_upcast_loss); finetune/
                    # ds_config_zero2.json's reduce_bucket_size 2e8 with overlap_comm (Plan.reduce_bucket_elements)
                    Plan(
                        micro_batch=1,
                        recompute="full",
                        zero_stage=2 if qlora else 0,
                        no_upcast_loss=qlora,
                        reduce_bucket_elements=2e8 if qlora else None,
                    ),
                    one,
                    published,
                    "device",
                    "attention: flash-attn 2; loss: Qwen remote code CrossEntropyLoss on 16-bit logits"
                    + ("; GPTQ int4 weights (auto-gptq), prepare_model_for_kbit_training" if qlora else ""),
                )
            )
    return cases


def _trainy() -> list[FirstContactCase]:
    cases = []
    for nodes, published in ((4, 47.96), (8, 46.97)):
        gpus = 8 * nodes
        cases.append(
            FirstContactCase(
                f"Trainy torchtitan Llama 3.1 8B FP8, FSDP {gpus}, batch 2 x 8192, H200",
                "trainy-whitefiber",
                TRAINY,
                get_preset("llama-3.1-8b").model,
                Workload(task="pretrain", precision="fp8", seq_len=8192, global_batch=2 * gpus),
                Plan(dp=gpus, zero_stage=3, recompute="selective", micro_batch=2, compiled=True, compiled_loss=True),
                Cluster(gpu=H200, gpus_per_node=8, nodes=nodes, inter_node_gbps=3200.0),
                published,
                "reserved",
                "attention: sdpa (flash); loss: torchtitan cross-entropy compiled with the model (PR #1033, April "
                "2025); compile; float8 all-gather (fp8 params)",
            )
        )
    return cases


def _universal_llm_trainer() -> list[FirstContactCase]:
    cases = []
    gb = 1e9 / 2**30  # the trainer prints memory_reserved() / 1e9
    lora = LoraSpec(rank=8, alpha=16, targets=("all-linear",), dropout=0.05)
    # the loss as the source runs it (stated after first contact, which read these rows with the standard loss's fp32
    # upcast): every config at 9efd14b5 sets amp_training: False, src/trainer/trainer.py runs the forward under
    # torch.autocast(enabled=self.amp), and src/models/llama3.py (likewise llama2, gemma, gemma2, phi3) applies
    # nn.CrossEntropyLoss to the model's bf16 logits (called without labels: no ForCausalLMLoss upcast)
    levers = (
        "attention: sdpa (transformers default); loss: nn.CrossEntropyLoss on 16-bit logits (reshaped copy), "
        "autocast off (amp_training: False)"
    )
    models = {
        "Llama 3.1 8B": get_preset("llama-3.1-8b").model,
        "Llama 3.1 70B": get_preset("llama-3.1-70b").model,
        "Llama 2 13B": get_preset("llama-2-13b").model,
        "Gemma 2 9B": get_preset("gemma-2-9b").model,
        "Gemma 7B": get_preset("gemma-7b").model,
        "Phi3-mini (3.8B)": get_preset("phi-3-mini-4k").model,
    }
    # (model, method, GPUs, H100 GB, A100 GB); None: out of memory
    rows = (
        ("Llama 3.1 8B", "Full", 1, 78, 78),
        ("Llama 3.1 8B", "LoRA", 1, 36, 36),
        ("Llama 3.1 8B", "QLoRA", 1, 48, 48),
        ("Llama 3.1 70B", "LoRA", 2, 66, 65),
        ("Llama 2 13B", "Full", 2, 31, 31),
        ("Llama 2 13B", "LoRA", 1, 43, 43),
        ("Llama 2 13B", "QLoRA", 1, 38, 38),
        ("Gemma 2 9B", "Full", 2, 59, 58),
        ("Gemma 2 9B", "LoRA", 1, 60, 60),
        ("Gemma 7B", "Full", 2, 48, 48),
        ("Gemma 7B", "LoRA", 1, 51, 51),
        ("Gemma 7B", "QLoRA", 1, 70, 70),
        ("Phi3-mini (3.8B)", "Full", 1, 40, 40),
        ("Phi3-mini (3.8B)", "LoRA", 1, 17, 17),
        ("Phi3-mini (3.8B)", "QLoRA", 1, 21, 21),
    )
    for name, method, gpus, h100, a100 in rows:
        task = {"Full": "full_finetune", "LoRA": "lora", "QLoRA": "qlora"}[method]
        workload = Workload(
            task=task,  # type: ignore[arg-type]
            mixed_precision=False,
            seq_len=8192,
            global_batch=2 * gpus * (1 if method == "Full" else 32),
            lora=None if method == "Full" else lora,
            paged_optimizer=False,  # torch.optim.AdamW
        )
        if gpus == 1:
            plan = Plan(micro_batch=2, recompute="full", no_upcast_loss=True)
        else:  # FSDP (FULL_SHARD) with CPUOffload(offload_params=True): parameters, gradients, optimizer on the host
            # PyTorch FSDP1 (src/trainer/build.py `get_wrapped_model`: torch.distributed.fsdp.FullyShardedDataParallel),
            # whose offload keeps each gradient shard on the GPU until the backward ends (Plan.fsdp1: stated after
            # first contact, which read these rows with FSDP2's one unit of gradients)
            plan = Plan(
                dp=2,
                zero_stage=3,
                offload="optimizer_and_params",
                micro_batch=2,
                recompute="full",
                no_upcast_loss=True,
                fsdp1=True,
            )
        for gpu, published in ((H100, h100), (A100_80, a100)):
            cases.append(
                FirstContactCase(
                    f"universal-llm-trainer {name} {method}, {gpus} x {gpu.name}, batch 2 x 8192",
                    "universal-llm-trainer",
                    UNIVERSAL_LLM_TRAINER,
                    models[name],
                    workload,
                    plan,
                    Cluster(gpu=gpu, gpus_per_node=gpus),
                    round(published * gb, 2),
                    "reserved",
                    levers
                    + ("; bitsandbytes NF4, prepare_model_for_kbit_training" if method == "QLoRA" else "")
                    + ("; FSDP1 CPU offload (plan.fsdp1)" if gpus > 1 else ""),
                )
            )
    return cases


# Llama 4 Scout (torchtitan models/llama4 17bx16e: dim 5120, 40 heads, 8 KV heads, vocabulary 202,048, every layer
# MoE with 16 routed experts, top-1, one shared expert of the expert width 8192) cut to the 2 layers torchao ran.
LLAMA4_SCOUT_2L = ModelSpec(
    name="llama-4-scout-2-layers",
    layers=2,
    hidden=5120,
    heads=40,
    kv_heads=8,
    ffn=16384,
    vocab=202048,
    experts=16,
    experts_per_token=1,
    expert_ffn=8192,
    shared_experts=1,
    moe_layers=2,
)

GB = 1e9 / 2**30  # a decimal gigabyte in GiB


def _megatron_bridge() -> list[FirstContactCase]:
    cases = []
    te = (
        "attention: TE fused (flash); loss: Transformer Engine fused cross-entropy; distributed optimizer with bf16 "
        "grad buffers (grad_reduce_in_fp32 False); fp8_param_gather (fp8 params); CUDA graphs (MLP); "
    )
    for label, tp, pp, vpp, dp, published_gb, recompute in (
        ("TP 4 x PP 4 x VPP 5 x DP 2, core_attn recompute", 4, 4, 5, 2, 58.8, "core_attn"),
        ("TP 4 x PP 8 x VPP 5 x DP 1, core_attn recompute", 4, 8, 5, 1, 53.2, "core_attn"),
        ("TP 8 x PP 4 x VPP 5 x DP 1, core_attn recompute", 8, 4, 5, 1, 50.2, "core_attn"),
        ("TP 4 x PP 4 x VPP 10 x DP 2, core_attn recompute", 4, 4, 10, 2, 60.2, "core_attn"),
        ("TP 4 x PP 4 x VPP 5 x DP 2, core_attn + layernorm recompute", 4, 4, 5, 2, 59.6, "core_attn, layernorm"),
    ):
        cases.append(
            FirstContactCase(
                f"Megatron-Bridge Llama 3 70B SFT FP8, {label}, batch 1 x 4096, 32 H100",
                "megatron-bridge",
                MEGATRON_BRIDGE,
                get_preset("llama-3-70b").model,
                Workload(task="full_finetune", precision="fp8", seq_len=4096, global_batch=32),
                Plan(
                    tp=tp,
                    pp=pp,
                    dp=dp,
                    virtual_stages=vpp,
                    sequence_parallel=True,
                    zero_stage=1,
                    micro_batch=1,
                    recompute="selective",
                    fp32_main_grads=True,
                    fp8_params=True,
                    chunked_loss=True,
                ),
                Cluster(gpu=H100, gpus_per_node=8, nodes=4, inter_node_gbps=3200.0),
                round(published_gb * GB, 2),
                "allocated",
                te + f"recompute_modules [{recompute}]",
            )
        )
    return cases


def _torchtitan_nvfp4() -> list[FirstContactCase]:
    cases = []
    for preset, batch, rows in (
        ("llama-3-8b", 32, (("BF16", "bf16", 174.49), ("MXFP8", "fp8", 179.94))),
        ("qwen3-8b", 16, (("BF16", "bf16", 112.88), ("MXFP8", "fp8", 112.63))),
    ):
        for name, precision, published in rows:
            cases.append(
                FirstContactCase(
                    f"torchtitan nvfp4.md {preset} {name}, FSDP 4, batch {batch} x 2048, Blackwell",
                    "torchtitan-nvfp4",
                    TORCHTITAN_NVFP4,
                    get_preset(preset).model,
                    Workload(task="pretrain", precision=precision, seq_len=2048, global_batch=4 * batch),  # type: ignore[arg-type]
                    Plan(dp=4, zero_stage=3, recompute="selective", micro_batch=batch, compiled=True, fused_loss=True),
                    Cluster(gpu=B200, gpus_per_node=4),
                    published,
                    "reserved",
                    "attention: sdpa (flash); loss: torchtitan ChunkedLossWrapper (head + cross-entropy in 8 "
                    'chunks, the configs\' loss at 73aed7f6; loss not compiled: components ["model"]); '
                    + ("MXFP8 linears, bf16 all-gather" if precision == "fp8" else "bf16"),
                )
            )
    return cases


def _torchao_moe() -> list[FirstContactCase]:
    cases = []
    for name, precision, published in (
        ("bf16 baseline", "bf16", 145.55),
        ("MXFP8 linears only", "fp8", 146.62),
        ("MXFP8 grouped GEMMs only", "fp8", 144.71),
        ("MXFP8 linears + grouped GEMMs", "fp8", 145.32),
    ):
        cases.append(
            FirstContactCase(
                f"torchao torchtitan Llama 4 Scout 2 layers {name}, FSDP 4 x EP 4, batch 8 x 8192, B200",
                "torchao-moe",
                TORCHAO_MOE,
                LLAMA4_SCOUT_2L,
                Workload(task="pretrain", precision=precision, seq_len=8192, global_batch=32),  # type: ignore[arg-type]
                # torchtitan compiles model and loss under --compile.enable (compile.components default ["model",
                # "loss"] since pytorch/torchtitan #1608, August 2025; the section dates from October 2025)
                Plan(dp=4, ep=4, zero_stage=3, recompute="none", micro_batch=8, compiled=True, compiled_loss=True),
                Cluster(gpu=B200, gpus_per_node=4),
                published,
                "reserved",
                "attention: sdpa (flash); loss: torchtitan cross-entropy compiled with the model; compile; no AC; "
                "bf16 all-gather",
            )
        )
    return cases


def _fsdp_qlora() -> list[FirstContactCase]:
    cases = []
    rtx = get_gpu("rtx4090-24g")  # the 3090 runs too: the same 24 GB (the compared figure does not depend on the card)
    lora = LoraSpec(rank=64, alpha=16, targets=("q", "k", "v", "gate", "up", "down"), dropout=0.1)
    models = {
        "Llama-2 7B": get_preset("llama-2-7b").model,
        "Yi 34B": YI_34B,
        "Llama-2 70B": get_preset("llama-2-70b").model,
        "Mistral 7B v0.2": get_preset("mistral-7b").model,
    }
    # (model, method, sharding, batch, context, published GiB, reading)
    rows = (
        ("Llama-2 7B", "QLoRA", "fsdp", 1, 512, 4.98, "reserved"),
        ("Llama-2 7B", "QLoRA", "fsdp", 1, 2048, 5.21, "reserved"),
        ("Llama-2 7B", "LoRA", "fsdp", 1, 512, 10.24, "reserved"),
        ("Llama-2 7B", "LoRA", "fsdp", 1, 2048, 10.22, "reserved"),
        ("Llama-2 7B", "LoRA", "fsdp", 1, 512, 8.28, "allocated"),
        ("Llama-2 7B", "LoRA", "fsdp", 1, 2048, 9.16, "allocated"),
        ("Llama-2 7B", "QLoRA", "fsdp", 4, 2048, 11.22, "reserved"),
        ("Llama-2 7B", "QLoRA", "fsdp", 10, 2048, 20.97, "reserved"),
        ("Llama-2 7B", "LoRA", "fsdp", 4, 2048, 16.14, "reserved"),
        ("Llama-2 7B", "LoRA", "fsdp", 6, 2048, 21.35, "reserved"),
        ("Llama-2 7B", "QLoRA", "ddp", 8, 2048, 20.94, "reserved"),
        ("Llama-2 7B", "LoRA", "ddp", 4, 2048, 22.04, "reserved"),
        ("Yi 34B", "QLoRA", "fsdp", 2, 2048, 23.05, "reserved"),
        ("Yi 34B", "QLoRA", "offload", 4, 2048, 22.98, "reserved"),
        ("Llama-2 70B", "QLoRA", "offload", 2, 2048, 14.92, "reserved"),
        ("Llama-2 7B", "LoRA", "offload", 10, 2048, 22.69, "reserved"),
        ("Llama-2 7B", "QLoRA", "offload", 12, 2048, 22.38, "reserved"),
        ("Mistral 7B v0.2", "QLoRA", "offload", 12, 2048, 22.54, "reserved"),
        ("Mistral 7B v0.2", "QLoRA", "offload", 1, 24576, 22.54, "reserved"),
    )
    for name, method, sharding, batch, seq, published, reading in rows:
        qlora = method == "QLoRA"
        workload = Workload(
            task="qlora" if qlora else "lora",
            mixed_precision=False,
            seq_len=seq,
            global_batch=2 * batch,
            lora=lora,
            paged_optimizer=False,  # torch.optim.AdamW
            kbit_upcast=False if qlora else None,  # get_peft_model only: no prepare_model_for_kbit_training
            varied_lengths=False,
        )
        plan = Plan(
            dp=2,
            zero_stage=0 if sharding == "ddp" else 3,
            offload="optimizer_and_params" if sharding == "offload" else "none",
            micro_batch=batch,
            recompute="full",
            attention="sdpa",
        )
        what = {"fsdp": "FSDP", "ddp": "DDP (NO_SHARD)", "offload": "FSDP + CPU offload"}[sharding]
        cases.append(
            FirstContactCase(
                f"fsdp_qlora {name} {method} r=64, {what}, batch {batch} x {seq}, 2 x 24 GB ({reading})",
                "fsdp-qlora",
                FSDP_QLORA,
                models[name],
                workload,
                plan,
                Cluster(gpu=rtx, gpus_per_node=2),
                published,
                reading,
                "attention: sdpa (flash); loss: transformers LlamaForCausalLM, fp32 logits; reentrant gradient "
                "checkpointing" + ("; bitsandbytes NF4 (quant_storage bf16), no k-bit preparation" if qlora else ""),
            )
        )
    return cases


def _torchtune_2403() -> list[FirstContactCase]:
    cases = []
    llama2 = get_preset("llama-2-7b").model
    rtx = get_gpu("rtx4090-24g")
    qv = LoraSpec(rank=8, alpha=16, targets=("q", "v"))
    every = LoraSpec(rank=8, alpha=16, targets=("q", "k", "v", "o", "gate", "up", "down"))
    # (label, config, task, lora, paged optimizer, GPUs, recompute, card, published GB)
    rows = (
        ("QLoRA", "7B_qlora_single_device", "qlora", every, False, 1, "full", rtx, 9.29),
        ("LoRA", "7B_lora (FSDP)", "lora", qv, False, 2, "none", rtx, 14.17),
        ("LoRA", "7B_lora_single_device", "lora", qv, False, 1, "full", rtx, 17.18),
        ("full fine-tune", "7B_full_single_device_low_memory (PagedAdamW, optimizer_in_bwd)", "full_finetune", None,
         True, 1, "full", get_gpu("rtxa6000-48g"), 15.97),
        ("full fine-tune", "7B_full (FSDP)", "full_finetune", None, False, 4, "full", rtx, 12.01),
    )  # fmt: skip
    for label, config, task, lora, paged, gpus, recompute, gpu, published_gb in rows:
        workload = Workload(
            task=task,  # type: ignore[arg-type]
            mixed_precision=False,
            seq_len=1304,
            global_batch=2 * gpus,
            lora=lora,
            paged_optimizer=paged,
            kbit_upcast=False if task == "qlora" else None,
            varied_lengths=True,
        )
        plan = Plan(
            dp=gpus,
            zero_stage=3 if gpus > 1 else 0,
            micro_batch=2,
            recompute=recompute,  # type: ignore[arg-type]
            optimizer_in_backward="optimizer_in_bwd" in config,  # fitted: added after first contact
        )
        cases.append(
            FirstContactCase(
                f"torchtune 2024-03 Llama 2 7B {label}, {config}, {gpus} x {gpu.name}, batch 2 of Alpaca",
                "torchtune-2403",
                TORCHTUNE_2403,
                llama2,
                workload,
                plan,
                Cluster(gpu=gpu, gpus_per_node=gpus),
                round(published_gb * GB, 2),
                "reserved",
                "attention: sdpa (flash); loss: nn.CrossEntropyLoss on the decoder's fp32 output"
                + ("; torchtune NF4 (torchao)" if task == "qlora" else ""),
            )
        )
    return cases


def _liger_pr199() -> list[FirstContactCase]:
    cases = []
    mib = 2**20 / 2**30
    # Qwen2-7B-Instruct has Qwen2.5-7B's shapes (config.json: 28 layers, hidden 3584, 28 heads, 4 KV heads, ffn 18944,
    # vocabulary 152064, q/k/v bias, untied head); Phi-3.5-mini-instruct has Phi-3-mini's (32 layers, hidden 3072,
    # ffn 8192, vocabulary 32064)
    models = {
        "Llama 3 8B": get_preset("llama-3-8b").model,
        "Mistral 7B v0.1": get_preset("mistral-7b").model,
        "Gemma 7B it": get_preset("gemma-7b").model,
        "Qwen2 7B Instruct": get_preset("qwen2.5-7b").model,
        "Phi-3.5 mini": get_preset("phi-3-mini-4k").model,
    }
    # (model, per-device batch, Liger, longest step's padded length per rank, MiB allocated, MiB reserved)
    rows = (
        ("Llama 3 8B", 32, False, 288, 43280.77, 73712.0),
        ("Llama 3 8B", 32, True, 368, 38307.87, 55912.0),
        ("Mistral 7B v0.1", 32, False, 384, 34547.91, 58180.0),
        ("Mistral 7B v0.1", 32, True, 384, 34547.82, 46732.0),
        ("Gemma 7B it", 24, False, 336, 52790.76, 78378.0),
        ("Gemma 7B it", 24, True, 352, 40729.03, 54408.0),
        ("Qwen2 7B Instruct", 24, False, 416, 41293.44, 66262.0),
        ("Qwen2 7B Instruct", 24, True, 384, 36853.69, 49280.0),
        ("Phi-3.5 mini", 128, False, 480, 49431.51, 68752.0),
        ("Phi-3.5 mini", 128, True, 496, 42812.34, 70052.0),
    )
    # fsdp_torch_adamw stated after first contact (read then as ZeRO-3 without it): the Trainer's default optim
    # adamw_torch, torch.optim.AdamW's foreach step, under accelerate's FSDP
    trainer_fsdp = Plan(dp=4, zero_stage=3, recompute="full", attention="sdpa", fsdp_torch_adamw=True)
    for name, batch, liger, seq, allocated, reserved in rows:
        for reading, published in (("allocated", allocated), ("reserved", reserved)):
            cases.append(
                FirstContactCase(
                    f"Liger PR #199 {name} full fine-tune{' + Liger' if liger else ''}, FSDP 4, batch {batch} x "
                    f"{seq} (Alpaca padded), 80 GB ({reading})",
                    "liger-hf-fsdp",
                    LIGER_PR199,
                    models[name],
                    Workload(task="full_finetune", seq_len=seq, global_batch=4 * batch, varied_lengths=True),
                    replace(trainer_fsdp, micro_batch=batch, fused_loss=liger),
                    Cluster(gpu=A100_80, gpus_per_node=4),
                    round(published * mib, 2),
                    reading,
                    "attention: sdpa (transformers 4.44 default); loss: "
                    + (
                        "Liger fused linear cross-entropy (AutoLigerKernelForCausalLM), Liger RoPE, RMSNorm, "
                        "SwiGLU/GeGLU"
                        if liger
                        else "transformers' CrossEntropyLoss on fp32-upcast logits"
                    )
                    + "; FSDP1 activation checkpointing; accelerate's fp32 upcast of the flat parameters",
                )
            )
    return cases


def _torchtune_tutorials() -> list[FirstContactCase]:
    cases = []
    llama2 = get_preset("llama-2-7b").model
    every = ("q", "k", "v", "o", "gate", "up", "down")  # "all layers" less the head's adapter (not a target here)
    # (layers, targets, rank, alpha, published GB)
    rows = (
        ("Q and V only", ("q", "v"), 8, 16, 15.57),
        ("all layers", every, 8, 16, 15.87),
        ("Q and V only", ("q", "v"), 64, 128, 15.86),
        ("all layers", every, 64, 128, 17.04),
    )
    for label, targets, rank, alpha, published_gb in rows:
        cases.append(
            FirstContactCase(
                f"torchtune tutorial Llama 2 7B LoRA {label} r={rank}, 7B_lora_single_device, batch 2 of Alpaca "
                "(512 tokens at most)",
                "torchtune-tutorials",
                TORCHTUNE_TUTORIALS,
                llama2,
                Workload(
                    task="lora",
                    mixed_precision=False,
                    seq_len=512,
                    global_batch=2 * 64,
                    lora=LoraSpec(rank=rank, alpha=alpha, targets=targets),
                    varied_lengths=True,
                ),
                Plan(micro_batch=2, recompute="full"),
                Cluster(gpu=A100_80),
                round(published_gb * GB, 2),
                "reserved",
                "attention: sdpa (flash); loss: nn.CrossEntropyLoss on the decoder's fp32 output",
            )
        )
    return cases


def _torchtitan_773() -> list[FirstContactCase]:
    plan = Plan(
        dp=8,
        tp=8,
        pp=8,
        zero_stage=3,
        micro_batch=1,
        recompute="full",
        sequence_parallel=True,
        virtual_stages=2,
        pp_keeps_outputs=True,  # torch of January 2025 keeps the last stage's outputs (Plan.pp_keeps_outputs)
    )
    return [
        FirstContactCase(
            "torchtitan Llama 3.1 405B BF16, FSDP 8 x TP 8 x PP 8, interleaved zero bubble (as interleaved 1F1B, "
            "v 2), batch 32 x 8192, 512 H100",
            "torchtitan-773",
            TORCHTITAN_773,
            get_preset("llama-3.1-405b").model,
            Workload(task="pretrain", seq_len=8192, global_batch=256),
            plan,
            Cluster(gpu=H100, gpus_per_node=8, nodes=64, inter_node_gbps=3200.0),
            89.73,
            "reserved",
            "attention: sdpa (flash); loss: torchtitan cross-entropy, not compiled; no compile, no Float8; "
            "schedule ScheduleInterleavedZeroBubble (not modelled: stated as interleaved 1F1B)",
        )
    ]


def _torchtune_flags() -> list[FirstContactCase]:
    cases = []
    llama = get_preset("llama-3.2-3b").model
    lora = LoraSpec(rank=64, alpha=128, targets=("q", "v", "o", "gate", "up", "down"))
    alpaca = Workload(task="full_finetune", mixed_precision=False, seq_len=1304, global_batch=2, varied_lengths=True)
    packed = replace(alpaca, seq_len=4096, varied_lengths=False)
    baseline = Plan(micro_batch=2, attention="sdpa")
    compiled = replace(baseline, compiled=True, compiled_loss=True)
    chunked = replace(compiled, chunked_loss=True)
    checkpointed = replace(chunked, recompute="full")
    in_bwd = replace(checkpointed, optimizer_in_backward=True)
    offloaded = replace(in_bwd, activation_offload=True)
    adapters = replace(offloaded, optimizer_in_backward=False)  # the LoRA recipe steps after the backward
    # (technique, workload, plan, published GiB)
    rows = (
        ("baseline (Alpaca unpacked)", alpaca, baseline, 25.5),
        ("+ packed dataset", packed, baseline, 60.0),
        ("+ compile", packed, compiled, 51.0),
        ("+ chunked cross-entropy", packed, chunked, 42.9),
        ("+ activation checkpointing", packed, checkpointed, 24.9),
        ("+ optimizer step in backward", packed, in_bwd, 23.1),
        ("+ activation offloading", packed, offloaded, 21.8),
        ("+ 8-bit AdamW", replace(packed, optimizer="adamw_8bit", paged_optimizer=False), offloaded, 17.6),
        ("LoRA r=64", replace(packed, task="lora", lora=lora), adapters, 8.5),
        ("QLoRA r=64", replace(packed, task="qlora", lora=lora, paged_optimizer=False, kbit_upcast=False), adapters,
         4.6),
    )  # fmt: skip
    for technique, workload, plan, published in rows:
        cases.append(
            FirstContactCase(
                f"torchtune 2024-11 optimization flags, Llama 3.2 3B {technique}, batch 2, one A100",
                "torchtune-flags",
                TORCHTUNE_FLAGS,
                llama,
                workload,
                plan,
                Cluster(gpu=A100_80),
                published,
                "allocated",
                "attention: sdpa (flash); loss: "
                + ("CEWithChunkedOutputLoss" if plan.chunked_loss else "nn.CrossEntropyLoss on the fp32 output")
                + ("; torch.compile of the layers and the loss" if plan.compiled else "")
                + ("; activation offloading" if plan.activation_offload else "")
                + ("; torchtune NF4 (torchao)" if workload.task == "qlora" else ""),
            )
        )
    return cases


def _atorch_llama2() -> list[FirstContactCase]:
    cases = []
    llama = get_preset("llama-2-7b").model
    lora = LoraSpec(rank=16, alpha=16, targets=("q", "k", "v", "o"), dropout=0.05)
    # FSDP rows: (LoRA, GPUs, published MiB)
    fsdp_rows = (
        (True, 8, 33354.1),
        (False, 8, 39596.3),
        (True, 16, 31735.5),
        (False, 16, 34776.7),
        (True, 32, 30926.2),
        (False, 32, 32366.8),
        (True, 64, 30521.6),
        (False, 64, 31161.9),
    )
    for use_lora, gpus, published_mib in fsdp_rows:
        workload = Workload(
            task="lora" if use_lora else "pretrain",  # from_config: no weights loaded (the same memory either way)
            seq_len=4096,
            global_batch=4 * gpus,
            lora=lora if use_lora else None,
            varied_lengths=False,
        )
        # fp32 parameters under torch.autocast bf16, no FSDP mixed-precision policy (Plan.fp32_params): stated since
        # the lever came (recorded at first contact without it: the record keeps that figure)
        # the loop keeps `outputs` through the backward (fsdp_llama2.py: `outputs = model(**batch)`, `loss =
        # loss_func(None, outputs)`, `loss.backward()`), whose logits transformers 4.31.0 (atorch/requirements.txt)
        # returns in fp32 (LlamaForCausalLM `logits = logits.float()`): 4 bytes a logit (Plan.kept_logits_bytes)
        plan = Plan(
            dp=gpus,
            zero_stage=3,
            micro_batch=4,
            recompute="full",
            fsdp_torch_adamw=True,
            fp32_params=True,
            kept_logits_bytes=4.0,
        )
        cases.append(
            FirstContactCase(
                f"atorch Llama 2 7B FSDP {'LoRA r=16' if use_lora else 'full'}, {gpus} A100, batch 4 x 4096",
                "atorch-llama2",
                ATORCH_LLAMA2,
                llama,
                workload,
                plan,
                Cluster(gpu=A100_80, gpus_per_node=8, nodes=gpus // 8, inter_node_gbps=800.0),
                published_mib / 1024,
                "allocated",
                "attention: flash (atorch module_replace); loss: transformers LlamaForCausalLM, fp32 logits; fp32 "
                "parameters under torch.autocast bf16, no FSDP mixed precision (plan.fp32_params)"
                + ("; LoRA base weights fp32 (plan.fp32_params)" if use_lora else ""),
            )
        )
    # DeepSpeed 3D rows: (GPUs, TP, PP, DP, published MiB)
    ds_rows = (
        (8, 1, 2, 4, 40006.9),
        (8, 2, 1, 4, 38635.6),
        (8, 2, 2, 2, 31132.3),
        (16, 2, 2, 4, 26309.4),
        (32, 2, 2, 8, 23901.8),
        (64, 2, 2, 16, 22695.7),
    )
    # ds_3d_llama2.py builds transformers' LlamaModel (no lm_head) and DeepSpeed3DParallelConfig's default tie_first
    # ties the vocabulary-parallel embedding into the last stage, whose logits it computes on it: a tied head
    tied = replace(llama, tied_embeddings=True)
    for gpus, tp, pp, dp, published_mib in ds_rows:
        workload = Workload(
            task="pretrain", precision="fp16", seq_len=4096, global_batch=8 * 64 * dp, varied_lengths=False
        )
        # the loss as it ran (Plan.upcast_vocab_parallel_loss: ds_3d_llama2.py `my_loss_func`, `logits.float()` then
        # atorch's vocab_parallel_cross_entropy), and the fp16 logits the pipeline engine keeps on the last stage:
        # DeepSpeed 0.10.0 (atorch/requirements.txt) stores each micro-batch's output in `pipe_buffers['outputs']`,
        # whose last-stage backward returns before freeing it (runtime/pipe/engine.py `_exec_backward_pass`), in
        # two buffers there (schedule.py TrainSchedule.num_pipe_buffers: max(2, stages - stage_id)): 2 x 2 bytes a
        # logit of the vocabulary shard (Plan.kept_logits_bytes)
        plan = Plan(
            dp=dp,
            tp=tp,
            pp=pp,
            zero_stage=1,
            micro_batch=8,
            recompute="full",
            upcast_vocab_parallel_loss=True,
            kept_logits_bytes=2 * 2.0,
        )
        cases.append(
            FirstContactCase(
                f"atorch Llama 2 7B DeepSpeed 3D TP {tp} PP {pp} DP {dp}, {gpus} A100, micro-batch 8 x 4096",
                "atorch-llama2",
                ATORCH_LLAMA2,
                tied,
                workload,
                plan,
                Cluster(gpu=A100_80, gpus_per_node=8, nodes=gpus // 8, inter_node_gbps=800.0),
                published_mib / 1024,
                "allocated",
                "attention: flash (atorch module_replace); loss: atorch vocab_parallel_cross_entropy; DeepSpeed "
                "pipeline engine, ZeRO-1, fp16 with fp32 master weights, torch AdamW",
            )
        )
    return cases


def _fms_granite() -> list[FirstContactCase]:
    """fms-acceleration's GraniteCausalLM table: its plain Hugging Face Trainer rows (framework_config `none` and
    `baseline-peft-bnb`), stated as the fms-acceleration rows of the same harness are (validation_cases._fms_run)."""
    cases = []
    # (task, GPUs, per-device batch, mem_peak_torch_mem_alloc_in_bytes)
    rows = (
        ("full_finetune", 1, 4, 35134836736),
        ("full_finetune", 2, 2, 17626672128),
        ("full_finetune", 1, 8, 47059390976),
        ("full_finetune", 2, 4, 23781051904),
        ("lora", 1, 4, 20169870848),
        ("lora", 2, 2, 10321519104),
        ("lora", 1, 8, 33152880128),
        ("lora", 2, 4, 16819665408),
        ("qlora", 1, 4, 18174161920),
        ("qlora", 2, 2, 7826759168),
        ("qlora", 1, 8, 34177070080),
        ("qlora", 2, 4, 14319836672),
    )
    for task, gpus, batch, published_bytes in rows:
        # transformers 4.45.2 (refs/requirements_granite.txt): GraniteForCausalLM upcasts in its forward, no 16-bit
        # logits beside the loss's shifted copy (activations SHIFT_COPY_LOSS_BYTES_PER_LOGIT)
        workload, plan, cluster = _fms_run(task, gpus, batch, shift_copy_loss=False)
        cases.append(
            FirstContactCase(
                f"fms-acceleration PowerLM-3b {task.replace('_', ' ')}, {gpus} GPU, batch {batch} x 4096",
                "fms-granite",
                FMS_GRANITE,
                POWERLM_3B,
                workload,
                plan,
                cluster,
                published_bytes / GIB,
                "allocated",
                "attention: flash-attn 2; loss: transformers GraniteForCausalLM, logits / logits_scaling upcast to "
                "fp32; gradient checkpointing"
                + ("; accelerate FSDP1 FULL_SHARD" if gpus > 1 else "")
                + ("; bitsandbytes NF4, bf16 autocast" if task == "qlora" else ""),
            )
        )
    return cases


def _megatron_release() -> list[FirstContactCase]:
    """Megatron-LM's release tests: pre-training with TP / PP / EP and the distributed optimizer, no recompute."""
    cases = []
    nemotron_vocab = 256000  # the nemotron_2_256k tokenizer every release config names (module docstring)
    mixtral_7 = replace(get_preset("mixtral-8x7b").model, vocab=nemotron_vocab)
    mixtral_22 = replace(get_preset("mixtral-8x22b").model, vocab=nemotron_vocab)
    # (label, model, tp, pp, ep, virtual stages, micro-batch, global batch, ((card, max allocated bytes), ...))
    rows = (
        ("gpt3_15b_8t TP 8 x DP 16", MEGATRON_GPT_15B, 8, 1, 1, 1, 4, 384,
         ((H100, 28160194560), (A100_80, 28391901184))),
        ("mixtral_8x7b alltoall TP 2 x PP 4 x EP 4 x DP 16", mixtral_7, 2, 4, 4, 1, 1, 1024,
         ((H100, 26495959040), (A100_80, 26760161280))),
        ("mixtral_8x7b TP 2 (expert TP 1) x PP 4 x VPP 8 x EP 8 x DP 16", mixtral_7, 2, 4, 8, 8, 1, 256,
         ((H100, 35505844224), (A100_80, 35900022784))),
        ("mixtral_8x22b TP 2 x PP 8 x EP 8 x DP 16", mixtral_22, 2, 8, 8, 1, 1, 256,
         ((H100, 28533706752), (A100_80, 28168466432))),
    )  # fmt: skip
    for label, model, tp, pp, ep, vpp, micro, global_batch, readings in rows:
        dp = 16
        for gpu, published_bytes in readings:
            cases.append(
                FirstContactCase(
                    f"Megatron-LM release {label}, batch {micro} x 4096, {gpu.name}",
                    "megatron-release",
                    MEGATRON_RELEASE,
                    model,
                    Workload(task="pretrain", precision="bf16", seq_len=4096, global_batch=global_batch),
                    Plan(
                        tp=tp,
                        pp=pp,
                        dp=dp,
                        ep=ep,
                        # --expert-tensor-parallel-size 1 in the vpp8 run's model_config.yaml, unset (tp) in the
                        # others; stated after first contact (fitted: the record keeps the figure without it)
                        expert_tp=1 if vpp > 1 else None,
                        virtual_stages=vpp,
                        sequence_parallel=True,
                        zero_stage=1,
                        micro_batch=micro,
                        recompute="none",
                        fp32_main_grads=True,
                        upcast_vocab_parallel_loss=True,
                    ),
                    # DGX H100 8 x 400, DGX A100 8 x 200 Gb/s (NVIDIA DGX datasheets); the memory ignores it
                    Cluster(
                        gpu=gpu,
                        gpus_per_node=8,
                        nodes=tp * pp * dp // 8,
                        inter_node_gbps=3200.0 if gpu is H100 else 1600.0,
                    ),
                    published_bytes / GIB,
                    "allocated",
                    "attention: Transformer Engine flash; loss: Megatron vocab_parallel_cross_entropy, fp32 upcast; "
                    "distributed optimizer, fp32 main-gradient buffer; no recompute; read on the last pipeline stage"
                    + ("; MoE alltoall dispatcher, grouped GEMM" if model.is_moe else "")
                    + ("; expert TP 1 under TP 2" if vpp > 1 else ""),
                    stage=-1,  # training.py logs on the tensorboard rank, world_size - 1: the last stage
                )
            )
    return cases


AXOLOTL_EXAMPLES = (
    "axolotl-ai-cloud/axolotl examples/*/README.md with the example config, each at the commit that wrote its "
    "figure (dc71d887, 15f7910d, 8c6a6ea6, eac4a61f, 09959fac, 2b66ee18, 372f664c); reading not named: 2025 rows "
    "read as max reserved, 2023-2024 'VRAM' rows as the device"
)

# Mistral Small 3.1's text model (Devstral-Small-2505, Magistral-Small-2506 / -2507 config.json as remembered, not
# read here: module docstring [axolotl-examples])
MISTRAL_SMALL_24B = ModelSpec(
    name="mistral-small-24b", layers=40, hidden=5120, heads=32, kv_heads=8, ffn=32768, vocab=131072, head_dim=128
)
MINISTRAL_8B = ModelSpec(name="ministral-8b", layers=36, hidden=4096, heads=32, kv_heads=8, ffn=12288, vocab=131072)
OLMO3_7B = ModelSpec(name="olmo-3-7b", layers=32, hidden=4096, heads=32, kv_heads=32, ffn=11008, vocab=100278)


def _axolotl_examples() -> list[FirstContactCase]:
    cases = []
    h100 = Cluster(gpu=H100)
    rtx = get_gpu("rtx4090-24g")
    every = ("all-linear",)
    # (label, model, commit, LoRA rank, dropout, seq, micro, accumulation, optimizer, CCE, published, reading)
    modern = (
        ("devstral-small-qlora.yml (Devstral-Small-2505)", MISTRAL_SMALL_24B, "8c6a6ea6", 0.0, 4, "adamw", True, 21.0),
        ("magistral-small-qlora.yaml (Magistral-Small-2506)", MISTRAL_SMALL_24B, "eac4a61f", 0.05, 4, "adamw_8bit",
         False, 24.0),
        ("magistral-small-think-qlora.yaml (Magistral-Small-2507)", MISTRAL_SMALL_24B, "09959fac", 0.05, 4,
         "adamw_8bit", True, 19.1),
        ("ministral-small-qlora.yaml (Ministral-8B-Instruct-2410)", MINISTRAL_8B, "2b66ee18", 0.05, 4, "adamw_8bit",
         True, 8.76),
        ("olmo3-7b-qlora.yaml (Olmo-3-7B-Instruct-SFT)", OLMO3_7B, "372f664c", 0.05, 2, "adamw_8bit", True, 11.3),
    )  # fmt: skip
    for label, model, commit, dropout, accumulation, optimizer, cce, published in modern:
        cases.append(
            FirstContactCase(
                f"axolotl {label} at {commit}: QLoRA r=32, batch 2 x 2048 packed, 1 GPU (H100 assumed)",
                "axolotl-examples",
                AXOLOTL_EXAMPLES,
                model,
                Workload(
                    task="qlora",
                    seq_len=2048,
                    global_batch=2 * accumulation,
                    lora=LoraSpec(rank=32, alpha=16, targets=every, dropout=dropout),
                    optimizer=optimizer,  # type: ignore[arg-type]
                    paged_optimizer=False,  # adamw_torch / bitsandbytes AdamW8bit, not the paged variants
                    kbit_upcast=False,  # axolotl casts the norms back to bf16 after prepare_model_for_kbit_training
                    varied_lengths=False,  # multipack sample packing
                ),
                Plan(micro_batch=2, recompute="full", fused_loss=cce),
                h100,
                published,
                "reserved",
                "attention: flash-attn 2; loss: "
                + ("Cut Cross-Entropy plugin (fused)" if cce else "transformers ForCausalLM (fp32 logits)")
                + "; bitsandbytes NF4 (double quantisation)",
            )
        )
    cases.append(
        FirstContactCase(
            "axolotl examples/llama-2 qlora.yml at dc71d887: Llama 2 7B QLoRA r=32, batch 2 x 4096 packed, RTX 4090",
            "axolotl-examples",
            AXOLOTL_EXAMPLES,
            get_preset("llama-2-7b").model,
            Workload(
                task="qlora",
                seq_len=4096,
                global_batch=2,
                lora=LoraSpec(rank=32, alpha=16, targets=every, dropout=0.05),
                paged_optimizer=True,  # paged_adamw_32bit
                bnb_fp16_dequant=True,  # bitsandbytes before 0.43 (August 2023)
                varied_lengths=False,  # max_packed_sequence_len 4096
            ),
            Plan(micro_batch=2, recompute="full"),
            Cluster(gpu=rtx),
            17.0,
            "device",
            "attention: xformers memory-efficient; loss: transformers LlamaForCausalLM (fp32 logits); bitsandbytes NF4 "
            "(pre-0.43), prepare_model_for_kbit_training (fp32 norms kept)",
        )
    )
    cases.append(
        FirstContactCase(
            "axolotl examples/llama-3 qlora-fsdp-70b.yaml at 15f7910d: Llama 3 70B QLoRA r=8, FSDP 2 + CPU offload, "
            "batch 1 x 512, 2 x 24 GB",
            "axolotl-examples",
            AXOLOTL_EXAMPLES,
            get_preset("llama-3-70b").model,
            Workload(
                task="qlora",
                seq_len=512,
                global_batch=2 * 4,
                lora=LoraSpec(rank=8, alpha=16, targets=every, dropout=0.05),
                paged_optimizer=False,  # adamw_torch
                kbit_upcast=False,  # FSDP QLoRA skips prepare_model_for_kbit_training
                varied_lengths=False,  # pad_to_sequence_len
            ),
            Plan(dp=2, zero_stage=3, offload="optimizer_and_params", micro_batch=1, recompute="full"),
            Cluster(gpu=rtx, gpus_per_node=2),
            21.0,
            "device",
            "attention: flash-attn 2; loss: transformers LlamaForCausalLM (fp32 logits); bitsandbytes NF4; FSDP "
            "offload_params",
        )
    )
    return cases


DEEPSPEED_EXAMPLES = (
    "deepspeedai/DeepSpeedExamples training/bf16_master_weight/README.md at a43031e5 (ZeRO-3, 4 H100, 6.86B "
    "SimpleTransformerModel, batch 1 x 512; Peak Memory = torch.cuda.max_memory_allocated / 2**30) and DeepSpeed-Chat "
    "step1 training_log_output/opt-1.3b-globalBatchSize128.log at 3a77097a (MaxMemAllocated, GiB)"
)

# train.py's SimpleTransformerModel at a43031e5 (module docstring [deepspeed-examples])
DEEPSPEED_SIMPLE_7B = ModelSpec(
    name="deepspeed-simple-transformer-6.9b",
    layers=32,
    hidden=4096,
    heads=32,
    kv_heads=32,
    ffn=16384,
    vocab=50257,
    mlp="gelu",
    norm="layernorm",
    linear_bias=True,
    learned_positions=512,
)
# facebook/opt-1.3b config.json: 24 layers, hidden 2048, 32 heads, ReLU MLP of 8192 (two matrices), LayerNorm, biases,
# 2,050 learned positions, vocabulary 50,272, head tied to the embedding
OPT_1_3B = ModelSpec(
    name="opt-1.3b",
    layers=24,
    hidden=2048,
    heads=32,
    kv_heads=32,
    ffn=8192,
    vocab=50272,
    mlp="gelu",
    norm="layernorm",
    linear_bias=True,
    learned_positions=2050,
    tied_embeddings=True,
)


def _deepspeed_examples() -> list[FirstContactCase]:
    cases = []
    four = Cluster(gpu=H100, gpus_per_node=4)
    for label, mixed, upcast, published in (
        ("Baseline (fp32 master)", True, False, 31.38),
        ("BF16 low-precision (master + optimizer states)", False, True, 18.93),
    ):
        cases.append(
            FirstContactCase(
                f"DeepSpeedExamples bf16_master_weight {label}, 6.86B, ZeRO-3 x 4 H100, batch 1 x 512",
                "deepspeed-examples",
                DEEPSPEED_EXAMPLES,
                DEEPSPEED_SIMPLE_7B,
                Workload(
                    task="full_finetune", mixed_precision=mixed, seq_len=512, global_batch=4, varied_lengths=False
                ),
                Plan(
                    dp=4,
                    zero_stage=3,
                    micro_batch=1,
                    recompute="full",
                    attention="eager",
                    flash_attention=False,
                    no_upcast_loss=not upcast,
                    kept_logits_bytes=2.0,
                    reduce_bucket_elements=5e7,
                ),
                four,
                published,
                "allocated",
                "attention: nn.MultiheadAttention (explicit s x s weights); loss: nn.CrossEntropyLoss "
                + ("under bf16 autocast (fp32)" if upcast else "on bf16 logits"),
            )
        )
    cases.append(
        FirstContactCase(
            "DeepSpeed-Chat step 1 OPT-1.3b SFT, ZeRO-2 fp16, batch 8 x 512, 16 GPUs (A100 40GB assumed)",
            "deepspeed-examples",
            DEEPSPEED_EXAMPLES,
            OPT_1_3B,
            Workload(task="full_finetune", precision="fp16", seq_len=512, global_batch=128, varied_lengths=False),
            Plan(
                dp=16,
                zero_stage=2,
                micro_batch=8,
                recompute="none",
                attention="eager",
                flash_attention=False,
                no_upcast_loss=True,
                kept_logits_bytes=2.0,
            ),
            Cluster(gpu=get_gpu("a100-40g-sxm"), gpus_per_node=8, nodes=2),
            22.95,
            "allocated",
            "attention: OPT eager (s x s scores); loss: transformers OPT CrossEntropyLoss on fp16 logits; dropout 0.1",
        )
    )
    return cases


MEMORY_FIRST_CONTACT: tuple[FirstContactCase, ...] = tuple(
    _ms_swift()
    + _torchao()
    + _qwen_readme()
    + _trainy()
    + _megatron_bridge()
    + _torchtitan_nvfp4()
    + _torchao_moe()
    + _universal_llm_trainer()
    + _fsdp_qlora()
    + _torchtune_2403()
    + _liger_pr199()
    + _torchtune_tutorials()
    + _torchtitan_773()
    + _torchtune_flags()
    + _atorch_llama2()
    + _fms_granite()
    + _megatron_release()
    + _axolotl_examples()
    + _deepspeed_examples()
    + ms_swift_examples()  # tests/estimator/memory_first_contact_swift.py [ms-swift-examples]
    + megatron_functional()  # tests/estimator/memory_first_contact_megatron_tests.py [megatron-functional]
    + hf_blog_ulysses()  # tests/estimator/memory_first_contact_hf_ulysses.py [hf-blog-ulysses]
    + colossalchat()  # tests/estimator/memory_first_contact_colossalchat.py [colossalchat]
    + torchtune_2405()  # tests/estimator/memory_first_contact_torchtune_2405.py [torchtune-2405]
    + peft_metamathqa()  # tests/estimator/memory_first_contact_peft_metamath.py [peft-metamathqa]
    + automodel_ac()  # tests/estimator/memory_first_contact_automodel_ac.py [automodel-ac]
    + torchao_tutorial()  # tests/estimator/memory_first_contact_torchao_tutorial.py [torchao-tutorial]
    + litgpt_lora_tutorial()  # tests/estimator/memory_first_contact_litgpt_lora_tutorial.py [litgpt-lora-tutorial]
    + torchtitan_fsdp2()  # tests/estimator/memory_first_contact_torchtitan_fsdp2.py [torchtitan-165]
)
