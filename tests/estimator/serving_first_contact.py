"""Published serving runs recorded at first contact: rows from a source no earlier serving case used, written down
with their configuration and citation BEFORE any change they could motivate. The estimator's figure on each row at
the commit that added it is kept in `tests/estimator/data/serving_first_contact.json` (written by
`benchmarks/serving_first_contact.py --record`), and `docs/validation-serving.md` reports that figure as the
out-of-sample error; anything measured after a change the rows motivated is fitted.

Source:

  [datacrunch-h200] datacrunch-research/h200-benchmarks at c091ef530a525d2e788bc41c39a4450b09c9f2ad,
               sglang/outputs/*.jsonl (each line one `python3 -m sglang.bench_serving` run's JSON summary) with the
               launch and client commands in sglang/experiments/*.sh: SGLang serving meta-llama/Llama-3.3-70B-Instruct
               (`--tp-size 4` on 4 x H200 141GB) and meta-llama/Llama-3.1-405B-Instruct (`--tp-size 8` on 8 x H200),
               bf16, `--disable-radix-cache --enable-torch-compile`, engine defaults otherwise. Client:
               `--dataset-name random --random-input 1024 --random-output 1024` with `random_range_ratio` 0.0 (the
               summary's field), so each prompt and output length is drawn uniformly in [1, 1024]: the means are the
               summary's total tokens ÷ completed requests (508.7 / 534.5 at 300 prompts), the 95th percentile of
               the uniform draw is 973. Poisson arrivals at `--request-rate` (online), or every prompt at once
               (`request_rate` Infinity: offline, the output token throughput at the replica's capacity).
               Readings: median_ttft_ms, median_itl_ms (compared with the median time per output token: with one
               token a step they are the same interval) and output_throughput (tokens/s).

  [trtllm-v05-ftl] NVIDIA/TensorRT-LLM at 138f96d45f90b9667426f7c47297d8c06bafac73, docs/source/performance.md,
               "Low Latency" ("data is from TensorRT-LLM v0.5"): first-token latency at batch size 1 for input lengths
               128 and 2048 (`gptSessionBenchmark --input_output_len <isl>,1`, static batch, engines built with
               `--remove_input_padding --enable_context_fmha --use_gpt_attention_plugin float16`, on H100 and L40S
               also `--enable_fp8 --fp8_kv_cache`: FP8 weights, activations and KV cache; A100 in fp16), "LLaMA 7B"
               (Llama-2-7b shapes in the build command) at TP 1 and "LLaMA 70B" (Llama-2-70b, 8 KV heads) at TP 4.
               The table states whole milliseconds (rounding: ±0.5 ms, 7 % of the 7 ms rows). Read as the
               estimator's one-request TTFT of a static batch of one with one output token.

  [nim-h100]   NVIDIA NIM benchmarking guide, "Performance"
               (https://docs.nvidia.com/nim/benchmarking/llm/1.0.0/performance, read 2026-12-06),
               "Llama-3.3-70b-instruct Results", NIM container llama-3.3-70b-instruct "Version: 1.8.0",
               "2 x H100 80G", "fp8 TP2" (the NIM fp8 TP 2 profile: a TensorRT-LLM engine with FP8 weights and
               activations; the KV-cache format is not stated: read as FP8, the format of the ModelOpt FP8 engines the
               [trtllm] rows of serving_cases.py ran), "5000 Input Tokens / 500 Output Tokens", measured with AIPerf
               at a fixed number of requests in flight (concurrency: a closed loop, each finished request replaced at
               once). Readings: TTFT (ms) and ITL (ms) (AIPerf's inter-token latency: the time after the first token
               over the tokens after it, the TPOT), averages over the run. Rows at concurrency 1, 5, 25 and 50 only:
               from 100 on, the table's TTFT (8.0 s to 88.6 s) is the wait for a free sequence slot or KV cache and
               the throughput is flat (917-921 tokens/s), which is the queue of the closed loop, not the engine's step.

  [nim-h100-isl500] The same NIM guide and table group as [nim-h100] (NIM 1.8.0, Llama-3.3-70b-instruct,
               "2 x H100 80G", "fp8 TP2", AIPerf at a fixed number of requests in flight), its second workload,
               "500 Input Tokens / 2000 Output Tokens" (https://docs.nvidia.com/nim/benchmarking/llm/1.0.0/performance.md,
               read 2026-12-06): concurrency 1 TTFT 47.77 ms and ITL 18.91 ms, concurrency 5 TTFT 126.53 ms (the rest of
               that table was not legible in the copy read, so only these three are recorded). New rows, not a new
               project: the short prompt makes the time to first token mostly what happens around the prefill, which the
               5,000-token rows of [nim-h100] could not show (TensorRT-LLM's per-request cost is unsized, engines.json).
  [gpustack-h100] gpustack/gpustack at 1dbc3b8130da92d31539404545a1aff5c3992f8c,
               docs/performance-lab/qwen3-8b/h100-latency.md ("Optimizing Qwen3-8B Latency on NVIDIA H100 GPUs"):
               Qwen/Qwen3-8B on "A single NVIDIA H100 SXM GPU", engines "vLLM: v0.11.0", "SGLang: v0.5.3.post3",
               "TensorRT-LLM: v1.2.0rc1", each launched with defaults (`vllm serve Qwen/Qwen3-8B`,
               `python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B`, `trtllm-serve Qwen/Qwen3-8B`; bf16), and
               SGLang on Qwen/Qwen3-8B-FP8 (the block-FP8 checkpoint: FP8 weights and GEMMs, 16-bit KV cache).
               Client: `vllm bench serve --backend openai-chat --endpoint /v1/chat/completions --dataset-name sharegpt
               --num-prompts 100 --max-concurrency N` (a closed loop of N in flight); every run's summary states
               23,260 input and 22,061 generated tokens over 100 requests (means 233 and 221; the chat template's few
               tokens are not counted). Readings: Median TTFT (ms) and Median TPOT (ms) of the "Serving Benchmark
               Result" blocks: vLLM at N = 1, 2, 4, 8 ("Other Benchmark Cases", baseline), SGLang and TensorRT-LLM at
               N = 4 ("1. Choosing the Inference Engine"), SGLang FP8 at N = 4 ("3. Quantization"). Lengths are taken
               constant at the means (the page gives no distribution), as for the ShareGPT rows of
               tests/estimator/test_serving_loaded_published.py. Runs with speculative decoding are not read.

  [llmk8s-a100] surajssd/llm-k8s at 58b61c59450e06073120a8ad166c1e9c333851a7,
               results_serving_meta-llama-Llama-3.3-70B-Instruct/01_tp8_pp1/ (benchmark_results.md, the
               serving_*_qps_*.json summaries of `benchmarks/benchmark_serving.py --save-result`, the client commands
               in *.commands and the run log in benchmark-script-run.sh): vLLM v0.8.3 (`vllm/vllm-openai:v0.8.3`,
               configs/llama-3-3-70b-instruct/one-node-four-gpus/k8s/deployment.yaml at that commit:
               `--tensor-parallel-size 8 --pipeline-parallel-size 1 --distributed-executor-backend mp
               --enable-prefix-caching`, defaults otherwise: the V1 engine, bf16) serving
               meta-llama/Llama-3.3-70B-Instruct on one Azure Standard_ND96asr_v4 (8 x A100 40GB SXM4, NVSwitch).
               Client: `benchmark_serving.py --backend vllm --dataset-name sharegpt --num-prompts 200
               --request-rate R` (Poisson arrivals; the first 200 ShareGPT prompts at seed 0). The summaries list
               every request's lengths: 42,659 input tokens (mean 213, 95th percentile 744) and 42,722 / 42,449
               output tokens at 1 / 4 requests/s (means 214 / 212, 95th percentile 611), read as lognormal by their
               mean and 95th percentile as the simulation draws them. Readings: median_ttft_ms and median_tpot_ms at
               1 and 4 requests/s. Not read: 16 requests/s (its 200 arrivals span 12.5 s, about two request
               lifetimes, so the run is mostly its ramp and drain, not a steady state) and `inf` (the burst's
               output throughput over 200 prompts is set by the longest outputs, up to 780 tokens, and its TTFT is
               the burst's queue). Recorded running as the current vLLM; since, as ENGINE_RELEASES "vllm-0.8" (the
               V1 engine's server before 0.10, sized on other rows: these are out of its fit).
  [lambda-vllm054] LambdaLabsML/vllm-benchmark at 0e8fc5d0f9865a326666cb82aeb2d8dc74c82c5e, benchmark_v0.md,
               "Tensor Parallel v.s. Data Parallel" table (the cells are `output_throughput`/`median_itl_ms` of
               results/prompt_320/<N>x<GPU>/<model>_tp<N>_len2000.json, compile_sweetspot.py): vLLM v0.5.4 ("This
               benchmark was conducted with vLLM `v0.5.4`"; benchmark_1x2x4x8x.sh runs `vllm/vllm-openai:v0.5.4`)
               on 1, 2, 4 and 8 x H100-80GB-SXM and A100-80GB-SXM, `--tensor-parallel-size` = the GPU count,
               launched by benchmark.py with `--max-model-len 2000 --gpu-memory-utilization 0.95 --max-num-seqs
               1024`, engine defaults otherwise. Client: vLLM's `benchmark_serving.py --backend vllm --endpoint
               /v1/completions --dataset-name sharegpt --num-prompts 320` (request rate inf: all 320 queued at once,
               a finite offline run; greedy, EOS honoured, each output capped at its ShareGPT reply's length).
               Reading: the output token throughput (generated tokens ÷ the run's duration, ramp and drain
               included), the first number of each cell. Models: mistralai/Mistral-7B-Instruct-v0.3 (bf16),
               neuralmagic/Meta-Llama-3.1-8B-FP8 and neuralmagic/Meta-Llama-3.1-70B-Instruct-FP8 (FP8 weights and
               activations, per-tensor scales; KV cache 16-bit, vLLM's default), NousResearch/Hermes-3-Llama-3.1-
               405B-FP8 (Llama 3.1 405B shapes, FP8). Lengths: the run summaries' per-request `input_lens` and
               `output_lens` (the same 320 prompts for every run of one tokenizer; outputs greedy): Mistral
               results/prompt_320/1xH100-80GB-SXM/Mistral-7B-Instruct-v0.3_tp1_len2000.json (2024-08-19: 73,671 in,
               95th percentile 831; 71,810 out, 95th percentile 651), Llama 3.1 8B FP8 .../4xH100-80GB-SXM/
               Meta-Llama-3.1-8B-FP8_tp4_len2000.json (65,578 in, 95th percentile 692; 42,874 out, 95th percentile
               492: a base model, 105 of 320 replies empty), 405B .../8xH100-80GB-SXM/Hermes-3-Llama-3.1-405B-FP8_
               tp8_len2000.json (68,221 out, 95th percentile 587), 70B FP8 .../2xA100-80GB-SXM/Meta-Llama-3.1-70B-
               Instruct-FP8_tp2_len2000.json (63,343 out, 95th percentile 574; a later run of the same model and
               prompts, 2024-09-07: the H100 summary of the table's run is not in the repository). Read as
               lognormal by mean and 95th percentile. Not read: the cells' median ITL (the estimator gives no
               per-token latency for a finite burst), the A100 rows of the FP8 checkpoints (A100 has no FP8 tensor
               cores: vLLM runs them weight-only, a path with no stated format here), the Mixtral and Mistral
               Nemo / Large columns (MoE, or no preset), the repository's later result files (2024-09, other vLLM
               settings: e.g. 1xA100 Mistral reads 3,051.7 tokens/s there against the table's 1,591.4), and the
               report's v0.6.0 tables (the GPU is not stated for them). vLLM v0.5.4 is not an ENGINE_RELEASES
               entry: the rows run as the current vLLM.
  [dstack-h100-405b] dstackai/benchmarks at 06c957ab51572ca18db9c1f4bb254a9eb86df4d7,
               comparison/h100sxm5_vs_mi300x/raw_data/8xH100SXM5-throughput/nvidia-throughput_test_ip<I>_op<O>_np<N>.json
               (each file one `benchmark_throughput.py` run's JSON: elapsed_time, num_requests, total_num_tokens,
               tokens_per_second; the same numbers in nvidia/8xh100/charts/throughput_output.csv), with the setup in
               comparison/h100sxm5_vs_mi300x/README.md and nvidia/8xh100/README.md: vLLM "0.6.3.post2.dev308+gb489fc3c"
               (collect_env in the README; a nightly wheel installed in nvcr.io/nvidia/pytorch:23.10-py3) on one node of
               8 x "NVIDIA H100 80GB HBM3" (SXM5, NV18 between every pair), `python benchmark_throughput.py --backend
               vllm --model "meta-llama/Llama-3.1-405B-FP8" --input-len=<INPUT_LEN> --output-len=<OUTPUT_LEN>
               --tensor-parallel-size 8 --max-model-len 91680 --num-prompts=<BATCH_SIZE> --num-scheduler-step 1`,
               engine defaults otherwise (gpu_memory_utilization 0.9, max_num_seqs 256, KV cache 16-bit). The
               checkpoint is fbgemm FP8 (FP8 weights with a scale per channel, activations quantised per token at run
               time: read as FP8 weights and math, as app/estimator/checkpoints.py reads `fbgemm_fp8`; which modules
               the checkpoint leaves unquantised was not read here). Offline: the N prompts of exactly I tokens (as the
               script counts them) are queued at once and each generates exactly O tokens (ignore_eos), so a run is
               finite and its ramp and drain count. Reading: output tokens/s = num_requests x O / elapsed_time (the
               file's tokens_per_second is total_num_tokens / elapsed_time, input included); I/O = 128/2048 and
               2048/2048 at N = 4 ... 256, 32784/2048 at N = 4, 8, 16. All rows are TP 8 (the source ran no other
               degree on NVIDIA). Not read: the files' 91680- and 128000-token rows (elapsed 0.1-8.7 s for 0.6-9 M
               tokens: the README's "Issues" reports them as not credible), the benchmark_latency files (the same
               2048/2048 batches, end-to-end seconds within 0.3 % of these runs), and the benchmark_serving runs (1,000
               ShareGPT prompts offered at 16-1,000 requests/s to a server completing about 10: the TTFT is a queue
               growing through the run, and the sweep's engine flags are stated only in a CSV). vLLM 0.6.3 is not an
               ENGINE_RELEASES entry: the rows run as the current vLLM.
  [dli-trtllm09] NVIDIA Deep Learning Institute course "Sizing LLM Inference Systems", dataset/trt_llm_0_9_0_dli.csv,
               as republished in wbing520/ai-performance-engineering at 5a4d0c37a3231b2ff8a268df7f129be259c48a48,
               code/ch11_inference/inference_gpu_cluster_sizing/dataset/trt_llm_0_9_0_dli.csv (3,449 runs, one a line;
               the same file at code/ch10_inference/... in the initial commit 0e25b2e2). TensorRT-LLM 0.9.0 (the file's
               name), NVIDIA's benchmark harness over a static batch: "Batch Size" prompts of exactly the
               "Input/Output Lengths" tokens prefilled together, then decoded together ("Measure 1st Token Latency"
               Yes, "Use Fake Weight" Yes, "Enable XQA" Yes, "Warmup" 1, "Number of Runs" 1). Its readings obey
               "Token-to-token Latency (ms)" = ("Latency (ms)" - "1st Token Latency (ms)") / (output - 1) and
               "Throughput (tokens / sec)" = batch x output / "Latency (ms)" on all 2,790 complete lines, so "Latency"
               is the whole batch's time, gptSessionBenchmark's. The TensorRT-LLM v0.9.0 docs/source/performance.md
               "Low Latency" table prints two of these lines (H100 FP8 "LLaMA 70B" TP 4 at 128 tokens 19.6 ms, TP 8 at
               2,048 tokens 85.1 ms; the file: 19.64, 85.12) and gives that release's FP8 build: "quant_algo": "FP8",
               "kv_cache_quant_algo": "FP8" (FP8 weights, activations and KV cache), `trtllm-build --context_fmha
               enable --gpt_attention_plugin float16 --strongly_typed`, `gptSessionBenchmark --warm_up 1`. Lines read:
               "LLaMA v2 70B", "FP8", "Enable Custom All Reduce" Yes, on "H100 80GB HBM3" (DGX H100: H100 SXM, NVLink)
               and "H200 141GB HBM3", batch 1, 2, 4 and 8, every complete line of each (GPU, lengths, batch) measured
               at TP 1 and at some TP >= 2 (TP 1 runs on one GPU only in FP8: the other models and A100 lines have no
               TP 1 / TP >= 2 pairs). 107 lines, each read twice: "1st Token Latency (ms)" as the TTFT of the static
               batch and "Token-to-token Latency (ms)", recomputed from the line's Latency and 1st Token Latency by
               the harness's formula above, as the TPOT at that batch. Not read: batches above 8, the lines with custom
               all-reduce off, GH200 and H100 NVL (no GPU preset), L40 / L40S and A100 (no TP 1 line of a model also
               run at TP >= 2), the other models (GPT-J, Mistral 7B, Llama 2 7B / 13B at TP 1 only; Mixtral, Falcon
               180B). TensorRT-LLM 0.9.0 is not an ENGINE_RELEASES entry: the rows run as the current TensorRT-LLM.
  [trtllm-v014-triton] NVIDIA/TensorRT-LLM at 258c7540c03517def55d9a5aadfa9288af474e1b,
               docs/source/performance/perf-overview.md, "Online Serving Measurements": "All data in the table below was
               generated using version 0.14.0, with 500 requests and BF16 precision", served through the Triton
               TensorRT-LLM backend (triton-inference-server/tensorrtllm_backend): LLaMA 3.1 70B at TP 4 and LLaMA 3.1
               8B at TP 1 on "H100 80GB HBM3" and "H200 131GB HBM3" (read as H200 141GB SXM), input/output lengths
               467/256, 467/16 and 202/214 (read as every request of exactly those lengths), offered at 2, 4, 8, 16, 32
               and INF requests/s ("QPS"; the arrival process is not stated: read as Poisson, as the simulation draws
               it). Readings: Mean TTFT(ms) and Mean ITL(ms), whole milliseconds (±0.5 ms: up to 10 % of the 5-9 ms ITL
               rows), compared at first contact with the simulation's median TTFT and TPOT, since with its mean TTFT and
               TPOT (`statistic="mean"`: the source gives means only, and a queue's mean TTFT sits above its median;
               stated after first contact, tests/estimator/test_serving_mean_latency.py). Not read: INF (500 requests
               at once: the TTFT is the burst's queue) and any rate whose completed requests/s ("Tput(req/s)") reaches
               85 % of the same configuration's INF figure (at capacity: 70B at 32 requests/s on both GPUs).
  [trtllm-v017-throughput] The same file and commit, "Throughput Measurements": "All data in the table below was
               generated using version 0.17", `trtllm-bench throughput` over an engine built by `trtllm-bench build`
               (C++ runtime, in-flight batching, chunked context), an offline run of $num_requests requests of exactly
               ISL/OSL tokens queued at once (the file's table: 30,000 at 128/128, 3,000 at 128/2048, 2048/128,
               1000/1000 and 500/2000, 1,500 at 128/4096, 2048/2048 and 5000/500, 1,000 at 20000/2000; read as the
               finite runs they are), token throughput in tokens/s. Columns read: "A100-SXM4-80GB" ("FP16": weights,
               math and KV cache 16-bit) and "L40S" ("FP8": `--quantization FP8`, which "will automatically" set the KV
               cache to FP8 too), LLaMA v3.1 8B at TP 1 and LLaMA v3.1 70B at TP 2 (A100), 4 and 8: the first
               TensorRT-LLM rows on A100 or L40S in continuous batching. Not read: the H100 / H200 / GH200 columns (the
               fitted [trtllm] rows of serving_cases.py are a later release's), Mistral 7B and the Mixtrals.
               TensorRT-LLM 0.14 / 0.17 are not ENGINE_RELEASES entries: the rows run as the current TensorRT-LLM.
  [accelmark-a100] AccelMark's SGLang 0.5.6 and vLLM 0.20.1 runs on A100 (serving_first_contact_accelmark.py).
  [trtllm-v061-peak], [trtllm-h200-blogs] TensorRT-LLM 0.5-0.7 static-batch peak throughput on H100, H200, A100 and
               L40S, Llama 2 7B / 13B / 70B (serving_first_contact_trtllm_static.py).
  [mooncake-vllm-a10] vLLM 0.6.2 on one A10 under Poisson load (serving_first_contact_mooncake.py).
  [iog-vllm085] vLLM 0.8.5 on one H100 PCIe, one RTX 4090 and two H100 PCIe under Poisson load, ShareGPT
               (serving_first_contact_iog.py).
  [dstack-r1-h200] DeepSeek-R1 on 8 x H200 under SGLang 0.4.3, vLLM 0.7.4 and TensorRT-LLM 0.17 at 4-64 requests in
               flight, 3,200 in / 800 out (serving_first_contact_dstack_r1.py).
  [qwen25-speed-a100] the Qwen2.5 speed benchmark: vLLM 0.6.3, one request of 2,048 output tokens after a 1- to
               63,488-token prompt, Qwen2.5 0.5B-72B in BF16, GPTQ-Int8, GPTQ-Int4 and AWQ on 1, 2 or 4 x A100 80GB
               (serving_first_contact_qwen_speed.py).
  [azure-trtllm015-throughput] Azure's AI benchmarking guide: TensorRT-LLM 0.15 trtllm-bench offline throughput of
               Llama 3.1 8B / 70B / 405B in FP8 on ND H100 v5 and ND H200 v5, one engine per model built for 2,048 /
               2,048 and run at six length pairs (serving_first_contact_azure.py).
  [vllm-rtn-marlin-h100] vllm-project/vllm#23197's benchmark_latency table: Llama-3.1-8B on one H100 at batch 1-16,
               256 in / 32 out, BF16 and RTN Int8 / Int4 through vLLM's Marlin kernels
               (serving_first_contact_vllm_rtn.py).
  [vllm-moe-a100-tp2], [vllm-moe-h100-tp8] vllm-project/vllm#3240 / #2542's benchmark_latency tables: Mixtral 8x7B,
               1,000 in / 50 out, batch 1-64, TP 2 on A100 and TP 8 on H100 (serving_first_contact_vllm_moe.py).
  [sgl-cookbook] the SGLang cookbook's speed benchmarks: SGLang 0.5.6 closed loops of 1-100 in flight, Llama 3.1 70B
               at TP 8 on 8 x A100 and DeepSeek-R1 at TP 8 on 8 x B200, random 1K/1K, 8K/1K and 1K/8K
               (serving_first_contact_sgl_cookbook.py).
  [lmsys-large-ep] LMSYS Org blog "Deploying DeepSeek with PD Disaggregation and Large-scale Expert Parallelism on 96
               H100 GPUs" (2025-05-05, https://lmsys.org/blog/2025-05-05-large-scale-ep/, read through its copies
               and the launch commands of sgl-project/sglang#6017, 2026-12-06): SGLang serving DeepSeek-V3 (block FP8,
               weight_block_size [128, 128]; 16-bit KV cache) on 12 Atlas Cloud nodes of 8 x H100 SXM (NVLink in a
               node, 8 x 400 Gb/s InfiniBand NDR per node), prefill and decode disaggregated: prefill on 4 nodes
               (DP attention 32, EP 32), decode on 9 nodes (`--tp-size 72 --dp-size 72 --enable-dp-attention
               --enable-deepep-moe --deepep-mode low_latency --cuda-graph-bs 256 --max-running-requests 9 x 2048`:
               256 sequences on each GPU), 2,000-token prompts. Readings: "52.3k input tokens per second and 22.3k
               output tokens per second per node" (the prefill pool's and the decode pool's throughput per node). The
               output length of the decode run is not read: taken as 100 (a decode context of about 2,050 tokens).
               The estimator had no DP attention and no expert parallel when these rows were recorded: at first
               contact each row is read on the shape it models for DeepSeek-V3 FP8 on H100, TP 16 over 2 servers
               (the weights do not fit 8 GPUs), per node: decode at the most sequences that replica holds, prefill
               as one full chunk (SGLang's chunked_prefill_size) of 2,000-token prompts per step.
Only the runs below saturation are read for latency (the summary's request throughput, completed ÷ duration, keeps up
with the offered rate: 70B at 1, 2 and 4 requests/s, 405B at 1 and 2); beyond it the median TTFT is the time spent in
a queue that grows through the run, which depends on the run's length. Offline rows read the throughput.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Literal

from app.estimator.hardware import get_gpu
from app.estimator.params import count_params
from app.estimator.presets import get_preset
from app.estimator.serving import ServingConfig, estimate_serving, offline_run_output_tokens_per_s
from app.estimator.serving.engines import _batched_tokens
from app.estimator.serving.step import _new_hardware, _step_s
from app.estimator.specs import Cluster, GpuSpec, ModelSpec
from app.estimator.vocabulary import Engine
from tests.estimator.serving_cases import trtllm_finetune_setting
from tests.estimator.serving_first_contact_accelmark import ACCELMARK_ROWS
from tests.estimator.serving_first_contact_azure import azure_rows
from tests.estimator.serving_first_contact_dstack_r1 import DSTACK_R1_ROWS
from tests.estimator.serving_first_contact_iog import IOG_ROWS
from tests.estimator.serving_first_contact_mooncake import MOONCAKE_ROWS
from tests.estimator.serving_first_contact_qwen_speed import QWEN_SPEED_ROWS
from tests.estimator.serving_first_contact_row import Metric, ServingFirstContact
from tests.estimator.serving_first_contact_sgl_cookbook import SGL_COOKBOOK_ROWS
from tests.estimator.serving_first_contact_trtllm_static import TRTLLM_STATIC_ROWS
from tests.estimator.serving_first_contact_vllm_moe import VLLM_MOE_ROWS
from tests.estimator.serving_first_contact_vllm_rtn import VLLM_RTN_ROWS

__all__ = ["SERVING_FIRST_CONTACT", "Metric", "ServingFirstContact", "predict"]

DATACRUNCH = (
    "datacrunch-research/h200-benchmarks at c091ef530a525d2e788bc41c39a4450b09c9f2ad, sglang/outputs/"
    "llama_3_3_70b_online_output.jsonl, llama_405b_online_output.jsonl, llama_3_3_70b_offline_output.jsonl "
    "(sglang.bench_serving summaries; launch in sglang/experiments/*.sh)"
)
H200 = get_gpu("h200-141g-sxm")
LLAMA_70B = get_preset("llama-3.1-70b").model  # Llama 3.3 70B has the same architecture
LLAMA_405B = get_preset("llama-3.1-405b").model
TRTLLM_V05 = (
    "NVIDIA/TensorRT-LLM at 138f96d45f90b9667426f7c47297d8c06bafac73, docs/source/performance.md, "
    "Low Latency tables (TensorRT-LLM v0.5, batch size 1, 1st Token Latency (ms))"
)
H100 = get_gpu("h100-80g-sxm")
A100 = get_gpu("a100-80g-sxm")
L40S = get_gpu("l40s-48g")
LLAMA2_7B = get_preset("llama-2-7b").model
LLAMA2_70B = get_preset("llama-2-70b").model
NIM_PERF = (
    "NVIDIA NIM benchmarking guide, Performance (docs.nvidia.com/nim/benchmarking/llm/1.0.0/performance), "
    "Llama-3.3-70b-instruct, NIM 1.8.0, 2 x H100 80G, fp8 TP2, 5000 input / 500 output tokens (AIPerf, concurrency)"
)
NIM_PERF_ISL500 = (
    "NVIDIA NIM benchmarking guide, Performance (docs.nvidia.com/nim/benchmarking/llm/1.0.0/performance.md), "
    "Llama-3.3-70b-instruct, NIM 1.8.0, 2 x H100 80G, fp8 TP2, 500 input / 2000 output tokens (AIPerf, concurrency)"
)
GPUSTACK_QWEN3 = (
    "gpustack/gpustack at 1dbc3b8130da92d31539404545a1aff5c3992f8c, docs/performance-lab/qwen3-8b/h100-latency.md "
    "(Qwen3-8B on 1 x H100 SXM; vLLM v0.11.0, SGLang v0.5.3.post3, TensorRT-LLM v1.2.0rc1; vllm bench serve, "
    "ShareGPT, 100 prompts, --max-concurrency 1/2/4/8)"
)
QWEN3_8B = get_preset("qwen3-8b").model
LLMK8S = (
    "surajssd/llm-k8s at 58b61c59450e06073120a8ad166c1e9c333851a7, results_serving_meta-llama-Llama-3.3-70B-Instruct/"
    "01_tp8_pp1 (vLLM v0.8.3, Llama-3.3-70B-Instruct, TP 8 on Standard_ND96asr_v4 = 8 x A100 40GB SXM4; "
    "benchmark_serving.py, ShareGPT, 200 prompts, --request-rate 1 / 4)"
)
A100_40G = get_gpu("a100-40g-sxm")
# The four runs (1, 4, 16, inf requests/s, 14:15-14:17 on 2025-04-14 in benchmark-script-run.sh) went one after
# another to one server launched with `--enable-prefix-caching`, and sent the same 200 prompts (seed 0: the
# summaries' input_lens lists are identical). vLLM keeps a finished request's full 16-token blocks in its prefix
# cache and recomputes at least the last prompt token (v1/core/kv_cache_manager.py `get_computed_blocks`), and the
# first run's 85,381 tokens fit many times over in 8 x 40 GB beside the weights, so from the second run on every
# prompt found floor((len - 1) / 16) x 16 of its tokens cached: 96.05 % of the 42,659 (from input_lens). The runs'
# own per-request TTFTs show it: at 1 request/s the TTFT grows 0.115 ms per prompt token (least squares over the
# 200 requests: median 44.4 ms under 32 tokens, 109.3 ms at 400-1,000), at 4 requests/s by 0.003 ms (47.6 and
# 50.4 ms). Stated after first contact (the rows were recorded without it).
LLMK8S_CACHED = 0.9605
UNIFORM_1024_P95 = 973  # 95th percentile of a uniform draw in [1, 1024]
LAMBDA = (
    "LambdaLabsML/vllm-benchmark at 0e8fc5d0f9865a326666cb82aeb2d8dc74c82c5e, benchmark_v0.md, Tensor Parallel v.s. "
    "Data Parallel table (vLLM v0.5.4, 320 ShareGPT prompts at once, max_model_len 2000, output_throughput); lengths "
    "from results/prompt_320/*/<model>_tp<N>_len2000.json"
)
DSTACK = (
    "dstackai/benchmarks at 06c957ab51572ca18db9c1f4bb254a9eb86df4d7, comparison/h100sxm5_vs_mi300x/raw_data/"
    "8xH100SXM5-throughput/nvidia-throughput_test_ip<I>_op<O>_np<N>.json (vLLM 0.6.3.post2.dev308, "
    "meta-llama/Llama-3.1-405B-FP8, TP 8 on 8 x H100 80GB SXM5, benchmark_throughput.py --max-model-len 91680 "
    "--num-scheduler-step 1; output tokens/s = N x O / elapsed_time)"
)
MISTRAL_7B = get_preset("mistral-7b").model  # v0.3 has its layer shapes; vocabulary 32,768 (0.1 % more weights)
LLAMA_8B = get_preset("llama-3.1-8b").model
DLI_TRTLLM09 = (
    "NVIDIA DLI 'Sizing LLM Inference Systems' dataset/trt_llm_0_9_0_dli.csv in wbing520/ai-performance-engineering "
    "at 5a4d0c37a3231b2ff8a268df7f129be259c48a48, code/ch11_inference/inference_gpu_cluster_sizing/dataset/ "
    "(TensorRT-LLM 0.9.0, static batch, LLaMA v2 70B FP8, custom all-reduce on; 1st Token Latency (ms) and "
    "(Latency - 1st Token Latency) / (output - 1), the file's Token-to-token Latency (ms))"
)

TRTLLM_PERF_V017 = (
    "NVIDIA/TensorRT-LLM at 258c7540c03517def55d9a5aadfa9288af474e1b, docs/source/performance/perf-overview.md"
)


def _random(total_in: int, total_out: int, completed: int, isl: int, osl: int, rate: float | None) -> ServingConfig:
    """A `--dataset-name random` run at `rate` requests/s (None: offline) with range ratio 0: lengths uniform in
    [1, isl] and [1, osl], their means the run's totals ÷ completed requests."""
    return ServingConfig(
        input_tokens=round(total_in / completed), output_tokens=round(total_out / completed),
        input_tokens_p95=round(0.95 * isl), output_tokens_p95=round(0.95 * osl),
        requests_per_s=rate, peak_factor=1.0, engine="sglang", precision="bf16",
    )  # fmt: skip


