//! Per-class mode for classes built from a configuration object (transformers' models, layers
//! and attention modules all take `config`): the `config` argument is the config class's
//! defaults, `XConfig()`, rather than an unknown, so the analysis sees the attention interface,
//! the layers and the activations the default model has.
//!
//! The config class is, in order: the annotation of `__init__`'s `config` parameter
//! (`config: LlamaConfig`), the class's `config_class`, a class-body annotation `config: X` on
//! the class or a base (`LlamaPreTrainedModel`), and otherwise the one configuration class the
//! module can name (modeling_llama.py imports only `LlamaConfig`, and `LlamaMLP(config)` has no
//! annotation).

use crate::syntax::KindExt;
use tree_sitter::Node;

use crate::eval::call::find_node;
use crate::eval::value::{Function, Object, Value};
use crate::eval::{Frame, Interp};
use crate::shapes::{DType, Dim, Expr, Meta};
use crate::syntax::{text, FieldExt, Span};

/// The base class transformers' configurations share, under its current and its old name.
const CONFIG_BASES: [&str; 2] = ["PreTrainedConfig", "PretrainedConfig"];

/// The layer index a required `layer_idx` gets: the first layer, the one every model has.
pub const DEFAULT_LAYER_INDEX: i64 = 0;

/// `XConfig()` for a `config` parameter of `init`, or None when no configuration class is
/// known or its defaults cannot be built.
pub fn default_config(
    interp: &mut Interp,
    frame: &Frame,
    class: &Value,
    init: &Function,
    span: Span,
) -> Option<Value> {
    let annotated = annotated_param_class(interp, init, "config");
    // `config: OtherThing` says what the argument is; a configuration of the module's would
    // be a guess against it (the class then raises on the first field it reads). The
    // configuration base (`config: PreTrainedConfig`) says only that it is one.
    if annotated
        .as_ref()
        .is_some_and(|c| !is_config_class(c) && !is_config_base(c))
    {
        return None;
    }
    let config_class = annotated
        .or_else(|| config_class_attr(interp, class))
        .or_else(|| class_body_annotation(interp, class, "config"))
        .or_else(|| only_config_class_of(interp, frame))?;
    let config = interp
        .call_value(frame, &config_class, vec![], vec![], span)
        .ok()?;
    let Value::Object(obj) = &config else {
        return None;
    };
    // What `PreTrainedModel.__init__` settles before any layer reads the config: a layer built
    // on its own (LlamaAttention, an experts module) must see the model's choice, not None.
    // sdpa when the module's models support it (`_supports_sdpa = True` on its
    // PreTrainedModel), else eager, as `get_correct_attn_implementation` falls back; experts
    // as `get_correct_experts_implementation` picks them (transformers 5).
    let attention = if supports_sdpa(frame) {
        "sdpa"
    } else {
        "eager"
    };
    let defaults = [
        ("_attn_implementation_internal", Value::str(attention)),
        (
            "_experts_implementation_internal",
            default_experts(interp, frame, span),
        ),
    ];
    for (attr, default) in defaults {
        let unset = matches!(obj.get(attr), None | Some(Value::None));
        if unset {
            obj.attrs.borrow_mut().insert(attr.to_string(), default);
        }
    }
    Some(config)
}

/// The experts implementation a model of this module gets when none is requested:
/// `get_correct_experts_implementation(None)` of a class the module defines that overrides it
/// (openai_privacy_filter's model picks `eager`, "very sensitive to accumulation orders"),
/// evaluated on a blank instance; otherwise transformers' default, `grouped_mm`.
fn default_experts(interp: &mut Interp, frame: &Frame, span: Span) -> Value {
    const CHOOSER: &str = "get_correct_experts_implementation";
    let overriding: Vec<Value> = frame
        .globals
        .vars
        .borrow()
        .values()
        .filter(|v| {
            matches!(v, Value::Class(c)
                if c.file_id == frame.file_id && c.ns.borrow().contains_key(CHOOSER))
        })
        .cloned()
        .collect();
    for class in overriding {
        let Some(choose) = interp.user_method(&class, CHOOSER) else {
            continue;
        };
        let model = Value::Object(interp.blank_instance(&class));
        let chosen =
            interp.call_function(frame, &choose, Some(model), vec![Value::None], vec![], span);
        if let Ok(v @ Value::Str(_)) = chosen {
            return v;
        }
    }
    Value::str("grouped_mm")
}

