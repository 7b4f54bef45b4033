//! Library methods run natively instead of from their source, and only where the source is
//! the very text the native version was written against (the SHA-256 of the definition): a
//! library version that changed the method, a redirect to an edited text, or a class that
//! puts anything else in the way, and the source is evaluated as before.
//!
//! transformers' config attribute read is the one so far. `PreTrainedConfig.__getattribute__`
//! maps the name through `attribute_map`, and both its lookups of the map and its final read
//! go through `super()` to `HeterogeneousConfigMixin.__getattribute__`, which checks a
//! heterogeneous config's per-layer attributes before `object.__getattribute__`. That is three
//! evaluated calls for every `config.x` in a model's constructors and forwards: about 200,000
//! instructions a read, a quarter of a `check` of modeling_llama.py. Natively, a read of a
//! config that is not heterogeneous is the map lookup and `object.__getattribute__`; a
//! heterogeneous one (`_heterogeneity_spec` set) still runs the source, which raises or warns
//! for per-layer attributes.

use std::rc::Rc;

use sha2::{Digest, Sha256};

use super::value::{Function, Object, Value};
use super::{EResult, Frame, Interp};
use crate::syntax::Span;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NativeMethod {
    /// `PreTrainedConfig.__getattribute__`: the name through `attribute_map`, then `super()`.
    ConfigGetattribute,
    /// `HeterogeneousConfigMixin.__getattribute__`: `object.__getattribute__` unless the
    /// config is heterogeneous.
    HeterogeneousGetattribute,
}

/// A function recognised as a [`NativeMethod`], with what the native version needs of its
/// text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Recognised {
    pub method: NativeMethod,
    /// Where the function ends in `object.__getattribute__`
    /// (`return super().__getattribute__(key)`): an error the read raises is located there,
    /// as evaluating the source locates it.
    pub final_read: Span,
}

/// A method the evaluator runs natively: where it is defined, and the digest of the
/// definition's text (from `def` to the end of its body) it was written against.
#[derive(Clone, Debug)]
pub struct KnownMethod {
    pub module: &'static str,
    pub qualname: &'static str,
    pub sha256: &'static str,
    pub method: NativeMethod,
}

/// The definitions of transformers 5.24.0.
pub const KNOWN_METHODS: &[KnownMethod] = &[
    KnownMethod {
        module: "transformers.configuration_utils",
        qualname: "PreTrainedConfig.__getattribute__",
        sha256: "85754a6c04f5fd6f6f4ab859ea54cfafa455f537719711653e58c71364eb5b73",
        method: NativeMethod::ConfigGetattribute,
    },
    KnownMethod {
        module: "transformers.integrations.heterogeneity.configuration_utils",
        qualname: "HeterogeneousConfigMixin.__getattribute__",
        sha256: "53b2b14e345e395570ecbee791ba2b2a2cc6bf25508210b927cbf4bd1d7cc8e1",
        method: NativeMethod::HeterogeneousGetattribute,
    },
];

