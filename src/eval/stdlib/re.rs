//! `re` with constant patterns: `split` (capturing groups kept, as Python keeps them), `sub`,
//! `findall`, and `match` / `search` / `fullmatch` (None when nothing matches, else a match
//! object whose groups are not modelled). Python and regex-lite agree on the syntax libraries
//! use here (classes, groups, quantifiers); a pattern regex-lite rejects is an unknown value.

use std::rc::Rc;

use super::super::call::{as_int, Kwargs};
use super::super::value::{ObjKind, Object, Value};
use super::super::Interp;

impl Interp {
    pub(in crate::eval) fn call_re(
        &mut self,
        name: &str,
        args: &[Value],
        kwargs: &Kwargs,
    ) -> Option<Value> {
        let arg = |i: usize, k: &str| {
            args.get(i)
                .cloned()
                .or_else(|| kwargs.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone()))
        };
        let (Some(Value::Str(pattern)), Some(Value::Str(s))) = (
            arg(0, "pattern"),
            arg(if name == "sub" { 2 } else { 1 }, "string"),
        ) else {
            return matches!(
                name,
                "split" | "sub" | "findall" | "match" | "search" | "fullmatch"
            )
            .then(|| Value::unknown(format!("re.{name} on values that could not be evaluated")));
        };
        let Ok(re) = regex_lite::Regex::new(&pattern) else {
            return Some(Value::unknown(format!("re pattern `{pattern}`")));
        };
        Some(match name {
            "split" => {
                let maxsplit = arg(2, "maxsplit").and_then(|v| as_int(&v)).unwrap_or(0);
                let mut out = Vec::new();
                let mut last = 0;
                for (n, caps) in re.captures_iter(&s).enumerate() {
                    if maxsplit > 0 && n as i64 >= maxsplit {
                        break;
                    }
                    let m = caps.get(0).expect("group 0");
                    out.push(Value::str(&s[last..m.start()]));
                    for g in 1..caps.len() {
                        out.push(
                            caps.get(g)
                                .map(|g| Value::str(g.as_str()))
                                .unwrap_or(Value::None),
                        );
                    }
                    last = m.end();
                }
                out.push(Value::str(&s[last..]));
                Value::list(out)
            }
            "sub" => match arg(1, "repl") {
                // Group references in the replacement use Python's syntax; only plain text is modelled.
                Some(Value::Str(r)) if !r.contains('\\') => {
                    Value::str(&re.replace_all(&s, regex_lite::NoExpand(&r)))
                }
                _ => Value::unknown("re.sub with a computed replacement"),
            },
            "findall" => Value::list(
                re.captures_iter(&s)
                    .map(|c| match c.len() {
                        1 => Value::str(c.get(0).map_or("", |m| m.as_str())),
                        2 => Value::str(c.get(1).map_or("", |m| m.as_str())),
                        n => Value::tuple(
                            (1..n)
                                .map(|g| Value::str(c.get(g).map_or("", |m| m.as_str())))
                                .collect(),
                        ),
                    })
                    .collect(),
            ),
            "match" | "search" | "fullmatch" => {
                let anchored = match name {
                    "match" => format!("^(?:{pattern})"),
                    "fullmatch" => format!("^(?:{pattern})$"),
                    _ => pattern.to_string(),
                };
                let hit = regex_lite::Regex::new(&anchored).is_ok_and(|r| r.is_match(&s));
                if hit {
                    let id = self.new_object_id();
                    Value::Object(Rc::new(Object {
                        id,
                        class: Value::External(Rc::from("re.Match")),
                        kind: ObjKind::Plain,
                        attrs: Default::default(),
                        base: None,
                    }))
                } else {
                    Value::None
                }
            }
            _ => return None,
        })
    }
}
