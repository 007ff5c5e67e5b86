"""Activations per GPU: the tensors autograd keeps per layer, recompute, pipeline micro-batches in flight, loss and
logits, activation offload; the KV cache and `other` (sources in the package docstring, "Activations", "Logits and
loss", "Inference", "other")."""

from __future__ import annotations

from functools import lru_cache

from app.estimator.memory.context import _ActCoeffs, _Ctx, _Split, _Stage
from app.estimator.memory.saved import _act_coeffs as _act_coeffs  # re-exported: the layer's saved tensors
from app.estimator.memory.states import _lora_targets, _stages_of
from app.estimator.specs import GIB, LoraSpec, ModelSpec, Plan, Workload
from app.estimator.vocabulary import BYTES_PER_ELEMENT, FULL_TRAINING_TASKS, LORA_TARGETS, LORA_TASKS

# Unfused cross-entropy on fp32-upcast logits (transformers `ForCausalLMLoss`, src/transformers/loss/loss_utils.py:
# `logits.float()` then `nn.functional.cross_entropy`; torchtitan `cross_entropy_loss` likewise): log_softmax saves its
# fp32 output; at the start of the backward, when every saved activation is still held, nll_loss's dense fp32 gradient
# and log_softmax's fp32 gradient of the logits exist beside it. The 16-bit logits are dropped before the backward
# (transformers Trainer.compute_loss returns the loss only; torchtitan's train step `del pred`).
LOSS_BYTES_PER_LOGIT = 4.0 + 4.0 + 4.0
# chunked loss (torchtune CEWithChunkedOutputLoss, litgpt chunked_cross_entropy): only the log-probs (fp32, or 16-bit
# logits + 16-bit log-probs) stay for the backward pass; chunks are transient. Not Megatron-LM's fused vocab-parallel
# cross-entropy, the chunked loss of the megatron stack (`_chunked_bytes`): MEGATRON_VOCAB_PARALLEL_LOSS_BYTES_PER_LOGIT
CHUNKED_LOSS_BYTES_PER_LOGIT = 4.0
# cross-entropy compiled with the model (Plan.compiled_loss): Inductor fuses the fp32 upcast, log_softmax and nll_loss
# into one forward reduction that saves the 16-bit logits and a per-token log-sum-exp, and one backward kernel that
# writes the 16-bit gradient of the logits (softmax - one-hot, scaled) with no fp32 tensor of the logits' size: 2 bytes
# saved + 2 bytes of gradient per logit at the start of the backward. Measured: Trainy's torchtitan Llama 3.1 8B runs
# (June 2025, compile, so the loss compiled: benchmarks/llama3-8b_h200_202506_trainy-whitefiber.md) read 47.96 and
# 46.97 GiB reserved; with 12 bytes a logit the estimate read +73 % at first contact, 23.5 GiB of it the loss.
COMPILED_LOSS_BYTES_PER_LOGIT = 2.0 + 2.0
# the chunked loss compiled chunk by chunk (Plan.chunked_loss with compiled_loss): torchtune compiles only the upcast
# and cross-entropy of one chunk when its loss is CEWithChunkedOutputLoss (torchtune/training/_compile.py
# `compile_loss`, called by every recipe with `compile: True`). Each chunk's graph saves its 16-bit input (the head's
# output chunk, 2 bytes a logit over the chunks) and a per-token log-sum-exp, as COMPILED_LOSS_BYTES_PER_LOGIT; the
# chunks' backward nodes free their saved chunk as they write its 16-bit gradient, so one chunk's gradient is beside
# them: 2 bytes a logit of one of the loss's 8 chunks (CEWithChunkedOutputLoss num_output_chunks 8).
CHUNKED_COMPILED_LOSS_BYTES_PER_LOGIT = 2.0 + 2.0 / 8
# fused head + loss (Liger-Kernel ops/fused_linear_cross_entropy.py `fused_linear_cross_entropy_forward`): the logits
# exist one chunk of about BT·H/V tokens at a time (chunk_size = next_power_of_2(cdiv(BT, cdiv(V, H)))) and the
# gradient of the hidden states (`grad_input`) is made in the forward and kept for the backward: nothing per logit, a
# few bytes per hidden element of the tokens. Measured: Liger's A100 benchmark (benchmark/data/all_benchmark_data.csv,
# fused_linear_cross_entropy, liger, full, H 4096, V 128256, bf16) grows 4,910 -> 5,795 MB from 16,384 to 32,768
# tokens, 13.8 bytes per hidden element, of which 2 are the input (the hidden states, counted with the activations).
FUSED_LOSS_BYTES_PER_HIDDEN = 12.0
# cross-entropy on the 16-bit logits, no fp32 upcast (Plan.no_upcast_loss): nn.CrossEntropyLoss called on the logits as
# the head made them, outside autocast. ljm565/universal-llm-trainer at 9efd14b5: every config sets `amp_training:
# False`, so src/trainer/trainer.py runs `torch.autocast(..., enabled=self.amp)` off, and src/models/llama3.py calls the
# transformers model without labels (transformers 4.49 LlamaForCausalLM returns the lm_head's bf16 logits; the upcast
# lives in ForCausalLMLoss, which runs only with labels) and applies `self.criterion` (nn.CrossEntropyLoss) to
# `output.logits[:, :-1, :].reshape(...)`, then `del output`. log_softmax saves its 16-bit output, and at the start of
# the backward nll_loss's 16-bit gradient and log_softmax's 16-bit gradient exist beside it (PyTorch
# tools/autograd/derivatives.yaml: nll_loss's gradient is nll_loss_backward of its input's shape, log_softmax's is
# _log_softmax_backward_data of its result's): 3 x 2 bytes. In the forward the logits, their reshaped copy and the
# log-probs meet: 6 bytes too. Three elements of the logits' dtype: where the logits are fp32 (PEFT's
# prepare_model_for_kbit_training casts the head to fp32, and that trainer's QLoRA, src/trainer/build.py, never casts
# it back: kbit_upcast; or fp32 training) the same loss keeps 12 bytes. Measured: that trainer's Llama 3.1 8B LoRA
# at 2 x 8,192 tokens (docs/gpu_test.md, 36 GB = 33.53 GiB reserved) read 47.18 GiB (+40.7 %) with 12 bytes a logit
# and 34.85 GiB (+3.9 %) with 6: 11.7 GiB at 16,384 tokens of a 128,256 vocabulary.
NO_UPCAST_LOSS_ELEMENTS_PER_LOGIT = 3.0
# The 16-bit logits' block, cached beside the standard loss's backward (reserved, not allocated): the head's 16-bit
# logits (2 bytes a logit) are dropped before the backward (LOSS_BYTES_PER_LOGIT) and their block goes back to the
# caching allocator's large pool, where a request is served only by a cached block at least its size (c10/cuda/
# CUDACachingAllocator.cpp `get_free_block`: `pool.blocks.lower_bound(&p.search_key)`, the smallest free block >= the
# rounded size, split when more than 1 MiB is left, `should_split`; the default max_split_size is unlimited). The
# backward's first requests are fp32 tensors of every logit (nll_loss's gradient, log_softmax's gradient: 4 bytes a
# logit), larger than that block: the first takes the freed block of the fp32 upcast, the second cannot use the 16-bit
# one and makes the pool grow by a new segment (`alloc_block`, cudaMalloc), so the 16-bit block stays reserved beside
# the 12 bytes in use until the cast's backward takes it. Freed blocks of separate segments never merge
# (`try_merge_blocks` joins neighbours split from one segment). With expandable segments (torchtitan's run_train.sh
# sets PYTORCH_ALLOC_CONF=expandable_segments:True) the freed 16-bit and upcast blocks lie side by side and merge; the
# first fp32 gradient is cut from that 6-byte block, the 2 bytes left sit below the saved log-probs, and the second
# maps new pages at the segment's end: the same 2 bytes a logit. Only where the backward asks for fp32 tensors larger
# than the cached 16-bit ones: the standard loss of transformers (ForCausalLMLoss `logits.float()`) and torchtitan
# (`cross_entropy_loss` `.float()`, the train step's `del pred`); the compiled, no-upcast, chunked and fused losses
# ask for 16-bit or chunk-sized gradients that the cached blocks serve. Not Megatron-LM's (a plan with
# Plan.fp32_main_grads): its vocab-parallel cross-entropy writes the gradient into the softmax it saved
# (megatron/core/tensor_parallel/cross_entropy.py). Measured (reserved): torchao's torchtitan Llama 3 8B on 8 H100 at
# 1 x 8,192 tokens, loss not compiled (47.65-47.79 GiB), read -3.9 to -4.2 % without the block (1.96 GiB) and +0.2 to
# -0.1 % with it; at 1 x 4,096 with full AC (28.07 GiB) -10.5 % -> -7.0 %.
LOGITS_BLOCK_BYTES_PER_LOGIT = 2.0
# The recomputed layer beside the loss, full recompute (RECOMPUTE_BESIDE_LOSS): the last stage's activations count the
# checkpoints, the working set of the layer being recomputed and the loss's logit-sized buffers, but no instant holds
# the last two. The loss's buffers live from its forward to the start of the backward: autograd frees the log-probs
# and nll_loss's gradient once LogSoftmaxBackward has run, and the fp32 gradient of the logits once the cast's
# backward has made the 16-bit one, before the head's backward hands the hidden states' gradient to the last
# checkpointed layer; that layer's forward is recomputed only then, inside its backward (torch/utils/checkpoint.py:
# CheckpointFunction.backward reruns `run_function` with grad enabled; the non-reentrant variant reruns it from the
# first saved tensor unpacked in the backward, `_checkpoint_hook.unpack_hook`). So the allocated peak holds the
# checkpoints and the larger of the two (`_recompute_overlap`: the smaller is taken out of the allocated reading,
# MemoryBreakdown.recompute_overlap). The reserved pool keeps both: the layers' forward (no saved tensors under
# checkpointing) leaves their freed blocks cached, and the loss's requests, larger than any of them, take new segments
# (c10/cuda/CUDACachingAllocator.cpp `get_free_block`, best fit from blocks at least the request's size), so the
# reserved and device readings and the gate keep the sum. Not the fused loss: its saved gradient of the hidden
# states is what the recomputed layer's backward starts from. Measured (allocated, first contact before the change):
# fms-acceleration's PowerLM-3B table (scripts/benchmarks/refs/a100_80gb_granite.csv at fc78b55b6, transformers
# 4.45.2, one A100, 4,096-token packed batches) grows 12.10 GiB from LoRA batch 4 to 8, 793 KB a token, where the
# checkpoints and the 12 bytes a logit of the loss make 774 KB and the sum 871 KB; its twelve rows read +2.4 to
# +17.6 % with the sum and -1.2 to +4.6 % without the overlap.
# The loss as transformers 4.48 ran it (Plan.shift_copy_loss; src/transformers/loss/loss_utils.py ForCausalLMLoss at
# v4.48.1): `logits = logits.float()`, `shift_logits = logits[..., :-1, :].contiguous()`, then cross_entropy, while the
# model's forward (MistralForCausalLM, LlamaForCausalLM: `logits = self.lm_head(...)`, then `self.loss_function`) holds
# the head's 16-bit logits. At log_softmax the 16-bit logits, the fp32 upcast, its shifted fp32 copy and the fp32
# log-probs meet, with every checkpoint held: 2 + 4 + 4 + 4 bytes a logit, more than the 12 of the backward's start
# (the logits, the upcast and the copy are freed once the Trainer's compute_loss returns the loss). An fp32 head's
# `.float()` is the same tensor: 12. huggingface/transformers PR #35646 (January 2025, "Optimize ForCausalLMLoss by
# removing unnecessary contiguous() call") dropped the copy; v4.31.0's LlamaForCausalLM upcast in the model's forward
# (`logits = logits.float()`, the 16-bit logits freed) and copied as here: 12. The backward's two fp32 gradients reuse
# the freed upcast and copy, so no 16-bit block is left beside them (LOGITS_BLOCK_BYTES_PER_LOGIT: none).
SHIFT_COPY_LOSS_BYTES_PER_LOGIT = 4.0 + 4.0 + 4.0  # plus the 16-bit logits, where the head makes them 16-bit
# A vocabulary-parallel cross-entropy on an fp32 upcast (Plan.upcast_vocab_parallel_loss): intelligent-machine-learning/
# dlrover atorch/examples/llama2/ds_3d_llama2.py at 3a442b728b7d, `my_loss_func`: `logits = logits.float()`, then
# atorch/modules/distributed_modules/cross_entropy.py `_VocabParallelCrossEntropy` (forked from Megatron-LM's):
# `vocab_parallel_logits - logits_max` makes an fp32 tensor that `torch.exp(..., out=)` and `div_` turn into the
# softmax it saves; the backward writes the gradient into it in place. The fp32 upcast (not saved) and the softmax meet
# in the forward, every checkpoint held: 4 + 4 bytes a logit of the vocabulary shard; at the backward's start the
# softmax's 4 and the cast's 16-bit gradient, less. The 16-bit logits are the model's output, kept by the pipeline
# engine (Plan.kept_logits_bytes), not by the loss.
UPCAST_VOCAB_PARALLEL_LOSS_BYTES_PER_LOGIT = 4.0 + 4.0
# Megatron-LM's own (the megatron stack, Plan.fp32_main_grads): megatron/core/tensor_parallel/cross_entropy.py at
# d98e8a64d upcasts inside (`calculate_logits_max`: `.float()`) and turns that copy into the softmax in place (`-=`,
# `torch.exp(out=)`, `div_`) while GPTModel.forward holds the head's 16-bit logits until the loss returns: 2 + 4 bytes
# a logit; the backward's start holds the softmax's 4, then its 16-bit gradient beside it: the same 6.
MEGATRON_VOCAB_PARALLEL_LOSS_BYTES_PER_LOGIT = 2.0 + 4.0
# MEGATRON_PLAIN_LOSS: the megatron stack without --cross-entropy-loss-fusion (a plan on it, Plan.fp32_main_grads, that
# names no loss) runs the same unfused loss, not the Hugging Face Trainer's:
# megatron/core/models/common/language_module/ language_module.py `compute_language_model_loss` at d98e8a64d calls
# tensor_parallel.vocab_parallel_cross_entropy on the head's 16-bit output (megatron/core/models/gpt/gpt_model.py), so
# 2 + 4 bytes a logit there too, not the standard loss's 12 (LOSS_BYTES_PER_LOGIT), which counted a Trainer's upcast
# that Megatron-LM never makes.
# --cross-entropy-loss-fusion with its default native implementation (the megatron stack's chunked loss, app/planner/
# levers.py; ms-swift's default) saves no byte of that: megatron/core/fusions/fused_cross_entropy.py at d98e8a64d
# compiles (jit_fuser, torch.compile) the same VocabParallelCrossEntropy steps, `calculate_logits_max`'s `.float()` copy
# made the softmax in place and saved, while language_module.py `compute_language_model_loss` runs inside the forward
# that holds the 16-bit logits: 2 + 4 bytes a logit as unfused; the fusion saves kernel launches, not memory. Its
# backward (`calculate_gradients`) writes the gradient into that softmax and casts it to a 16-bit copy: 4 + 2. So
# Plan.fused_loss on the megatron stack (the launch's --cross-entropy-loss-fusion, Megatron-Bridge's
# cross_entropy_fusion_impl=native: app/planner/launch/) is sized as this loss, never as Liger's (`_liger_fused`).
# The launch pins Megatron-LM core_v0.15.3, whose two files differ from d98e8a64d's only in the TP group's plumbing.
# Transformer Engine's implementation (cross_entropy_fusion_impl "te") is not launched: up to TE 2.17 it writes the
# 16-bit gradient into the logits in place (transformer_engine/common/triton/cross_entropy.py at v2.17, 2 bytes a
# logit) but quantises it before the backward, the stability issue for which Megatron-LM's megatron/training/
# arguments.py refuses it (168cb15d70, at d98e8a64d); from 2.18 (01bbe3eea; pytorch/triton/cross_entropy.py at
# d0067d0da) it saves an fp32 gradient beside the 16-bit logits, 2 + 4 bytes a logit as native.
# Megatron-LM's hidden dropout (Plan.hidden_dropout): the transformer layer runs bias_dropout_add twice, after the
# attention's projection and after the MLP (megatron/core/transformer/transformer_layer.py, megatron/core/fusions/
# fused_bias_dropout.py `_bias_dropout_add_func`: torch.nn.functional.dropout at d98e8a64d), and torch's dropout saves
# its mask for the backward as a bool tensor of the input's shape (pytorch/pytorch aten/src/ATen/native/cuda/
# Dropout.cu `native_dropout_cuda`): 2 masks x 1 byte per hidden element per token, whole on every TP rank without
# sequence parallelism (Korthikanti et al. 2022 Table 2's two "sbh" dropout masks). Measured: Megatron-LM's
# gpt3_7b_tp4_pp1_memory_speed (TP 4, batch 2 x 8192, dropout at its default) peaks 53.22 GiB on H100, 34.0 GiB over
# the 19.24 GiB between steps (golden_values_dev_dgx_h100.json at d98e8a64d); without the masks it read -8.6 %.
HIDDEN_DROPOUT_MASK_BYTES = 2.0 * 1.0
OTHER_WORKSPACE_BYTES = 0.25 * GIB  # cuBLAS/cuDNN workspaces (module docstring)
OTHER_NCCL_BYTES = 0.5 * GIB  # NCCL channel buffers when > 1 GPU (module docstring)
FRAGMENTATION = 0.05  # caching-allocator slack on activations (module docstring)
# Batches of varied length (Workload.varied_lengths): PyTorch's caching allocator keeps freed blocks cached and cuts
# later requests from them (c10/cuda/CUDACachingAllocator.cpp, best fit with block splitting); a batch longer than
# the earlier ones needs blocks larger than the cached ones, which stay cut around the step's long-lived tensors, so
# the pool grows batch after batch (dynamic batch shapes make the allocator reserve new segments: NVIDIA NeMo PR
# #9061, which turns on expandable_segments for them; pytorch/devlogs 2026-06-01 "When does fragmentation occur in
# the CUDA caching allocator?"). The largest requests of a step are the logits and the loss's copies of them, so the
# slack is counted in those: VARIED_LENGTH_SLACK more sets of the loss's per-logit bytes (LOSS_BYTES_PER_LOGIT, or
# the chunked loss's), reserved, not allocated (memory.measured_bytes), and not in the gate: a cudaMalloc that fails
# makes the allocator free its unused cached blocks and retry. One more set: the blocks of an earlier, other length
# stay cached beside the longest batch's. Measured: Qwen-7B LoRA at 1 x 8,192 tokens under the Hugging Face Trainer,
# same remote code, flash attention and checkpointing, reads 36.6 GB on the device padded to one length
# (QwenLM/Qwen README, 'Profiling of Memory and Speed', LoRA r=64 on every linear) and 48.41 GiB reserved on a
# dataset of 3,234 +- 2,548 tokens a sample (ms-swift docs/source_en/LLM/Benchmark.md, LoRA r=8 on c_attn): 11.8
# GiB more for the lighter adapter, where a set of the loss's bytes is 13.9 GiB; ms-swift's Qwen 1.8B / 7B / 14B
# grow 30.0 / 30.4 / 30.6 GiB reserved from 512 to 8,192 tokens, where this gives 30.1 / 31.9 / 33.2 with the
# logits' block (LOGITS_BLOCK_BYTES_PER_LOGIT; 27.9 / 29.7 / 31.0 before it; without the slack 17 / 19 / 20: the
# "growth 1.8x too slow" of Hugging Face Trainer LoRA). A least-squares fit over all 45
# ms-swift rows would take 2.0 (median |error| 6.2 % against 12.8 %), but only by over-growing the long rows to
# make up for a near-constant 1.5-2.5 GiB their short rows read above the estimate, which lengths do not explain.
VARIED_LENGTH_SLACK = 1.0
# ... and, where torch's AdamW steps a full fine-tune on the GPU (memory.states `_adamw_step_share`: one GPU, or FSDP
# under the Trainer), the layers' activation blocks too. torch.optim.AdamW makes m and v in its first step
# (torch/optim/adamw.py `_init_group`: `state["exp_avg"] = torch.zeros_like(p, ...)`), after the first batch's backward
# freed its activations, and its foreach step makes its copy of v every step (`_multi_tensor_adamw`
# `torch._foreach_sqrt`): the caching allocator cuts both from those freed blocks (CUDACachingAllocator.cpp
# `get_free_block`, best fit, split where more than 1 MiB is left, `should_split`). The states stay for the run, so
# the first batch's segments stay partly taken; a batch of another length cuts its activations from the remainders
# only where they fit and takes new segments (`alloc_block`) for the rest, and blocks of separate segments never merge
# (`try_merge_blocks`). DeepSpeed's optimizers avoid it by stepping once with zero gradients when built, "allocating
# optimizer state at the beginning of training instead of after activations have been allocated" to "prevent memory
# fragmentation" (deepspeed/runtime/bf16_optimizer.py `initialize_optimizer_states`): not counted there. The loss's
# logits-sized blocks are counted above; these sets are of the stage's other
# activations (saved layer inputs, the recomputed layer's working set, a fused loss's buffers). Measured: Liger-Kernel
# PR #199's Mistral 7B with the fused loss (no logits) over FSDP 4 (examples/huggingface/results/mistral_use_liger_
# True_patching_type_pre_init.log at 92047d9e) holds 34,547.8 MiB allocated at every step while reserved reads
# 42,254 MiB after step 2 (the first step's states placed), 45,388 after step 3 and 46,732 from step 4 on: 7.5 then
# 11.9 GiB above the allocated peak, 1.5 then 2.3 sets of the 5.1 GiB of activations the estimate keeps without the
# loss. The five fused-loss runs of that PR read 1.3-3.8 sets (median 3.4; Phi-3.5 mini, batch 128, the least);
# two sets, the first step's and a length not seen before, is the count the series shows settled.
VARIED_LENGTH_ACTIVATION_SETS = 2.0
# QLoRA on bitsandbytes before 0.43 under a bf16 compute dtype (Workload.bnb_fp16_dequant): each matmul makes two
# 16-bit copies of its matrix, the fp16 dequantisation and its bf16 cast (bitsandbytes autograd/_functions.py at
# b5800d35, MatMul4Bit forward and backward `F.dequantize_4bit(B, state).to(A.dtype)`; functional.py
# `dequantize_4bit` allocates `out` in quant_state.dtype, fp16 from Params4bit.cuda's `.half()`). The fp16 copy is
# freed by the cast, before F.linear asks for its output, so the caching allocator cuts that output from the freed
# matrix-sized block (best fit, split: CUDACachingAllocator.cpp `get_free_block`, `should_split`); the block stays
# cut while the output lives and the next matrix takes a new segment. The pool of such blocks, reserved and not
# allocated, in 16-bit copies of one decoder layer's quantised matrices: FITTED on ms-swift's three bitsandbytes rows
# (docs/source_en/LLM/Benchmark.md at 46922151, bitsandbytes 0.41.3.post2, Qwen 7B / 14B / 72B LoRA r=8 at 1 x 2,048,
# reserved): they read 4.64 / 6.75 / 20.01 GiB above the same table's GPTQ int4 runs of the same models (auto_gptq,
# 4-bit weights read from the checkpoint), 12.3 / 11.5 / 12.3 copies of the layer's 202 / 315 / 872 M quantised
# parameters. The gap follows one layer's size, not the model's (7B to 72B: x4.3 measured, x4.3 a layer, x10.8 the
# model), which rules out a load-time pool: simulating the allocator over bitsandbytes 0.41's load (an fp16 copy of
# each weight on the card, then its packed 4-bit out and fp32 absmax; benchmarks/bnb_load_pool.py) leaves 0.2 / 0.2
# / 0.5 GiB of holes. Counted beside the varied lengths' blocks (`_length_slack`): reserved and device readings, not
# the gate.
BNB_FP16_DEQUANT_POOL_COPIES = 12.0
# Eager attention in training (plan.attention "eager"; Plan.flash_attention False), per score element (b·a·s² per
# layer): transformers `eager_attention_forward` (models/llama/modeling_llama.py) takes the softmax in fp32 and casts it
# back, `softmax(attn_weights, dim=-1, dtype=torch.float32).to(query.dtype)`: softmax's backward keeps its fp32 output
# (4 bytes) and the matmul with v keeps the 16-bit copy (2 bytes); dropout at p = 0 returns its input (ATen
# Dropout.cpp `_dropout`), so 6 bytes = 3 elements of 2 bytes. Measured: ms-swift's Qwen-7B LoRA at 1 x 2048 without
# checkpointing reads 19.97 GiB more without flash attention (docs/source_en/LLM/Benchmark.md: 57.67 against 37.70);
# 3 elements give 24.0 GiB. Inference keeps one element (the prefill's scores, not saved for a backward).
EAGER_SCORE_ELEMENTS = 3.0
# Activation offloading keeps two layers' saved tensors on the GPU: the one in use and the one in flight over PCIe
# (torchtune `OffloadActivations` copies on a side stream and syncs one layer ahead)
ACTIVATION_OFFLOAD_LAYERS = 2.0
# Transformer Engine's FP8 linears keep the FP8 copy of their input for the weight gradient, not the 16-bit input
# (transformer_engine/pytorch/module/linear.py `_linear_forward` at d0067d0d: the input goes through input_quantizer,
# `own_quantized_input`, "Discard row-wise data since it is not needed in backward pass", `saved_inputmat = inputmat`;
# layernorm_linear.py saves its quantized ln_out likewise): 1 byte for each such element instead of 2, i.e. half an
# element of the 16-bit count. Megatron-LM and Megatron-Bridge run FP8 through TE; torchao's float8 training keeps the
# high-precision inputs (its H100 and B200 tables read the same peak in bf16 and float8, memory_first_contact.py).
TE_FP8_SAVED = 0.5
# LoRA on a decoder without a graph (Workload.decoder_without_graph): the head's adapter saves its input for the
# gradient of lora_A, one hidden-size element a token (loralib's `x @ self.lora_A.T`, frozen base weight under no
# grad): the only activation outside the loss's buffers
HEAD_ADAPTER_INPUT_ELEMENTS = 1.0
MEGATRON_SELECTIVE = (
    "selective_megatron"  # activation-count key for Megatron-LM's selective recompute (_recompute_kind)
)