def _row(
    label: str, model: ModelSpec, tp: int, cfg: ServingConfig, metric: Metric, value: float, requests: int | None = None
) -> ServingFirstContact:
    return ServingFirstContact(label, "datacrunch-h200", DATACRUNCH, model, H200, tp, cfg, metric, value, requests)


def _ftl(label: str, model: ModelSpec, gpu: GpuSpec, tp: int, isl: int, fp8: bool, ms: float) -> ServingFirstContact:
    """A TensorRT-LLM v0.5 first-token-latency row: one request of `isl` tokens, one output token, static batch."""
    precision = "fp8" if fp8 else "fp16"
    cfg = ServingConfig(
        input_tokens=isl, output_tokens=1, concurrency=1, batching="static", engine="trt-llm", precision=precision,
        weights=precision, kv_cache_precision=precision,
    )  # fmt: skip
    name = f"trtllm-v0.5 {label} {gpu.id.split('-')[0]} tp{tp} {precision} b1 {isl} ttft"
    return ServingFirstContact(name, "trtllm-v05-ftl", TRTLLM_V05, model, gpu, tp, cfg, "ttft_ms", ms)


def _nim(concurrency: int, metric: Metric, ms: float) -> ServingFirstContact:
    """A NIM 1.8.0 row: Llama 3.3 70B in FP8 on 2 x H100 (TP 2, TensorRT-LLM), `concurrency` requests of 5,000
    input and 500 output tokens kept in flight (closed loop); TTFT or ITL (= TPOT), the run's average."""
    cfg = ServingConfig(
        input_tokens=5000, output_tokens=500, concurrency=concurrency, engine="trt-llm", precision="fp8",
        weights="fp8", kv_cache_precision="fp8",
    )  # fmt: skip
    reading = "ttft" if metric == "ttft_ms" else "itl"
    label = f"nim-1.8.0 llama-3.3-70b h100 tp2 fp8 c{concurrency} 5000/500 {reading}"
    return ServingFirstContact(label, "nim-h100", NIM_PERF, LLAMA_70B, H100, 2, cfg, metric, ms)


