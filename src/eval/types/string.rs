//! `str`: its methods, with CPython's semantics. Indices count code points, `None` means
//! "absent" where CPython allows it, and the methods that raise (`index` on a missing
//! substring) say so. `call` holds the methods that compute a new value from the string and
//! plain arguments; `call_method` adds those that call back into the evaluator (`join`
//! iterates its argument).

use crate::diagnostics::codes;
use crate::eval::call::{as_int, Kwargs};
use crate::eval::value::Value;
use crate::eval::{EResult, Frame, Interp};
use crate::syntax::Span;

/// `s.name(*args, **kwargs)`: every `str` method the evaluator models.
pub(in crate::eval) fn call_method(
    interp: &mut Interp,
    frame: &Frame,
    s: &str,
    name: &str,
    args: &[Value],
    kwargs: &Kwargs,
    span: Span,
) -> EResult<Value> {
    match call(s, name, args, kwargs) {
        Some(Ok(v)) => return Ok(v),
        Some(Err(exception)) => return Err(interp.error(frame, span, codes::RAISED, exception)),
        None => {}
    }
    Ok(match name {
        "format" => str_format(s, args, kwargs)
            .map(|t| Value::str(&t))
            .unwrap_or_else(|| Value::unknown("str.format with a format spec")),
        "join" => {
            let items = interp.iterate(frame, args.first().unwrap_or(&Value::None), span)?;
            let parts: Option<Vec<String>> = items
                .iter()
                .map(|v| {
                    if let Value::Str(x) = v {
                        Some(x.to_string())
                    } else {
                        None
                    }
                })
                .collect();
            parts
                .map(|p| Value::str(&p.join(s)))
                .unwrap_or_else(|| Value::unknown("join"))
        }
        _ => Value::unknown(format!("str.{name}")),
    })
}

/// What a `str` method call gives: its value, a Python exception (`"ValueError: …"`), or
/// `None` for a method this module does not model.
pub(in crate::eval) type MethodResult = Option<Result<Value, String>>;

fn arg<'a>(args: &'a [Value], kwargs: &'a Kwargs, i: usize, name: &str) -> Option<&'a Value> {
    args.get(i)
        .or_else(|| kwargs.iter().find(|(k, _)| k == name).map(|(_, v)| v))
        .filter(|v| !matches!(v, Value::None))
}

/// A slice bound of `start`/`end` arguments, clamped to `len` as CPython clamps them.
fn bound(v: Option<&Value>, len: usize, default: usize) -> Option<usize> {
    let Some(v) = v else { return Some(default) };
    let i = as_int(v)?;
    let len_i = len as i64;
    Some(if i < 0 {
        (i + len_i).max(0)
    } else {
        i.min(len_i)
    } as usize)
}

fn chars(s: &str) -> Vec<char> {
    s.chars().collect()
}

fn string(cs: &[char]) -> Value {
    Value::str(&cs.iter().collect::<String>())
}

fn position(hay: &[char], needle: &[char], from_end: bool) -> Option<usize> {
    if needle.len() > hay.len() {
        return None;
    }
    let last = hay.len() - needle.len();
    let matches = |i: &usize| hay[*i..*i + needle.len()] == *needle;
    if from_end {
        (0..=last).rev().find(matches)
    } else {
        (0..=last).find(matches)
    }
}

fn count(hay: &[char], needle: &[char]) -> usize {
    if needle.is_empty() {
        return hay.len() + 1;
    }
    let (mut n, mut i) = (0, 0);
    while i + needle.len() <= hay.len() {
        if hay[i..i + needle.len()] == *needle {
            n += 1;
            i += needle.len();
        } else {
            i += 1;
        }
    }
    n
}

/// `prefix` as `startswith`/`endswith` take it: a string or a tuple of strings.
fn affixes(v: &Value) -> Option<Vec<Vec<char>>> {
    match v {
        Value::Str(p) => Some(vec![chars(p)]),
        Value::Tuple(t) => t
            .iter()
            .map(|p| match p {
                Value::Str(p) => Some(chars(p)),
                _ => None,
            })
            .collect(),
        _ => None,
    }
}

