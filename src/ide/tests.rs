//! The editor features on `$0`-cursor fixtures, without JSON-RPC: an analysis through the
//! host, then hover, diagnostics and fixes at the cursor.

use super::host::{AnalysisHost, Output, Snapshot};
use super::on_large_stack;

const SIMPLE: &str = include_str!("../../tests/fixtures/lsp/simple_net.py");

/// The fixture without its `$0` marker, the marker's byte offset, and its analysis.
fn analyse(fixture: &str, edit: impl FnOnce(&mut Snapshot)) -> (Snapshot, usize, Output) {
    let at = fixture.find("$0").expect("fixture has a $0 marker");
    let text = fixture.replacen("$0", "", 1);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("simple_net.py");
    let mut snap = Snapshot::new(path, dir.path().to_path_buf(), &text);
    edit(&mut snap);
    let out = on_large_stack("test", || {
        let mut host = AnalysisHost::new();
        host.analyze(&snap)
    })
    .unwrap();
    (snap, at, out)
}

fn hover(fixture: &str, edit: impl FnOnce(&mut Snapshot)) -> Option<String> {
    let (snap, at, out) = analyse(fixture, edit);
    super::hover::hover(&out, snap.tree.as_ref().unwrap(), at).map(|(markdown, _)| markdown)
}

fn with_inputs(snap: &mut Snapshot) {
    snap.class_inputs
        .insert("SimpleNet".into(), vec!["x=1x784".parse().unwrap()]);
}

#[test]
fn hover_on_a_call_shows_its_node_and_shape() {
    let s = hover(
        &SIMPLE.replace("        out = self.fc2(h)", "        out = self.f$0c2(h)"),
        with_inputs,
    )
    .unwrap();
    assert!(
        s.contains("`fc2`") && s.contains("call_module") && s.contains("[1, 10]"),
        "{s}"
    );
}

#[test]
fn hover_on_an_unknown_shape_says_why_and_guesses_nothing() {
    // fc2 takes 64 features and gets 128: it raises, so its shape is unknown, not [1, 10]
    let bad = SIMPLE
        .replace("nn.Linear(128, 10)", "nn.Linear(64, 10)")
        .replace("        return out\n", "        return out.relu()\n");
    let s = hover(
        &bad.replace("        out = self.fc2(h)", "        out = self.f$0c2(h)"),
        with_inputs,
    )
    .unwrap();
    assert!(s.contains("shape `[?]`") && !s.contains("[1, 10]"), "{s}");
    assert!(
        s.contains("unknown: this call raises when it runs")
            && s.contains("expects the last dimension 64, gets 128"),
        "{s}"
    );
    // what reads it is unknown because of it
    let s = hover(&bad.replace("out.relu()", "out.re$0lu()"), with_inputs).unwrap();
    assert!(
        s.contains("unknown: its input `fc2` has an unknown shape"),
        "{s}"
    );
    // a known shape has no reason to give
    let s = hover(
        &SIMPLE.replace("        out = self.fc2(h)", "        out = self.f$0c2(h)"),
        with_inputs,
    )
    .unwrap();
    assert!(!s.contains("unknown"), "{s}");
}

#[test]
fn hover_in_a_branch_names_the_graph_break_region() {
    let s = hover(
        &SIMPLE.replace("            h = h * 2", "            $0h = h * 2"),
        with_inputs,
    )
    .unwrap();
    assert!(s.contains("`mul`") && s.contains("[1, 128]"), "{s}");
    assert!(
        s.contains("graph-break region #0") && s.contains("then branch"),
        "{s}"
    );
}

#[test]
fn hover_on_a_submodule_assignment_shows_its_parameters() {
    let s = hover(
        &SIMPLE.replace("nn.Linear(784, 128)", "nn.Lin$0ear(784, 128)"),
        |_| {},
    )
    .unwrap();
    assert!(s.contains("`Linear`") && s.contains("[128, 784]"), "{s}");
}

/// A module with every kind of guard: a tensor input, a Python number, an optional tensor, an
/// int attribute read, a counter forward changes.
const GUARDED: &str = "import torch\nfrom torch import nn\n\n\nclass Counter(nn.Module):\n    \
    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(8, 8)\n        \
    self.heads = 2\n        self.calls = 0\n\n    \
    def forward(self, x, scale=1.0, mask=None):\n        self.calls += 1\n        \
    h = self.fc(x) * scale\n        if mask is not None:\n            h = h * mask\n        \
    return h.view(2, self.heads, 4)\n";

