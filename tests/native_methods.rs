//! The library methods the evaluator runs natively (`eval::native_methods`), on the library
//! they were written against (`$STATICFX_TRANSFORMERS_ROOT`, the directory holding
//! `transformers/`; skipped with a note without it): its definitions are the known texts, so
//! the native route is the one taken, and config reads give what the source gives.

use std::path::Path;
use std::sync::Arc;

use staticfx::eval::native_methods::{definition_digest, KNOWN_METHODS};
use staticfx::eval::value::Value;
use staticfx::eval::Interp;
use staticfx::semantic::Project;

mod corpus_support;

/// The text of `def name` in class `class` of `path`, from `def` to the end of its body.
fn method_text(path: &Path, class: &str, name: &str) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let tree = staticfx::syntax::parse(&text, None);
    let mut todo = vec![tree.root_node()];
    while let Some(node) = todo.pop() {
        let named = |n: tree_sitter::Node, want: &str| {
            n.child_by_field_name("name")
                .is_some_and(|id| &text[id.byte_range()] == want)
        };
        if node.kind() == "function_definition" && named(node, name) {
            let in_class = node
                .parent()
                .and_then(|body| body.parent())
                .is_some_and(|c| c.kind() == "class_definition" && named(c, class));
            if in_class {
                return text[node.byte_range()].to_string();
            }
        }
        let mut cursor = node.walk();
        todo.extend(node.children(&mut cursor));
    }
    panic!("no {class}.{name} in {}", path.display());
}

#[test]
fn the_pinned_definitions_are_the_known_texts() {
    let Some(root) = corpus_support::corpus_root("STATICFX_TRANSFORMERS_ROOT", "transformers")
    else {
        return;
    };
    for known in KNOWN_METHODS {
        let file = root.join(known.module.replace('.', "/") + ".py");
        let (class, name) = known.qualname.split_once('.').unwrap();
        let text = method_text(&file, class, name);
        assert_eq!(
            definition_digest(&text),
            known.sha256,
            "{}.{} changed: run it natively only after checking the new text",
            known.module,
            known.qualname
        );
    }
}

const SNIPPET: &str = r#"from transformers.models.llama.configuration_llama import LlamaConfig
from transformers.models.gpt2.configuration_gpt2 import GPT2Config

c = LlamaConfig(num_hidden_layers=3)
g = GPT2Config()
r = (
    c.hidden_size, c.num_attention_heads, c.num_hidden_layers, c.head_dim, c.vocab_size,
    c.rms_norm_eps, c.attention_bias, c.use_cache, c.output_attentions, c.pad_token_id,
    getattr(c, "no_such_attribute", "absent"), hasattr(c, "num_key_value_heads"),
    g.hidden_size, g.num_attention_heads, g.num_hidden_layers, g.max_position_embeddings,
    g.n_embd, g.n_layer, "n_embd" in g.__dict__,
)
"#;

/// `r` of the snippet (as the evaluator's values print) and the steps it took, with the native methods or without.
fn config_reads(root: &Path, native: bool) -> (String, u64) {
    let mut project = Project::new(root);
    let path = root.join("native_methods_snippet.py");
    project.add_overlay(&path, Arc::from(SNIPPET), None);
    let file = project.load_path(&path).unwrap();
    let mut interp = Interp::new(Arc::new(project));
    if !native {
        interp.native_methods = Vec::new().into();
    }
    let ns = interp.load_module(file).unwrap();
    let r = ns.vars.borrow().get("r").cloned();
    let Some(Value::Tuple(items)) = r else {
        let notes: Vec<String> = interp
            .diagnostics
            .iter()
            .map(|d| d.message.clone())
            .collect();
        panic!("r is {r:?}; notes: {notes:?}");
    };
    let shown: Vec<String> = items.iter().map(|v| format!("{v:?}")).collect();
    (shown.join(", "), interp.steps_used())
}

#[test]
fn config_reads_give_what_the_source_gives() {
    let Some(root) = corpus_support::corpus_root("STATICFX_TRANSFORMERS_ROOT", "transformers")
    else {
        return;
    };
    let (from_source, source_steps) = config_reads(&root, false);
    let (native, native_steps) = config_reads(&root, true);
    assert_eq!(native, from_source);
    // what transformers 5.24.0 gives under CPython (GPT-2 maps `hidden_size` to `n_embd`…)
    assert_eq!(
        from_source,
        "4096, 32, 3, 128, 32000, 1e-6, False, True, False, None, \"absent\", True, 768, 12, 12, 1024, 768, 12, True"
    );
    assert!(
        native_steps < source_steps,
        "native {native_steps}, source {source_steps}"
    );
}