fn predicate(s: &str, name: &str) -> Option<bool> {
    let non_empty = !s.is_empty();
    let cased = |c: &char| c.is_lowercase() || c.is_uppercase();
    Some(match name {
        "isdigit" | "isdecimal" => non_empty && s.chars().all(|c| c.is_ascii_digit()),
        "isnumeric" => non_empty && s.chars().all(|c| c.is_numeric()),
        "isalpha" => non_empty && s.chars().all(|c| c.is_alphabetic()),
        "isalnum" => non_empty && s.chars().all(|c| c.is_alphanumeric()),
        "isspace" => non_empty && s.chars().all(|c| c.is_whitespace()),
        "isascii" => s.is_ascii(),
        "isupper" => s.chars().any(|c| cased(&c)) && !s.chars().any(|c| c.is_lowercase()),
        "islower" => s.chars().any(|c| cased(&c)) && !s.chars().any(|c| c.is_uppercase()),
        "isidentifier" => {
            let mut cs = s.chars();
            cs.next().is_some_and(|c| c == '_' || c.is_alphabetic())
                && cs.all(|c| c == '_' || c.is_alphanumeric())
        }
        "istitle" => {
            let (mut seen_cased, mut prev_cased) = (false, false);
            for c in s.chars() {
                if c.is_uppercase() {
                    if prev_cased {
                        return Some(false);
                    }
                    (seen_cased, prev_cased) = (true, true);
                } else if c.is_lowercase() {
                    if !prev_cased {
                        return Some(false);
                    }
                    (seen_cased, prev_cased) = (true, true);
                } else {
                    prev_cased = false;
                }
            }
            seen_cased
        }
        _ => return None,
    })
}

/// Words start after any character that is not a letter (`str.title`).
fn title(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut prev_letter = false;
    for c in s.chars() {
        if prev_letter {
            out.extend(c.to_lowercase());
        } else {
            out.extend(c.to_uppercase());
        }
        prev_letter = c.is_alphabetic();
    }
    out
}

fn pad(s: &str, args: &[Value], kwargs: &Kwargs, name: &str) -> Option<Value> {
    let width = as_int(arg(args, kwargs, 0, "width")?)?;
    let fill = match arg(args, kwargs, 1, "fillchar") {
        Some(Value::Str(f)) if f.chars().count() == 1 => f.chars().next()?,
        Some(_) => return None,
        None => ' ',
    };
    let len = s.chars().count() as i64;
    if width <= len {
        return Some(Value::str(s));
    }
    let total = (width - len) as usize;
    let (left, right) = match name {
        "ljust" => (0, total),
        "rjust" => (total, 0),
        // CPython puts the odd extra character on the left when the width is odd.
        _ => {
            let left = total / 2 + (total & width as usize & 1);
            (left, total - left)
        }
    };
    let fill_n = |n: usize| std::iter::repeat_n(fill, n).collect::<String>();
    Some(Value::str(&format!("{}{s}{}", fill_n(left), fill_n(right))))
}

fn split(s: &str, args: &[Value], kwargs: &Kwargs, from_end: bool) -> Option<Value> {
    let maxsplit = match arg(args, kwargs, 1, "maxsplit") {
        Some(v) => as_int(v)?,
        None => -1,
    };
    let limit = (maxsplit >= 0).then_some(maxsplit as usize);
    let parts: Vec<String> = match arg(args, kwargs, 0, "sep") {
        Some(Value::Str(sep)) if !sep.is_empty() => match (limit, from_end) {
            (Some(n), false) => s.splitn(n + 1, &**sep).map(String::from).collect(),
            (Some(n), true) => {
                let mut v: Vec<String> = s.rsplitn(n + 1, &**sep).map(String::from).collect();
                v.reverse();
                v
            }
            (None, _) => s.split(&**sep).map(String::from).collect(),
        },
        Some(_) => return None,
        None => split_whitespace(s, limit, from_end),
    };
    Some(Value::list(parts.iter().map(|p| Value::str(p)).collect()))
}

/// `split()` without a separator: runs of whitespace separate, leading and trailing
/// whitespace gives no empty part, and after `limit` splits the rest is one part with its
/// whitespace kept on the far side.
fn split_whitespace(s: &str, limit: Option<usize>, from_end: bool) -> Vec<String> {
    if from_end {
        let reversed: String = s.chars().rev().collect();
        let mut parts = split_whitespace(&reversed, limit, false);
        parts.reverse();
        return parts
            .into_iter()
            .map(|p| p.chars().rev().collect())
            .collect();
    }
    let mut parts = Vec::new();
    let mut rest = s.trim_start();
    while !rest.is_empty() {
        if limit.is_some_and(|n| parts.len() == n) {
            parts.push(rest.to_string());
            break;
        }
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        parts.push(rest[..end].to_string());
        rest = rest[end..].trim_start();
    }
    parts
}

