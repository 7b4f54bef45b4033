//! The layering of `src/`, read from the `crate::` paths in the code: the top-level modules
//! must form no cycle, and the stages must not reach up into the driver or the front ends.
//! Test-only code (`#[cfg(test)]` items and files) may use anything, as dev-dependencies may.
//!
//! `cargo test --test module_deps -- --nocapture` prints the graph.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Top-level module → the top-level modules its non-test code names.
fn dependency_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut graph = BTreeMap::new();
    for entry in std::fs::read_dir(src).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        if name == "lib" || name == "main" {
            continue;
        }
        if !(path.is_dir() || path.extension().is_some_and(|e| e == "rs")) {
            continue;
        }
        let mut deps = BTreeSet::new();
        for file in rust_files(&path) {
            let text = std::fs::read_to_string(&file).unwrap();
            if is_test_only_file(&file, &path) {
                continue;
            }
            for dep in crate_paths(&strip_test_items(&text)) {
                if dep != name {
                    deps.insert(dep);
                }
            }
        }
        graph.insert(name, deps);
    }
    graph
}

fn rust_files(path: &Path) -> Vec<PathBuf> {
    if path.is_file() {
        return vec![path.to_path_buf()];
    }
    let mut out = Vec::new();
    let mut stack = vec![path.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "rs") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// A file declared `#[cfg(test)] mod name;` by its parent module.
fn is_test_only_file(file: &Path, top: &Path) -> bool {
    let stem = file.file_stem().unwrap().to_string_lossy().to_string();
    let (dir, name) = if stem == "mod" {
        let d = file.parent().unwrap();
        (
            d.parent().unwrap(),
            d.file_name().unwrap().to_string_lossy().to_string(),
        )
    } else {
        (file.parent().unwrap(), stem)
    };
    if !dir.starts_with(top) && dir != top.parent().unwrap() {
        return false;
    }
    let parents = [dir.join("mod.rs"), dir.with_extension("rs")];
    parents.iter().any(|p| {
        std::fs::read_to_string(p).is_ok_and(|t| {
            let decl = [format!("mod {name};"), format!("mod {name} ;")];
            let lines: Vec<&str> = t.lines().map(str::trim).collect();
            lines.windows(2).any(|w| {
                w[0].starts_with("#[cfg(test)]") && decl.iter().any(|d| w[1].ends_with(d.as_str()))
            })
        })
    })
}

/// The text with every `#[cfg(test)]` item (a `mod … { … }` block) blanked out.
fn strip_test_items(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let after = &rest[at..];
        match after.find(['{', ';']) {
            Some(i) if after.as_bytes()[i] == b'{' => {
                let end = matching_brace(after, i).unwrap_or(after.len());
                rest = &after[end..];
            }
            Some(i) => rest = &after[i + 1..],
            None => rest = "",
        }
    }
    out.push_str(rest);
    out
}