def _nim500(concurrency: int, metric: Metric, ms: float) -> ServingFirstContact:
    """A NIM 1.8.0 row of the 500-input / 2,000-output workload (same deployment as `_nim`)."""
    cfg = ServingConfig(
        input_tokens=500, output_tokens=2000, concurrency=concurrency, engine="trt-llm", precision="fp8",
        weights="fp8", kv_cache_precision="fp8",
    )  # fmt: skip
    reading = "ttft" if metric == "ttft_ms" else "itl"
    label = f"nim-1.8.0 llama-3.3-70b h100 tp2 fp8 c{concurrency} 500/2000 {reading}"
    return ServingFirstContact(label, "nim-h100-isl500", NIM_PERF_ISL500, LLAMA_70B, H100, 2, cfg, metric, ms)


def _gpustack(engine: Engine, concurrency: int, metric: Metric, ms: float, fp8: bool = False) -> ServingFirstContact:
    """A gpustack performance-lab row: Qwen3-8B on one H100 SXM, ShareGPT prompts (means 233 in, 221 out) with
    `concurrency` requests kept in flight; the run's median TTFT or TPOT."""
    precision: Literal["bf16", "fp8"] = "fp8" if fp8 else "bf16"
    cfg = ServingConfig(
        input_tokens=233, output_tokens=221, concurrency=concurrency, engine=engine, precision=precision,
        weights=precision, kv_cache_precision="bf16",
        group_size=128 * 128 if fp8 else None,  # Qwen/Qwen3-8B-FP8: block FP8, weight_block_size [128, 128]
    )  # fmt: skip
    reading = "ttft" if metric == "ttft_ms" else "tpot"
    label = f"gpustack {engine} qwen3-8b h100 tp1 {precision} c{concurrency} sharegpt {reading}"
    return ServingFirstContact(label, "gpustack-h100", GPUSTACK_QWEN3, QWEN3_8B, H100, 1, cfg, metric, ms)


