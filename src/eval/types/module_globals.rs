//! A module's namespace as a dict (`Value::ModuleGlobals`, what `globals()` returns). As in
//! Python it is the namespace itself, not a copy: `globals()[name] = v` binds a global, and
//! a dict kept from an earlier `globals()` sees later bindings. Keys are looked up as names
//! are: an import the evaluator has deferred is bound (and evaluated on first read).
//!
//! What the namespace holds besides the module's own names (`__builtins__`, `__spec__`,
//! `__loader__`, …) is not modelled, so whatever reads the whole of it (iteration, `len`,
//! `keys()`, a copy, its repr) is unknown rather than a partial answer.

use std::rc::Rc;

use crate::diagnostics::codes;
use crate::eval::call::Kwargs;
use crate::eval::value::{ModuleNs, Value};
use crate::eval::{EResult, Frame, Interp};
use crate::syntax::Span;

/// The methods of a module's globals that read or write single names; any other method
/// reads the whole namespace.
const NAME_METHODS: &[&str] = &[
    "get",
    "pop",
    "setdefault",
    "update",
    "__contains__",
    "__getitem__",
    "__setitem__",
    "__delitem__",
];

/// `globals().name`: a method bound to the namespace.
pub(in crate::eval) fn get_attr(obj: &Value, name: &str) -> Value {
    Value::Method(Rc::new(obj.clone()), Rc::from(name))
}

/// Whether `name` is bound in `ns` (deferred imports and the import system's entries
/// included).
pub(in crate::eval) fn contains(ns: &ModuleNs, name: &str) -> bool {
    ns.vars.borrow().contains_key(name)
        || ns.pending.borrow().contains_key(name)
        || crate::eval::call::module_record(name).is_some()
}

/// `globals().name(*args, **kwargs)`.
pub(in crate::eval) fn call_method(
    interp: &mut Interp,
    frame: &Frame,
    ns: &Rc<ModuleNs>,
    name: &str,
    args: &[Value],
    kwargs: &Kwargs,
    span: Span,
) -> EResult<Value> {
    if !NAME_METHODS.contains(&name) {
        return Ok(Value::unknown(whole_namespace(&format!(
            "`globals().{name}()`"
        ))));
    }
    if name == "update" {
        return update(ns, args, kwargs);
    }
    let key = match args.first() {
        Some(Value::Str(k)) => k.clone(),
        // Only names reach a module's namespace here; another key is not modelled.
        _ => {
            return Ok(Value::unknown(format!(
                "`globals().{name}` with a key that is not a string"
            )))
        }
    };
    let bound = lookup(interp, ns, &key);
    let missing = |interp: &mut Interp| {
        Err(interp.error(frame, span, codes::RAISED, format!("KeyError: '{key}'")))
    };
    match name {
        "__contains__" => Ok(Value::Bool(bound.is_some())),
        "get" => Ok(bound.unwrap_or_else(|| super::dict::default(args, kwargs))),
        "__getitem__" => bound.map_or_else(|| missing(interp), Ok),
        "setdefault" => Ok(bound.unwrap_or_else(|| {
            let v = super::dict::default(args, kwargs);
            ns.vars.borrow_mut().insert(key.to_string(), v.clone());
            v
        })),
        "__setitem__" => {
            let v = args.get(1).cloned().unwrap_or(Value::None);
            ns.vars.borrow_mut().insert(key.to_string(), v);
            Ok(Value::None)
        }
        // "pop" | "__delitem__"
        _ => match bound {
            Some(v) => {
                ns.vars.borrow_mut().shift_remove(&*key);
                Ok(if name == "pop" { v } else { Value::None })
            }
            None => match (name, args.get(1)) {
                ("pop", Some(default)) => Ok(default.clone()),
                _ => missing(interp),
            },
        },
    }
}