# fp32 parameters under autocast (Plan.fp32_params), a weight's 16-bit copy: autocast casts each fp32 weight for the
# matmul that reads it (torch.amp docs, "Autocasting": linear and matmul on the lower-precision op list) and the matmul
# keeps that copy for its input's gradient. It caches the casts of leaf parameters until the outermost autocast region
# exits (aten/src/ATen/autocast_mode.cpp `cached_cast`: `can_try_cache` only where `arg.requires_grad() &&
# arg.is_leaf() && !arg.is_view()`; `clear_cache` on the last exit), so a replicated model holds every weight's copy
# through its forward; FSDP's unsharded parameters are views of the flat parameter in the forward and its recompute
# (torch/distributed/fsdp/_flat_param.py `_use_unsharded_flat_param`: "We use `Tensor` views in the forward so that
# they are tracked by autograd"), never cached, so with full recompute only the layer being recomputed and the head
# keep theirs (`autocast_weight_copies`).
AUTOCAST_WEIGHT_COPY_BYTES = 2.0
# Final-logit soft-capping: huggingface/transformers src/transformers/models/gemma2/modeling_gemma2.py at 006e8693
# (Gemma2ForCausalLM.forward) makes the head's logits, then `logits = logits / cap`, `logits = torch.tanh(logits)`,
# `logits = logits * cap` wherever config.final_logit_softcapping is set (30.0 by default: configuration_gemma2.py at
# 008e5743, `final_logit_softcapping: float | None = 30.0`). tanh saves its output for its backward (autograd's
# tanh_backward takes the result); the division and product by a Python number save nothing. So one more logits-sized
# tensor in the head's dtype stays beside the returned logits and the loss's buffers until the backward has passed the
# loss: counted on the last stage (`_softcap_bytes`). The families whose config sets the cap (model_type,
# ModelSpec.family).
SOFTCAP_FAMILIES = frozenset({"gemma2"})