/// Whether `init`'s `param` is annotated with a configuration class (`config: BartConfig |
/// None = None`): an attention module that takes its config as an option is built with one by
/// every model that uses it, and without one its forward fails on `self.config`.
pub fn annotated_with_config_class(interp: &mut Interp, init: &Function, param: &str) -> bool {
    annotated_param_class(interp, init, param).is_some_and(|c| is_config_class(&c))
}

/// Whether a class the module defines sets `_supports_sdpa = True`.
fn supports_sdpa(frame: &Frame) -> bool {
    frame.globals.vars.borrow().values().any(|v| match v {
        Value::Class(c) => {
            c.file_id == frame.file_id
                && matches!(c.ns.borrow().get("_supports_sdpa"), Some(Value::Bool(true)))
        }
        _ => false,
    })
}

/// transformers' configuration base itself.
fn is_config_base(v: &Value) -> bool {
    match v {
        Value::Class(c) => CONFIG_BASES.contains(&c.name.as_str()),
        Value::External(p) => CONFIG_BASES
            .iter()
            .any(|b| p.rsplit('.').next() == Some(*b)),
        _ => false,
    }
}

/// A class deriving from transformers' configuration base (the base itself is not one).
fn is_config_class(v: &Value) -> bool {
    match v {
        Value::Class(c) if CONFIG_BASES.contains(&c.name.as_str()) => false,
        Value::Class(c) => c.mro.borrow().iter().any(|m| match m {
            Value::Class(b) => CONFIG_BASES.contains(&b.name.as_str()),
            Value::External(p) => CONFIG_BASES
                .iter()
                .any(|b| p.rsplit('.').next() == Some(*b)),
            _ => false,
        }),
        _ => false,
    }
}

/// The class an annotation names: `X`, `"X"`, `X | None`, `Optional[X]`.
fn annotation_class(interp: &mut Interp, frame: &Frame, node: Node) -> Option<Value> {
    let src = &*frame.file.text;
    match node.kind_name() {
        "type" => annotation_class(interp, frame, node.named_child(0)?),
        "string" => {
            let name = text(node, &src).trim_matches(|c| c == '"' || c == '\'');
            let v = interp.lookup(frame, name, Span::of(node)).ok()?;
            matches!(v, Value::Class(_)).then_some(v)
        }
        "binary_operator" => {
            let left = node.field("left")?;
            let right = node.field("right")?;
            annotation_class(interp, frame, left).or_else(|| annotation_class(interp, frame, right))
        }
        "subscript" | "generic_type" => {
            let args: Vec<Node> = crate::syntax::named_children(node).skip(1).collect();
            args.into_iter()
                .find_map(|a| annotation_class(interp, frame, a))
        }
        "type_parameter" => {
            let args: Vec<Node> = crate::syntax::named_children(node).collect();
            args.into_iter()
                .find_map(|a| annotation_class(interp, frame, a))
        }
        "identifier" | "attribute" => {
            let v = interp.eval_expr(frame, node).ok()?;
            matches!(v, Value::Class(_)).then_some(v)
        }
        _ => None,
    }
}

fn function_frame(init: &Function) -> Frame {
    Frame {
        file: init.file.clone(),
        file_id: init.file_id,
        globals: init.globals.clone(),
        locals: None,
        class: None,
        receiver: None,
    }
}

fn annotated_param_class(interp: &mut Interp, init: &Function, param: &str) -> Option<Value> {
    let tree = init.file.tree();
    let def = find_node(&tree, init.span)?;
    let params = def.field("parameters")?;
    let frame = function_frame(init);
    let src = &*init.file.text;
    let typed: Vec<Node> = crate::syntax::named_children(params)
        .filter(|p| matches!(p.kind_name(), "typed_parameter" | "typed_default_parameter"))
        .collect();
    typed.into_iter().find_map(|p| {
        let name = p
            .field("name")
            .or_else(|| p.named_child(0).filter(|n| n.kind_name() == "identifier"))?;
        if text(name, &src) != param {
            return None;
        }
        annotation_class(interp, &frame, p.field("type")?)
    })
}