fn splitlines(s: &str, keepends: bool) -> Value {
    let mut lines = Vec::new();
    let cs = chars(s);
    let (mut start, mut i) = (0, 0);
    while i < cs.len() {
        let c = cs[i];
        if matches!(
            c,
            '\n' | '\r'
                | '\x0b'
                | '\x0c'
                | '\x1c'
                | '\x1d'
                | '\x1e'
                | '\u{85}'
                | '\u{2028}'
                | '\u{2029}'
        ) {
            let mut end = i + 1;
            if c == '\r' && cs.get(i + 1) == Some(&'\n') {
                end += 1;
            }
            lines.push(string(&cs[start..if keepends { end } else { i }]));
            start = end;
            i = end;
        } else {
            i += 1;
        }
    }
    if start < cs.len() {
        lines.push(string(&cs[start..]));
    }
    Value::list(lines)
}

/// `repr(s)`: single quotes unless the text holds one and no double quote, with the
/// escapes CPython writes.
pub(in crate::eval) fn repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// `s.find(sub[, start[, end]])` and `rfind`, `index`, `rindex`, `count`.
fn search(s: &str, name: &str, args: &[Value], kwargs: &Kwargs) -> MethodResult {
    let needle = match arg(args, kwargs, 0, "sub") {
        Some(Value::Str(x)) => chars(x),
        _ => return None,
    };
    let cs = chars(s);
    let start = bound(arg(args, kwargs, 1, "start"), cs.len(), 0)?;
    let end = bound(arg(args, kwargs, 2, "end"), cs.len(), cs.len())?;
    if start > end {
        return Some(match name {
            "count" => Ok(Value::Int(0)),
            "index" | "rindex" => Err("ValueError: substring not found".into()),
            _ => Ok(Value::Int(-1)),
        });
    }
    let window = &cs[start..end];
    let value = if name == "count" {
        Value::Int(count(window, &needle) as i64)
    } else {
        match position(window, &needle, name.starts_with('r')) {
            Some(i) => Value::Int((start + i) as i64),
            None if name.ends_with("index") => {
                return Some(Err("ValueError: substring not found".into()))
            }
            None => Value::Int(-1),
        }
    };
    Some(Ok(value))
}