/// The value `name` is bound to in `ns`, a deferred import evaluated, or the import
/// system's entry of that name.
fn lookup(interp: &mut Interp, ns: &Rc<ModuleNs>, name: &str) -> Option<Value> {
    if let Some(v) = ns.vars.borrow().get(name) {
        return Some(v.clone());
    }
    interp
        .force_pending(ns, name)
        .or_else(|| crate::eval::call::module_record(name))
}

/// `globals().update(other, **kwargs)`: binds each string key.
fn update(ns: &ModuleNs, args: &[Value], kwargs: &Kwargs) -> EResult<Value> {
    let mut items = match args.first() {
        None => vec![],
        Some(Value::Dict(d)) => d.borrow().clone(),
        Some(_) => {
            return Ok(Value::unknown(
                "`globals().update` from a value that is not a dict",
            ))
        }
    };
    items.extend(kwargs.iter().map(|(k, v)| (Value::str(k), v.clone())));
    if items.iter().any(|(k, _)| !matches!(k, Value::Str(_))) {
        return Ok(Value::unknown(
            "`globals().update` with a key that is not a string",
        ));
    }
    let mut vars = ns.vars.borrow_mut();
    for (k, v) in items {
        if let Value::Str(k) = k {
            vars.insert(k.to_string(), v);
        }
    }
    Ok(Value::None)
}

/// Why reading the whole namespace (`what`) has no known answer.
pub(in crate::eval) fn whole_namespace(what: &str) -> String {
    format!(
        "{what} reads a module's whole namespace, whose interpreter entries (`__builtins__`, `__spec__`, …) are not modelled"
    )
}

#[cfg(test)]
mod tests {
    use crate::eval::test_support::{interp_over, notes, py_repr};
    use crate::eval::value::Value;

    /// The value `name` is bound to after running `text` as a module, as Python's repr.
    fn run(text: &str, name: &str) -> (String, Vec<String>) {
        let (mut interp, file) = interp_over("m", text);
        let ns = interp.load_module(file).expect("the module runs");
        let v = ns.vars.borrow().get(name).cloned();
        let shown = match v {
            Some(Value::Unknown(u)) => format!("<unknown: {}>", u.reason),
            Some(v) => py_repr(&v),
            None => "<unbound>".into(),
        };
        (shown, notes(&interp))
    }

    #[test]
    fn globals_is_the_namespace_itself() {
        let text = "g = globals()\nglobals()['A'] = 3\ng['B'] = A + 1\ndel g['A']\n\
                    r = (B, 'A' in g, 'B' in globals(), g.get('A', 'gone'), g.pop('B'), 'B' in g)\n";
        assert_eq!(run(text, "r").0, "(4, False, True, 'gone', 4, False)");
    }

    #[test]
    fn reading_the_whole_namespace_is_unknown_not_partial() {
        let (keys, _) = run("k = globals().keys()\n", "k");
        assert!(
            keys.starts_with("<unknown: `globals().keys()` reads a module's whole namespace"),
            "{keys}"
        );
        let (names, notes) = run("names = [n for n in globals()]\n", "names");
        assert!(
            names.starts_with("<unknown: ") && names.contains("iterating over `globals()`"),
            "{names}"
        );
        assert!(
            notes
                .iter()
                .any(|n| n.contains("iterating over `globals()`")),
            "{notes:?}"
        );
    }

    /// transformers' and diffusers' lazy `__init__`s read `globals()["__file__"]`.
    #[test]
    fn the_import_systems_entries_are_present_and_unknown() {
        let text =
            "f = globals()['__file__']\nr = ('__file__' in globals(), '__spec__' in globals())\n";
        assert_eq!(run(text, "r").0, "(True, True)");
        assert_eq!(run(text, "f").0, "<unknown: __file__>");
    }

    #[test]
    fn a_missing_name_is_a_key_error() {
        let (r, _) = run(
            "try:\n    globals()['NOPE']\n    r = 'found'\nexcept KeyError:\n    r = 'KeyError'\n",
            "r",
        );
        assert_eq!(r, "'KeyError'");
    }
}