fn counter_inputs(snap: &mut Snapshot) {
    snap.class_inputs
        .insert("Counter".into(), vec!["x=2x8".parse().unwrap()]);
}

#[test]
fn hover_on_def_forward_lists_its_guards_and_recompile_risks() {
    let s = hover(
        &GUARDED.replace("def forward(", "def for$0ward("),
        counter_inputs,
    )
    .unwrap();
    // the tensor input as traced, the argument guards, the state read and the one forward changes
    assert!(s.contains("- `x`: `[2, 8]` `float32`"), "{s}");
    assert!(s.contains("`scale == 1.0` (line 14)"), "{s}");
    assert!(s.contains("`mask is None` (line 15)"), "{s}");
    assert!(s.contains("`self.heads == 2` (line 17)"), "{s}");
    assert!(
        s.contains("`self.calls == 0` (line 13) — forward changes it: every call recompiles"),
        "{s}"
    );
    assert!(
        s.contains("1 from state forward changes (FX201, 1 on every call), 2 from argument"),
        "{s}"
    );
}

#[test]
fn hover_on_a_forward_parameter_names_its_guard() {
    let at = |name: &str| {
        let marked = GUARDED.replacen(&format!(", {name}"), &format!(", $0{name}"), 1);
        hover(&marked, counter_inputs).unwrap()
    };
    let s = at("scale");
    assert!(
        s.contains("`scale == 1.0` (line 14): a call with another value recompiles"),
        "{s}"
    );
    let s = at("mask");
    assert!(s.contains("`mask is None` (line 15)"), "{s}");
    // a tensor: its node, and the tensor match with the automatic-dynamic rule
    let s = hover(&GUARDED.replace("self, x,", "self, $0x,"), counter_inputs).unwrap();
    assert!(
        s.contains("[2, 8]") && s.contains("a tensor match on dtype `float32`"),
        "{s}"
    );
    assert!(
        s.contains("recompiles once and makes that size dynamic"),
        "{s}"
    );
}

#[test]
fn hover_outside_any_module_is_nothing() {
    assert_eq!(hover(&format!("$0{SIMPLE}"), |_| {}), None);
}

#[test]
fn diagnostics_at_the_cursor_carry_their_fix_and_wording() {
    let (_, at, out) = analyse(
        &SIMPLE.replace("        if h.sum() > 0:", "        if $0h.sum() > 0:"),
        with_inputs,
    );
    let d = out
        .diagnostics
        .iter()
        .find(|d| d.span.start <= at && at <= d.span.end)
        .expect("a finding at the cursor");
    assert_eq!(d.code, "FX101");
    assert!(
        d.message.starts_with("Data-dependent branching: ") && d.message.ends_with("(GB0170)"),
        "{}",
        d.message
    );
    assert!(d.fixes.main().is_some(), "{:?}", d.fixes);
    let limit = out.diagnostics.iter().find(|d| d.code == "FX902").unwrap();
    assert!(
        limit.message.starts_with("analysis limit: "),
        "{}",
        limit.message
    );
    assert_eq!(limit.severity, crate::diagnostics::Severity::Info);
}

#[test]
fn ignored_codes_are_not_reported() {
    let (_, _, out) = analyse(&format!("$0{SIMPLE}"), |snap| {
        snap.filter.ignore = vec!["FX101".into()];
    });
    let codes: Vec<&str> = out.diagnostics.iter().map(|d| d.code).collect();
    assert!(
        !codes.contains(&"FX101") && codes.contains(&"FX902"),
        "{codes:?}"
    );
}