def _llmk8s(rate: float, total_out: int, metric: Metric, ms: float) -> ServingFirstContact:
    """An llm-k8s row: vLLM v0.8.3 serving Llama 3.3 70B at TP 8 on 8 x A100 40GB, the first 200 ShareGPT prompts
    (42,659 input tokens, 95th percentile 744; outputs' 95th percentile 611) at `rate` requests/s (Poisson); the
    run's median TTFT or TPOT. The runs after the first found their prompts in the prefix cache (LLMK8S_CACHED)."""
    cfg = ServingConfig(
        input_tokens=round(42659 / 200), output_tokens=round(total_out / 200), input_tokens_p95=744,
        output_tokens_p95=611, requests_per_s=rate, peak_factor=1.0, engine="vllm", precision="bf16",
        prefix_cache_hit_rate=LLMK8S_CACHED if rate > 1.0 else 0.0,
        release="vllm-0.8",  # the V1 engine's server before 0.10 (ENGINE_RELEASES), stated after first contact
    )  # fmt: skip
    reading = "ttft" if metric == "ttft_ms" else "tpot"
    label = f"llm-k8s vllm-0.8.3 llama-3.3-70b a100-40g tp8 sharegpt {rate:g} rps {reading}"
    return ServingFirstContact(label, "llmk8s-a100", LLMK8S, LLAMA_70B, A100_40G, 8, cfg, metric, ms)