_FULL_TRAINABLE = frozenset(LORA_TARGETS)


@lru_cache(maxsize=4096)
def _lora_dropout_elements(model: ModelSpec, targets: frozenset[str]) -> float:
    """Elements per token per layer kept by LoRA dropout: each adapted input's dropped-out 16-bit copy plus its
    1-byte mask (half an element), one per adapted module as in PEFT `LoraLayer.lora_dropout` (nn.Dropout saves
    the mask; lora_A saves its input)."""
    d_in = {
        "q": model.hidden,
        "k": model.hidden,
        "v": model.hidden,
        "o": model.heads * model.d_head,
        "gate": model.hidden,
        "up": model.hidden,
        "down": model.expert_ffn or model.ffn,
    }
    if model.is_moe and not model.ffn:
        d_in["down"] = model.expert_ffn or 0
    return 1.5 * sum(d_in[t] for t in targets if t in d_in)


def _dropout_elements(model: ModelSpec, workload: Workload) -> float:
    """LoRA dropout copies of a workload (`_lora_dropout_elements`), elements per token per layer; 0 without LoRA
    dropout."""
    if workload.task not in LORA_TASKS:
        return 0.0
    lora = workload.lora or LoraSpec()
    return _lora_dropout_elements(model, _lora_targets(lora)) if lora.dropout > 0 else 0.0