#[test]
fn the_next_version_through_the_same_host_is_its_own_analysis() {
    let text = SIMPLE.replace("h = h * 2", "h = h * 3");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("simple_net.py");
    let first = Snapshot::new(path.clone(), dir.path().to_path_buf(), SIMPLE);
    let mut second = Snapshot::new(path, dir.path().to_path_buf(), &text);
    second.version = 2;
    let (a, b) = on_large_stack("test", || {
        let mut host = AnalysisHost::new();
        let a = host.analyze(&first);
        let b = host.analyze(&second);
        (a, b)
    })
    .unwrap();
    // The same findings either way: the edit is inside a function body.
    let key = |o: &Output| -> Vec<(&str, usize)> {
        o.diagnostics
            .iter()
            .map(|d| (d.code, d.span.start))
            .collect()
    };
    assert_eq!(key(&a), key(&b));
    assert_eq!((b.version, &*b.text), (2, text.as_str()));
    let mul = |o: &Output| o.graphs[0].nodes().iter().any(|n| n.target.contains("mul"));
    assert!(mul(&a) && mul(&b));
}

#[test]
fn code_actions_at_a_branch_offer_the_rewrite_first_and_the_suppression() {
    use super::code_actions::{actions, ActionKind};
    let (_, at, out) = analyse(
        &SIMPLE.replace("        if h.sum() > 0:", "        if h.su$0m() > 0:"),
        with_inputs,
    );
    let found = actions(&out, crate::syntax::Span::new(at, at), true, false);
    let titles: Vec<&str> = found.iter().map(|a| a.title.as_str()).collect();
    assert!(titles.len() >= 2, "{titles:?}");
    assert!(titles[0].contains("torch.where"), "{titles:?}");
    assert!(matches!(
        found[0].kind,
        ActionKind::QuickFix {
            preferred: true,
            ..
        }
    ));
    assert!(
        titles.iter().any(|t| t.contains("# noqa: FX101")),
        "{titles:?}"
    );
    // Away from every finding: nothing.
    assert!(actions(&out, crate::syntax::Span::new(0, 0), true, false).is_empty());
}

#[test]
fn fix_all_applies_only_safe_fixes() {
    use super::code_actions::{actions, ActionKind};
    let model = SIMPLE.replace(
        "        h = F.relu(h)\n",
        "        h = F.relu(h)\n        print(h.shape)\n",
    );
    let (_, _, out) = analyse(&format!("$0{model}"), with_inputs);
    let all = actions(&out, crate::syntax::Span::new(0, 0), false, true);
    assert_eq!(all.len(), 1);
    assert_eq!(all[0].kind, ActionKind::FixAll);
    let fixed = crate::fixes::apply(&out.text, &all[0].edits).unwrap();
    // The print is guarded (safe); the data-dependent branch is left (its rewrite is unsafe).
    assert!(
        fixed.contains("if not torch.compiler.is_compiling():"),
        "{fixed}"
    );
    assert!(fixed.contains("if h.sum() > 0:"), "{fixed}");
}

#[test]
fn the_graph_view_marks_source_lines_and_the_break() {
    let (_, _, out) = analyse(&format!("$0{SIMPLE}"), with_inputs);
    let g = out.graphs.iter().find(|g| g.class == "SimpleNet").unwrap();
    let dot = g.dot(&out.text);
    let line_of = |needle: &str| SIMPLE.lines().position(|l| l.contains(needle)).unwrap() + 1;
    assert!(
        dot.contains(&format!("fx-line-{}", line_of("self.fc2(h)"))),
        "{dot}"
    );
    assert!(dot.contains("fx-break"), "{dot}");
    let (optimized, _removed) = g.optimized_dot(&out.text).unwrap();
    assert!(optimized.starts_with("digraph"), "{optimized}");
}

#[test]
fn run_executes_a_class_and_refuses_a_graph_break() {
    let plain = SIMPLE.replace("        if h.sum() > 0:\n            h = h * 2\n", "");
    let (snap, _, _) = analyse(&format!("$0{plain}"), with_inputs);
    let (summary, outputs) = on_large_stack("test", || {
        super::host::run_graph(&snap, "SimpleNet", vec![], None, 0)
    })
    .unwrap()
    .unwrap();
    assert_eq!(outputs.len(), 1, "{summary}");
    assert_eq!(outputs[0].shape, vec![1, 10]);
    let (snap, _, _) = analyse(&format!("$0{SIMPLE}"), with_inputs);
    let refused = on_large_stack("test", || {
        super::host::run_graph(&snap, "SimpleNet", vec![], None, 0)
    })
    .unwrap();
    assert!(refused.unwrap_err().contains("data-dependent"));
}