/// `s.name(*args, **kwargs)` for the methods that only read plain arguments.
pub(in crate::eval) fn call(s: &str, name: &str, args: &[Value], kwargs: &Kwargs) -> MethodResult {
    if let Some(b) = predicate(s, name) {
        return Some(Ok(Value::Bool(b)));
    }
    let str_arg = |i: usize, kw: &str| match arg(args, kwargs, i, kw) {
        Some(Value::Str(x)) => Some(x.clone()),
        _ => None,
    };
    let value = match name {
        "lower" => Value::str(&s.to_lowercase()),
        "casefold" => Value::str(&s.to_lowercase()),
        "upper" => Value::str(&s.to_uppercase()),
        "title" => Value::str(&title(s)),
        "capitalize" => {
            let mut cs = s.chars();
            let first: String = cs
                .next()
                .map(|c| c.to_uppercase().collect())
                .unwrap_or_default();
            Value::str(&format!("{first}{}", cs.as_str().to_lowercase()))
        }
        "swapcase" => Value::str(
            &s.chars()
                .flat_map(|c| {
                    if c.is_uppercase() {
                        c.to_lowercase().collect::<Vec<_>>()
                    } else {
                        c.to_uppercase().collect()
                    }
                })
                .collect::<String>(),
        ),
        "strip" | "lstrip" | "rstrip" => {
            let set: Option<Vec<char>> = match arg(args, kwargs, 0, "chars") {
                Some(Value::Str(c)) => Some(c.chars().collect()),
                Some(_) => return None,
                None => None,
            };
            let pat = |c: char| match &set {
                Some(set) => set.contains(&c),
                None => c.is_whitespace(),
            };
            Value::str(match name {
                "strip" => s.trim_matches(pat),
                "lstrip" => s.trim_start_matches(pat),
                _ => s.trim_end_matches(pat),
            })
        }
        "startswith" | "endswith" => {
            let options = affixes(arg(args, kwargs, 0, "prefix")?)?;
            let cs = chars(s);
            let start = bound(arg(args, kwargs, 1, "start"), cs.len(), 0)?;
            let end = bound(arg(args, kwargs, 2, "end"), cs.len(), cs.len())?;
            let window = if start <= end {
                &cs[start..end]
            } else {
                &[][..]
            };
            let hit = options.iter().any(|o| {
                if start > end {
                    return false;
                }
                if name == "startswith" {
                    window.starts_with(o)
                } else {
                    window.ends_with(o)
                }
            });
            Value::Bool(hit)
        }
        "find" | "rfind" | "index" | "rindex" | "count" => return search(s, name, args, kwargs),
        "partition" | "rpartition" => {
            let sep = str_arg(0, "sep")?;
            if sep.is_empty() {
                return Some(Err("ValueError: empty separator".into()));
            }
            let found = if name == "partition" {
                s.split_once(&*sep)
            } else {
                s.rsplit_once(&*sep)
            };
            let parts = match (found, name) {
                (Some((a, b)), _) => [a, &sep, b],
                (None, "partition") => [s, "", ""],
                (None, _) => ["", "", s],
            };
            Value::tuple(parts.iter().map(|p| Value::str(p)).collect())
        }
        "split" => return split(s, args, kwargs, false).map(Ok),
        "rsplit" => return split(s, args, kwargs, true).map(Ok),
        "splitlines" => {
            let keepends = match arg(args, kwargs, 0, "keepends") {
                Some(Value::Bool(b)) => *b,
                Some(v) => as_int(v)? != 0,
                None => false,
            };
            splitlines(s, keepends)
        }
        "replace" => {
            let (old, new) = (str_arg(0, "old")?, str_arg(1, "new")?);
            match arg(args, kwargs, 2, "count").map(as_int) {
                Some(Some(n)) if n >= 0 => Value::str(&s.replacen(&*old, &new, n as usize)),
                Some(None) => return None,
                _ => Value::str(&s.replace(&*old, &new)),
            }
        }
        "removeprefix" => {
            let p = str_arg(0, "prefix")?;
            Value::str(s.strip_prefix(&*p).unwrap_or(s))
        }
        "removesuffix" => {
            let p = str_arg(0, "suffix")?;
            Value::str(s.strip_suffix(&*p).unwrap_or(s))
        }
        "zfill" => {
            let width = as_int(arg(args, kwargs, 0, "width")?)?;
            let len = s.chars().count() as i64;
            if width <= len {
                Value::str(s)
            } else {
                let zeros = "0".repeat((width - len) as usize);
                match s.strip_prefix(['+', '-']) {
                    Some(rest) => Value::str(&format!("{}{zeros}{rest}", &s[..1])),
                    None => Value::str(&format!("{zeros}{s}")),
                }
            }
        }
        "center" | "ljust" | "rjust" => return pad(s, args, kwargs, name).map(Ok),
        _ => return None,
    };
    Some(Ok(value))
}

/// `"s{}".format(i + 1)`: `{}`, `{0}` and `{name}` fields without a format spec, over
/// numbers, strings, booleans and None (what module names are made of).
fn str_format(fmt: &str, args: &[Value], kwargs: &Kwargs) -> Option<String> {
    let show = |v: &Value| -> Option<String> {
        Some(match v {
            Value::Str(s) => s.to_string(),
            Value::Int(i) => i.to_string(),
            Value::Float(f) => format!("{f:?}"),
            Value::Bool(b) => if *b { "True" } else { "False" }.to_string(),
            Value::None => "None".to_string(),
            _ => return None,
        })
    };
    let mut out = String::new();
    let mut auto = 0;
    let mut chars = fmt.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                out.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                out.push('}');
            }
            '{' => {
                let mut field = String::new();
                loop {
                    match chars.next()? {
                        '}' => break,
                        ':' | '!' => return None,
                        ch => field.push(ch),
                    }
                }
                let v = if field.is_empty() {
                    auto += 1;
                    args.get(auto - 1)?
                } else if let Ok(i) = field.parse::<usize>() {
                    args.get(i)?
                } else {
                    &kwargs.iter().find(|(k, _)| *k == field)?.1
                };
                out.push_str(&show(v)?);
            }
            ch => out.push(ch),
        }
    }
    Some(out)
}