def _trainable_linears(workload: Workload) -> frozenset[str]:
    if workload.task in LORA_TASKS:
        return _lora_targets(workload.lora or LoraSpec())
    return _FULL_TRAINABLE


def kbit_upcast(workload: Workload, plan: Plan | None = None) -> bool:
    """Whether PEFT's `prepare_model_for_kbit_training` runs: as asked, else on for QLoRA unless its 4-bit weights are
    sharded by ZeRO-3 / FSDP over more than one GPU (TRL's SFTTrainer calls it for a 4-bit model, but not for
    `is_sharded_qlora`, trl/trainer/sft_trainer.py 2024-2025; artidoro/qlora qlora.py calls it too).

    It casts every parameter that is not 4-bit to fp32 (peft/utils/other.py); with bf16 both trainers cast the
    embedding and head back (TRL `peft_module_casting_to_bf16`, qlora.py) but keep the norms fp32. transformers'
    LlamaRMSNorm returns `self.weight * hidden_states.to(input_dtype)`, fp32 with an fp32 weight; bitsandbytes
    `Linear4bit.forward` casts its output back to its input's dtype, and the residual add promotes: from the first
    layer on the residual stream, the norm outputs and the projections run in fp32, and so do the tensors saved for
    the backward (the flash-attention path warns that its inputs were "silently casted in float32" and casts q, k, v
    back for the kernel). Weights stay as counted: NF4 linears, 16-bit embedding and head."""
    if workload.task != "qlora":
        return False
    if workload.kbit_upcast is not None:
        return workload.kbit_upcast
    return plan is None or not (plan.zero_stage == 3 and plan.dp * plan.cp > 1)


