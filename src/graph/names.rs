//! torch.fx's node naming, reproduced rule for rule so our names match `symbolic_trace`'s:
//! the target's `__name__` (or qualified path) snake-cased, illegal characters folded to `_`,
//! a numeric suffix for repeats, and never a Python keyword or builtin name.

use std::collections::{HashMap, HashSet};

/// Asked once or more per node a trace records: hashed with foldhash, as SipHash was most of
/// what naming cost.
#[derive(Default, Clone, Debug)]
pub struct Namespace {
    used: HashSet<String, foldhash::fast::RandomState>,
    base_count: HashMap<String, u64, foldhash::fast::RandomState>,
}

impl Namespace {
    pub fn create_name(&mut self, candidate: &str) -> String {
        let mut candidate = sanitize(candidate);
        let (base, num) = split_suffix(&candidate);
        let base = base.to_string();
        let mut num = match num {
            Some(n) if !self.used.contains(&candidate) => n,
            _ => {
                let mut n = self.base_count.get(&base).copied().unwrap_or(0);
                if is_illegal(&candidate) {
                    n += 1;
                    candidate = format!("{base}_{n}");
                }
                n
            }
        };
        while self.used.contains(&candidate) {
            num += 1;
            candidate = format!("{base}_{num}");
        }
        self.used.insert(candidate.clone());
        self.base_count.insert(base, num);
        candidate
    }
}

/// `pascalCase` → `pascal_case`: an underscore before an uppercase letter that follows a
/// lowercase one, then lowercase everything.
pub fn snake_case(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 4);
    let mut prev_lower = false;
    for c in s.chars() {
        if c.is_ascii_uppercase() && prev_lower {
            out.push('_');
        }
        prev_lower = c.is_ascii_lowercase();
        out.extend(c.to_lowercase());
    }
    out
}

fn sanitize(candidate: &str) -> String {
    let mut out = String::with_capacity(candidate.len());
    let mut in_illegal = false;
    for c in candidate.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            out.push(c);
            in_illegal = false;
        } else if !in_illegal {
            out.push('_');
            in_illegal = true;
        }
    }
    if out.is_empty() {
        out.push_str("_unnamed");
    }
    if out.as_bytes()[0].is_ascii_digit() {
        out.insert(0, '_');
    }
    out
}

/// Splits `name_12` into (`name`, Some(12)); the base is the shortest prefix that leaves a
/// `_<digits>` suffix, as torch.fx's lazy regex does.
fn split_suffix(candidate: &str) -> (&str, Option<u64>) {
    if let Some(pos) = candidate.rfind('_') {
        let digits = &candidate[pos + 1..];
        if pos > 0 && !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
            if let Ok(n) = digits.parse() {
                return (&candidate[..pos], Some(n));
            }
        }
    }
    (candidate, None)
}

fn is_illegal(name: &str) -> bool {
    PYTHON_KEYWORDS.contains(&name)
        || PYTHON_BUILTINS.contains(&name)
        || FX_CUSTOM_BUILTINS.contains(&name)
}

const PYTHON_KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