/// `x + y`, `x % args` and comparisons of strings; None for the operators strings do not have.
pub(in crate::eval) fn binary_op(name: &str, x: &str, b: &Value) -> Option<Value> {
    Some(match (name, b) {
        ("add", Value::Str(y)) => Value::str(&format!("{x}{y}")),
        ("mod", _) => percent_format(x, b)
            .map(|s| Value::str(&s))
            .unwrap_or_else(|| Value::unknown("string formatting")),
        ("lt" | "le" | "gt" | "ge", Value::Str(y)) => {
            let y: &str = y;
            Value::Bool(match name {
                "lt" => x < y,
                "le" => x <= y,
                "gt" => x > y,
                _ => x >= y,
            })
        }
        _ => return None,
    })
}

/// The TypeError of arithmetic between a string and a number (`'a' + 1`, `1 - 'a'`), as
/// CPython words it; None where the operation is defined (`'a' * 2`, `'%d' % 1`) or is not
/// one of these.
pub(in crate::eval) fn operand_type_error(
    name: &str,
    sym: &str,
    a: &Value,
    b: &Value,
) -> Option<String> {
    let is_number = |v: &Value| matches!(v, Value::Int(_) | Value::Float(_) | Value::Bool(_));
    let arithmetic = matches!(name, "add" | "sub" | "truediv" | "floordiv" | "pow");
    match (a, b) {
        (Value::Str(_), n) if name == "add" && (is_number(n) || matches!(n, Value::None)) => {
            Some(format!(
                "TypeError: can only concatenate str (not \"{}\") to str",
                n.type_name()
            ))
        }
        (Value::Str(_), n) | (n, Value::Str(_)) if arithmetic && is_number(n) => Some(format!(
            "TypeError: unsupported operand type(s) for {sym}: '{}' and '{}'",
            a.type_name(),
            b.type_name()
        )),
        _ => None,
    }
}

/// `text[a:b:c]`: the substring a slice picks, by code points.
pub(in crate::eval) fn get_slice(
    interp: &mut Interp,
    frame: &Frame,
    text: &str,
    s: &[Value; 3],
    span: Span,
) -> EResult<Value> {
    let chars: Vec<Value> = text.chars().map(|c| Value::str(&c.to_string())).collect();
    let picked = super::list::slice_items(&chars, s).ok_or_else(|| {
        interp.error(frame, span, codes::UNSUPPORTED, "slice with unknown bounds")
    })?;
    let joined: String = picked
        .iter()
        .filter_map(|c| match c {
            Value::Str(c) => Some(&**c),
            _ => None,
        })
        .collect();
    Ok(Value::str(&joined))
}

