//! Hover on `def forward` lists the guards Dynamo will install, on real library code: a
//! transformers model (`$STATICFX_TRANSFORMERS_ROOT`) and a diffusers model
//! (`$STATICFX_DIFFUSERS_ROOT`), opened in the server as a user opens them, per class with no
//! example inputs. Each part skips with a note when its corpus is unset. The `$0` fixtures of
//! the same hover are in `src/ide/tests.rs`.
mod corpus_support;

mod lsp_support;

use std::path::Path;

use lsp_support::{corpus_client, file_uri};

/// The hover shown on the name of the first `def forward` after `class NAME(` in `file`.
async fn hover_on_forward(root: &Path, file: &str, class: &str) -> String {
    let path = root.join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    let uri = file_uri(&path);
    let mut c = corpus_client(root).await;
    c.open(&uri, &text).await;
    c.diagnostics(&uri, 1).await;
    let class_at = text
        .find(&format!("class {class}("))
        .unwrap_or_else(|| panic!("{file} defines {class}"));
    let at = class_at + text[class_at..].find("def forward").unwrap() + "def for".len();
    let line = text[..at].matches('\n').count() as u32;
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let column = text[line_start..at].encode_utf16().count() as u32;
    let hover = c.hover(&uri, (line, column)).await;
    hover["contents"]["value"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hover_on_forward_lists_guards_of_a_transformers_model() {
    let Some(root) = corpus_support::corpus_root("STATICFX_TRANSFORMERS_ROOT", "transformers")
    else {
        return;
    };
    let shown = hover_on_forward(
        &root,
        "transformers/models/llama/modeling_llama.py",
        "LlamaAttention",
    )
    .await;
    // the default LlamaConfig's sizes, symbolic batch and sequence; the attributes forward
    // reads become constants Dynamo guards, `self.training` among them (one compile per mode)
    for expected in [
        "Dynamo's guards on `LlamaAttention.forward`",
        "- `hidden_states`: `[s0, s1, 4096]` `float32`",
        "`self.head_dim == 128`",
        "`self.training == False`",
        "**recompile risks**: 0 from state forward changes (FX201)",
    ] {
        assert!(shown.contains(expected), "{expected}:\n{shown}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hover_on_forward_lists_guards_of_a_diffusers_model() {
    let Some(root) = corpus_support::corpus_root("STATICFX_DIFFUSERS_ROOT", "diffusers") else {
        return;
    };
    let shown = hover_on_forward(
        &root,
        "diffusers/models/transformers/transformer_flux.py",
        "FluxTransformer2DModel",
    )
    .await;
    // built from its registered config defaults; a block's attribute read in the attention
    // processor is guarded by its path in the module tree
    for expected in [
        "Dynamo's guards on `FluxTransformer2DModel.forward`",
        "- `hidden_states`: `[s0, 64]` `float32`",
        "`self._modules['transformer_blocks']._modules['0']._modules['attn'].head_dim == 128`",
        "… and ",
    ] {
        assert!(shown.contains(expected), "{expected}:\n{shown}");
    }
}