#[test]
fn files_are_collected_and_only_possible_modules_are_evaluated() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("pkg")).unwrap();
    for (name, text) in [("a.py", "x = 1\n"), ("pkg/b.py", SIMPLE), ("notes.txt", "")] {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let files = super::collect_files(&[dir.path().to_path_buf()]).unwrap();
    let names: Vec<String> = files
        .iter()
        .map(|p| p.strip_prefix(dir.path()).unwrap().display().to_string())
        .collect();
    assert_eq!(names, ["a.py", "pkg/b.py"]);
    assert!(super::collect_files(&[dir.path().join("missing")]).is_err());
    assert!(super::may_define_module(SIMPLE) && !super::may_define_module("x = 1\n"));
    // A file that cannot define a module is parsed, not evaluated: its syntax errors only.
    let (_, _, out) = analyse("$0x = undefined_name(\ny = 2\n", |_| {});
    let codes: Vec<&str> = out.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(codes, ["FX901"]);
    assert_eq!(
        out.diagnostics[0].severity,
        crate::diagnostics::Severity::Error
    );
}

// Inlay hints and code lenses.

const HINTS: &str = r#"import torch
import torch.nn as nn


def scale(t):
    y = t * 2
    return y


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 64)
        self.fc2 = nn.Linear(64, 128)
        self.bad = nn.Linear(64, 10)
        self.layers = nn.ModuleList([nn.Linear(128, 16), nn.Linear(16, 32)])

    def forward(self, x):
        h = self.fc1(x)
        a = scale(h)
        g = self.fc2(h)
        b = scale(g)
        ids = torch.argmax(g, dim=-1)
        wrong = self.bad(g)
        q, k = h.chunk(2, dim=-1)
        n = g.shape[0]
        z = g
        for layer in self.layers:
            z = layer(z)
        z += 1
        return a, b, ids, wrong, q, k, n, z
"#;

/// The text with each hint inserted at its offset as `⟨label⟩`.
fn with_hints(text: &str, hints: &[super::inlay::InlayHint]) -> String {
    let mut out = text.to_string();
    for h in hints.iter().rev() {
        out.insert_str(h.offset, &format!("⟨{}⟩", h.label));
    }
    out
}

fn hints_of(fixture: &str, edit: impl FnOnce(&mut Snapshot)) -> (Output, usize, String) {
    let (_, at, out) = analyse(fixture, edit);
    let all = super::inlay::inlay_hints(
        &out,
        crate::syntax::Span::new(0, out.text.len()),
        &Default::default(),
    );
    let shown = with_hints(&out.text, &all);
    (out, at, shown)
}

fn net_inputs(snap: &mut Snapshot) {
    snap.class_inputs
        .insert("Net".into(), vec!["x=1x784".parse().unwrap()]);
}

#[test]
fn inlay_hints_show_each_assignments_shape_at_its_end() {
    let (_, _, shown) = hints_of(&format!("$0{HINTS}"), net_inputs);
    let forward = &shown[shown.find("def scale").unwrap()..];
    let expected = r#"def scale(t):
    y = t * 2⟨# [1, 64] | [1, 128]⟩
    return y


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 64)
        self.fc2 = nn.Linear(64, 128)
        self.bad = nn.Linear(64, 10)
        self.layers = nn.ModuleList([nn.Linear(128, 16), nn.Linear(16, 32)])

    def forward(self, x):
        h = self.fc1(x)⟨# [1, 64]⟩
        a = scale(h)⟨# [1, 64]⟩
        g = self.fc2(h)⟨# [1, 128]⟩
        b = scale(g)⟨# [1, 128]⟩
        ids = torch.argmax(g, dim=-1)⟨# [1] int64⟩
        wrong = self.bad(g)
        q, k = h.chunk(2, dim=-1)⟨# q: [1, 32], k: [1, 32]⟩
        n = g.shape[0]
        z = g⟨# [1, 128]⟩
        for layer in self.layers:
            z = layer(z)⟨# [1, 16] | [1, 32]⟩
        z += 1⟨# [1, 32]⟩
        return a, b, ids, wrong, q, k, n, z
"#;
    assert_eq!(forward, expected);
}

