"""First-contact rows of one request at a time on vLLM 0.6.3: the Qwen team's Qwen2.5 speed benchmark on A100 80GB
(source `qwen25-speed-a100` in tests/estimator/data/serving_first_contact.json; tests/estimator/serving_first_contact.py
says how first-contact rows are kept). A source new to the repository: no earlier serving row comes from QwenLM, from
a batch of one request over a long prompt, or from vLLM's GPTQ-Int8 / AWQ paths.

  [qwen25-speed-a100] QwenLM/Qwen2.5 at a912d239c2d0e2e5d10bb8d02e6f5685edb43e68, docs/source/benchmark/
               speed_benchmark.rst ("Qwen2.5 Speed Benchmark", the "(vLLM)" tables): "NVIDIA A100 80GB", "vLLM 0.6.3",
               PyTorch 2.4.0, CUDA 12.1; "batch size of 1 and the least number of GPUs as possible" ("GPU Num", the
               tensor-parallel degree), "generating 2048 tokens with the input lengths of 1, 6144, 14336, 30720, 63488,
               and 129024 tokens", `gpu_memory_utilization=0.9 max_model_len=32768 enforce_eager=False` by default
               ("Setting-64k" / "Setting 4": max_model_len 65536, the rest default). The harness, published after the
               report by the same author: examples/speed-benchmark/speed_benchmark_vllm.py at
               8205ba2a17690375467df31481412d65a1751271 (pins vllm==0.6.3.post1 in requirements-perf-vllm.txt): the
               offline `vllm.LLM` in the caller's process (no HTTP server), `tensor_parallel_size` = the GPUs given,
               one prompt per `llm.generate` call, no warm-up, max_tokens 2048 (a run that stops early is repeated
               with a longer prompt, so 2,048 tokens are generated), and Speed = 2048 ÷ the call's wall time: the
               prefill and 2,048 decode steps of one request, read as the output tokens/s of a finite offline run of
               one request (`requests=1`). Prompt lengths as stated (the harness pads a chat prompt to about the
               length). Formats: BF16 (the released checkpoints' bf16 weights, math and KV cache), GPTQ-Int8 and
               GPTQ-Int4 (Qwen/Qwen2.5-*-Instruct-GPTQ-Int8|Int4) and AWQ (-AWQ, 4-bit): integer weights with fp16
               math and KV cache, group 128 (the quantisation group of the Qwen2.5 GPTQ-Int4 checkpoint that
               serving_first_contact_mooncake.py read; taken the same for Int8 and AWQ, not checked here); vLLM 0.6.3
               runs all three through its Marlin kernels on A100 (gptq_marlin, awq_marlin), chosen automatically.
               GPU read as the A100 80GB SXM4 (the form factor is not stated). Rows read: every (model, input length,
               format, GPU Num) line with the default setting or Setting-64k / Setting 4. Not read: the lines run with
               `enforce_eager=True` (32B BF16 on one GPU at 1-14336 tokens, 72B BF16 on 2 GPUs, 72B GPTQ-Int4 on 2
               GPUs at 1 and 6144: Settings 1-3, no CUDA graphs, which the estimator does not model) and the 129024
               lines (vLLM 0.6.2, another sampling config, a context past the models' 32,768 positions without the
               stated rope scaling), and the Transformers tables. Sampling (the harness): temperature 1.0, top_p 0.8
               and repetition / presence / frequency penalties, so vLLM applies its penalties each step (its sampler
               work is not modelled apart). vLLM 0.6.3 is not an ENGINE_RELEASES entry: the rows run as the current
               vLLM.
"""

from __future__ import annotations

from typing import Literal

from app.estimator.hardware import get_gpu
from app.estimator.presets import get_preset
from app.estimator.serving import ServingConfig
from tests.estimator.serving_first_contact_row import ServingFirstContact

SOURCE = "qwen25-speed-a100"
CITATION = (
    "QwenLM/Qwen2.5 at a912d239c2d0e2e5d10bb8d02e6f5685edb43e68, docs/source/benchmark/speed_benchmark.rst, (vLLM) "
    "tables (vLLM 0.6.3, A100 80GB, batch 1, 2,048 generated tokens, Speed(tokens/s)); harness examples/"
    "speed-benchmark/speed_benchmark_vllm.py at 8205ba2a17690375467df31481412d65a1751271 (offline vllm.LLM, one "
    "request, 2048 / wall time)"
)
A100 = get_gpu("a100-80g-sxm")
Format = Literal["BF16", "GPTQ-Int8", "GPTQ-Int4", "AWQ"]


def _row(size: str, prompt: int, fmt: Format, tp: int, tok_s: float) -> ServingFirstContact:
    model = get_preset(f"qwen2.5-{size.lower()}").model
    context = 65536 if prompt > 32768 - 2048 else 32768  # Setting-64k / Setting 4 past 30,720 tokens
    if fmt == "BF16":
        formats: dict = {"precision": "bf16", "weights": "bf16"}
    else:
        weights = "int8" if fmt == "GPTQ-Int8" else "int4"
        formats = {"precision": "fp16", "weights": weights, "group_size": 128}
    cfg = ServingConfig(
        input_tokens=prompt, output_tokens=2048, engine="vllm", gpu_memory_utilization=0.9, max_model_len=context,
        in_process=True, **formats,
    )  # fmt: skip
    label = f"qwen2.5-speed vllm-0.6.3 qwen2.5-{size.lower()} a100 tp{tp} {fmt.lower()} {prompt}/2048 one request"
    return ServingFirstContact(label, SOURCE, CITATION, model, A100, tp, cfg, "output_tokens_per_s", tok_s, 1)