def _lambda(
    label: str, model: ModelSpec, gpu: GpuSpec, tp: int, lengths: tuple[int, int, int, int], fp8: bool, tok_s: float
) -> ServingFirstContact:
    """A LambdaLabsML/vllm-benchmark row: vLLM v0.5.4 at TP `tp`, 320 ShareGPT prompts queued at once (a finite
    offline run), max_model_len 2000, gpu_memory_utilization 0.95, max_num_seqs 1024; `lengths` = total input and
    output tokens over the 320 and their 95th percentiles; the run's output tokens/s."""
    total_in, total_out, in_p95, out_p95 = lengths
    precision: Literal["bf16", "fp8"] = "fp8" if fp8 else "bf16"
    cfg = ServingConfig(
        input_tokens=round(total_in / 320), output_tokens=round(total_out / 320), input_tokens_p95=in_p95,
        output_tokens_p95=out_p95, engine="vllm", precision=precision, weights=precision,
        kv_cache_precision="bf16", gpu_memory_utilization=0.95, max_model_len=2000, max_num_seqs=1024,
    )  # fmt: skip
    name = f"lambda vllm-0.5.4 {label} {gpu.id.split('-')[0]} tp{tp} {precision} sharegpt 320 at once output"
    return ServingFirstContact(name, "lambda-vllm054", LAMBDA, model, gpu, tp, cfg, "output_tokens_per_s", tok_s, 320)


def _dstack(isl: int, osl: int, prompts: int, elapsed_s: float) -> ServingFirstContact:
    """A dstackai/benchmarks row: vLLM 0.6.3 benchmark_throughput on Llama 3.1 405B FP8 at TP 8 on 8 x H100 SXM5,
    `prompts` requests of exactly `isl` input and `osl` output tokens queued at once (a finite offline run),
    max_model_len 91680, engine defaults otherwise; the published elapsed_time, read as output tokens/s."""
    cfg = ServingConfig(
        input_tokens=isl, output_tokens=osl, engine="vllm", precision="fp8", weights="fp8", kv_cache_precision="bf16",
        max_model_len=91680,
    )  # fmt: skip
    label = f"dstack vllm-0.6.3 llama-3.1-405b h100 tp8 fp8 {isl}/{osl} {prompts} at once output"
    tok_s = prompts * osl / elapsed_s
    return ServingFirstContact(label, "dstack-h100-405b", DSTACK, LLAMA_405B, H100, 8, cfg, "output_tokens_per_s",
                               tok_s, prompts)  # fmt: skip


def _dli(
    gpu: GpuSpec, isl: int, osl: int, batch: int, tp: int, ftl_ms: float, latency_ms: float
) -> list[ServingFirstContact]:
    """A TensorRT-LLM 0.9.0 line of the DLI dataset: Llama 2 70B in FP8 (weights, math, KV cache) at TP `tp`, a
    static batch of `batch` prompts of `isl` tokens each generating `osl`; two rows: the 1st Token Latency (the
    batch's TTFT) and the token-to-token latency (Latency - 1st Token Latency) / (osl - 1) (its TPOT)."""
    cfg = ServingConfig(
        input_tokens=isl, output_tokens=osl, concurrency=batch, batching="static", engine="trt-llm", precision="fp8",
        weights="fp8", kv_cache_precision="fp8",
    )  # fmt: skip
    name = f"dli trtllm-0.9.0 llama-2-70b {gpu.id.split('-')[0]} tp{tp} fp8 b{batch} {isl}/{osl}"
    tpot_ms = (latency_ms - ftl_ms) / (osl - 1)
    return [
        ServingFirstContact(f"{name} ttft", "dli-trtllm09", DLI_TRTLLM09, LLAMA2_70B, gpu, tp, cfg, "ttft_ms", ftl_ms),
        ServingFirstContact(f"{name} tpot", "dli-trtllm09", DLI_TRTLLM09, LLAMA2_70B, gpu, tp, cfg, "tpot_ms", tpot_ms),
    ]


# (GPU, input, output, batch, TP, "1st Token Latency (ms)", "Latency (ms)"), transcribed from the file's lines
DLI_LINES: tuple[tuple[GpuSpec, int, int, int, int, float, float], ...] = (
    (H100, 128, 128, 1, 1, 36.19, 3470.27),
    (H100, 128, 128, 1, 2, 25.67, 2219.25),
    (H100, 128, 128, 1, 4, 19.64, 1547.67),
    (H100, 128, 128, 2, 1, 47.37, 3494.11),
    (H100, 128, 128, 2, 2, 32.24, 2244.69),
    (H100, 128, 128, 2, 4, 25.61, 1565.76),
    (H100, 128, 128, 4, 1, 68.49, 3534.95),
    (H100, 128, 128, 4, 2, 46.23, 2279.37),
    (H100, 128, 128, 8, 1, 125.34, 3668.01),
    (H100, 128, 128, 8, 2, 80.12, 2338.04),
    (H100, 128, 128, 8, 4, 59.73, 1641.01),
    (H100, 128, 2048, 1, 1, 36.17, 56303.7),
    (H100, 128, 2048, 1, 2, 26.63, 36602.05),
    (H100, 128, 2048, 2, 1, 48.17, 56477.2),
    (H100, 128, 2048, 2, 2, 32.18, 36896.56),
    (H100, 128, 2048, 2, 4, 25.59, 25896.12),
    (H100, 128, 2048, 4, 1, 66.47, 58522.08),
    (H100, 128, 2048, 4, 2, 46.25, 37114.55),
    (H100, 128, 2048, 4, 4, 36.48, 26144.11),
    (H100, 128, 2048, 8, 1, 125.26, 59742.08),
    (H100, 128, 2048, 8, 2, 79.84, 38968.73),
    (H100, 128, 2048, 8, 4, 59.79, 26451.68),
    (H100, 128, 4096, 1, 1, 37.79, 115015.53),
    (H100, 128, 4096, 1, 2, 26.64, 75427.37),
    (H100, 128, 4096, 2, 1, 47.26, 115104.23),
    (H100, 128, 4096, 2, 2, 32.76, 75829.48),
    (H100, 128, 4096, 4, 1, 68.64, 121233.65),
    (H100, 128, 4096, 4, 2, 46.37, 76111.42),
    (H100, 128, 4096, 8, 1, 124.97, 124013.04),
    (H100, 128, 4096, 8, 2, 79.73, 82968.51),
    (H100, 128, 4096, 8, 4, 59.78, 54897.48),
    (H100, 2048, 128, 1, 1, 247.73, 3793.98),
    (H100, 2048, 128, 1, 2, 156.81, 2502.95),
    (H100, 2048, 128, 1, 4, 107.59, 1762.27),
    (H100, 2048, 128, 1, 8, 85.12, 1393.18),
    (H100, 2048, 128, 2, 1, 483.23, 4051.33),
    (H100, 2048, 128, 2, 2, 300.78, 2653.98),
    (H100, 2048, 128, 2, 4, 201.22, 1873.09),
    (H100, 2048, 128, 2, 8, 149.81, 1474.93),
    (H100, 2048, 128, 4, 1, 950.75, 4697.35),
    (H100, 2048, 128, 4, 2, 585.61, 2938.34),
    (H100, 2048, 128, 4, 4, 382.01, 2067.62),
    (H100, 2048, 128, 8, 1, 1883.36, 5726.9),
    (H100, 2048, 128, 8, 2, 1156.71, 3719.63),
    (H100, 2048, 128, 8, 4, 744.79, 2449.49),
    (H100, 2048, 128, 8, 8, 527.95, 1906.42),
    (H100, 2048, 2048, 1, 1, 247.13, 58544.11),
    (H100, 2048, 2048, 1, 2, 156.81, 38906.93),
    (H100, 2048, 2048, 2, 1, 484.21, 59171.75),
    (H100, 2048, 2048, 2, 4, 201.65, 28076.35),
    (H100, 2048, 2048, 4, 1, 956.29, 63743.69),
    (H100, 2048, 2048, 4, 2, 585.92, 39717.05),
    (H100, 2048, 2048, 4, 4, 383.15, 28498.12),
    (H100, 2048, 2048, 8, 1, 1902.03, 66186.62),
    (H100, 2048, 2048, 8, 2, 1153.33, 44573.68),
    (H100, 2048, 2048, 8, 4, 743.86, 29050.28),
    (H200, 128, 128, 1, 1, 32.26, 2698.32),
    (H200, 128, 128, 1, 2, 23.21, 1860.9),
    (H200, 128, 128, 1, 4, 17.83, 1361.11),
    (H200, 128, 128, 2, 1, 43.48, 2736.28),
    (H200, 128, 128, 2, 2, 29.57, 1856.51),
    (H200, 128, 128, 2, 4, 23.46, 1369.39),
    (H200, 128, 128, 4, 1, 67.91, 2800.68),
    (H200, 128, 128, 4, 2, 43.32, 1900.09),
    (H200, 128, 128, 8, 1, 122.57, 2915.72),
    (H200, 128, 128, 8, 2, 79.14, 1950.51),
    (H200, 128, 128, 8, 4, 57.16, 1433.27),
    (H200, 128, 2048, 1, 1, 32.34, 44092.45),
    (H200, 128, 2048, 1, 2, 23.22, 30612.75),
    (H200, 128, 2048, 2, 1, 43.33, 44570.82),
    (H200, 128, 2048, 2, 2, 29.36, 30793.82),
    (H200, 128, 2048, 8, 1, 123.43, 47482.18),
    (H200, 128, 2048, 8, 2, 79.1, 32626.94),
    (H200, 128, 2048, 8, 4, 57.07, 23293.96),
    (H200, 128, 4096, 1, 1, 32.08, 90806.16),
    (H200, 128, 4096, 1, 2, 23.15, 63388.82),
    (H200, 128, 4096, 4, 1, 66.92, 98065.31),
    (H200, 128, 4096, 4, 2, 43.25, 63951.09),
    (H200, 128, 4096, 4, 4, 34.72, 48363.06),
    (H200, 128, 4096, 8, 1, 122.45, 100121.95),
    (H200, 128, 4096, 8, 2, 79.4, 70061.37),
    (H200, 128, 4096, 8, 4, 57.03, 48741.12),
    (H200, 2048, 128, 1, 1, 243.55, 3045.77),
    (H200, 2048, 128, 1, 2, 155.66, 2118.78),
    (H200, 2048, 128, 1, 4, 103.06, 1575.96),
    (H200, 2048, 128, 2, 1, 495.54, 3312.83),
    (H200, 2048, 128, 2, 2, 301.73, 2282.83),
    (H200, 2048, 128, 2, 4, 195.52, 1671.83),
    (H200, 2048, 128, 4, 1, 949.95, 3995.36),
    (H200, 2048, 128, 4, 2, 579.05, 2557.63),
    (H200, 2048, 128, 4, 4, 371.76, 1858.61),
    (H200, 2048, 128, 8, 1, 1898.44, 4984.78),
    (H200, 2048, 128, 8, 2, 1144.74, 3319.66),
    (H200, 2048, 128, 8, 4, 728.98, 2248.29),
    (H200, 2048, 2048, 1, 1, 243.83, 46592.31),
    (H200, 2048, 2048, 1, 2, 154.3, 32556.85),
    (H200, 2048, 2048, 1, 4, 103.1, 24898.7),
    (H200, 2048, 2048, 2, 1, 482.56, 46942.19),
    (H200, 2048, 2048, 2, 2, 298.16, 32882.66),
    (H200, 2048, 2048, 4, 1, 953.79, 52230.06),
    (H200, 2048, 2048, 4, 2, 582.05, 33463.25),
    (H200, 2048, 2048, 4, 4, 371.72, 25584.47),
    (H200, 2048, 2048, 4, 8, 258.22, 21264.35),
    (H200, 2048, 2048, 8, 1, 1909.28, 54060.77),
    (H200, 2048, 2048, 8, 2, 1157.0, 38359.92),
    (H200, 2048, 2048, 8, 4, 728.29, 26156.09),
    (H200, 2048, 2048, 8, 8, 494.93, 22051.61),
)  # fmt: skip