/// `sorted(builtins.__dict__)` of CPython 3.11 (the interpreter torch.fx ran under for our
/// expectations); regenerate with `python3 -c "import builtins; print(sorted(builtins.__dict__))"`.
const PYTHON_BUILTINS: &[&str] = &[
    "ArithmeticError",
    "AssertionError",
    "AttributeError",
    "BaseException",
    "BaseExceptionGroup",
    "BlockingIOError",
    "BrokenPipeError",
    "BufferError",
    "BytesWarning",
    "ChildProcessError",
    "ConnectionAbortedError",
    "ConnectionError",
    "ConnectionRefusedError",
    "ConnectionResetError",
    "DeprecationWarning",
    "EOFError",
    "Ellipsis",
    "EncodingWarning",
    "EnvironmentError",
    "Exception",
    "ExceptionGroup",
    "FileExistsError",
    "FileNotFoundError",
    "FloatingPointError",
    "FutureWarning",
    "GeneratorExit",
    "IOError",
    "ImportError",
    "ImportWarning",
    "IndentationError",
    "IndexError",
    "InterruptedError",
    "IsADirectoryError",
    "KeyError",
    "KeyboardInterrupt",
    "LookupError",
    "MemoryError",
    "ModuleNotFoundError",
    "NameError",
    "NotADirectoryError",
    "NotImplemented",
    "NotImplementedError",
    "OSError",
    "OverflowError",
    "PendingDeprecationWarning",
    "PermissionError",
    "ProcessLookupError",
    "RecursionError",
    "ReferenceError",
    "ResourceWarning",
    "RuntimeError",
    "RuntimeWarning",
    "StopAsyncIteration",
    "StopIteration",
    "SyntaxError",
    "SyntaxWarning",
    "SystemError",
    "SystemExit",
    "TabError",
    "TimeoutError",
    "TypeError",
    "UnboundLocalError",
    "UnicodeDecodeError",
    "UnicodeEncodeError",
    "UnicodeError",
    "UnicodeTranslateError",
    "UnicodeWarning",
    "UserWarning",
    "ValueError",
    "Warning",
    "ZeroDivisionError",
    "__build_class__",
    "__debug__",
    "__doc__",
    "__import__",
    "__loader__",
    "__name__",
    "__package__",
    "__spec__",
    "abs",
    "aiter",
    "all",
    "anext",
    "any",
    "ascii",
    "bin",
    "bool",
    "breakpoint",
    "bytearray",
    "bytes",
    "callable",
    "chr",
    "classmethod",
    "compile",
    "complex",
    "copyright",
    "credits",
    "delattr",
    "dict",
    "dir",
    "divmod",
    "enumerate",
    "eval",
    "exec",
    "exit",
    "filter",
    "float",
    "format",
    "frozenset",
    "getattr",
    "globals",
    "hasattr",
    "hash",
    "help",
    "hex",
    "id",
    "input",
    "int",
    "isinstance",
    "issubclass",
    "iter",
    "len",
    "license",
    "list",
    "locals",
    "map",
    "max",
    "memoryview",
    "min",
    "next",
    "object",
    "oct",
    "open",
    "ord",
    "pow",
    "print",
    "property",
    "quit",
    "range",
    "repr",
    "reversed",
    "round",
    "set",
    "setattr",
    "slice",
    "sorted",
    "staticmethod",
    "str",
    "sum",
    "super",
    "tuple",
    "type",
    "vars",
    "zip",
];

/// Names torch.fx reserves for its generated code's imports (`_register_custom_builtin`).
const FX_CUSTOM_BUILTINS: &[&str] = &[
    "inf",
    "nan",
    "NoneType",
    "torch",
    "device",
    "fx_pytree",
    "pytree",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_torch_fx_naming() {
        let mut ns = Namespace::default();
        let names: Vec<String> = [
            "x", "input", "getattr", "getitem", "getattr", "getitem", "getitem", "sum", "sum",
            "add", "sum",
        ]
        .iter()
        .map(|c| ns.create_name(c))
        .collect();
        assert_eq!(
            names,
            [
                "x",
                "input_1",
                "getattr_1",
                "getitem",
                "getattr_2",
                "getitem_1",
                "getitem_2",
                "sum_1",
                "sum_2",
                "add",
                "sum_3"
            ]
        );
    }

    #[test]
    fn numbered_module_paths_share_a_base() {
        let mut ns = Namespace::default();
        assert_eq!(ns.create_name("features_0"), "features_0");
        assert_eq!(ns.create_name("features_1"), "features_1");
        assert_eq!(ns.create_name("features_0"), "features_2");
        assert_eq!(ns.create_name("features"), "features");
        assert_eq!(ns.create_name("layer1.0.conv1"), "layer1_0_conv1");
        assert_eq!(ns.create_name("0"), "_0");
    }

    #[test]
    fn snake_cases_like_torch() {
        assert_eq!(snake_case("pascalCase"), "pascal_case");
        assert_eq!(snake_case("ALL_CAPS"), "all_caps");
        assert_eq!(snake_case("layer1.0.conv1"), "layer1.0.conv1");
    }
}
