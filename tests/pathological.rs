//! Pathological inputs: enormous files, deep nesting, very long lines, broken encodings and
//! line endings, self-referential classes and helpers, huge constructor loops and import
//! cycles. Each goes through per-class analysis, instantiated analysis (`--entry`) and
//! `staticfx fix`, on a thread with the stack the CLI and the server give analysis (256 MiB).
//! What must hold: the run completes (a hang detector fails it after a generous timeout), it
//! does not panic, every diagnostic points inside its file, graphs stay under a node cap, and
//! fixing leaves a file that parses (if it did) and is a fixed point.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use staticfx::analysis::{analyze_file, FileAnalysis, GraphOptions};
use staticfx::cli::fix::{fix_text, Filter};
use staticfx::diagnostics::codes;

/// The stack `staticfx` (CLI and server) runs analysis on.
const STACK: usize = 256 << 20;
/// Not a time assertion: only a hang detector.
const HANG: Duration = Duration::from_secs(240);
/// No graph may hold more nodes than the tracer's cap (plus the output node).
fn node_cap() -> usize {
    staticfx::eval::trace::MAX_GRAPH_NODES + 1
}

/// Runs `f` on a big-stack thread; a panic or a hang fails the test with `what`.
fn guarded<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name(format!("pathological-{what}"))
        .stack_size(STACK)
        .spawn(move || {
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
            let _ = tx.send(r);
        })
        .unwrap();
    match rx.recv_timeout(HANG) {
        Ok(Ok(v)) => v,
        Ok(Err(p)) => {
            let msg = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            panic!("{what}: panicked: {msg}")
        }
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("{what}: no result after {HANG:?} (hang)"),
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("{what}: thread died"),
    }
}

/// A temp project holding `files`; the first one is analysed.
struct Case {
    _dir: tempfile::TempDir,
    path: PathBuf,
    bytes: Vec<u8>,
}

fn case(files: &[(&str, Vec<u8>)]) -> Case {
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
    let path = dir.path().join(files[0].0);
    Case {
        bytes: files[0].1.clone(),
        path,
        _dir: dir,
    }
}

fn check_analysis(what: &str, a: &FileAnalysis, len: usize) {
    for d in &a.diagnostics {
        if d.file == a.file {
            assert!(
                d.span.start <= d.span.end && d.span.end <= len,
                "{what}: diagnostic {} {:?} outside the file ({len} bytes): {}",
                d.code,
                d.span,
                d.message
            );
        }
    }
    for g in &a.graphs {
        assert!(
            g.graph.len() <= node_cap(),
            "{what}: {} has {} nodes",
            g.name,
            g.graph.len()
        );
        for f in g.breaks.iter().filter(|f| f.file == a.file) {
            assert!(
                f.span.end <= len,
                "{what}: finding {:?} out of range",
                f.span
            );
        }
    }
}

fn analyze(path: &Path, entry: Option<&str>) -> Result<FileAnalysis, String> {
    let opts = GraphOptions {
        entry: entry.map(str::to_string),
        ..Default::default()
    };
    analyze_file(path, &opts).map_err(|e| e.to_string())
}