def _triton(
    gpu: GpuSpec, model: ModelSpec, tp: int, lengths: tuple[int, int], line: tuple[int, float, float]
) -> list[ServingFirstContact]:
    """A TensorRT-LLM v0.14 online row (Triton backend, BF16): requests of `lengths` offered at `line`'s rate, read as
    (rate, mean TTFT ms, mean ITL ms); two rows, TTFT and TPOT."""
    isl, osl = lengths
    rate, ttft, itl = line
    cfg = ServingConfig(
        input_tokens=isl, output_tokens=osl, requests_per_s=rate, peak_factor=1.0, engine="trt-llm", precision="bf16",
        release="trt-llm-0.14",  # the C++ executor's loop (ENGINE_RELEASES), stated after first contact
    )  # fmt: skip
    name = f"trtllm-0.14 triton {model.name} {gpu.id.split('-')[0]} tp{tp} bf16 {isl}/{osl} {rate:g} rps"
    cite = f"{TRTLLM_PERF_V017}, Online Serving Measurements (v0.14.0, Triton, BF16, 500 requests)"
    source = "trtllm-v014-triton"
    return [
        ServingFirstContact(f"{name} ttft", source, cite, model, gpu, tp, cfg, "ttft_ms", ttft, statistic="mean"),
        ServingFirstContact(f"{name} tpot", source, cite, model, gpu, tp, cfg, "tpot_ms", itl, statistic="mean"),
    ]


# (GPU, model, TP, (input, output), ((requests/s, Mean TTFT ms, Mean ITL ms), ...)): the rates read (above)
TRITON_V014 = (
    (H100, LLAMA_70B, 4, (467, 256), ((2, 62, 21), (4, 68, 24), (8, 92, 32), (16, 175, 66))),
    (H100, LLAMA_70B, 4, (467, 16), ((2, 53, 18), (4, 58, 20), (8, 71, 24), (16, 109, 38))),
    (H100, LLAMA_70B, 4, (202, 214), ((2, 48, 20), (4, 51, 22), (8, 57, 25), (16, 74, 32))),
    (H100, LLAMA_8B, 1, (467, 256), ((2, 23, 8), (4, 24, 9), (8, 26, 9), (16, 30, 11), (32, 50, 19))),
    (H100, LLAMA_8B, 1, (467, 16), ((2, 19, 7), (4, 20, 7), (8, 22, 7), (16, 24, 8), (32, 29, 10))),
    (H100, LLAMA_8B, 1, (202, 214), ((2, 19, 7), (4, 20, 8), (8, 21, 9), (16, 23, 10), (32, 27, 11))),
    (H200, LLAMA_70B, 4, (467, 256), ((2, 58, 18), (4, 63, 20), (8, 84, 27), (16, 165, 60))),
    (H200, LLAMA_70B, 4, (467, 16), ((2, 50, 15), (4, 55, 16), (8, 67, 20), (16, 103, 33))),
    (H200, LLAMA_70B, 4, (202, 214), ((2, 43, 17), (4, 46, 18), (8, 51, 21), (16, 67, 28))),
    (H200, LLAMA_8B, 1, (467, 256), ((2, 21, 6), (4, 23, 7), (8, 24, 7), (16, 27, 9), (32, 44, 16))),
    (H200, LLAMA_8B, 1, (467, 16), ((2, 18, 5), (4, 19, 6), (8, 20, 6), (16, 22, 7), (32, 27, 9))),
    (H200, LLAMA_8B, 1, (202, 214), ((2, 17, 6), (4, 18, 6), (8, 19, 7), (16, 20, 8), (32, 24, 9))),
)  # fmt: skip

# trtllm-bench's $num_requests by (input, output), the file's table
V017_REQUESTS = {
    (128, 128): 30000, (128, 2048): 3000, (128, 4096): 1500, (500, 2000): 3000, (1000, 1000): 3000,
    (2048, 128): 3000, (2048, 2048): 1500, (5000, 500): 1500, (20000, 2000): 1000,
}  # fmt: skip
V017_LENGTHS = tuple(V017_REQUESTS)


# The KV share `trtllm-bench build --dataset` sizes its engine with: tensorrt_llm/bench/build/build.py @258c7540 calls
# `calc_engine_setting` without a fraction, so its default applies (tuning.py of that line: kv_cache_gpu_mem_fraction
# 0.95). Stated after first contact (the rows were recorded with the engine's defaults: 2,048 sequences, 8,192 tokens).
V017_BUILD_KV_FRACTION = 0.95


def v017_build_settings(model: ModelSpec, gpu: GpuSpec, tp: int, isl: int, osl: int, fp8: bool) -> tuple[int, int]:
    """(max_batch_size, max_num_tokens) `trtllm-bench build --dataset` built the v0.17 engines with (build.py @258c7540
    `get_benchmark_engine_settings` for FP8 and unquantised builds, then `calc_engine_setting` of that line): the
    dataset's average ISL and OSL; the weights at one byte a parameter for FP8, two otherwise, counted in 10^9 bytes
    (`param_count / 1000**3 * byte_per_elem`) against the GPUs' memory in GiB; the KV cache at one or two bytes a value,
    at least one KV head a GPU, in 0.95 of what is left; then trtllm-bench's `finetune_setting`. Chunked context is on
    (the runs prefill 20,000-token prompts with a 2,048-token step), so the step's tokens are not raised to a whole
    prompt as the PyTorch backend's are (serving_cases.trtllm_bench_settings)."""
    per = 1.0 if fp8 else 2.0
    kv_gib_per_token = 2 * model.layers * max(tp, model.kv_heads) * model.d_head * per / 1024**3
    free_gib = gpu.memory_gib * tp - count_params(model).total / 1000**3 * per
    return trtllm_finetune_setting(free_gib * V017_BUILD_KV_FRACTION / (kv_gib_per_token * (isl + osl)), isl, osl)


