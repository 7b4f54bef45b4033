//! `enum`: a class deriving from `Enum` (or `IntEnum`, `StrEnum`, `Flag`) turns its plain
//! class attributes into members, singletons with `name` and `value`; calling the class looks a
//! member up by value. With a `str` or `int` mixin (`class Format(str, Enum)`) a member also
//! is its value (`Object::base`): it equals it, and `str`'s or `int`'s methods work on it.

use std::rc::Rc;

use super::super::value::{Class, FnKind, ObjKind, Object, Value};
use super::super::{EResult, Frame, Interp};
use crate::diagnostics::codes;
use crate::syntax::Span;

/// What `enum.auto()` returns: the class statement gives the member its value.
pub const AUTO: &str = "enum.auto()";

fn value_of(member: &Value) -> Value {
    match member {
        Value::Object(o) => o.get("_value_").unwrap_or(Value::None),
        _ => Value::None,
    }
}

/// `Color.__members__`: every member by name, aliases included, in definition order.
pub fn members_mapping(class: &Rc<Class>) -> Value {
    let items = class
        .ns
        .borrow()
        .iter()
        .filter(|(k, v)| {
            !k.starts_with('_')
                && matches!(v, Value::Object(o) if matches!(&o.class, Value::Class(c) if Rc::ptr_eq(c, class)))
        })
        .map(|(k, v)| (Value::str(k), v.clone()))
        .collect();
    Value::Dict(Rc::new(std::cell::RefCell::new(items)))
}

fn is_enum_base(v: &Value) -> bool {
    matches!(v, Value::External(p) if matches!(&**p, "enum.Enum" | "enum.IntEnum" | "enum.StrEnum" | "enum.Flag" | "enum.IntFlag"))
}

pub fn is_enum_class(class: &Class) -> bool {
    class.mro.borrow().iter().any(is_enum_base)
}

/// An enum class's members in definition order, by name; a name bound to a member already
/// listed (an alias) is left out, as iterating the class leaves it out.
pub fn members(class: &Rc<Class>) -> Vec<(String, Value)> {
    let mut out: Vec<(String, Value)> = Vec::new();
    for (name, v) in class.ns.borrow().iter() {
        let Value::Object(o) = v else { continue };
        if !matches!(&o.class, Value::Class(c) if Rc::ptr_eq(c, class)) || name.starts_with('_') {
            continue;
        }
        let alias = out
            .iter()
            .any(|(_, m)| matches!(m, Value::Object(p) if Rc::ptr_eq(p, o)));
        if !alias {
            out.push((name.clone(), v.clone()));
        }
    }
    out
}

impl Interp {
    /// Replaces the plain attributes of an enum class body by its members.
    pub(in crate::eval) fn make_enum_members(&mut self, class: &Rc<Class>) {
        if !is_enum_class(class) {
            return;
        }
        let mixin = class.mro.borrow().iter().any(|m| {
            matches!(m, Value::Builtin(b) if matches!(&**b, "str" | "int"))
                || matches!(m, Value::External(p) if matches!(&**p, "enum.IntEnum" | "enum.StrEnum" | "enum.IntFlag"))
        });
        let entries: Vec<(String, Value)> = class
            .ns
            .borrow()
            .iter()
            .filter(|(k, v)| {
                !k.starts_with('_')
                    && !matches!(
                        v,
                        Value::Function(_)
                            | Value::Class(_)
                            | Value::Builtin(_)
                            | Value::External(_)
                    )
                    || matches!(v, Value::External(p) if &**p == AUTO)
            })
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let str_valued = class.mro.borrow().iter().any(|m| {
            matches!(m, Value::Builtin(b) if &**b == "str")
                || matches!(m, Value::External(p) if &**p == "enum.StrEnum")
        });
        let mut made: Vec<(Value, Value)> = Vec::new();
        for (name, value) in entries {
            // `auto()`: the member's name for a str enum, else one more than the last int.
            let value = if matches!(&value, Value::External(p) if &**p == AUTO) {
                if str_valued {
                    Value::str(&name.to_lowercase())
                } else {
                    let last = made.iter().rev().find_map(|(v, _)| match v {
                        Value::Int(i) => Some(*i),
                        _ => None,
                    });
                    Value::Int(last.map_or(1, |i| i + 1))
                }
            } else {
                value
            };
            // A second name for a value already given is an alias of that member.
            if let Some((_, member)) = made.iter().find(|(v, _)| v.py_eq(&value) == Some(true)) {
                let member = member.clone();
                class.ns.borrow_mut().insert(name, member);
                continue;
            }
            let id = self.new_object_id();
            let member = Object {
                id,
                class: Value::Class(class.clone()),
                kind: ObjKind::Plain,
                attrs: Default::default(),
                // A member of a class that mixes in `str` or `int` is that value.
                base: mixin.then(|| value.clone()),
            };
            {
                let mut a = member.attrs.borrow_mut();
                a.insert("name".into(), Value::str(&name));
                a.insert("_name_".into(), Value::str(&name));
                a.insert("value".into(), value.clone());
                a.insert("_value_".into(), value);
            }
            let member = Value::Object(Rc::new(member));
            made.push((value_of(&member), member.clone()));
            class.ns.borrow_mut().insert(name, member);
        }
    }

    /// `Format("NHWC")` / `Format(Format.NHWC)`: the member with that value.
    pub(in crate::eval) fn enum_lookup(
        &mut self,
        frame: &Frame,
        class: &Rc<Class>,
        value: &Value,
        span: Span,
    ) -> EResult<Value> {
        if let Value::Object(o) = value {
            if matches!(&o.class, Value::Class(c) if Rc::ptr_eq(c, class)) {
                return Ok(value.clone());
            }
        }
        let members: Vec<Value> = class.ns.borrow().values().cloned().collect();
        let mut undecided = false;
        for m in members {
            if let Value::Object(o) = &m {
                if !matches!(&o.class, Value::Class(c) if Rc::ptr_eq(c, class)) {
                    continue;
                }
                match o.get("_value_").unwrap_or(Value::None).py_eq(value) {
                    Some(true) => return Ok(m.clone()),
                    Some(false) => {}
                    None => undecided = true,
                }
            }
        }
        if undecided || value.is_unknown() {
            return Ok(Value::unknown(format!("member of `{}`", class.name)));
        }
        // `_missing_` hooks are not modelled; without one this is Python's error.
        if class
            .ns
            .borrow()
            .get("_missing_")
            .is_some_and(|f| matches!(f, Value::Function(f) if f.kind == FnKind::ClassMethod))
        {
            return Ok(Value::unknown(format!("`{}._missing_`", class.name)));
        }
        Err(self.error(
            frame,
            span,
            codes::RAISED,
            format!("ValueError: {value:?} is not a valid {}", class.name),
        ))
    }
}
