"""First-contact memory rows from lit-gpt's LoRA / QLoRA tutorial tables of August 2023 (source
`litgpt-lora-tutorial`; tests/estimator/memory_first_contact.py says how rows are kept, recorded and read). The
repository used two other litgpt documents (tests/estimator/published_cases.py [litgpt]: config_hub/finetune/README.md;
[litgpt-resource-tables]: tutorials/resource-tables.md of 10/20/2023), never these tables, which the project measured
two months earlier on an earlier finetune/lora.py and then removed (982abcbc, 2023-10-05, replaced them with new runs;
the Llama 2 7B figures of that replacement are the resource tables' rows and are not rows here).

  [litgpt-lora-tutorial] Lightning-AI/litgpt (then lit-gpt) tutorials/finetune_lora.md as written by 064fd523
               (2023-08-21, "Support QLoRA 4-bit finetuning with bitsandbytes (#275)"), its two tables: StableLM 3B
               (stablelm-base-alpha-3b) "finetuned with LoRA on Alpaca for 5,000 iterations using a microbatch size of
               4", and Llama 2 7B at a micro-batch of 1 (the table text said 4; add1fc4d "Fix batch size typo",
               2023-10-04, corrected it to 1), each under six settings: --precision bf16-mixed (Fabric's default) or
               bf16-true, with --quantize none, bnb.nf4 or bnb.nf4-dq. Llama 2 7B under bf16-mixed without
               quantisation reads "OutOfMemoryError" (no figure: not a row). 11 rows.
               The script is finetune/lora.py at 064fd523 with its defaults (stated in the file): LoRA r=8, alpha 16,
               dropout 0.05 on the query and value parts of the fused qkv projection only (lora_query, lora_value),
               batch_size 128 over micro_batch_size (gradient accumulation 32 or 128), no activation checkpointing, the
               model built under fabric.init_module inside lit_gpt.utils.quantization (bitsandbytes Linear4bit for
               every linear of the blocks; nf4 = compress_statistics False, nf4-dq = True), the LM head in chunks of
               128 tokens (`lm_head_chunk_size=128`) and lit_gpt.utils.chunked_cross_entropy on the chunks
               (Plan.chunked_loss); attention through torch's scaled_dot_product_attention with is_causal and no
               mask (or flash_attn_func where installed): a flash kernel. Optimizer: torch.optim.AdamW on the LoRA
               parameters, or bitsandbytes' PagedAdamW when --quantize names a bnb mode (Workload.paged_optimizer).
               Precision: bf16-true = every weight, adapter and AdamW state in bf16 (Workload.mixed_precision False);
               bf16-mixed = Lightning's fp32 parameters under torch.autocast bf16: without quantisation the frozen
               base and adapters fp32 (Plan.fp32_params); with quantisation the 4-bit linears plus fp32 embeddings,
               head, norms and adapters and an fp32 residual stream under autocast, which is what PEFT's
               prepare_model_for_kbit_training leaves (Workload.kbit_upcast True); bf16-true QLoRA has none of it
               (kbit_upcast False: litgpt does not call PEFT). bitsandbytes: the file's requirements name
               bitsandbytes>=0.41.1, so the runs of August 2023 ran a release before 0.43 (Workload.bnb_fp16_dequant).
               Data: scripts/prepare_alpaca.py at 064fd523: alpaca_data_cleaned_archive.json, mask_inputs False, no
               truncation below the model's block size (4,096 for both); each batch padded to its longest sample
               (get_batch), and the first training batch forced to hold the longest sample ("so potential OOMs happen
               right away"), so the step at the longest length is in every run.
               Reading: "Training Memory" is the script's last line, `Memory used: {torch.cuda.max_memory_allocated()
               / 1e9:.02f} GB` (finetune/lora.py at 064fd523): allocated over the whole run, decimal GB, converted to
               GiB here. The run also holds a no-grad validation at start and every 100 steps (4 or 1 samples, the
               full-vocabulary logits of one pass) and 100-token generations; both are below a training step.
               Assumed (decided before any estimate was run): the longest Alpaca sample is 1,034 tokens with StableLM's
               GPT-NeoX tokenizer and 1,304 with Llama 2's, as tutorials/resource-tables.md (10/20/2023, lit-gpt
               8641822) states for the same data file, split and prompt template (prepare_alpaca.py changed only its
               argument plumbing and an optional max_seq_length between the two commits); the card is an A100-SXM4-40GB
               (the table names none: the tutorial's "single RTX 3090 (24GB)" cannot hold the 33.50 GB row, Llama 2
               7B's fp32 bf16-mixed run ran out of memory, and the project's later tables ran on that card; the figure
               compared does not depend on the card, the fit judgement does). StableLM 3B is modelled from lit-gpt's
               config of 064fd523 (lit_gpt/config.py: 16 layers, 4,096 wide, 32 heads, GPT-NeoX MLP 16,384 wide with
               biases, LayerNorm, parallel residual, vocabulary padded to 50,688, untied head) through the gpt_neox
               family, since the catalog has no preset.
"""