def _v017(gpu: GpuSpec, model: ModelSpec, tp: int, tok_s: tuple[float | None, ...]) -> list[ServingFirstContact]:
    """TensorRT-LLM v0.17 trtllm-bench offline rows of one (GPU, model, TP) column, `tok_s` in the file's length
    order (128/128, 128/2048, 128/4096, 500/2000, 1000/1000, 2048/128, 2048/2048, 5000/500, 20000/2000; None: no
    cell). A100 in FP16, L40S in FP8 (weights, math and KV cache); the batch and step-token limits the engine was built
    with (`v017_build_settings`)."""
    precision: Literal["fp16", "fp8"] = "fp16" if gpu is A100 else "fp8"
    rows = []
    for (isl, osl), value in zip(V017_LENGTHS, tok_s, strict=True):
        if value is None:
            continue
        batch, tokens = v017_build_settings(model, gpu, tp, isl, osl, precision == "fp8")
        cfg = ServingConfig(
            input_tokens=isl, output_tokens=osl, engine="trt-llm", precision=precision, weights=precision,
            kv_cache_precision=precision, max_num_seqs=batch, max_num_batched_tokens=tokens,
        )  # fmt: skip
        label = f"trtllm-0.17 {model.name} {gpu.id.split('-')[0]} tp{tp} {precision} {isl}/{osl} offline output"
        cite = f"{TRTLLM_PERF_V017}, Throughput Measurements (v0.17, trtllm-bench throughput)"
        rows.append(ServingFirstContact(label, "trtllm-v017-throughput", cite, model, gpu, tp, cfg,
                                        "output_tokens_per_s", value, V017_REQUESTS[(isl, osl)]))  # fmt: skip
    return rows


V017_COLUMNS = (
    (A100, LLAMA_8B, 1, (6627.27, 5255.99, 3453.79, 4276.58, 3786.83, 799.61, 2424.16, 825.13, 330.04)),
    (L40S, LLAMA_8B, 1, (9104.61, 5365.81, 3025.92, 4273.75, 4054.71, 1066.52, 2225.27, 981.2, 327.97)),
    (A100, LLAMA_70B, 2, (1313.96, 531.26, None, 439.41, 472.94, 148.96, 261.1, 121.47, None)),
    (A100, LLAMA_70B, 4, (2733.48, 2811.27, 1976.49, 2275.79, 1921.77, 325.15, 1393.64, 392.62, 212.08)),
    (A100, LLAMA_70B, 8, (4717.62, 5241.5, 3724.67, 4445.37, 3320.41, 542.38, 2553.71, 696.34, 413.38)),
    (L40S, LLAMA_70B, 4, (1523.52, 1942.66, 1440.23, 1634.72, 1209.25, 177.72, 969.68, 249.52, 162.25)),
    (L40S, LLAMA_70B, 8, (1464.03, 2303.31, 2018.22, 1971.96, 1333.62, 176.16, 1200.16, 259.71, 209.87)),
)  # fmt: skip


_MISTRAL_LENS = (73671, 71810, 831, 651)
_LLAMA_8B_LENS = (65578, 42874, 692, 492)
_LLAMA_70B_LENS = (65578, 63343, 692, 574)
_LLAMA_405B_LENS = (65578, 68221, 692, 587)


_70B_R1 = _random(152612, 160347, 300, 1024, 1024, 1.0)
_70B_R2 = _random(308748, 308712, 600, 1024, 1024, 2.0)
_70B_R4 = _random(615860, 607936, 1200, 1024, 1024, 4.0)
_405B_R1 = _random(152612, 160347, 300, 1024, 1024, 1.0)
_405B_R2 = _random(308748, 308712, 600, 1024, 1024, 2.0)

LMSYS_LARGE_EP = (
    "LMSYS Org blog 2025-05-05 'Deploying DeepSeek with PD Disaggregation and Large-scale Expert Parallelism on 96 "
    "H100 GPUs' (lmsys.org/blog/2025-05-05-large-scale-ep): SGLang, DeepSeek-V3 FP8, prefill DP attention 32 / EP 32 "
    "on 4 x 8 H100, decode DP attention 72 / EP 72 on 9 x 8 H100 (256 sequences a GPU), 2,000-token prompts; launch "
    "commands in sgl-project/sglang#6017"
)
DEEPSEEK_V3 = get_preset("deepseek-v3").model
NDR_NODE_GBPS = 3200.0  # 8 x 400 Gb/s InfiniBand NDR per Atlas Cloud H100 node (one HCA per GPU)


def _large_ep(label: str, output_tokens: int, metric: Metric, per_node: float, dp: int) -> ServingFirstContact:
    cfg = ServingConfig(
        input_tokens=2000, output_tokens=output_tokens, engine="sglang", precision="fp8", weights="fp8",
        mla_cache_values=512 + 64,  # config.json: kv_lora_rank 512, qk_rope_head_dim 64
        group_size=128 * 128,  # block FP8: weight_block_size [128, 128]
    )  # fmt: skip
    return ServingFirstContact(label, "lmsys-large-ep", LMSYS_LARGE_EP, DEEPSEEK_V3, H100, 16, cfg, metric, per_node,
                               nodes=2, dp_attention=dp)  # fmt: skip


LARGE_EP_ROWS = (
    _large_ep("lmsys large-ep deepseek-v3 h100 decode 2000 in, output tokens/s per node", 100,
              "output_tokens_per_s", 22300.0, 72),
    _large_ep("lmsys large-ep deepseek-v3 h100 prefill 2000 in, input tokens/s per node", 1,
              "input_tokens_per_s", 52300.0, 32),
)  # fmt: skip


