//! The evaluator's layout, checked: a function of `src/eval` fits on a few screens (150
//! lines), so a value's behaviour is split by kind and slot rather than grown into one
//! `match` per operation.

use std::path::{Path, PathBuf};

const MAX_FUNCTION_LINES: usize = 150;

/// Every `.rs` file under `dir`.
fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![];
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d).expect("a source folder").flatten() {
            let path = entry.path();
            if path.is_dir() {
                todo.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out
}

/// The functions of `text` as (name, first line, length in lines): from the `fn` line to
/// the closing brace at its indentation (rustfmt's layout).
fn functions(text: &str) -> Vec<(String, usize, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = vec![];
    for (i, line) in lines.iter().enumerate() {
        let body = line.trim_start();
        let indent = line.len() - body.len();
        let after_vis = body
            .strip_prefix("pub ")
            .or_else(|| {
                body.strip_prefix("pub(")
                    .and_then(|r| r.split_once(") ").map(|(_, r)| r))
            })
            .unwrap_or(body);
        let Some(rest) = after_vis.strip_prefix("fn ") else {
            continue;
        };
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        // a declaration without a body (a trait's) or a body on the same line
        if line.trim_end().ends_with(';') || line.trim_end().ends_with('}') {
            out.push((name, i + 1, 1));
            continue;
        }
        let closing = " ".repeat(indent) + "}";
        let end = lines[i + 1..]
            .iter()
            .position(|l| l.starts_with(&closing) && !l[indent..].starts_with("} else"))
            .map_or(lines.len(), |j| i + 1 + j);
        out.push((name, i + 1, end - i + 1));
    }
    out
}

#[test]
fn no_function_is_longer_than_150_lines() {
    let eval = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/eval");
    let mut long = vec![];
    let mut checked = 0;
    for path in sources(&eval) {
        let text = std::fs::read_to_string(&path).expect("a source file");
        for (name, line, len) in functions(&text) {
            checked += 1;
            if len > MAX_FUNCTION_LINES {
                let file = path.strip_prefix(&eval).unwrap_or(&path);
                long.push(format!(
                    "src/eval/{}:{line} `{name}` ({len} lines)",
                    file.display()
                ));
            }
        }
    }
    assert!(
        checked > 500,
        "only {checked} functions found: the scan is broken"
    );
    assert!(
        long.is_empty(),
        "split these into functions of at most {MAX_FUNCTION_LINES} lines: {}",
        long.join(", ")
    );
}

#[test]
fn the_scan_measures_a_function_to_its_closing_brace() {
    let text = "impl X {\n    pub(crate) fn a(&self) {\n        if x {\n        }\n    }\n\n    fn b() {}\n}\n";
    let found = functions(text);
    assert_eq!(found[0], ("a".to_string(), 2, 4));
    assert_eq!(found[1], ("b".to_string(), 7, 1));
}