fn config_class_attr(interp: &Interp, class: &Value) -> Option<Value> {
    interp
        .class_lookup(class, "config_class")
        .filter(is_config_class)
}

/// `config: LlamaConfig` in the body of the class or of a class it derives from.
fn class_body_annotation(interp: &mut Interp, class: &Value, attr: &str) -> Option<Value> {
    let Value::Class(c) = class else { return None };
    let mro = c.mro.borrow().clone();
    for base in mro {
        let Value::Class(b) = base else { continue };
        let Ok(ns) = interp.load_module(b.file_id) else {
            continue;
        };
        let frame = Frame {
            file: ns.file.clone(),
            file_id: b.file_id,
            globals: ns.clone(),
            locals: None,
            class: None,
            receiver: None,
        };
        let tree = ns.file.tree();
        let Some(def) = find_node(&tree, b.span) else {
            continue;
        };
        let Some(body) = def.field("body") else {
            continue;
        };
        let src = &*ns.file.text;
        let annotations: Vec<Node> = crate::syntax::named_children(body)
            .filter(|s| s.kind_name() == "expression_statement")
            .filter_map(|s| s.named_child(0))
            .filter(|a| a.kind_name() == "assignment" && a.field("right").is_none())
            .filter(|a| a.field("left").is_some_and(|l| text(l, &src) == attr))
            .filter_map(|a| a.field("type"))
            .collect();
        for ty in annotations {
            if let Some(v) = annotation_class(interp, &frame, ty).filter(is_config_class) {
                return Some(v);
            }
        }
    }
    None
}

/// The module's one configuration class, among the names it binds or imports that end in
/// `Config`; None when there are several (CLIP's text and vision configs).
fn only_config_class_of(interp: &mut Interp, frame: &Frame) -> Option<Value> {
    let mut names: Vec<String> = frame
        .globals
        .vars
        .borrow()
        .keys()
        .chain(frame.globals.pending.borrow().keys())
        .filter(|n| n.ends_with("Config"))
        .cloned()
        .collect();
    names.sort();
    names.dedup();
    let mut found: Option<Value> = None;
    for name in names {
        let Ok(v) = interp.lookup(frame, &name, Span::default()) else {
            continue;
        };
        if !is_config_class(&v) {
            continue;
        }
        if let (Some(Value::Class(a)), Value::Class(b)) = (&found, &v) {
            if a.qualname != b.qualname || a.file_id != b.file_id {
                return None;
            }
            continue;
        }
        found = Some(v);
    }
    found
}

/// The shapes transformers' modules are called with, for the forward inputs of a module built
/// from a config (its `self.config`, else the one per-class mode gave its constructor):
/// `input_ids` is `[batch, sequence]` integers, `hidden_states` is
/// `[batch, sequence, hidden_size]`, `position_embeddings` the rotary `(cos, sin)`, each
/// `[batch, sequence, rotary dim]`, `pixel_values` is `[batch, channels, size, size]`.
/// Per-class mode reads no example inputs, and the layers alone would not fix these ranks (an
/// embedding or a linear layer takes any rank).
pub fn convention_inputs(root: &Value, given_config: Option<&Value>) -> Vec<(String, Meta)> {
    let Value::Object(obj) = root else {
        return vec![];
    };
    let config = match (obj.get("config"), given_config) {
        (Some(Value::Object(c)), _) if is_config_class(&c.class) => c,
        (_, Some(Value::Object(c))) if is_config_class(&c.class) => c.clone(),
        _ => return vec![],
    };
    let int = |name: &str| match config.get(name) {
        Some(Value::Int(i)) if i > 0 => Some(i),
        _ => None,
    };
    // by name: forward may be wrapped by decorators, and a seed for an argument it does not
    // take is never read
    let sym = |n: u32| Dim::Sym(Expr::sym(n));
    let mut out = vec![(
        "input_ids".to_string(),
        Meta::tensor(Some(vec![sym(0), sym(1)]), DType::Int64),
    )];
    if let Some(h) = int("hidden_size") {
        out.push((
            "hidden_states".to_string(),
            Meta::tensor(Some(vec![sym(0), sym(1), Dim::Known(h)]), DType::Float32),
        ));
    }
    if let Some(rotary) = rotary_dim(&config) {
        // `position_embeddings=self.rotary_emb(hidden_states, position_ids)`: the model computes
        // `(cos, sin)` once and hands them to every decoder layer and attention; with the
        // default None instead those classes cannot run (`cos, sin = position_embeddings`).
        let cos_sin = Meta::tensor(
            Some(vec![sym(0), sym(1), Dim::Known(rotary)]),
            DType::Float32,
        );
        out.push((
            "position_embeddings".to_string(),
            Meta::Seq(vec![cos_sin.clone(), cos_sin]),
        ));
    }
    if let Some(pixels) = pixel_values(&config) {
        out.push(("pixel_values".to_string(), pixels));
    }
    out
}