#[test]
fn inlay_hints_without_inputs_use_the_symbolic_dims_hover_shows() {
    let fixture = HINTS.replace("        g = self.fc2(h)", "        $0g = self.fc2(h)");
    let (out, at, shown) = hints_of(&fixture, |_| {});
    assert!(shown.contains("g = self.fc2(h)⟨# [s0, 128]⟩"), "{shown}");
    let hover = super::hover::hover(&out, &crate::syntax::parse(&out.text, None), at).unwrap();
    assert!(hover.0.contains("shape `[s0, 128]`"), "{}", hover.0);
}

#[test]
fn inlay_hints_only_for_the_requested_range_and_not_when_turned_off() {
    let fixture = HINTS.replace("        g = self.fc2(h)", "$0        g = self.fc2(h)");
    let (_, at, out) = analyse(&fixture, net_inputs);
    let line_end = at + out.text[at..].find('\n').unwrap();
    let range = crate::syntax::Span::new(at, line_end);
    let on = super::inlay::InlayConfig { shapes: true };
    let hints = super::inlay::inlay_hints(&out, range, &on);
    let labels: Vec<(usize, &str)> = hints.iter().map(|h| (h.offset, h.label.as_str())).collect();
    assert_eq!(labels, [(line_end, "# [1, 128]")]);
    // A range that ends inside the statement holds no hint of it.
    let short = crate::syntax::Span::new(at, line_end - 1);
    assert!(super::inlay::inlay_hints(&out, short, &on).is_empty());
    let off = super::inlay::InlayConfig { shapes: false };
    let everything = crate::syntax::Span::new(0, out.text.len());
    assert!(super::inlay::inlay_hints(&out, everything, &off).is_empty());
    assert!(!super::inlay::inlay_hints(&out, everything, &on).is_empty());
}

#[test]
fn an_unknown_shape_has_no_hint_and_its_tooltip_says_why() {
    let (out, _, shown) = hints_of(&format!("$0{HINTS}"), net_inputs);
    assert!(shown.contains("        wrong = self.bad(g)\n"), "{shown}");
    let end = out.text.find("wrong = self.bad(g)").unwrap() + "wrong = self.bad(g)".len();
    let tip = super::inlay::tooltip(&out, end).unwrap();
    assert!(
        tip.contains("`wrong` =") && tip.contains("unknown: this call raises when it runs"),
        "{tip}"
    );
    // The tooltip of a hint: the node, op and dtype of each run.
    let end = out.text.find("ids = torch.argmax(g, dim=-1)").unwrap()
        + "ids = torch.argmax(g, dim=-1)".len();
    let tip = super::inlay::tooltip(&out, end).unwrap();
    assert!(
        tip.contains("**`argmax`** · `call_function`") && tip.contains("dtype `int64`"),
        "{tip}"
    );
    let end = out.text.find("    y = t * 2").unwrap() + "    y = t * 2".len();
    let tip = super::inlay::tooltip(&out, end).unwrap();
    assert!(tip.contains("2 graph nodes"), "{tip}");
}

#[test]
fn a_statement_in_a_class_reads_that_classs_own_graph() {
    // Block is traced on its own (symbolic) and inlined into Net (concrete): its statements
    // show Block's own trace, as hover does.
    let fixture = r#"import torch.nn as nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        y = self.fc(x)
        return y


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()

    def forward(self, x):
        $0out = self.block(x)
        return out
"#;
    let (_, _, shown) = hints_of(fixture, |snap| {
        snap.class_inputs
            .insert("Net".into(), vec!["x=3x8".parse().unwrap()]);
    });
    assert!(shown.contains("y = self.fc(x)⟨# [s0, 8]⟩"), "{shown}");
    assert!(shown.contains("out = self.block(x)⟨# [3, 8]⟩"), "{shown}");
}

#[test]
fn a_value_that_is_not_always_a_tensor_has_no_hint() {
    let fixture = r#"import torch.nn as nn


def twice(v):
    w = v * 2
    return w


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        $0s = twice(3)
        t = twice(self.fc(x))
        return t * s
"#;
    let (_, _, shown) = hints_of(fixture, |snap| {
        snap.class_inputs
            .insert("Net".into(), vec!["x=2x4".parse().unwrap()]);
    });
    assert!(shown.contains("    w = v * 2\n"), "{shown}");
    assert!(shown.contains("t = twice(self.fc(x))⟨# [2, 4]⟩"), "{shown}");
    assert!(shown.contains("        s = twice(3)\n"), "{shown}");
}