_FORMATS: tuple[Format, ...] = ("BF16", "GPTQ-Int8", "GPTQ-Int4", "AWQ")
_PROMPTS = (1, 6144, 14336, 30720)
# Speed(tokens/s) in the file's order: for each input length, BF16, GPTQ-Int8, GPTQ-Int4, AWQ (all on one GPU)
_ONE_GPU: dict[str, tuple[tuple[float, float, float, float], ...]] = {
    "0.5B": ((311.55, 257.07, 260.93, 261.95), (304.79, 254.10, 257.33, 259.80), (290.28, 243.69, 247.01, 249.58),
             (264.51, 223.86, 226.50, 229.84)),
    "1.5B": ((183.33, 201.67, 217.03, 213.74), (176.68, 192.83, 206.63, 203.64), (168.69, 183.69, 195.88, 192.64),
             (152.04, 162.82, 173.57, 170.20)),
    "3B": ((127.61, 150.02, 168.20, 165.50), (123.15, 143.09, 159.85, 156.38), (117.35, 135.50, 149.35, 147.75),
           (105.88, 118.38, 129.28, 127.19)),
    "7B": ((84.28, 122.01, 154.05, 148.10), (80.70, 112.38, 141.98, 137.64), (77.69, 105.25, 129.35, 124.91),
           (70.33, 90.71, 108.30, 104.66), (50.86, 60.52, 67.97, 66.42)),
    "14B": ((46.30, 70.40, 98.02, 92.66), (43.83, 64.33, 86.10, 83.11), (41.91, 59.21, 76.85, 74.03),
            (37.18, 49.23, 60.91, 59.01), (26.85, 32.83, 37.67, 36.71)),
}  # fmt: skip
# the other lines read: (size, input length, format, GPU Num, Speed)
_OTHERS: tuple[tuple[str, int, Format, int, float], ...] = (
    ("32B", 1, "GPTQ-Int8", 1, 37.57), ("32B", 1, "GPTQ-Int4", 1, 55.83), ("32B", 1, "AWQ", 1, 51.92),
    ("32B", 6144, "GPTQ-Int8", 1, 34.67), ("32B", 6144, "GPTQ-Int4", 1, 49.96), ("32B", 6144, "AWQ", 1, 46.68),
    ("32B", 14336, "GPTQ-Int8", 1, 31.89), ("32B", 14336, "GPTQ-Int4", 1, 44.79), ("32B", 14336, "AWQ", 1, 41.83),
    ("32B", 30720, "BF16", 2, 31.82), ("32B", 30720, "GPTQ-Int8", 1, 26.88), ("32B", 30720, "GPTQ-Int4", 1, 35.66),
    ("32B", 30720, "AWQ", 1, 33.75),
    ("32B", 63488, "BF16", 2, 24.45), ("32B", 63488, "GPTQ-Int8", 1, 18.60), ("32B", 63488, "GPTQ-Int4", 1, 22.72),
    ("32B", 63488, "AWQ", 1, 21.79),
    ("72B", 1, "BF16", 4, 31.37), ("72B", 1, "GPTQ-Int8", 2, 31.40), ("72B", 1, "GPTQ-Int4", 1, 16.47),
    ("72B", 1, "AWQ", 2, 44.30),
    ("72B", 6144, "BF16", 4, 29.90), ("72B", 6144, "GPTQ-Int8", 2, 29.37), ("72B", 6144, "GPTQ-Int4", 1, 13.88),
    ("72B", 6144, "AWQ", 2, 40.67),
    ("72B", 14336, "BF16", 4, 30.10), ("72B", 14336, "GPTQ-Int8", 2, 27.20), ("72B", 14336, "GPTQ-Int4", 2, 38.10),
    ("72B", 14336, "AWQ", 2, 36.63),
    ("72B", 30720, "BF16", 4, 27.53), ("72B", 30720, "GPTQ-Int8", 2, 23.32), ("72B", 30720, "GPTQ-Int4", 2, 30.98),
    ("72B", 30720, "AWQ", 2, 30.02),
    ("72B", 63488, "BF16", 4, 20.74), ("72B", 63488, "GPTQ-Int8", 2, 16.27), ("72B", 63488, "GPTQ-Int4", 2, 19.84),
    ("72B", 63488, "AWQ", 2, 19.32),
)  # fmt: skip

QWEN_SPEED_ROWS: tuple[ServingFirstContact, ...] = (
    *(
        _row(size, prompt, fmt, 1, tok_s)
        for size, lines in _ONE_GPU.items()
        for prompt, line in zip((*_PROMPTS, 63488), lines, strict=False)
        for fmt, tok_s in zip(_FORMATS, line, strict=True)
    ),
    *(_row(*line) for line in _OTHERS),
)