/// Per-class, instantiated and fixed. Returns the per-class analysis' diagnostics (code,
/// message) and graph names for case-specific assertions.
struct Seen {
    codes: Vec<(&'static str, String)>,
    graphs: Vec<String>,
    entry: Option<Result<Vec<String>, String>>,
}

fn run_all(what: &str, c: &Case, entry: Option<&str>) -> Seen {
    let len = c.bytes.len();
    let path = c.path.clone();
    let w = what.to_string();
    let (codes, graphs) = guarded(&format!("{what} per-class"), move || {
        let a = analyze(&path, None).expect("per-class analysis of a readable file");
        check_analysis(&w, &a, len);
        (
            a.diagnostics
                .iter()
                .map(|d| (d.code, d.message.clone()))
                .collect::<Vec<_>>(),
            a.graphs.iter().map(|g| g.name.clone()).collect::<Vec<_>>(),
        )
    });
    let entry_seen = entry.map(|e| {
        let path = c.path.clone();
        let e = e.to_string();
        let w = what.to_string();
        guarded(&format!("{what} --entry"), move || {
            analyze(&path, Some(&e)).map(|a| {
                check_analysis(&w, &a, len);
                a.graphs.iter().map(|g| g.name.clone()).collect()
            })
        })
    });
    if let Ok(text) = std::str::from_utf8(&c.bytes) {
        let text = text.to_string();
        let path = c.path.clone();
        let w = what.to_string();
        guarded(&format!("{what} fix"), move || {
            let out = fix_text(&path, &text, None, &Filter::all(), true)
                .unwrap_or_else(|e| panic!("{w}: fix failed: {e}"));
            if !has_error(&text) {
                assert!(
                    !has_error(&out.text),
                    "{w}: the fixed file no longer parses"
                );
            }
            if out.text != text {
                let again = fix_text(&path, &out.text, None, &Filter::all(), true).unwrap();
                assert_eq!(again.text, out.text, "{w}: fixing is not idempotent");
            }
        });
    }
    Seen {
        codes,
        graphs,
        entry: entry_seen,
    }
}

fn has_error(text: &str) -> bool {
    staticfx::syntax::parse(text, None).root_node().has_error()
}

const HEADER: &str = "import torch\nimport torch.nn as nn\n\n";

/// A module whose forward body is `body` (each line indented by 8 spaces already).
fn model(body: &str) -> String {
    format!(
        "{HEADER}class Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, 4)\n\n    def forward(self, x):\n{body}        return self.fc(x)\n"
    )
}

fn simple(what: &str, text: String) -> Seen {
    let c = case(&[("model.py", text.into_bytes())]);
    run_all(what, &c, Some("Model()"))
}

#[test]
fn a_hundred_thousand_lines() {
    let mut body = String::new();
    for i in 0..40_000 {
        body.push_str(&format!("        x = x + {}\n", i % 7));
    }
    let mut text = model(&body);
    for i in 0..60_000 {
        text.push_str(&format!("CONST_{i} = {i}  # filler\n"));
    }
    assert!(text.lines().count() >= 100_000);
    let s = simple("100k lines", text);
    assert_eq!(s.graphs, ["Model.forward"]);
    assert!(!has_code(&s, codes::BUDGET), "{:?}", s.codes);
    assert!(s.entry.unwrap().is_ok());
}

#[test]
fn a_forward_past_the_node_cap_stops_with_a_located_diagnostic() {
    let mut body = String::new();
    for _ in 0..60_000 {
        body.push_str("        x = x.relu()\n");
    }
    let text = model(&body);
    let c = case(&[("model.py", text.clone().into_bytes())]);
    let path = c.path.clone();
    let (line, len) = guarded("node cap", move || {
        let a = analyze(&path, Some("Model()")).unwrap();
        let g = &a.graphs[0];
        let err = g.error.as_ref().expect("tracing stopped");
        assert_eq!(err.code, codes::BUDGET);
        (
            text[..err.span.start].matches('\n').count() + 1,
            g.graph.len(),
        )
    });
    assert!(len <= node_cap(), "{len} nodes");
    // The statement that would have added node 50,001 (the first forward line is line 10).
    assert!((50_000..50_010).contains(&line), "stopped at line {line}");
    run_all("node cap", &c, None);
}

#[test]
fn a_thousand_nested_parens() {
    let expr = format!("{}x{}", "(".repeat(1000), ")".repeat(1000));
    let s = simple("parens", model(&format!("        x = {expr}\n")));
    assert_eq!(s.graphs, ["Model.forward"]);
}

#[test]
fn a_thousand_nested_calls() {
    let expr = format!("{}x{}", "torch.relu(".repeat(1000), ")".repeat(1000));
    let s = simple("calls", model(&format!("        x = {expr}\n")));
    assert_eq!(s.graphs, ["Model.forward"]);
}

#[test]
fn a_thousand_nested_lists() {
    let expr = format!("{}1{}", "[".repeat(1000), "]".repeat(1000));
    let s = simple("lists", model(&format!("        y = {expr}\n")));
    assert_eq!(s.graphs, ["Model.forward"]);
}

fn nested_ifs(depth: usize) -> String {
    let mut body = String::new();
    for d in 0..depth {
        body.push_str(&format!("{}if x.dim() > 0:\n", " ".repeat(8 + d)));
    }
    body.push_str(&format!("{}x = x + 1\n", " ".repeat(8 + depth)));
    model(&body)
}

fn nested_defs_and_classes(depth: usize) -> String {
    let mut defs = String::new();
    for d in 0..depth {
        defs.push_str(&format!("{}def f{d}(x):\n", " ".repeat(d)));
    }
    defs.push_str(&format!("{}return x\n", " ".repeat(depth)));
    let mut classes = String::new();
    for d in 0..depth {
        classes.push_str(&format!("{}class C{d}:\n", " ".repeat(d)));
    }
    classes.push_str(&format!("{}pass\n", " ".repeat(depth)));
    format!(
        "{}{defs}{classes}",
        model("        x = f0(x)\n        y = C0()\n")
    )
}

fn has_code(s: &Seen, code: &str) -> bool {
    s.codes.iter().any(|(c, _)| *c == code)
}

/// CPython refuses more than 100 indentation levels ("too many levels of indentation"); up to
/// there the graph is complete, beyond it the file is a syntax error with a location.
#[test]
fn nested_ifs_to_pythons_limit_and_a_thousand_deep() {
    let s = simple("99 ifs", nested_ifs(99));
    assert_eq!(s.graphs, ["Model.forward"]);
    let s = simple("1000 ifs", nested_ifs(1000));
    assert!(has_code(&s, codes::SYNTAX_ERROR), "{:?}", &s.codes[..3]);
}

#[test]
fn nested_defs_and_classes_to_pythons_limit_and_a_thousand_deep() {
    let s = simple("99 defs+classes", nested_defs_and_classes(99));
    assert_eq!(s.graphs, ["Model.forward"]);
    assert!(s.entry.unwrap().is_ok());
    let s = simple("1000 defs+classes", nested_defs_and_classes(1000));
    assert!(has_code(&s, codes::SYNTAX_ERROR), "{:?}", &s.codes[..3]);
}

#[test]
fn a_thousand_nested_module_classes_instantiated() {
    // Each Block{d} holds a Block{d+1}: a 1,000-deep module tree (the call-depth limit stops
    // inlining, but construction and tracing end with a diagnostic, not a crash).
    let mut text = String::from(HEADER);
    for d in 0..1000 {
        let child = if d == 999 {
            "nn.Identity()".to_string()
        } else {
            format!("Block{}()", d + 1)
        };
        text.push_str(&format!(
            "class Block{d}(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.inner = {child}\n\n    def forward(self, x):\n        return self.inner(x) + 1\n\n"
        ));
    }
    let c = case(&[("model.py", text.into_bytes())]);
    let s = run_all("module tree", &c, Some("Block0()"));
    assert_eq!(s.graphs.len(), 1000);
}

#[test]
fn megabyte_lines() {
    let sum = format!("        y = {}1\n", "1 + ".repeat(250_000));
    simple("1 MB binary op line", model(&sum));
    let string = format!("        s = \"{}\"\n", "a".repeat(1 << 20));
    let s = simple("1 MB string", model(&string));
    assert_eq!(s.graphs, ["Model.forward"]);
    let comment = format!("        # {}\n", "é".repeat(1 << 19));
    let s = simple("1 MB comment", model(&comment));
    assert_eq!(s.graphs, ["Model.forward"]);
    let list = format!("        y = [{}]\n", "1, ".repeat(300_000));
    simple("1 MB list", model(&list));
}

#[test]
fn non_utf8_bytes_on_disk() {
    let mut bytes = model("        x = x + 1\n").into_bytes();
    let at = bytes.iter().position(|&b| b == b'x').unwrap();
    bytes.splice(at..at, [0xff, 0xfe, 0xc3, 0x28, 0x80]);
    bytes.extend_from_slice(b"# \xe2\x82\n\xf0\x9f\x98 end\n");
    let c = case(&[("model.py", bytes)]);
    let path = c.path.clone();
    // Either a clean refusal or an analysis whose diagnostics are inside the file.
    let len = c.bytes.len();
    guarded("non-utf8", move || match analyze(&path, None) {
        Ok(a) => check_analysis("non-utf8", &a, len + 64),
        Err(e) => assert!(!e.is_empty()),
    });
    let path = c.path.clone();
    guarded("non-utf8 entry", move || {
        let _ = analyze(&path, Some("Model()"));
    });
}

#[test]
fn crlf_and_lone_cr() {
    let base = model("        if x.sum() > 0:\n            x = x * 2\n");
    let lf = simple("lf", base.clone());
    let crlf = simple("crlf", base.replace('\n', "\r\n"));
    let cr = simple("cr", base.replace('\n', "\r"));
    assert_eq!(crlf.graphs, lf.graphs);
    let codes = |s: &Seen| s.codes.iter().map(|c| c.0).collect::<Vec<_>>();
    assert_eq!(codes(&crlf), codes(&lf));
    // A lone CR is a line break to Python and to the tree-sitter grammar.
    assert_eq!(cr.graphs, lf.graphs);
}

#[test]
fn mixed_tabs_and_spaces() {
    let text = format!(
        "{HEADER}class Model(nn.Module):\n\tdef __init__(self):\n\t\tsuper().__init__()\n\t\tself.fc = nn.Linear(4, 4)\n\n    def forward(self, x):\n\t    y = x + 1\n        \treturn self.fc(y)\n"
    );
    simple("tabs", text);
}

#[test]
fn a_class_that_inherits_from_itself() {
    // Legal Python: the second `A` derives from the first.
    let text = format!(
        "{HEADER}class A(nn.Module):\n    def forward(self, x):\n        return x + 1\n\nclass A(A):\n    def forward(self, x):\n        return super().forward(x) * 2\n\nclass Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.a = A()\n\n    def forward(self, x):\n        return self.a(x)\n"
    );
    let s = simple("self-inheritance (rebound)", text);
    assert!(s.entry.unwrap().is_ok());
    // Not legal Python (NameError), and with the name bound first a real cycle is impossible,
    // but the analyser sees the name in its own bases.
    let text = format!(
        "{HEADER}class B(B):\n    def forward(self, x):\n        return x\n\nclass Model(Model, nn.Module):\n    def forward(self, x):\n        return x\n"
    );
    simple("self-inheritance (unbound)", text);
    // A cycle through two classes, by rebinding the bases after the fact.
    let text = format!(
        "{HEADER}class P(nn.Module):\n    pass\n\nclass Model(P):\n    def forward(self, x):\n        return x\n\nP.__bases__ = (Model,)\nModel.__bases__ = (Model,)\n"
    );
    simple("self-inheritance (__bases__)", text);
}

#[test]
fn mutually_recursive_helpers_stop_inlining() {
    let text = format!(
        "{HEADER}def ping(x, n):\n    return pong(x + 1, n - 1)\n\ndef pong(x, n):\n    return ping(x * 2, n + 1)\n\nclass Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.depth = deep(0)\n\n    def forward(self, x):\n        return self.method(ping(x, 3))\n\n    def method(self, x):\n        return self.method(x)\n\ndef deep(n):\n    return deep(n + 1)\n"
    );
    let s = simple("mutual recursion", text);
    assert!(
        s.codes
            .iter()
            .any(|(c, m)| *c == codes::UNSUPPORTED && m.contains("recursive")),
        "inlining stops with a diagnostic: {:?}",
        s.codes
    );
    assert_eq!(s.graphs, ["Model.forward"]);
}

#[test]
fn constructor_loops_with_huge_bounds() {
    let text = format!(
        "{HEADER}class Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.layers = nn.ModuleList()\n        for i in range(10 ** 12):\n            self.layers.append(nn.Linear(4, 4))\n        self.seq = nn.Sequential(*[nn.ReLU() for _ in range(10 ** 9)])\n        n = 0\n        while True:\n            n += 1\n        self.big = [0] * (10 ** 12)\n        self.s = 'ab' * (10 ** 12)\n\n    def forward(self, x):\n        for layer in self.layers:\n            x = layer(x)\n        return self.seq(x)\n"
    );
    let s = simple("huge loops", text);
    assert!(
        s.codes.iter().any(|(c, _)| *c == codes::BUDGET),
        "the evaluation budget stops the loops: {:?}",
        s.codes
    );
}

#[test]
fn forward_loops_with_huge_bounds() {
    let body = "        for i in range(10 ** 12):\n            x = x + i\n        while True:\n            x = x * 2\n";
    let s = simple("huge forward loops", model(body));
    assert!(
        s.codes.iter().any(|(c, _)| *c == codes::BUDGET),
        "{:?}",
        s.codes
    );
}

#[test]
fn star_import_cycles_across_files() {
    let a = format!(
        "{HEADER}from b import *\nfrom a import *\n\nclass Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = make()\n\n    def forward(self, x):\n        return helper(self.fc(x))\n"
    );
    let b = "import torch.nn as nn\nfrom c import *\n\ndef make():\n    return nn.Linear(4, 4)\n"
        .to_string();
    let c = "from a import *\nfrom b import *\n\ndef helper(x):\n    return x.relu()\n".to_string();
    let k = case(&[
        ("a.py", a.into_bytes()),
        ("b.py", b.into_bytes()),
        ("c.py", c.into_bytes()),
    ]);
    let s = run_all("star cycle", &k, Some("Model()"));
    assert_eq!(s.graphs, ["Model.forward"]);
    // A package importing itself through its __init__.
    let pkg = case(&[
        (
            "pkg/model.py",
            format!("{HEADER}from pkg import *\nfrom .model import *\n\nclass Model(nn.Module):\n    def forward(self, x):\n        return x\n").into_bytes(),
        ),
        ("pkg/__init__.py", b"from .model import *\nfrom pkg.model import *\n".to_vec()),
    ]);
    run_all("package star cycle", &pkg, Some("Model()"));
}

#[test]
fn empty_and_garbage_files() {
    for (what, text) in [
        ("empty", String::new()),
        ("only newline", "\n".into()),
        ("nul bytes", "class M(\0):\n\0\0".into()),
        ("unclosed", format!("{HEADER}class Model(nn.Module):\n    def forward(self, x:\n        return (((x")),
        ("bom", format!("\u{feff}{}", model(""))),
        ("dedent storm", format!("{HEADER}class Model(nn.Module):\n    def forward(self, x):\n        return x\n  x = 1\n    y = 2\n z\n")),
    ] {
        simple(what, text);
    }
}