fn lenses(fixture: &str, edit: impl FnOnce(&mut Snapshot)) -> (Output, Vec<super::lens::Lens>) {
    let (snap, _, out) = analyse(fixture, edit);
    let lenses = super::lens::code_lenses(&out, snap.tree.as_ref().unwrap());
    (out, lenses)
}

#[test]
fn the_lens_of_a_clean_forward_counts_nodes_and_offers_graph_and_run() {
    use super::lens::LensAction;
    let plain = SIMPLE.replace("        if h.sum() > 0:\n            h = h * 2\n", "");
    let (out, found) = lenses(&format!("$0{plain}"), with_inputs);
    let simple: Vec<_> = found.iter().filter(|l| l.class == "SimpleNet").collect();
    let g = out.graphs.iter().find(|g| g.class == "SimpleNet").unwrap();
    let nodes = g.traced.graph.len();
    assert_eq!(nodes, 5, "x, fc1, relu, fc2, output");
    assert_eq!(simple.len(), 2);
    assert_eq!(simple[0].title, "1 graph · 5 nodes · 0 breaks");
    assert_eq!(simple[0].action, LensAction::ShowGraph);
    assert_eq!(
        (simple[1].title.as_str(), &simple[1].action),
        ("run", &LensAction::Run)
    );
    // On the `def forward` line.
    let def = plain
        .find("    def forward(self, x):\n        h = self.fc1")
        .unwrap()
        + 4;
    assert_eq!(
        &out.text[simple[0].span.start..simple[0].span.end],
        "def forward"
    );
    assert_eq!(simple[0].span.start, def);
}

#[test]
fn the_lens_of_a_forward_with_breaks_lists_their_codes_and_reveals_the_first() {
    use super::lens::LensAction;
    let fixture = SIMPLE.replace(
        "        out = self.fc2(h)\n",
        "        out = self.fc2(h)\n        print(out)\n",
    );
    let (out, found) = lenses(&format!("$0{fixture}"), with_inputs);
    let simple: Vec<_> = found.iter().filter(|l| l.class == "SimpleNet").collect();
    assert_eq!(simple[0].title, "3 graphs · 2 breaks (FX101, FX105)");
    let LensAction::Reveal(at) = simple[0].action else {
        panic!("{:?}", simple[0]);
    };
    assert!(
        out.text[at.start..].starts_with("h.sum() > 0"),
        "{:?}",
        &out.text[at.start..at.end]
    );
    assert_eq!(
        (simple[1].title.as_str(), &simple[1].action),
        ("show graph", &LensAction::ShowGraph)
    );
    // The lens says what the diagnostics of the same analysis say.
    let codes: Vec<&str> = out.diagnostics.iter().map(|d| d.code).collect();
    assert!(
        codes.contains(&"FX101") && codes.contains(&"FX105"),
        "{codes:?}"
    );
}

#[test]
fn the_lens_of_a_forward_that_changes_guarded_state_counts_the_recompile_risk() {
    use super::lens::LensAction;
    let fixture = SIMPLE
        .replace(
            "        out = self.fc2(h)\n",
            "        out = self.fc2(h)\n        self.calls = self.calls + 1\n",
        )
        .replace("        if h.sum() > 0:\n            h = h * 2\n", "")
        .replace(
            "super().__init__()\n",
            "super().__init__()\n        self.calls = 0\n",
        );
    let (out, found) = lenses(&format!("$0{fixture}"), with_inputs);
    let simple: Vec<_> = found.iter().filter(|l| l.class == "SimpleNet").collect();
    assert_eq!(
        simple[0].title,
        "1 graph · 5 nodes · 0 breaks · 1 recompile risk (FX201)"
    );
    let LensAction::Reveal(at) = simple[0].action else {
        panic!("{:?}", simple[0]);
    };
    assert!(
        out.text[at.start..].starts_with("self.calls"),
        "{:?}",
        &out.text[at.start..at.end]
    );
    let d = out
        .diagnostics
        .iter()
        .find(|d| d.code == "FX201")
        .expect("FX201 among the diagnostics");
    assert!(
        d.message.contains("`self.calls == 0`") && d.message.contains("every call recompiles"),
        "{}",
        d.message
    );
}