def _act_bytes(ctx: _Ctx, plan: Plan) -> float:
    """Bytes per saved activation element: the training dtype, or fp32 under PEFT's k-bit preparation."""
    return 4.0 if ctx.act_bytes == 4.0 or kbit_upcast(ctx.workload, plan) else ctx.act_bytes


def _kv_share(c: _ActCoeffs, tp: int) -> float:
    """Share of k/v one tp rank holds: 1/tp, but at least one whole head (Megatron replicates kv heads)."""
    return 1.0 / min(tp, c.kv_heads)


def _layer_elements(
    c: _ActCoeffs, tp: int, sp: bool, seq_local: float, flash: bool, moe: bool, scores: float = 1.0
) -> float:
    """Elements per token one layer keeps with no recompute; `scores`: elements per attention score kept without
    flash attention (EAGER_SCORE_ELEMENTS in training)."""
    replicated = c.replicated / tp if sp else c.replicated
    mlp = c.moe_mlp if moe else c.mlp
    core = 2.0 * c.attn_heads / tp  # flash attention's fp32 log-sum-exp: a values per token (2 elements each)
    if not flash:
        core += scores * c.attn_heads * seq_local / tp  # the scores, a·s per token (Korthikanti Table 2)
    return replicated + c.q_side / tp + c.kv_side * _kv_share(c, tp) + mlp / tp + core


def _selective_elements(c: _ActCoeffs, tp: int, sp: bool, moe: bool, megatron: bool = False) -> float:
    """Matmul outputs kept, attention core and pointwise ops recomputed (Korthikanti §5); `megatron`: Megatron-LM's
    selective recompute, which recomputes the core attention only and keeps the whole MLP."""
    replicated = c.selective_replicated / tp if sp else c.selective_replicated
    if megatron:
        replicated = c.megatron_selective_replicated / tp if sp else c.megatron_selective_replicated
        mlp = c.megatron_selective_moe_mlp if moe else c.megatron_selective_mlp
        attn = c.megatron_selective_q / tp + c.megatron_selective_kv * _kv_share(c, tp)
    else:
        mlp = c.selective_moe_mlp if moe else c.selective_mlp
        attn = c.selective_q / tp + c.selective_kv * _kv_share(c, tp)
    return replicated + attn + mlp / tp + 2.0 * c.attn_heads / tp


def _fp8_saving(c: _ActCoeffs, tp: int, sp: bool, moe: bool, selective: bool) -> float:
    """Elements per token one layer saves less under Transformer Engine FP8 (TE_FP8_SAVED): the linear inputs TE keeps
    quantized, the norms' outputs (LayerNormLinear's ln_out) and fc2's input; linear_proj's input is its own FP8 copy,
    beside the attention's 16-bit output without recompute (c.fp8_q negative: memory.saved) and alone under Megatron's
    selective recompute (`selective`), whose checkpoint output linear_proj alone keeps."""
    replicated = c.fp8_replicated / tp if sp else c.fp8_replicated
    mlp = c.fp8_moe_mlp if moe else c.fp8_mlp
    proj = abs(c.fp8_q) if selective else c.fp8_q
    return TE_FP8_SAVED * (replicated + proj / tp + mlp / tp)


def _stage_elements(
    c: _ActCoeffs, key: tuple[bool, int, bool, str, bool, float, int, int, bool, bool, bool, int]
) -> tuple[float, float]:
    """(elements per token kept by a stage's layers for one micro-batch, one layer's extra working set).

    `key` is (Transformer Engine's layers, tp, sequence_parallel, recompute, flash_attention, local seq length or 0
    with flash, layers, moe, compiled, Transformer Engine FP8, fp32 parameters under autocast, checkpointed regions a
    layer under full recompute); `c` already holds the coefficients of the first and the ninth to eleventh
    (`_coeffs_of`).
    """
    _, tp, sp, recompute, flash, seq_local, layers, moe, _, te_fp8, _, regions = key
    worst_layer = _layer_elements(c, tp, sp, seq_local, flash, moe > 0, EAGER_SCORE_ELEMENTS)
    if recompute == "full":
        # each checkpointed region keeps its input: one hidden state a region (Plan.checkpoint_regions)
        kept = regions * c.per_layer_input / (tp if sp else 1)
        # the layer being recomputed holds its full working set; its input is the checkpoint already counted
        return layers * kept, max(0.0, worst_layer - kept)
    if recompute in ("selective", MEGATRON_SELECTIVE):
        mega = recompute == MEGATRON_SELECTIVE
        dense = (layers - moe) * _selective_elements(c, tp, sp, False, mega)
        # The recomputed attention core is no saving without flash attention: the backward of each layer runs its
        # eager attention again and holds the scores it makes (transformers `eager_attention_forward`: the fp32
        # softmax and its 16-bit copy, EAGER_SCORE_ELEMENTS) while that layer's backward runs, one layer at a time
        scores = 0.0 if flash else EAGER_SCORE_ELEMENTS * c.attn_heads * seq_local / tp
        kept = dense + moe * _selective_elements(c, tp, sp, True, mega)
        if te_fp8 and mega:
            kept -= (layers - moe) * _fp8_saving(c, tp, sp, False, True) + moe * _fp8_saving(c, tp, sp, True, True)
        return kept, scores
    dense = (layers - moe) * _layer_elements(c, tp, sp, seq_local, flash, False, EAGER_SCORE_ELEMENTS)
    if te_fp8:
        dense -= (layers - moe) * _fp8_saving(c, tp, sp, False, False)
        worst_layer -= _fp8_saving(c, tp, sp, True, False) if moe else 0.0
    return dense + moe * worst_layer, 0.0