/// The hex SHA-256 of a definition's text.
pub fn definition_digest(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl Interp {
    /// Which native method `f` is, if any: decided once per function (its text cannot change;
    /// an edited text makes new functions).
    fn native_method(&self, f: &Function) -> Option<Recognised> {
        if self.redirects.contains_key(&(f.file_id, f.span)) {
            return None;
        }
        *f.native.get_or_init(|| {
            let mut candidates = self
                .native_methods
                .iter()
                .filter(|k| k.qualname == f.qualname && k.module == f.globals.name)
                .peekable();
            candidates.peek()?;
            let text = f.file.text.get(f.span.start..f.span.end)?;
            let digest = definition_digest(text);
            let method = candidates.find(|k| k.sha256 == digest)?.method;
            const FINAL_READ: &str = "super().__getattribute__(key)";
            let at = f.span.start + text.rfind(FINAL_READ)?;
            Some(Recognised {
                method,
                final_read: Span::new(at, at + FINAL_READ.len()),
            })
        })
    }

    /// `obj.name` for an instance whose class's `__getattribute__` is `f`, run natively when
    /// `f` is transformers' config read; None to evaluate `f` from its source.
    pub(super) fn native_getattribute(
        &mut self,
        frame: &Frame,
        obj: &Value,
        o: &Rc<Object>,
        f: &Rc<Function>,
        name: &str,
        span: Span,
    ) -> Option<EResult<Value>> {
        if self.native_method(f)?.method != NativeMethod::ConfigGetattribute {
            return None;
        }
        let (mixin, final_read) = self.heterogeneity_mixin(o, f)?;
        let heterogeneous = o
            .attrs
            .borrow()
            .get("_heterogeneity_spec")
            .is_some_and(|spec| !matches!(spec, Value::None));
        if heterogeneous {
            return None;
        }
        let key = if name == "attribute_map" {
            None
        } else {
            self.attribute_map_entry(o, name)?
        };
        if let Err(e) = self.step(frame, span) {
            return Some(Err(e));
        }
        if let Some(touched) = self.touched.as_mut() {
            touched.insert((f.file_id, f.span));
            touched.insert((mixin.file_id, mixin.span));
        }
        // The read as the mixin's last line makes it: in the mixin's module, at that line,
        // and what the evaluator cannot follow there is the mixin's unknown result.
        let in_mixin = Frame {
            file: mixin.file.clone(),
            file_id: mixin.file_id,
            globals: mixin.globals.clone(),
            locals: None,
            class: None,
            receiver: None,
        };
        let key = key.as_deref().unwrap_or(name);
        let read = self.object_getattribute(&in_mixin, obj, o, key, final_read);
        Some(self.helper_result(&mixin.name, read))
    }

    /// The mixin's `__getattribute__` and where it reads, when the `__getattribute__`s along
    /// the instance's MRO are exactly `f`, then the mixin's, then `object`'s (no other
    /// override, and no base the evaluator does not see into, which `super()` would hand the
    /// read to).
    fn heterogeneity_mixin(&self, o: &Object, f: &Rc<Function>) -> Option<(Rc<Function>, Span)> {
        let Value::Class(class) = &o.class else {
            return None;
        };
        let mut overrides = Vec::with_capacity(2);
        for base in class.mro.borrow().iter() {
            match base {
                Value::Class(k) => {
                    if let Some(v) = k.ns.borrow().get("__getattribute__") {
                        overrides.push(v.clone());
                    }
                }
                Value::Builtin(b) if &**b == "object" => {}
                _ => return None,
            }
        }
        let [Value::Function(first), Value::Function(mixin)] = overrides.as_slice() else {
            return None;
        };
        let recognised = self.native_method(mixin)?;
        (Rc::ptr_eq(first, f) && recognised.method == NativeMethod::HeterogeneousGetattribute)
            .then(|| (mixin.clone(), recognised.final_read))
    }

    /// What `attribute_map` maps `name` to: `Some(None)` when it does not hold `name`, None
    /// when the map is not a plain dict of strings as `object.__getattribute__` would find it
    /// (a descriptor, an unknown), so the source decides.
    fn attribute_map_entry(&self, o: &Object, name: &str) -> Option<Option<String>> {
        let in_class = self.class_lookup(&o.class, "attribute_map");
        let map = match (o.get("attribute_map"), in_class) {
            (_, Some(v)) if !matches!(v, Value::Dict(_)) => return None,
            (Some(v), _) | (None, Some(v)) => v,
            (None, None) => return None,
        };
        let Value::Dict(entries) = map else {
            return None;
        };
        for (k, v) in entries.borrow().iter() {
            match (k, v) {
                (Value::Str(k), Value::Str(v)) if &**k == name => return Some(Some(v.to_string())),
                (Value::Str(k), _) if &**k == name => return None,
                (Value::Str(_) | Value::Int(_) | Value::Bool(_) | Value::None, _) => {}
                _ => return None,
            }
        }
        Some(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::test_support::{interp_over, notes};

    /// A config pair with the semantics of transformers' (written here): a map of names, a
    /// mixin that refuses per-layer attributes of a heterogeneous config, and a subclass
    /// with its own map. The expected values are what CPython 3.11 prints for them.
    const SNIPPET: &str = r#"class Mixin:
    def __getattribute__(self, key):
        spec = super().__getattribute__("__dict__").get("_heterogeneity_spec")
        if spec is not None and key in spec:
            raise AttributeError(key)
        return super().__getattribute__(key)


class Config(Mixin):
    attribute_map = {"hidden": "hidden_size", "width": "hidden_size"}

    def __getattribute__(self, key):
        if key != "attribute_map" and key in super().__getattribute__("attribute_map"):
            key = super().__getattribute__("attribute_map")[key]
        return super().__getattribute__(key)

    def __init__(self, hidden_size=8, **kwargs):
        self.hidden_size = hidden_size
        for k, v in kwargs.items():
            setattr(self, k, v)

    @property
    def double(self):
        return self.hidden * 2

    def scaled(self, k):
        return self.hidden * k


class Small(Config):
    attribute_map = {"hidden": "hidden_size", "layers": "num_layers"}


c = Small(hidden_size=4, num_layers=3)
r1 = (c.hidden, c.layers, c.hidden_size, c.double, c.scaled(3), getattr(c, "missing", "dflt"), hasattr(c, "width"), c.attribute_map["layers"], "hidden_size" in c.__dict__)
h = Config(_heterogeneity_spec=["hidden_size"], depth=2)
try:
    h.hidden
    r2 = "read"
except AttributeError:
    r2 = "raised"
r3 = (h.depth, type(c).__name__, Config().width)
"#;

    /// What CPython prints for `r1`, `r2`, `r3`.
    const CPYTHON: [&str; 3] = [
        "(4, 3, 4, 8, 12, 'dflt', False, 'num_layers', True)",
        "'raised'",
        "(2, 'Small', 8)",
    ];

    fn repr(v: &Value) -> String {
        match v {
            Value::Bool(b) => if *b { "True" } else { "False" }.into(),
            Value::Int(i) => i.to_string(),
            Value::Str(s) => format!("'{s}'"),
            Value::Tuple(t) => format!("({})", t.iter().map(repr).collect::<Vec<_>>().join(", ")),
            other => format!("{other:?}"),
        }
    }

    /// The digest of the `__getattribute__` defined in class `class` of `text`.
    fn digest_of(text: &str, class: &str) -> &'static str {
        let start = text
            .find(&format!("class {class}"))
            .expect("class in the snippet");
        let def = start + text[start..].find("    def __getattribute__").unwrap() + 4;
        // the body ends at its `return` line's end
        let ret = def
            + text[def..]
                .find("return super().__getattribute__(key)")
                .unwrap();
        let end = ret + "return super().__getattribute__(key)".len();
        Box::leak(definition_digest(&text[def..end]).into_boxed_str())
    }

    /// `r1`..`r3` of the snippet, and the steps its evaluation took, with `known` as the
    /// methods run natively.
    fn run(known: Vec<KnownMethod>) -> (Vec<String>, u64) {
        let (mut interp, file) = interp_over("cfg", SNIPPET);
        interp.native_methods = known.into();
        let ns = interp.load_module(file).unwrap();
        assert!(notes(&interp).is_empty(), "{:?}", notes(&interp));
        let values = ["r1", "r2", "r3"]
            .iter()
            .map(|name| ns.vars.borrow().get(*name).map(repr).unwrap_or_default())
            .collect();
        (values, interp.steps_used())
    }

    fn snippet_methods(config_digest: &'static str) -> Vec<KnownMethod> {
        vec![
            KnownMethod {
                module: "cfg",
                qualname: "Config.__getattribute__",
                sha256: config_digest,
                method: NativeMethod::ConfigGetattribute,
            },
            KnownMethod {
                module: "cfg",
                qualname: "Mixin.__getattribute__",
                sha256: digest_of(SNIPPET, "Mixin"),
                method: NativeMethod::HeterogeneousGetattribute,
            },
        ]
    }

    #[test]
    fn native_reads_give_what_the_source_gives() {
        let (from_source, source_steps) = run(vec![]);
        assert_eq!(from_source, CPYTHON);
        let (native, native_steps) = run(snippet_methods(digest_of(SNIPPET, "Config")));
        assert_eq!(native, CPYTHON);
        // the reads took the native route: each evaluated read is a dozen statements and calls
        assert!(
            native_steps * 2 < source_steps,
            "native {native_steps} steps, source {source_steps}"
        );
    }

    #[test]
    fn another_text_is_evaluated_from_source() {
        let (_, source_steps) = run(vec![]);
        let other =
            Box::leak(definition_digest("def __getattribute__(self, key): pass").into_boxed_str());
        let (values, steps) = run(snippet_methods(other));
        assert_eq!(values, CPYTHON);
        assert_eq!(steps, source_steps);
    }

    #[test]
    fn the_known_digests_are_sha256_hex() {
        for k in KNOWN_METHODS {
            assert_eq!(k.sha256.len(), 64, "{}", k.qualname);
            assert!(k
                .sha256
                .bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
        }
        assert_eq!(
            definition_digest("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
