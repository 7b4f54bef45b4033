//! `re` with constant patterns: `split` (capturing groups kept, as Python keeps them), `sub`,
//! `findall`, and `match` / `search` / `fullmatch` (None when nothing matches, else a match
//! object whose groups are not modelled); `re.compile` gives a pattern object with the same
//! methods. fancy-regex reads Python's syntax as libraries use it, lookarounds and
//! backreferences included (transformers' tied-weight keys such as `bbox_embed.(?![0])\d+`);
//! a pattern it rejects, or one that exhausts its backtracking, is an unknown value.

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
        if name == "compile" {
            return match arg(0, "pattern") {
                Some(Value::Str(pattern)) => Some(self.compiled_pattern(pattern)),
                _ => Some(Value::unknown(
                    "re.compile of a pattern that could not be evaluated",
                )),
            };
        }
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
        let Ok(re) = fancy_regex::Regex::new(&pattern) else {
            return Some(Value::unknown(format!("re pattern `{pattern}`")));
        };
        let unknown = || Value::unknown(format!("re pattern `{pattern}` on `{s}`"));
        Some(match name {
            "split" => {
                let maxsplit = arg(2, "maxsplit").and_then(|v| as_int(&v)).unwrap_or(0);
                let mut out = Vec::new();
                let mut last = 0;
                for (n, caps) in re.captures_iter(&*s).enumerate() {
                    if maxsplit > 0 && n as i64 >= maxsplit {
                        break;
                    }
                    let Ok(caps) = caps else {
                        return Some(unknown());
                    };
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
                    Value::str(&re.replace_all(&s, fancy_regex::NoExpand(&r)))
                }
                _ => Value::unknown("re.sub with a computed replacement"),
            },
            "findall" => {
                let Ok(found) = re.captures_iter(&*s).collect::<Result<Vec<_>, _>>() else {
                    return Some(unknown());
                };
                Value::list(
                    found
                        .into_iter()
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
                )
            }
            "match" | "search" | "fullmatch" => {
                let anchored = match name {
                    "match" => format!("^(?:{pattern})"),
                    "fullmatch" => format!("^(?:{pattern})$"),
                    _ => pattern.to_string(),
                };
                let Ok(hit) = fancy_regex::Regex::new(&anchored).and_then(|r| r.is_match(&*s))
                else {
                    return Some(unknown());
                };
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

    /// `re.compile(pattern)`: an object holding the pattern, whose methods are `re`'s functions
    /// with the pattern given.
    fn compiled_pattern(&mut self, pattern: Rc<str>) -> Value {
        let id = self.new_object_id();
        let attrs = [("pattern".to_string(), Value::Str(pattern))]
            .into_iter()
            .collect();
        Value::Object(Rc::new(Object {
            id,
            class: Value::External(Rc::from(PATTERN_CLASS)),
            kind: ObjKind::Plain,
            attrs: std::cell::RefCell::new(attrs),
            base: None,
        }))
    }

    /// `pattern.<name>(*args)` on what `re.compile` made: `re.<name>(pattern.pattern, *args)`.
    pub(in crate::eval) fn call_compiled_pattern(
        &mut self,
        pattern: &Object,
        name: &str,
        args: &[Value],
        kwargs: &Kwargs,
    ) -> Option<Value> {
        if !is_pattern_method(name) {
            return None;
        }
        let mut full = vec![pattern.get("pattern")?];
        full.extend(args.iter().cloned());
        self.call_re(name, &full, kwargs)
    }
}

/// The class of what `re.compile` returns.
const PATTERN_CLASS: &str = "re.Pattern";

/// Whether `o` is what `re.compile` returned.
pub(in crate::eval) fn is_compiled_pattern(o: &Object) -> bool {
    matches!(&o.class, Value::External(c) if &**c == PATTERN_CLASS)
}

/// The methods of a compiled pattern that the evaluator runs.
pub(in crate::eval) fn is_pattern_method(name: &str) -> bool {
    matches!(
        name,
        "split" | "sub" | "findall" | "match" | "search" | "fullmatch"
    )
}