def _elements_of(ctx: _Ctx, plan: Plan, stage: _Stage, seq_local: float) -> tuple[float, float]:
    if _without_graph(ctx, plan):  # the layers keep nothing: the head adapter's input
        return 0.0, HEAD_ADAPTER_INPUT_ELEMENTS
    flash = plan.flash_attention
    key = (
        plan.fp32_main_grads,  # Transformer Engine's layers (_coeffs_of)
        plan.tp,
        plan.sequence_parallel,
        _recompute_kind(plan),
        flash,
        0.0 if flash else seq_local,
        stage.layers,
        stage.moe_layers,
        plan.compiled,
        te_fp8(ctx.workload, plan),
        plan.fp32_params,
        plan.checkpoint_regions,
    )
    found = ctx.elements.get(key)
    if found is None:
        found = ctx.elements[key] = _stage_elements(_coeffs_of(ctx, plan), key)
    return found


def _without_graph(ctx: _Ctx, plan: Plan) -> bool:
    """LoRA whose checkpointed layers build no graph (Workload.decoder_without_graph), read under full recompute."""
    return ctx.workload.decoder_without_graph and plan.recompute == "full" and ctx.workload.task in LORA_TASKS


def _coeffs_of(ctx: _Ctx, plan: Plan) -> _ActCoeffs:
    """The context's activation coefficients for the plan: compiled or eager, under autocast with fp32 parameters
    (Plan.fp32_params) or in the training dtype, Transformer Engine's layers on the megatron stack (a plan with the
    fp32 main-gradient buffer, Plan.fp32_main_grads, set by app/planner/stacks.py; memory.saved)."""
    if plan.fp32_params:
        return ctx.autocast_compiled_coeffs if plan.compiled else ctx.autocast_coeffs
    if plan.compiled:
        return ctx.compiled_coeffs
    return ctx.te_coeffs if plan.fp32_main_grads else ctx.coeffs


def autocast_weight_copies(plan: Plan, stage: _Stage) -> float:
    """Bytes of the 16-bit weight copies autocast makes and the matmuls keep (AUTOCAST_WEIGHT_COPY_BYTES), fp32
    parameters only: every linear of the stage and its head, cached through the forward where the parameters are
    leaves (one GPU, DDP, ZeRO-1/2) or kept for the backward without full recompute; under FSDP (ZeRO-3 over more than
    one rank, the split's key) with full recompute, the layer being recomputed and the head, which no checkpoint
    covers. Counted beside the backward's start: the replicated model's cache lives through the forward, whose end
    holds the checkpoints and the loss's forward buffers (the fp32 logits and log-probs) as the backward's start
    does."""
    if not plan.fp32_params:
        return 0.0
    fsdp = plan.zero_stage == 3 and plan.dp * plan.cp > 1
    linears = stage.layer_linear_params if fsdp and plan.recompute == "full" else stage.linear_params
    return AUTOCAST_WEIGHT_COPY_BYTES * (linears + stage.head_params)


def te_fp8(workload: Workload, plan: Plan) -> bool:
    """Whether the plan's FP8 runs through Transformer Engine's linears, which save their inputs in FP8: the megatron
    stack (a plan with the fp32 main-gradient buffer, Plan.fp32_main_grads, set by app/planner/stacks.py) at fp8."""
    return workload.precision == "fp8" and plan.fp32_main_grads


def _recompute_kind(plan: Plan) -> str:
    """The plan's recompute, with Megatron-LM's selective told apart: a plan with the fp32 main-gradient buffer is one
    the megatron stack runs (Plan.fp32_main_grads, set by app/planner/stacks.py)."""
    if plan.recompute == "selective" and plan.fp32_main_grads:
        return MEGATRON_SELECTIVE
    return plan.recompute


