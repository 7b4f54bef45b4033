"""The transformers architectures `tests/hf_fidelity.rs` builds, as data: each case is a
modeling file (relative to the `transformers` package), the model and config classes, the
tiny config's keyword arguments and the example inputs (shape, dtype). `gen_hf_recordings.py`
writes them, with the entry expression staticfx evaluates, to `hf_cases.json`."""

DECODER = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, vocab_size=100)
TOKENS = {"input_ids": {"shape": [2, 8], "dtype": "int64", "high": 100}}
PIXELS = {"pixel_values": {"shape": [1, 3, 32, 32], "dtype": "float32"}}


def case(arch, model, config, kwargs, inputs=TOKENS):
    return {
        "id": arch,
        "file": f"models/{arch}/modeling_{arch}.py",
        "model": model,
        "config": config,
        "kwargs": kwargs,
        "inputs": inputs,
    }


CASES = [
    # decoder-only, dense
    case("llama", "LlamaForCausalLM", "LlamaConfig", {**DECODER, "num_key_value_heads": 2}),
    case("mistral", "MistralForCausalLM", "MistralConfig", {**DECODER, "num_key_value_heads": 2}),
    case("qwen2", "Qwen2ForCausalLM", "Qwen2Config", {**DECODER, "num_key_value_heads": 2}),
    case("qwen3", "Qwen3ForCausalLM", "Qwen3Config", {**DECODER, "num_key_value_heads": 2, "head_dim": 8}),
    case("gemma", "GemmaForCausalLM", "GemmaConfig", {**DECODER, "num_key_value_heads": 2, "head_dim": 8}),
    case("gemma2", "Gemma2ForCausalLM", "Gemma2Config", {**DECODER, "num_key_value_heads": 2, "head_dim": 8}),
    case("phi", "PhiForCausalLM", "PhiConfig", DECODER),
    case("phi3", "Phi3ForCausalLM", "Phi3Config", {**DECODER, "num_key_value_heads": 2, "pad_token_id": 0}),
    case("gpt2", "GPT2LMHeadModel", "GPT2Config", dict(n_embd=32, n_layer=2, n_head=4, vocab_size=100, n_positions=64)),
    case("opt", "OPTForCausalLM", "OPTConfig", dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, ffn_dim=64, vocab_size=100, word_embed_proj_dim=32, max_position_embeddings=64)),
    case("falcon", "FalconForCausalLM", "FalconConfig", dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, vocab_size=100)),
    case("gpt_neox", "GPTNeoXForCausalLM", "GPTNeoXConfig", DECODER),
    case("starcoder2", "Starcoder2ForCausalLM", "Starcoder2Config", {**DECODER, "num_key_value_heads": 2}),
    case("olmo", "OlmoForCausalLM", "OlmoConfig", {**DECODER, "num_key_value_heads": 2}),
    # decoder-only, mixture of experts
    case("mixtral", "MixtralForCausalLM", "MixtralConfig", {**DECODER, "num_key_value_heads": 2, "num_local_experts": 4, "num_experts_per_tok": 2}),
    case("qwen2_moe", "Qwen2MoeForCausalLM", "Qwen2MoeConfig", {**DECODER, "num_key_value_heads": 2, "num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 32, "shared_expert_intermediate_size": 32}),
    case("olmoe", "OlmoeForCausalLM", "OlmoeConfig", {**DECODER, "num_key_value_heads": 2, "num_experts": 4, "num_experts_per_tok": 2}),
    case("qwen3_moe", "Qwen3MoeForCausalLM", "Qwen3MoeConfig", {**DECODER, "num_key_value_heads": 2, "head_dim": 8, "num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 32}),
    case("granitemoe", "GraniteMoeForCausalLM", "GraniteMoeConfig", {**DECODER, "num_key_value_heads": 2, "num_local_experts": 4, "num_experts_per_tok": 2}),
    case("phimoe", "PhimoeForCausalLM", "PhimoeConfig", {**DECODER, "num_key_value_heads": 2, "num_local_experts": 4, "num_experts_per_tok": 2}),
    # encoder-only
    case("bert", "BertModel", "BertConfig", DECODER),
    case("roberta", "RobertaModel", "RobertaConfig", DECODER),
    case("distilbert", "DistilBertModel", "DistilBertConfig", dict(dim=32, n_layers=2, n_heads=4, hidden_dim=64, vocab_size=100)),
    case("electra", "ElectraModel", "ElectraConfig", {**DECODER, "embedding_size": 32}),
    case("albert", "AlbertModel", "AlbertConfig", {**DECODER, "embedding_size": 16}),
    # encoder-decoder
    case("t5", "T5EncoderModel", "T5Config", dict(d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4, vocab_size=100)),
    case("bart", "BartModel", "BartConfig", dict(d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64, vocab_size=100, max_position_embeddings=64)),
    # vision
    case("vit", "ViTModel", "ViTConfig", dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, image_size=32, patch_size=8), PIXELS),
    case("deit", "DeiTModel", "DeiTConfig", dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, image_size=32, patch_size=8), PIXELS),
    case("convnext", "ConvNextModel", "ConvNextConfig", dict(hidden_sizes=[8, 16, 32, 64], depths=[1, 1, 1, 1]), PIXELS),
    case("swin", "SwinModel", "SwinConfig", dict(image_size=32, patch_size=4, embed_dim=16, depths=[1, 1], num_heads=[2, 4], window_size=4), PIXELS),
]
