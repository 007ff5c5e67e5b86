"""Published Hugging Face config.json files, the keys the estimator reads, shared by tests and benchmarks."""

# Llama 2 7B (huggingface.co/meta-llama/Llama-2-7b-hf/blob/main/config.json)
LLAMA_2_7B = {
    "model_type": "llama",
    "num_hidden_layers": 32,
    "hidden_size": 4096,
    "num_attention_heads": 32,
    "num_key_value_heads": 32,
    "intermediate_size": 11008,
    "vocab_size": 32000,
}

# Qwen1.5-MoE-A2.7B (huggingface.co/Qwen/Qwen1.5-MoE-A2.7B/blob/main/config.json)
QWEN15_MOE = {
    "model_type": "qwen2_moe",
    "num_hidden_layers": 24,
    "hidden_size": 2048,
    "num_attention_heads": 16,
    "num_key_value_heads": 16,
    "intermediate_size": 5632,
    "vocab_size": 151936,
    "num_experts": 60,
    "num_experts_per_tok": 4,
    "moe_intermediate_size": 1408,
    "shared_expert_intermediate_size": 5632,
    "decoder_sparse_step": 1,
}