from __future__ import annotations

from app.estimator.hardware import get_gpu
from app.estimator.models import model_from_hf_config
from app.estimator.presets import get_preset
from app.estimator.specs import GIB, Cluster, LoraSpec, ModelSpec, Plan, Workload
from tests.estimator.memory_first_contact_row import FirstContactCase

SOURCE = "litgpt-lora-tutorial"
LITGPT_LORA_TUTORIAL = (
    "Lightning-AI/litgpt tutorials/finetune_lora.md at 064fd523128cdc1bfc4d76cfeff67cb36078e56b (2023-08-21; Llama 2 "
    "micro-batch 1 per add1fc4d): finetune/lora.py, LoRA r=8 on q, v, Alpaca padded per batch (longest first), no "
    "checkpointing, chunked head + cross-entropy; Memory used = torch.cuda.max_memory_allocated() / 1e9"
)

# lit_gpt/config.py at 064fd523, stablelm-base-alpha-3b (Config defaults, padding_multiple 512: 50,254 -> 50,688)
STABLELM_3B_CONFIG = {
    "model_type": "gpt_neox",
    "_name_or_path": "stabilityai/stablelm-base-alpha-3b",
    "num_hidden_layers": 16,
    "hidden_size": 4096,
    "num_attention_heads": 32,
    "intermediate_size": 16384,
    "vocab_size": 50688,
    "tie_word_embeddings": False,
    "attention_bias": True,
}
GB = 1e9
# (model, micro-batch, longest Alpaca sample in tokens, --precision, --quantize, "Training Memory" GB)
ROWS = (
    ("stablelm-3b", 4, 1034, "bf16-mixed", None, 33.50),
    ("stablelm-3b", 4, 1034, "bf16-true", None, 15.86),
    ("stablelm-3b", 4, 1034, "bf16-mixed", "bnb.nf4", 22.34),
    ("stablelm-3b", 4, 1034, "bf16-mixed", "bnb.nf4-dq", 22.18),
    ("stablelm-3b", 4, 1034, "bf16-true", "bnb.nf4", 14.81),
    ("stablelm-3b", 4, 1034, "bf16-true", "bnb.nf4-dq", 14.65),
    ("llama-2-7b", 1, 1304, "bf16-true", None, 20.60),
    ("llama-2-7b", 1, 1304, "bf16-mixed", "bnb.nf4", 19.62),
    ("llama-2-7b", 1, 1304, "bf16-mixed", "bnb.nf4-dq", 19.32),
    ("llama-2-7b", 1, 1304, "bf16-true", "bnb.nf4", 13.44),
    ("llama-2-7b", 1, 1304, "bf16-true", "bnb.nf4-dq", 13.15),
)  # fmt: skip


def _model(name: str) -> ModelSpec:
    return model_from_hf_config(STABLELM_3B_CONFIG) if name == "stablelm-3b" else get_preset(name).model


def litgpt_lora_tutorial() -> list[FirstContactCase]:
    cases = []
    gpu = get_gpu("a100-40g-sxm")
    for name, micro_batch, seq_len, precision, quantize, published_gb in ROWS:
        mixed = precision == "bf16-mixed"
        lora = LoraSpec(rank=8, alpha=16, targets=("q", "v"), dropout=0.05, double_quant=quantize == "bnb.nf4-dq")
        workload = Workload(
            task="qlora" if quantize else "lora",
            mixed_precision=mixed,
            seq_len=seq_len,
            global_batch=128,  # batch_size 128: gradient accumulation over micro-batches
            lora=lora,
            paged_optimizer=quantize is not None,  # bnb.optim.PagedAdamW under --quantize bnb.*
            kbit_upcast=mixed if quantize else None,  # bf16-mixed: fp32 non-quantised parameters and residual
            varied_lengths=True,  # Alpaca padded per batch to its longest sample
            bnb_fp16_dequant=quantize is not None,  # bitsandbytes 0.41 (before 0.43)
        )
        plan = Plan(micro_batch=micro_batch, chunked_loss=True, fp32_params=mixed and quantize is None)
        cases.append(
            FirstContactCase(
                f"lit-gpt finetune_lora.md (Aug 2023) {name} LoRA r=8 q,v, --precision {precision}"
                + (f" --quantize {quantize}" if quantize else "")
                + f", micro-batch {micro_batch} x {seq_len}, no checkpointing, 1 x A100 40GB",
                SOURCE,
                LITGPT_LORA_TUTORIAL,
                _model(name),
                workload,
                plan,
                Cluster(gpu=gpu),
                published_gb * GB / GIB,
                "allocated",
                "attention: sdpa (flash, is_causal); loss: lm_head in chunks of 128 + chunked cross-entropy; no "
                "checkpointing; "
                + ("bitsandbytes 0.41 NF4 + PagedAdamW; " if quantize else "torch AdamW; ")
                + ("Lightning bf16-mixed (fp32 parameters under autocast)" if mixed else "bf16-true"),
            )
        )
    return cases