SERVING_FIRST_CONTACT: tuple[ServingFirstContact, ...] = (
    _row("datacrunch llama-3.3-70b h200 tp4 random 1 rps ttft", LLAMA_70B, 4, _70B_R1, "ttft_ms", 85.745),
    _row("datacrunch llama-3.3-70b h200 tp4 random 1 rps tpot", LLAMA_70B, 4, _70B_R1, "tpot_ms", 13.639),
    _row("datacrunch llama-3.3-70b h200 tp4 random 2 rps ttft", LLAMA_70B, 4, _70B_R2, "ttft_ms", 87.556),
    _row("datacrunch llama-3.3-70b h200 tp4 random 2 rps tpot", LLAMA_70B, 4, _70B_R2, "tpot_ms", 14.830),
    _row("datacrunch llama-3.3-70b h200 tp4 random 4 rps ttft", LLAMA_70B, 4, _70B_R4, "ttft_ms", 106.063),
    _row("datacrunch llama-3.3-70b h200 tp4 random 4 rps tpot", LLAMA_70B, 4, _70B_R4, "tpot_ms", 19.420),
    _row("datacrunch llama-3.1-405b h200 tp8 random 1 rps ttft", LLAMA_405B, 8, _405B_R1, "ttft_ms", 218.808),
    _row("datacrunch llama-3.1-405b h200 tp8 random 1 rps tpot", LLAMA_405B, 8, _405B_R1, "tpot_ms", 38.782),
    _row("datacrunch llama-3.1-405b h200 tp8 random 2 rps ttft", LLAMA_405B, 8, _405B_R2, "ttft_ms", 244.264),
    _row("datacrunch llama-3.1-405b h200 tp8 random 2 rps tpot", LLAMA_405B, 8, _405B_R2, "tpot_ms", 43.301),
    _row("datacrunch llama-3.3-70b h200 tp4 offline 1024/1024", LLAMA_70B, 4,
         _random(1525074, 1544818, 3000, 1024, 1024, None), "output_tokens_per_s", 4520.699, 3000),
    _row("datacrunch llama-3.3-70b h200 tp4 offline 1024/512", LLAMA_70B, 4,
         _random(2034177, 1029594, 4000, 1024, 512, None), "output_tokens_per_s", 3492.294, 4000),
    _row("datacrunch llama-3.3-70b h200 tp4 offline 4096/2048", LLAMA_70B, 4,
         _random(1637669, 818620, 800, 4096, 2048, None), "output_tokens_per_s", 2051.287, 800),
    _row("datacrunch llama-3.3-70b h200 tp4 offline 4096/1024", LLAMA_70B, 4,
         _random(3097487, 760205, 1500, 4096, 1024, None), "output_tokens_per_s", 1654.994, 1500),
    _row("datacrunch llama-3.3-70b h200 tp4 offline 256/512", LLAMA_70B, 4,
         _random(777987, 1529561, 6000, 256, 512, None), "output_tokens_per_s", 6648.439, 6000),
    _ftl("llama-2-7b", LLAMA2_7B, H100, 1, 128, True, 7.0),
    _ftl("llama-2-7b", LLAMA2_7B, H100, 1, 2048, True, 36.0),
    _ftl("llama-2-70b", LLAMA2_70B, H100, 4, 128, True, 26.0),
    _ftl("llama-2-70b", LLAMA2_70B, H100, 4, 2048, True, 109.0),
    _ftl("llama-2-7b", LLAMA2_7B, L40S, 1, 128, True, 14.0),
    _ftl("llama-2-7b", LLAMA2_7B, L40S, 1, 2048, True, 73.0),
    _ftl("llama-2-7b", LLAMA2_7B, A100, 1, 128, False, 16.0),
    _ftl("llama-2-7b", LLAMA2_7B, A100, 1, 2048, False, 133.0),
    _ftl("llama-2-70b", LLAMA2_70B, A100, 4, 128, False, 47.0),
    _ftl("llama-2-70b", LLAMA2_70B, A100, 4, 2048, False, 377.0),
    _nim(1, "ttft_ms", 406.77),
    _nim(1, "tpot_ms", 18.58),
    _nim(5, "ttft_ms", 546.70),
    _nim(5, "tpot_ms", 21.83),
    _nim(25, "ttft_ms", 688.69),
    _nim(25, "tpot_ms", 38.75),
    _nim(50, "ttft_ms", 834.51),
    _nim(50, "tpot_ms", 59.73),
    _nim500(1, "ttft_ms", 47.77),
    _nim500(1, "tpot_ms", 18.91),
    _nim500(5, "ttft_ms", 126.53),
    _gpustack("vllm", 1, "ttft_ms", 60.38),
    _gpustack("vllm", 1, "tpot_ms", 7.22),
    _gpustack("vllm", 2, "ttft_ms", 64.78),
    _gpustack("vllm", 2, "tpot_ms", 7.30),
    _gpustack("vllm", 4, "ttft_ms", 60.26),
    _gpustack("vllm", 4, "tpot_ms", 7.40),
    _gpustack("vllm", 8, "ttft_ms", 60.77),
    _gpustack("vllm", 8, "tpot_ms", 7.67),
    _gpustack("sglang", 4, "ttft_ms", 27.25),
    _gpustack("sglang", 4, "tpot_ms", 7.14),
    _gpustack("trt-llm", 4, "ttft_ms", 45.46),
    _gpustack("trt-llm", 4, "tpot_ms", 7.58),
    _gpustack("sglang", 4, "ttft_ms", 33.38, fp8=True),
    _gpustack("sglang", 4, "tpot_ms", 5.58, fp8=True),
    _llmk8s(1.0, 42722, "ttft_ms", 56.372),
    _llmk8s(1.0, 42722, "tpot_ms", 24.541),
    _llmk8s(4.0, 42449, "ttft_ms", 49.500),
    _llmk8s(4.0, 42449, "tpot_ms", 27.348),
    _lambda("mistral-7b", MISTRAL_7B, A100, 1, _MISTRAL_LENS, False, 1591.4),
    _lambda("mistral-7b", MISTRAL_7B, A100, 2, _MISTRAL_LENS, False, 1861.61),
    _lambda("mistral-7b", MISTRAL_7B, A100, 4, _MISTRAL_LENS, False, 2228.35),
    _lambda("mistral-7b", MISTRAL_7B, A100, 8, _MISTRAL_LENS, False, 2381.43),
    _lambda("mistral-7b", MISTRAL_7B, H100, 1, _MISTRAL_LENS, False, 3281.19),
    _lambda("mistral-7b", MISTRAL_7B, H100, 2, _MISTRAL_LENS, False, 3758.54),
    _lambda("mistral-7b", MISTRAL_7B, H100, 4, _MISTRAL_LENS, False, 4133.32),
    _lambda("mistral-7b", MISTRAL_7B, H100, 8, _MISTRAL_LENS, False, 4397.11),
    _lambda("llama-3.1-8b", LLAMA_8B, H100, 1, _LLAMA_8B_LENS, True, 3400.4),
    _lambda("llama-3.1-8b", LLAMA_8B, H100, 2, _LLAMA_8B_LENS, True, 3688.64),
    _lambda("llama-3.1-8b", LLAMA_8B, H100, 4, _LLAMA_8B_LENS, True, 3475.27),
    _lambda("llama-3.1-8b", LLAMA_8B, H100, 8, _LLAMA_8B_LENS, True, 3931.83),
    _lambda("llama-3.1-70b", LLAMA_70B, H100, 1, _LLAMA_70B_LENS, True, 418.92),
    _lambda("llama-3.1-70b", LLAMA_70B, H100, 2, _LLAMA_70B_LENS, True, 1727.69),
    _lambda("llama-3.1-70b", LLAMA_70B, H100, 4, _LLAMA_70B_LENS, True, 2242.99),
    _lambda("llama-3.1-70b", LLAMA_70B, H100, 8, _LLAMA_70B_LENS, True, 2572.8),
    _lambda("hermes-3-llama-3.1-405b", LLAMA_405B, H100, 8, _LLAMA_405B_LENS, True, 1230.74),
    _dstack(128, 2048, 4, 71.27394035900033),
    _dstack(128, 2048, 8, 75.0559648920007),
    _dstack(128, 2048, 16, 75.824556347),
    _dstack(128, 2048, 32, 78.370050558),
    _dstack(128, 2048, 64, 123.15096820999952),
    _dstack(128, 2048, 128, 214.67450040199947),
    _dstack(128, 2048, 256, 399.64831944399975),
    _dstack(2048, 2048, 4, 73.01276787299958),
    _dstack(2048, 2048, 8, 78.75401423200037),
    _dstack(2048, 2048, 16, 83.85836115699931),
    _dstack(2048, 2048, 32, 143.85659589400075),
    _dstack(2048, 2048, 64, 262.4642917030005),
    _dstack(2048, 2048, 128, 474.25974242899974),
    _dstack(2048, 2048, 256, 876.4826333029996),
    _dstack(32784, 2048, 4, 236.12373048600057),
    _dstack(32784, 2048, 8, 457.69658227500076),
    _dstack(32784, 2048, 16, 866.9613514360008),
    *(row for line in DLI_LINES for row in _dli(*line)),
    *(row for gpu, model, tp, lengths, lines in TRITON_V014 for line in lines
      for row in _triton(gpu, model, tp, lengths, line)),
    *(row for column in V017_COLUMNS for row in _v017(*column)),
    *ACCELMARK_ROWS,
    *LARGE_EP_ROWS,
    *TRTLLM_STATIC_ROWS,
    *MOONCAKE_ROWS,
    *IOG_ROWS,
    *DSTACK_R1_ROWS,
    *QWEN_SPEED_ROWS,
    *VLLM_RTN_ROWS,
    *VLLM_MOE_ROWS,
    *azure_rows(v017_build_settings),
    *SGL_COOKBOOK_ROWS,
)  # fmt: skip


def predict(case: ServingFirstContact) -> float:
    """The estimator's figure for the row: the simulated median at the offered rate (online rows) or the replica's
    output throughput at its capacity (offline rows), or the estimate at a fixed batch (concurrency rows)."""
    if case.nodes > 1:
        return _per_node(case)
    cluster = Cluster(gpu=case.gpu, gpus_per_node=8)
    if case.cfg.concurrency is not None:  # a fixed batch: the estimate at that batch
        return float(getattr(estimate_serving(case.model, case.cfg, cluster, tp=case.tp), case.metric))
    if case.requests is not None:  # a finite offline run, as the benchmark counts it (ramp and drain included)
        return offline_run_output_tokens_per_s(case.model, case.cfg, cluster, case.tp, case.requests)
    if case.cfg.requests_per_s is None:
        return float(estimate_serving(case.model, case.cfg, cluster, tp=case.tp).output_tokens_per_s)
    result = estimate_serving(case.model, case.cfg, cluster, tp=case.tp, replicas_needed=0)
    assert result.latency is not None
    average = result.latency["average"]
    if case.statistic == "mean":
        return (average.ttft_mean if case.metric == "ttft_ms" else average.tpot_mean) * 1e3
    return (average.ttft.p50 if case.metric == "ttft_ms" else average.tpot.p50) * 1e3


def _per_node(case: ServingFirstContact) -> float:
    """A row of a replica over `nodes` servers, per server: decode at the most sequences the replica holds (output
    tokens/s), or prefill as one full chunk of prompts a step (input tokens/s). With `dp_attention` (read since the
    estimator models it) the published shape: DP attention and EP over that many GPUs; decode as the disaggregated
    decode pool it was (every prompt arrives computed), 256 sequences a GPU, `--mem-fraction-static 0.846`; prefill
    one chunk on every rank."""
    tp, nodes, cfg = case.tp, case.nodes, case.cfg
    if case.dp_attention:
        tp, nodes = case.dp_attention, case.dp_attention // 8
        cfg = replace(cfg, dp_attention=True, gpu_memory_utilization=0.846)
        if case.metric == "output_tokens_per_s":
            cfg = replace(cfg, prefix_cache_hit_rate=1.0, max_num_seqs=256, concurrency=256 * tp, decode_pool=True)
    cluster = Cluster(case.gpu, 8, nodes, inter_node_gbps=NDR_NODE_GBPS, inter_node_fabric="ib-ndr-400")
    if case.metric == "input_tokens_per_s":
        hw = _new_hardware(case.model, cfg, cluster, tp, 1)
        chunk = _batched_tokens(cfg, case.gpu) * hw.ranks
        seconds, _ = _step_s(hw, 0, 0.0, chunk, cfg.input_tokens)
        return chunk / seconds / nodes
    return estimate_serving(case.model, cfg, cluster, tp=tp).output_tokens_per_s / nodes