/// The byte after the brace closing the one at `open`, skipping strings, chars and comments.
fn matching_brace(s: &str, open: usize) -> Option<usize> {
    let b = s.as_bytes();
    let mut depth = 0usize;
    let mut i = open;
    while i < b.len() {
        match b[i] {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                i = s[i..].find('\n').map_or(b.len(), |n| i + n);
            }
            b'r' if matches!(b.get(i + 1), Some(b'#' | b'"')) && !ident_byte(b, i) => {
                let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
                if b.get(i + 1 + hashes) == Some(&b'"') {
                    let close = format!("\"{}", "#".repeat(hashes));
                    let from = i + 2 + hashes;
                    i = s[from..]
                        .find(&close)
                        .map_or(b.len(), |n| from + n + close.len())
                        - 1;
                }
            }
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            // A char literal ('{', '\''), not a lifetime ('a).
            b'\'' if b.get(i + 2) == Some(&b'\'') => i += 2,
            b'\'' if b.get(i + 1) == Some(&b'\\') => {
                i += 2;
                while i < b.len() && b[i] != b'\'' {
                    i += 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

fn ident_byte(b: &[u8], i: usize) -> bool {
    i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')
}

/// Top-level modules named by `crate::x` and `crate::{x, y::z}`.
fn crate_paths(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let b = text.as_bytes();
    for (at, _) in text.match_indices("crate::") {
        if at > 0 && (ident_byte(b, at) || b[at - 1] == b'$') {
            continue;
        }
        let rest = &text[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 0;
            let mut item = String::new();
            let mut at_item_start = true;
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        if !item.is_empty() {
                            out.push(std::mem::take(&mut item));
                        }
                        at_item_start = true;
                    }
                    c if at_item_start && (c.is_alphanumeric() || c == '_') => item.push(c),
                    _ if at_item_start && !item.is_empty() => {
                        out.push(std::mem::take(&mut item));
                        at_item_start = false;
                    }
                    _ => {}
                }
            }
            if !item.is_empty() {
                out.push(item);
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                out.push(name);
            }
        }
    }
    out.retain(|n| n != "self");
    out
}

/// A cycle, as the list of modules on it, if the graph has one.
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Open,
        Done,
    }
    fn visit(
        n: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        mark: &mut BTreeMap<String, Mark>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        mark.insert(n.to_string(), Mark::Open);
        path.push(n.to_string());
        for d in graph.get(n).into_iter().flatten() {
            match mark.get(d).copied().unwrap_or(Mark::New) {
                Mark::Open => {
                    let from = path.iter().position(|p| p == d).unwrap();
                    let mut cycle = path[from..].to_vec();
                    cycle.push(d.clone());
                    return Some(cycle);
                }
                Mark::New => {
                    if let Some(c) = visit(d, graph, mark, path) {
                        return Some(c);
                    }
                }
                Mark::Done => {}
            }
        }
        path.pop();
        mark.insert(n.to_string(), Mark::Done);
        None
    }
    let mut mark = BTreeMap::new();
    for n in graph.keys() {
        if mark.get(n).copied().unwrap_or(Mark::New) == Mark::New {
            if let Some(c) = visit(n, graph, &mut mark, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

fn src_graph() -> BTreeMap<String, BTreeSet<String>> {
    let graph = dependency_graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    for (m, deps) in &graph {
        println!(
            "{m} -> {}",
            deps.iter().cloned().collect::<Vec<_>>().join(" ")
        );
    }
    graph
}

#[test]
fn top_level_modules_form_no_cycle() {
    let graph = src_graph();
    assert!(graph.len() > 10, "read too few modules: {graph:?}");
    if let Some(cycle) = find_cycle(&graph) {
        panic!(
            "dependency cycle among top-level modules: {}",
            cycle.join(" -> ")
        );
    }
}

/// Types flow down: no stage names the driver or a front end, and the front ends meet only
/// in `ide` (the language server does not call into the CLI, nor the CLI into the server).
#[test]
fn stages_do_not_reach_up() {
    let graph = src_graph();
    let upper = ["analysis", "ide", "cli", "lsp", "fuzzing"];
    for (m, deps) in &graph {
        if upper.contains(&m.as_str()) {
            continue;
        }
        for d in deps {
            assert!(!upper.contains(&d.as_str()), "stage `{m}` imports `{d}`");
        }
    }
    for (a, b) in [
        ("cli", "lsp"),
        ("lsp", "cli"),
        ("analysis", "ide"),
        ("analysis", "cli"),
        ("analysis", "lsp"),
    ] {
        assert!(!graph[a].contains(b), "`{a}` imports `{b}`");
    }
}

/// The front ends call `ide` and name nothing above the bottom layer besides: no stage,
/// not the driver.
#[test]
fn front_ends_depend_on_ide_and_the_bottom_types_only() {
    let graph = src_graph();
    let allowed = [
        "ide",
        "syntax",
        "semantic",
        "diagnostics",
        "traced",
        "shapes",
        "graph",
        "catalog",
        // a leaf: `check` turns it on and prints it (STATICFX_PHASE_CLOCK)
        "phase_clock",
    ];
    assert!(
        graph["phase_clock"].is_empty(),
        "{:?}",
        graph["phase_clock"]
    );
    for front in ["cli", "lsp"] {
        for d in &graph[front] {
            assert!(
                allowed.contains(&d.as_str()),
                "`{front}` imports `{d}`; go through `ide`"
            );
        }
        assert!(graph[front].contains("ide"), "{front}");
    }
}

#[test]
fn the_reader_sees_grouped_and_test_only_paths_correctly() {
    let text = "use crate::{a::X, b, c::{d, e}};\nfn f() { crate::g::h(); }\n#[cfg(test)]\nmod tests {\n    use crate::t; fn x() { let _ = '{'; let _ = \"}\"; }\n}\nuse crate::z;\n";
    let stripped = strip_test_items(text);
    let mut found = crate_paths(&stripped);
    found.sort();
    assert_eq!(found, ["a", "b", "c", "g", "z"]);
    let g: BTreeMap<String, BTreeSet<String>> = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a"]),
        ("d", vec![]),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.into_iter().map(String::from).collect()))
    .collect();
    assert_eq!(find_cycle(&g).unwrap(), ["a", "b", "c", "a"]);
}