/// `[batch, channels, height, width]` for an image model: the channels from the config or,
/// for a detector built on a backbone (DETR, RT-DETR, D-FINE), from the backbone's config;
/// the sides from `image_size` where the config has one, else symbolic. Video models
/// (a `num_frames`) take 5-D pixels in an order the config does not say: no convention.
fn pixel_values(config: &Object) -> Option<Meta> {
    let positive = |v: Option<Value>| match v {
        Some(Value::Int(i)) if i > 0 => Some(i),
        _ => None,
    };
    if config.get("num_frames").is_some() {
        return None;
    }
    let backbone = || match config.get("backbone_config") {
        Some(Value::Object(b)) => positive(b.get("num_channels")),
        _ => None,
    };
    let channels = positive(config.get("num_channels")).or_else(backbone)?;
    let sym = |n: u32| Dim::Sym(Expr::sym(n));
    let (height, width) = match config.get("image_size") {
        Some(Value::Int(s)) if s > 0 => (Dim::Known(s), Dim::Known(s)),
        Some(sides @ (Value::Tuple(_) | Value::List(_))) => {
            let hw: Vec<Value> = match &sides {
                Value::Tuple(t) => t.to_vec(),
                Value::List(l) => l.borrow().clone(),
                _ => vec![],
            };
            match hw.as_slice() {
                [h, w] => match (positive(Some(h.clone())), positive(Some(w.clone()))) {
                    (Some(h), Some(w)) => (Dim::Known(h), Dim::Known(w)),
                    _ => return None,
                },
                _ => return None,
            }
        }
        None | Some(Value::None) => (sym(2), sym(3)),
        Some(_) => return None,
    };
    Some(Meta::tensor(
        Some(vec![sym(0), Dim::Known(channels), height, width]),
        DType::Float32,
    ))
}

/// The last dim of the rotary `cos` and `sin` of a config with rotary embeddings: the head dim
/// (`head_dim`, else `hidden_size / num_attention_heads`) times `partial_rotary_factor`
/// where the config or its `rope_parameters` has one. None for configs without rope.
fn rotary_dim(config: &Object) -> Option<i64> {
    let rope = config.get("rope_parameters");
    if !matches!(rope, Some(Value::Dict(_))) && config.get("rope_theta").is_none() {
        return None;
    }
    let int = |name: &str| match config.get(name) {
        Some(Value::Int(i)) if i > 0 => Some(i),
        _ => None,
    };
    let head_dim = int("head_dim").or_else(|| {
        let (h, n) = (int("hidden_size")?, int("num_attention_heads")?);
        (h % n == 0).then_some(h / n)
    })?;
    let from_rope = || match &rope {
        Some(Value::Dict(d)) => d.borrow().iter().find_map(|(k, v)| match (k, v) {
            (Value::Str(k), Value::Float(f)) if &**k == "partial_rotary_factor" => Some(*f),
            _ => None,
        }),
        _ => None,
    };
    let factor = match config.get("partial_rotary_factor") {
        Some(Value::Float(f)) => Some(f),
        _ => from_rope(),
    };
    match factor {
        Some(f) if f > 0.0 && f < 1.0 => Some((head_dim as f64 * f) as i64),
        _ => Some(head_dim),
    }
}

/// Whether `root` is a module holding a transformers configuration as `self.config`.
pub fn is_built_from_config(root: &Value) -> bool {
    let Value::Object(obj) = root else {
        return false;
    };
    matches!(obj.get("config"), Some(Value::Object(c)) if is_config_class(&c.class))
}