/// printf-style `"denselayer%d" % (i + 1)` for the simple conversions module names use.
fn percent_format(fmt: &str, args: &Value) -> Option<String> {
    let items: Vec<Value> = match args {
        Value::Tuple(t) => t.to_vec(),
        v => vec![v.clone()],
    };
    let mut it = items.into_iter();
    let mut out = String::new();
    let mut chars = fmt.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next()? {
            '%' => out.push('%'),
            'd' | 'i' => out.push_str(&as_int(&it.next()?)?.to_string()),
            's' | 'r' => match it.next()? {
                Value::Str(s) => out.push_str(&s),
                Value::Int(i) => out.push_str(&i.to_string()),
                Value::Float(f) => out.push_str(&format!("{f:?}")),
                _ => return None,
            },
            _ => return None,
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(s: &str, name: &str, args: Vec<Value>) -> String {
        match call(s, name, &args, &vec![]) {
            Some(Ok(v)) => format!("{v:?}"),
            Some(Err(e)) => e,
            None => "unmodelled".into(),
        }
    }

    /// Each expected value is what CPython 3.12 answers.
    #[test]
    fn methods_follow_cpython() {
        let s = Value::str;
        let cases: Vec<(&str, &str, Vec<Value>, Value)> = vec![
            ("2.15.0", "isdigit", vec![], Value::Bool(false)),
            ("215", "isdigit", vec![], Value::Bool(true)),
            ("", "isdigit", vec![], Value::Bool(false)),
            ("Hello World", "istitle", vec![], Value::Bool(true)),
            ("Hello world", "istitle", vec![], Value::Bool(false)),
            ("ABC1", "isupper", vec![], Value::Bool(true)),
            ("1", "isupper", vec![], Value::Bool(false)),
            ("_x1", "isidentifier", vec![], Value::Bool(true)),
            ("1x", "isidentifier", vec![], Value::Bool(false)),
            ("héllo", "find", vec![s("l")], Value::Int(2)),
            ("hello", "rfind", vec![s("l")], Value::Int(3)),
            ("hello", "find", vec![s("l"), Value::Int(-2)], Value::Int(3)),
            ("hello", "find", vec![s("z")], Value::Int(-1)),
            ("aaaa", "count", vec![s("aa")], Value::Int(2)),
            ("abc", "count", vec![s("")], Value::Int(4)),
            ("hello world", "title", vec![], s("Hello World")),
            ("they're bill's", "title", vec![], s("They'Re Bill'S")),
            ("hELLO", "capitalize", vec![], s("Hello")),
            ("Ab", "swapcase", vec![], s("aB")),
            ("42", "zfill", vec![Value::Int(5)], s("00042")),
            ("-42", "zfill", vec![Value::Int(5)], s("-0042")),
            ("ab", "center", vec![Value::Int(5), s("*")], s("**ab*")),
            ("abc", "center", vec![Value::Int(6), s("*")], s("*abc**")),
            ("ab", "rjust", vec![Value::Int(4)], s("  ab")),
            ("TestCase", "removeprefix", vec![s("Test")], s("Case")),
            ("a.b.c", "rpartition", vec![s(".")], {
                Value::tuple(vec![s("a.b"), s("."), s("c")])
            }),
            ("abc", "partition", vec![s(".")], {
                Value::tuple(vec![s("abc"), s(""), s("")])
            }),
            (
                "a.b.c",
                "replace",
                vec![s("."), s("/"), Value::Int(1)],
                s("a/b.c"),
            ),
        ];
        for (text, name, args, want) in cases {
            assert_eq!(
                run(text, name, args.clone()),
                format!("{want:?}"),
                "{text:?}.{name}({args:?})"
            );
        }
    }

    #[test]
    fn splitting_follows_cpython() {
        let s = Value::str;
        let list = |xs: &[&str]| Value::list(xs.iter().map(|x| Value::str(x)).collect());
        let cases: Vec<(&str, &str, Vec<Value>, Value)> = vec![
            ("  a  b c ", "split", vec![], list(&["a", "b", "c"])),
            (
                "  a  b c ",
                "split",
                vec![Value::None, Value::Int(1)],
                list(&["a", "b c "]),
            ),
            (
                "  a  b c ",
                "rsplit",
                vec![Value::None, Value::Int(1)],
                list(&["  a  b", "c"]),
            ),
            ("a,b,,c", "split", vec![s(",")], list(&["a", "b", "", "c"])),
            (
                "a,b,c",
                "rsplit",
                vec![s(","), Value::Int(1)],
                list(&["a,b", "c"]),
            ),
            ("a\r\nb\nc", "splitlines", vec![], list(&["a", "b", "c"])),
            (
                "a\r\nb\n",
                "splitlines",
                vec![Value::Bool(true)],
                list(&["a\r\n", "b\n"]),
            ),
        ];
        for (text, name, args, want) in cases {
            assert_eq!(
                run(text, name, args.clone()),
                format!("{want:?}"),
                "{text:?}.{name}({args:?})"
            );
        }
        assert_eq!(
            run("abc", "index", vec![s("z")]),
            "ValueError: substring not found"
        );
        assert_eq!(run("abc", "encode", vec![]), "unmodelled");
    }

    #[test]
    fn repr_quotes_as_cpython() {
        assert_eq!(repr("a"), "'a'");
        assert_eq!(repr("it's"), "\"it's\"");
        assert_eq!(repr("it's \"x\""), "'it\\'s \"x\"'");
        assert_eq!(repr("a\nb\\"), "'a\\nb\\\\'");
        assert_eq!(repr("\x01"), "'\\x01'");
    }
}