def _microbatches(workload: Workload, plan: Plan, dp: int) -> int:
    """Micro-batches per optimizer step and pipeline; unknown global batch: assume the pipeline is full."""
    if workload.global_batch is None:
        return plan.pp
    return max(1, workload.global_batch // (dp * plan.micro_batch))


def _in_flight(workload: Workload, plan: Plan, stage: _Stage, dp: int) -> float:
    """Micro-batches whose activations a stage holds: 1F1B first stage min(p, m); interleaving adds (p-1)/(p·v). The
    interleaved last stage warms up with (v-1)·p chunk forwards (Megatron-LM pipeline_parallel/schedules.py
    `get_pp_rank_microbatches`; torch.distributed.pipelining ScheduleInterleaved1F1B alike): (v-1)·p + 1 chunks held,
    each 1/v of its layers."""
    if plan.pp == 1 or not (stage.is_first or plan.virtual_stages > 1):
        return 1.0
    v = plan.virtual_stages
    if not stage.is_first:
        return min(_microbatches(workload, plan, dp) * v, (v - 1) * plan.pp + 1) / v if stage.is_last else 1.0
    count = float(min(plan.pp, _microbatches(workload, plan, dp)))
    if v > 1:
        count *= 1.0 + (plan.pp - 1) / (plan.pp * v)
    return count


def _training_activations(ctx: _Ctx, plan: Plan, stage: _Stage, dp: int) -> tuple[float, float]:
    """(bytes on the GPU, bytes offloaded to host RAM) of one stage's activations for one GPU."""
    workload = ctx.workload
    seq_local = workload.seq_len / plan.cp
    tokens = plan.micro_batch * seq_local
    kept, working = _elements_of(ctx, plan, stage, seq_local)
    if ctx.dropout_elements and plan.recompute != "full":
        kept += stage.layers * ctx.dropout_elements / plan.tp
    in_flight = _in_flight(workload, plan, stage, dp) if plan.pp > 1 else 1.0
    act_bytes = _act_bytes(ctx, plan)
    if plan.hidden_dropout and plan.recompute != "full":
        # full recompute remakes the masks inside the checkpoint (one layer's, under the working set's margin)
        masks = HIDDEN_DROPOUT_MASK_BYTES * ctx.model.hidden / (plan.tp if plan.sequence_parallel else 1)
        kept += stage.layers * masks / act_bytes
    saved = tokens * act_bytes * kept * in_flight
    host = 0.0
    if plan.activation_offload:
        # the saved tensors go to host RAM as they are made and come back layer by layer for the backward: the GPU
        # holds the layer in use and the one being copied (torchtune OffloadActivations, double-buffered streams)
        host = saved
        saved = saved * min(1.0, ACTIVATION_OFFLOAD_LAYERS / (stage.layers * in_flight))
    total = saved + tokens * act_bytes * working + autocast_weight_copies(plan, stage)
    if stage.is_last:
        total += _loss_bytes(ctx, plan) + _kept_outputs(ctx, plan, dp) + _loop_kept_logits(ctx, plan)
        total += _softcap_bytes(ctx, plan)
    return total, host


def _kept_outputs(ctx: _Ctx, plan: Plan, dp: int) -> float:
    """Bytes of the last stage's outputs (its 16-bit logits, vocabulary-sharded under TP's loss parallel) that the
    schedule keeps for every micro-batch but the one in the loss (Plan.pp_keeps_outputs: torch.distributed.pipelining
    `output_chunks` until the step returns), per GPU."""
    if plan.pp == 1 or not plan.pp_keeps_outputs:
        return 0.0
    kept = _microbatches(ctx.workload, plan, dp) - 1
    tokens = plan.micro_batch * ctx.workload.seq_len / plan.cp
    return kept * tokens * ctx.model.vocab / plan.tp * _act_bytes(ctx, plan)


def _loop_kept_logits(ctx: _Ctx, plan: Plan) -> float:
    """Bytes of the model's output that the training loop keeps through the backward (Plan.kept_logits_bytes), beside
    the loss's buffers and the layers' working sets alike."""
    tokens = plan.micro_batch * ctx.workload.seq_len / plan.cp
    return tokens * ctx.model.vocab / plan.tp * plan.kept_logits_bytes


def _softcap_bytes(ctx: _Ctx, plan: Plan) -> float:
    """Bytes of the tanh output a final-logit soft-capping head keeps for the backward (SOFTCAP_FAMILIES), on the
    last stage beside the loss's buffers; none where the head is fused into the loss (no logits of the sequence)."""
    if ctx.model.family not in SOFTCAP_FAMILIES or _liger_fused(plan):
        return 0.0
    tokens = plan.micro_batch * ctx.workload.seq_len / plan.cp
    return tokens * ctx.model.vocab / plan.tp * _logits_bytes(ctx.workload, plan)


def _loss_bytes(ctx: _Ctx, plan: Plan) -> float:
    """Bytes the loss keeps on the last stage at the start of the backward, per GPU (the constants above)."""
    tokens = plan.micro_batch * ctx.workload.seq_len / plan.cp
    if _liger_fused(plan):
        return tokens * ctx.model.hidden * FUSED_LOSS_BYTES_PER_HIDDEN
    per_logit = (
        _chunked_bytes(plan)
        if plan.chunked_loss or plan.fused_loss
        else COMPILED_LOSS_BYTES_PER_LOGIT
        if plan.compiled_loss
        else NO_UPCAST_LOSS_ELEMENTS_PER_LOGIT * _act_bytes(ctx, plan)
        if plan.no_upcast_loss
        else SHIFT_COPY_LOSS_BYTES_PER_LOGIT + _shift_copy_logits(ctx.workload, plan)
        if plan.shift_copy_loss
        else (
            MEGATRON_VOCAB_PARALLEL_LOSS_BYTES_PER_LOGIT
            if plan.fp32_main_grads
            else UPCAST_VOCAB_PARALLEL_LOSS_BYTES_PER_LOGIT
        )
        if plan.upcast_vocab_parallel_loss
        else _plain_bytes(plan)
    )
    return tokens * ctx.model.vocab / plan.tp * per_logit


def _liger_fused(plan: Plan) -> bool:
    """Whether the plan's loss is the head fused with the cross-entropy (FUSED_LOSS_BYTES_PER_HIDDEN): its fused
    loss off the megatron stack; on it (Plan.fp32_main_grads) Megatron-LM's fused vocab-parallel cross-entropy keeps
    the logits as its unfused one does (MEGATRON_VOCAB_PARALLEL_LOSS_BYTES_PER_LOGIT)."""
    return plan.fused_loss and not plan.fp32_main_grads


def _plain_bytes(plan: Plan) -> float:
    """Bytes a logit the loss keeps where the plan names no other: the standard loss's fp32 upcast, log-probs and
    gradient; on the megatron stack (Plan.fp32_main_grads) Megatron-LM's own unfused vocab-parallel cross-entropy,
    which GPTModel runs whatever the plan says of a Hugging Face loss (MEGATRON_PLAIN_LOSS below)."""
    return MEGATRON_VOCAB_PARALLEL_LOSS_BYTES_PER_LOGIT if plan.fp32_main_grads else LOSS_BYTES_PER_LOGIT


def _shift_copy_logits(workload: Workload, plan: Plan) -> float:
    """The 16-bit logits beside transformers 4.48's loss in its forward (SHIFT_COPY_LOSS_BYTES_PER_LOGIT): 0 for
    an fp32 head, whose `.float()` is the same tensor."""
    logits = _logits_bytes(workload, plan)
    return logits if logits < 4.0 else 0.0


def _chunked_bytes(plan: Plan) -> float:
    """Bytes a logit the chunked loss keeps: the eager chunks' fp32 log-probs, or compiled chunk by chunk; on the
    megatron stack (Plan.fp32_main_grads) Megatron-LM's fused vocab-parallel cross-entropy, as much as unfused."""
    if plan.fp32_main_grads:
        return MEGATRON_VOCAB_PARALLEL_LOSS_BYTES_PER_LOGIT
    return CHUNKED_COMPILED_LOSS_BYTES_PER_LOGIT if plan.compiled_loss else CHUNKED_LOSS_BYTES_PER_LOGIT


def _offloaded_activations(ctx: _Ctx, plan: Plan) -> float:
    """Bytes one GPU copies to host RAM per micro-batch under `activation_offload` (and back for the backward)."""
    workload = ctx.workload
    stage = _stages_of(ctx, plan)[0]
    seq_local = workload.seq_len / plan.cp
    kept = _elements_of(ctx, plan, stage, seq_local)[0]
    if ctx.dropout_elements and plan.recompute != "full":
        kept += stage.layers * ctx.dropout_elements / plan.tp
    return plan.micro_batch * seq_local * _act_bytes(ctx, plan) * kept


def _inference_activations(ctx: _Ctx, plan: Plan, stage: _Stage) -> float:
    """One layer's prefill working set for the whole batch plus fp32 last-token logits."""
    seq_local = ctx.workload.seq_len / plan.cp
    tokens = plan.micro_batch * seq_local
    moe = stage.moe_layers > 0
    layer = _layer_elements(ctx.coeffs, plan.tp, plan.sequence_parallel, seq_local, plan.flash_attention, moe)
    logits = plan.micro_batch * ctx.model.vocab / plan.tp * 4.0 if stage.is_last else 0.0
    return tokens * ctx.act_bytes * layer + logits


def _kv_cache(ctx: _Ctx, plan: Plan, stage: _Stage) -> float:
    """2 · layers · kv_heads · head_dim · context · batch · bytes (K and V), per tp rank and stage."""
    workload, model = ctx.workload, ctx.model
    if workload.task != "inference":
        return 0.0
    dtype = BYTES_PER_ELEMENT[workload.kv_cache_precision or workload.precision]
    kv_heads_local = model.kv_heads / min(plan.tp, model.kv_heads)
    context = workload.seq_len / plan.cp
    return 2.0 * stage.layers * kv_heads_local * model.d_head * context * plan.micro_batch * dtype


def _length_slack(ctx: _Ctx, plan: Plan) -> float:
    return varied_length_slack(ctx.model, ctx.workload, plan) + _bnb_dequant_pool(ctx, plan)


def _bnb_dequant_pool(ctx: _Ctx, plan: Plan) -> float:
    """Reserved blocks of bitsandbytes' two-copy dequantisation before 0.43 (BNB_FP16_DEQUANT_POOL_COPIES)."""
    if ctx.workload.task != "qlora" or not ctx.workload.bnb_fp16_dequant:
        return 0.0
    layer = ctx.facts.block_linear / ctx.facts.layers  # one decoder layer's quantised matrices (a mean under MoE)
    return BNB_FP16_DEQUANT_POOL_COPIES * layer / plan.tp * 2.0


def _activation_sets(ctx: _Ctx, plan: Plan, activations: float) -> float:
    """The layers' activation blocks kept for other lengths where torch's AdamW makes a full fine-tune's states after
    the first batch's activations (VARIED_LENGTH_ACTIVATION_SETS of the last stage's activations less the loss's,
    whose logit-sized blocks `varied_length_slack` counts); the caller says whether the plan's optimizer does."""
    if not _other_lengths_cached(ctx.workload) or ctx.workload.task not in FULL_TRAINING_TASKS:
        return 0.0
    return VARIED_LENGTH_ACTIVATION_SETS * max(0.0, activations - _loss_bytes(ctx, plan))


def _other_lengths_cached(workload: Workload) -> bool:
    """Whether a batch may find the pool holding blocks cut for batches of another length: batches of varied length,
    unless the loop clears the cache before every batch longer than the one before (Workload.cache_cleared_longest_
    first: each clear releases the segments no live tensor holds, and the batches after it only get shorter, so each
    is cut from the blocks of the longest since the clear, best fit with splitting: CUDACachingAllocator.cpp
    `get_free_block`, `should_split`). The first step's AdamW states stay where they were cut (not counted: PEFT's
    full fine-tune on MetaMathQA reads 1.4 GiB, 3.8 %, above the estimate without the sets)."""
    return bool(workload.varied_lengths) and not workload.cache_cleared_longest_first


def varied_length_slack(model: ModelSpec, workload: Workload, plan: Plan) -> float:
    """Reserved bytes beyond the live tensors for batches of varied length (VARIED_LENGTH_SLACK): blocks of the
    size of the logits and the loss's copies of them, the largest tensors of a step, cut for earlier batches."""
    if not _other_lengths_cached(workload) or workload.task == "inference" or _liger_fused(plan):
        return 0.0
    per_logit = (
        _chunked_bytes(plan)
        if plan.chunked_loss or plan.fused_loss
        else NO_UPCAST_LOSS_ELEMENTS_PER_LOGIT * _logits_bytes(workload, plan)
        if plan.no_upcast_loss
        else _plain_bytes(plan)
    )
    tokens = plan.micro_batch * workload.seq_len / plan.cp
    return VARIED_LENGTH_SLACK * tokens * model.vocab / plan.tp * per_logit


def _logits_bytes(workload: Workload, plan: Plan) -> float:
    """Bytes per logit element: the training dtype, or fp32 where PEFT's k-bit preparation leaves the head in fp32
    (as _act_bytes reads it from the context)."""
    return 4.0 if workload.precision == "fp32" or kbit_upcast(workload, plan) else 2.0


def _logits_block(ctx: _Ctx, plan: Plan) -> float:
    """Reserved bytes of the 16-bit logits' block the standard loss's fp32 backward cannot reuse
    (LOGITS_BLOCK_BYTES_PER_LOGIT); 0 for the other losses, Megatron-LM's and inference."""
    standard = not (
        plan.chunked_loss
        or plan.fused_loss
        or plan.compiled_loss
        or plan.no_upcast_loss
        or plan.shift_copy_loss
        or plan.upcast_vocab_parallel_loss
    )
    if not standard or plan.fp32_main_grads or ctx.workload.task == "inference":
        return 0.0
    tokens = plan.micro_batch * ctx.workload.seq_len / plan.cp
    return tokens * ctx.model.vocab / plan.tp * LOGITS_BLOCK_BYTES_PER_LOGIT


def _recompute_overlap(ctx: _Ctx, plan: Plan) -> float:
    """Bytes of the last stage's activations that the allocated peak never holds (RECOMPUTE_BESIDE_LOSS above): the
    smaller of the recomputed layer's working set and the loss's logit-sized buffers, full recompute only; 0 for
    Liger's fused loss, whose saved gradient of the hidden states is what the recomputed layer's backward starts
    from."""
    if ctx.workload.task == "inference" or plan.recompute != "full" or _liger_fused(plan):
        return 0.0
    if _without_graph(ctx, plan):  # no layer is recomputed
        return 0.0
    stage = _stages_of(ctx, plan)[-1]
    seq_local = ctx.workload.seq_len / plan.cp
    working = _elements_of(ctx, plan, stage, seq_local)[1]
    recomputed = plan.micro_batch * seq_local * _act_bytes(ctx, plan) * working
    return min(recomputed, _loss_bytes(ctx, plan))


def _other(ctx: _Ctx, plan: Plan, activations: float) -> float:
    other = OTHER_WORKSPACE_BYTES + FRAGMENTATION * activations
    if plan.dp * plan.tp * plan.pp * plan.cp > 1:
        other += OTHER_NCCL_BYTES
    if ctx.workload.task == "qlora":
        # one dequantised NF4 matrix in 16-bit; two (fp16 and its bf16 cast) on bitsandbytes before 0.43
        copies = 2.0 if ctx.workload.bnb_fp16_dequant else 1.0
        other += ctx.facts.largest_linear / plan.tp * 2.0 * copies
    return other


def _split_of(ctx: _Ctx, plan: Plan, dp: int) -> _Split:
    """The plan's split (`_Split`), with its (activations, KV cache, other, activations offloaded to host) of each
    stage: independent of ZeRO stage and offload, so cached per the plan fields they read (the planner tries every
    ZeRO stage and offload at one shape), every stage under one key."""
    tp, pp, cp = plan.tp, plan.pp, plan.cp
    key = (
        _split_fields(plan),
        plan.recompute,
        dp if pp > 1 else 0,  # micro-batches in flight (pipelines only)
        plan.dp * tp * pp * cp > 1,  # NCCL buffers
        plan.zero_stage == 3 and plan.dp * cp > 1,  # sharded QLoRA skips PEFT's k-bit preparation (kbit_upcast)
    )
    found = ctx.splits.get(key)
    if found is None:
        working = tuple(_working_set(ctx, plan, stage, dp) for stage in _stages_of(ctx, plan))
        # the loss's blocks read the micro-batch, cp, tp, the loss, the megatron stack (fp32_main_grads) and k-bit
        # preparation (sharded QLoRA): fields of the key
        found = ctx.splits[key] = _Split(
            working, _length_slack(ctx, plan), _logits_block(ctx, plan), _recompute_overlap(ctx, plan)
        )
    return found


def _split_fields(plan: Plan) -> tuple[object, ...]:
    """The plan fields a split's working sets read whatever the recompute, the data-parallel degree and the ZeRO
    stage: part of the split's key (_split_of) and of the ZeRO-3 advice's (advice._zero3_advice). The fp32
    main-gradient buffer, with the recompute, tells Megatron's selective apart (_recompute_kind)."""
    return (
        plan.tp,
        plan.pp,
        plan.ep,
        plan.expert_tp,  # the stage's parameters (states._stages_of); the activations do not read it
        plan.cp,
        plan.micro_batch,
        plan.fp32_main_grads,
        plan.hidden_dropout,
        plan.sequence_parallel,
        plan.flash_attention,
        plan.chunked_loss,
        plan.fused_loss,
        plan.compiled_loss,
        plan.no_upcast_loss,
        plan.shift_copy_loss,
        plan.upcast_vocab_parallel_loss,
        plan.kept_logits_bytes,
        plan.virtual_stages,
        plan.pp_keeps_outputs,
        plan.activation_offload,
        plan.compiled,
        plan.fp32_params,
        plan.checkpoint_regions,  # the inputs full recompute keeps a layer (_stage_elements)
    )


def _working_set(ctx: _Ctx, plan: Plan, stage: _Stage, dp: int) -> tuple[float, float, float, float]:
    if ctx.workload.task == "inference":
        activations, host = _inference_activations(ctx, plan, stage), 0.0
    else:
        activations, host = _training_activations(ctx, plan, stage, dp)
    return activations, _kv_cache(ctx, plan, stage), _other(ctx, plan, activations), host
