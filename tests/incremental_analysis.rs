//! Differential test of the language server's incremental analysis: after each edit, the
//! session's analysis must equal a fresh full analysis of the same text — findings (codes,
//! spans, messages, call chains, fixes) and graphs (nodes, shapes, origins, regions, breaks,
//! the names assignments bound).

mod rng;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use staticfx::analysis::incremental::Session;
use staticfx::analysis::{analyze_in_project, FileAnalysis, GraphOptions};
use staticfx::ide::{diagnostics, Filter};
use staticfx::semantic::{FileId, Project};
use staticfx::syntax::Span;

use rng::Rng;

fn project(root: &Path, path: &Path, text: &str) -> Project {
    let mut p = Project::new(root);
    p.add_overlay(path, Arc::from(text), None);
    p
}

fn opts(root: &Path) -> GraphOptions {
    GraphOptions {
        root: Some(root.to_path_buf()),
        ..Default::default()
    }
}

/// Everything the editor gets from an analysis, with file ids replaced by paths (the two
/// analyses number their files differently).
fn view(a: &FileAnalysis, text: &str) -> String {
    let at =
        |f: FileId, s: Span| format!("{}:{}-{}", a.project.file(f).path.display(), s.start, s.end);
    let mut out = String::new();
    for f in diagnostics(a, text, &Filter::all()) {
        let chain: Vec<String> = f.chain.iter().map(|&(file, s)| at(file, s)).collect();
        out.push_str(&format!(
            "finding {} {} {:?} chain={chain:?} fixes={:?}\n",
            f.code,
            at(f.file, f.span),
            f.message,
            f.fixes
        ));
    }
    for g in &a.graphs {
        out.push_str(&format!(
            "graph {} class_span={}\n",
            g.name,
            at(g.file, g.class_span)
        ));
        out.push_str(&staticfx::render::text::render(g));
        for &id in &g.graph.order {
            let n = g.graph.node(id);
            if let Some(o) = &n.origin {
                let chain: Vec<String> = o.call_chain.iter().map(|&(f, s)| at(f, s)).collect();
                out.push_str(&format!(
                    "  {} at {} via {chain:?}\n",
                    n.name,
                    at(o.file, o.span)
                ));
            }
        }
        for r in &g.regions {
            out.push_str(&format!(
                "  region {} {} at {}\n",
                r.id,
                r.kind,
                at(r.file, r.span)
            ));
        }
        for e in &g.events {
            out.push_str(&format!(
                "  event {} {} at {}\n",
                e.kind,
                e.detail,
                at(e.file, e.span)
            ));
        }
        // What the inlay hints read: each name an assignment bound, and the node.
        for b in &g.bindings {
            let node = b.node.map(|id| g.graph.node(id).name.clone());
            out.push_str(&format!(
                "  binding {} of {} -> {node:?}\n",
                at(b.file, b.target),
                at(b.file, b.statement)
            ));
        }
        for b in &g.breaks {
            out.push_str(&format!(
                "  break {} {}:{}-{}:{} {:?}\n",
                b.code, b.line, b.column, b.end_line, b.end_column, b.message
            ));
        }
        if let Some(e) = &g.error {
            out.push_str(&format!(
                "  error {} at {}\n",
                e.message,
                at(e.file, e.span)
            ));
        }
    }
    out
}

fn fresh_view(root: &Path, path: &Path, text: &str) -> String {
    let a = analyze_in_project(project(root, path, text), path, &opts(root)).unwrap();
    view(&a, text)
}

enum Expect {
    /// The edit changes no token the evaluator reads: served without tracing any class.
    Cutoff,
    /// The edit lies in a function body the top level does not call: served incrementally.
    Incremental,
    /// Served incrementally by tracing exactly this many classes again.
    Retraces(u64),
    /// The session must give up (the caller starts over with a full analysis).
    Restart,
    /// Either is fine; only the result is checked.
    Either,
}

struct Case {
    what: &'static str,
    find: &'static str,
    replace: &'static str,
    expect: Expect,
}

fn run_cases(root: &Path, path: &Path, start: &str, cases: &[Case]) {
    let mut text = start.to_string();
    let (mut session, first) =
        Session::start(project(root, path, &text), path, &opts(root)).unwrap();
    assert_eq!(view(&first, &text), fresh_view(root, path, &text));
    for c in cases {
        assert!(
            text.contains(c.find),
            "{}: `{}` not in the text",
            c.what,
            c.find
        );
        text = text.replacen(c.find, c.replace, 1);
        let traces = session.traces_run();
        let got = match session.update(Arc::from(text.as_str()), None) {
            Some(a) => {
                assert!(
                    !matches!(c.expect, Expect::Restart),
                    "{}: should restart",
                    c.what
                );
                let traced = session.traces_run() - traces;
                match c.expect {
                    Expect::Cutoff => assert_eq!(traced, 0, "{}: should trace nothing", c.what),
                    Expect::Incremental => assert!(traced > 0, "{}: should trace", c.what),
                    Expect::Retraces(n) => assert_eq!(traced, n, "{}: classes traced", c.what),
                    _ => {}
                }
                let a = session.finish_retraces().unwrap_or(a);
                view(&a, &text)
            }
            None => {
                assert!(
                    !matches!(
                        c.expect,
                        Expect::Incremental | Expect::Cutoff | Expect::Retraces(_)
                    ),
                    "{}: should be served incrementally",
                    c.what
                );
                let (s, a) = Session::start(project(root, path, &text), path, &opts(root)).unwrap();
                session = s;
                view(&a, &text)
            }
        };
        let want = fresh_view(root, path, &text);
        assert_eq!(
            got, want,
            "{}: incremental and full analyses differ",
            c.what
        );
    }
}

/// The evaluator recurses as deep as the source nests; analyses run on large stacks, as the
/// CLI's and the server's do.
fn on_big_stack(f: impl FnOnce() + Send + 'static) {
    let t = std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(f)
        .unwrap();
    if let Err(p) = t.join() {
        std::panic::resume_unwind(p);
    }
}

fn fixture(name: &str) -> (PathBuf, PathBuf, String) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let path = root.join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    (root.join(Path::new(name).parent().unwrap()), path, text)
}

#[test]
fn edits_inside_bodies_match_a_full_analysis() {
    let (root, path, text) = fixture("incremental/gated_model.py");
    use Expect::*;
    let cases = [
        Case { what: "argument in a helper call", find: "h = scale(h)", replace: "h = scale(h, 3.0)", expect: Incremental },
        Case { what: "print added to the last class", find: "        y = self.conv(x)\n", replace: "        y = self.conv(x)\n        print(y)\n", expect: Incremental },
        Case {
            what: "data-dependent branch in a method two classes inline",
            find: "        y = self.fc(x)\n        return F.relu(y)",
            replace: "        y = self.fc(x)\n        if y.sum() > 0:\n            y = y * 2\n        return F.relu(y)",
            expect: Incremental,
        },
        Case { what: "non-ASCII comment", find: "        h = self.proj(x)\n", replace: "        # größe, 幅\n        h = self.proj(x)\n", expect: Cutoff },
        Case { what: "typing a space", find: "return torch.sigmoid(h) * x", replace: "return torch.sigmoid(h) * x ", expect: Cutoff },
        Case { what: "and deleting it", find: "return torch.sigmoid(h) * x ", replace: "return torch.sigmoid(h) * x", expect: Cutoff },
        Case { what: "a half-typed call", find: "        h = self.norm(x)\n", replace: "        h = self.norm(\n        h = self.norm(x)\n", expect: Either },
        Case { what: "the call completed", find: "        h = self.norm(\n", replace: "", expect: Either },
        Case { what: "edit after the syntax error is gone", find: "x + h", replace: "x - h", expect: Incremental },
        Case { what: "a function the top level calls", find: "return base * 2", replace: "return base * 4", expect: Restart },
        Case { what: "a top-level statement", find: "WIDTH = make_width(8)", replace: "WIDTH = make_width(4)", expect: Restart },
        Case { what: "a yield makes a generator", find: "return torch.sigmoid(h) * x", replace: "yield torch.sigmoid(h) * x", expect: Restart },
        Case { what: "a signature", find: "def forward(self, x):\n        y = self.conv(x)", replace: "def forward(self, x, z=None):\n        y = self.conv(x)", expect: Restart },
        Case { what: "a body edit after restarts", find: "print(y)", replace: "y = y.item()", expect: Incremental },
    ];
    on_big_stack(move || run_cases(&root, &path, &text, &cases));
}

#[test]
fn edits_that_change_no_token_are_cut_off() {
    let (root, path, text) = fixture("incremental/gated_model.py");
    use Expect::*;
    let cases = [
        Case {
            what: "a space after an import",
            find: "import torch\n",
            replace: "import torch \n",
            expect: Cutoff,
        },
        Case {
            what: "a space inside an import",
            find: "import torch.nn as nn",
            replace: "import torch.nn as  nn",
            expect: Cutoff,
        },
        Case {
            what: "a comment after a constant",
            find: "WIDTH = make_width(8)\n",
            replace: "WIDTH = make_width(8)  # größe\n",
            expect: Cutoff,
        },
        Case {
            what: "a comment line between classes",
            find: "\n\nclass Model(",
            replace: "\n# the whole model\n\nclass Model(",
            expect: Cutoff,
        },
        Case {
            what: "a blank line in a constructor",
            find: "        self.gate = Gate(dim)\n",
            replace: "        self.gate = Gate(dim)\n\n",
            expect: Cutoff,
        },
        Case {
            what: "spaces inside a forward's call",
            find: "return torch.sigmoid(h) * x",
            replace: "return torch.sigmoid( h ) * x",
            expect: Cutoff,
        },
        Case {
            what: "a space at the end of a body's last line",
            find: "return self.head(x)",
            replace: "return self.head(x) ",
            expect: Cutoff,
        },
        Case {
            what: "a real change after the shifts",
            find: "h = scale(h)",
            replace: "h = scale(h, 3.0)",
            expect: Incremental,
        },
        Case {
            what: "a space in the edited body",
            find: "h = scale(h, 3.0)",
            replace: "h = scale(h,  3.0)",
            expect: Cutoff,
        },
        Case {
            what: "a space in a string is a change",
            find: "share helpers",
            replace: "share  helpers",
            expect: Either,
        },
        Case {
            what: "a word in a function's docstring",
            find: "Mixes the features.",
            replace: "Mixes the größe features.",
            expect: Cutoff,
        },
        Case {
            what: "a class's docstring is read (`__doc__`)",
            find: "A gated block.",
            replace: "A gated  block.",
            expect: Restart,
        },
        Case {
            what: "an f-string statement reads its names",
            find: "{WIDTH} features",
            replace: "{WIDTH}  features",
            expect: Incremental,
        },
        Case {
            what: "indentation is a change",
            find: "        h = self._mix(h)",
            replace: "         h = self._mix(h)",
            expect: Either,
        },
        Case {
            what: "and undone",
            find: "         h = self._mix(h)",
            replace: "        h = self._mix(h)",
            expect: Either,
        },
        Case {
            what: "a space deleted again",
            find: "import torch \n",
            replace: "import torch\n",
            expect: Cutoff,
        },
        Case {
            what: "a digit in the last class",
            find: "nn.Conv2d(3, 8, 3",
            replace: "nn.Conv2d(3, 9, 3",
            expect: Incremental,
        },
    ];
    on_big_stack(move || run_cases(&root, &path, &text, &cases));
}

const TOP_LEVEL: &str = r#"import math
import torch
import torch.nn as nn
import torch.nn.functional as F

HIDDEN = 16
SCALE = 0.5
UNUSED = 3
DOUBLE = HIDDEN * 2


def halve(x, by=2):
    return x / by


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(HIDDEN, HIDDEN)

    def forward(self, x):
        return self.fc(x) * SCALE


class Plain(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        return F.relu(self.fc(x))


class UsesMath(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x) / math.sqrt(4)


class Halved(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return halve(self.fc(x))


LATER = 1
"#;

/// Top-level edits run the changed statement again in the kept module: nothing else when its
/// names keep their values, the classes that read them when they do not, a full analysis
/// when the top level itself reads them.
#[test]
fn top_level_edits_rerun_only_what_reads_them() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/incremental");
    let path = root.join("top_level_in_memory.py");
    use Expect::*;
    let cases = [
        Case {
            what: "whitespace in an import",
            find: "import math\n",
            replace: "import  math\n",
            expect: Cutoff,
        },
        Case {
            what: "a constant a class's forward reads",
            find: "SCALE = 0.5",
            replace: "SCALE = 0.25",
            expect: Retraces(1),
        },
        Case {
            what: "a constant nobody reads",
            find: "UNUSED = 3",
            replace: "UNUSED = 4",
            expect: Retraces(0),
        },
        Case {
            what: "the same value spelled otherwise",
            find: "UNUSED = 4",
            replace: "UNUSED = (4)",
            expect: Retraces(0),
        },
        Case {
            what: "a default of a helper a class calls",
            find: "def halve(x, by=2):",
            replace: "def halve(x, by=3):",
            expect: Retraces(1),
        },
        Case {
            what: "a constant above it, which moves it",
            find: "DOUBLE = HIDDEN * 2",
            replace: "DOUBLE = HIDDEN * 22",
            expect: Retraces(0),
        },
        Case {
            what: "then its body, followed in the moved text",
            find: "return x / by",
            replace: "return x / by - x",
            expect: Retraces(1),
        },
        Case {
            what: "a parameter added to it",
            find: "def halve(x, by=3):",
            replace: "def halve(x, by=3, eps=0.5):",
            expect: Retraces(1),
        },
        Case {
            what: "a default that calls",
            find: "by=3, eps=0.5",
            replace: "by=abs(3), eps=0.5",
            expect: Restart,
        },
        Case {
            what: "a default reading a name bound after it",
            find: "by=abs(3)",
            replace: "by=LATER",
            expect: Restart,
        },
        Case {
            what: "renamed",
            find: "def halve(x, by=LATER",
            replace: "def halved(x, by=LATER",
            expect: Restart,
        },
        Case {
            what: "and back",
            find: "def halved(x, by=LATER",
            replace: "def halve(x, by=2",
            expect: Restart,
        },
        Case {
            what: "an added import",
            find: "import  math\n",
            replace: "import  math\nimport collections\n",
            expect: Retraces(0),
        },
        Case {
            what: "a removed import a class uses",
            find: "import  math\n",
            replace: "",
            expect: Retraces(1),
        },
        Case {
            what: "and added back",
            find: "import collections\n",
            replace: "import collections\nimport math\n",
            expect: Retraces(1),
        },
        Case {
            what: "an import bound to another name",
            find: "import torch.nn.functional as F",
            replace: "import torch.nn.functional as G",
            expect: Retraces(1),
        },
        Case {
            what: "and back",
            find: "import torch.nn.functional as G",
            replace: "import torch.nn.functional as F",
            expect: Retraces(1),
        },
        Case {
            what: "a syntax error typed in a top-level line",
            find: "SCALE = 0.25",
            replace: "SCALE = 0.25 +",
            expect: Either,
        },
        Case {
            what: "and removed again",
            find: "SCALE = 0.25 +",
            replace: "SCALE = 0.25",
            expect: Either,
        },
        Case {
            what: "a constant the top level reads",
            find: "HIDDEN = 16",
            replace: "HIDDEN = 8",
            expect: Restart,
        },
        Case {
            what: "a second binding of a name",
            find: "UNUSED = (4)\n",
            replace: "UNUSED = (4)\nSCALE = 2\n",
            expect: Restart,
        },
        Case {
            what: "a constant computed by a call",
            find: "UNUSED = (4)",
            replace: "UNUSED = abs(4)",
            expect: Restart,
        },
        Case {
            what: "a body edit after all that",
            find: "* SCALE",
            replace: "* SCALE * 2",
            expect: Retraces(1),
        },
    ];
    on_big_stack(move || run_cases(&root, &path, TOP_LEVEL, &cases));
}

#[test]
fn crlf_text_edits_match_a_full_analysis() {
    let (root, path, text) = fixture("models/transformer_block.py");
    let text = text.replace('\n', "\r\n");
    use Expect::*;
    let cases = [
        Case {
            what: "attention scale",
            find: "att = att.softmax(dim=-1)",
            replace: "att = (att * 0.5).softmax(dim=-1)",
            expect: Incremental,
        },
        Case {
            what: "a new line in the MLP",
            find: "        return self.drop(",
            replace: "        x = x.clamp(min=0)\r\n        return self.drop(",
            expect: Incremental,
        },
        Case {
            what: "a break in Block",
            find: "        return x\r\n",
            replace: "        if x.mean() > 0:\r\n            x = -x\r\n        return x\r\n",
            expect: Incremental,
        },
    ];
    on_big_stack(move || run_cases(&root, &path, &text, &cases));
}

/// Random typing: bursts of keystrokes (code-like snippets, backspaces) at random places of
/// the file, each burst then undone, every step followed by the comparison. The session must
/// agree with a full analysis whether it follows the edit or starts over.
fn random_edits(name: &str, seed: u64, bursts: usize) {
    let (root, path, original) = fixture(name);
    let snippets = [
        " ",
        "1",
        "x",
        "\n        ",
        "(",
        ")",
        "#",
        ".item()",
        "é",
        "print(h)\n        ",
        ":",
        "\r\n",
    ];
    let mut rng = Rng(seed);
    let (mut session, _) =
        Session::start(project(&root, &path, &original), &path, &opts(&root)).unwrap();
    let (mut incremental, mut steps) = (0, 0);
    for burst in 0..bursts {
        let mut text = original.clone();
        let mut at = rng.below(text.len() + 1);
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        for key in 0..=5 {
            if key == 5 {
                text = original.clone();
            } else if rng.below(4) == 0 && at > 0 {
                let mut start = at - 1;
                while !text.is_char_boundary(start) {
                    start -= 1;
                }
                text.replace_range(start..at, "");
                at = start;
            } else {
                let s = snippets[rng.below(snippets.len())];
                text.insert_str(at, s);
                at += s.len();
            }
            steps += 1;
            let got = match session.update(Arc::from(text.as_str()), None) {
                Some(a) => {
                    incremental += 1;
                    let a = session.finish_retraces().unwrap_or(a);
                    view(&a, &text)
                }
                None => {
                    let (s, a) =
                        Session::start(project(&root, &path, &text), &path, &opts(&root)).unwrap();
                    session = s;
                    view(&a, &text)
                }
            };
            let want = fresh_view(&root, &path, &text);
            if got != want {
                let dir = std::env::temp_dir();
                let _ = std::fs::write(dir.join("staticfx-incremental-got.txt"), &got);
                let _ = std::fs::write(dir.join("staticfx-incremental-want.txt"), &want);
            }
            assert!(
                got == want,
                "{name}: burst {burst} key {key} at byte {at} differs (views in the temp dir):\n{text}"
            );
        }
    }
    // Which edits must be followed is asserted by the scripted cases; random typing soon
    // leaves syntax errors that reshape the tree, so here a floor shows the session is used.
    assert!(
        incremental * 10 > steps,
        "{name}: only {incremental} of {steps} edits were incremental"
    );
}

#[test]
fn random_keystrokes_match_a_full_analysis() {
    on_big_stack(|| random_edits("incremental/gated_model.py", 0x9e3779b97f4a7c15, 40));
    on_big_stack(|| random_edits("models/transformer_block.py", 0x2545f4914f6cdd1d, 40));
}

/// A module built from a config, with a break only `output_attentions=True` reaches (the
/// flagged retraces find it). Not a fixture file: `tests/surfaces_agree` compares first
/// publications, which lack that break by design.
const FLAG_ONLY_BREAK: &str = r#"import torch
from torch import nn


class PreTrainedConfig:
    pass


class TinyConfig(PreTrainedConfig):
    def __init__(self, hidden_size=8, output_attentions=False):
        self.hidden_size = hidden_size
        self.output_attentions = output_attentions


class Block(nn.Module):
    def __init__(self, config: TinyConfig):
        super().__init__()
        self.config = config
        self.proj = nn.Linear(config.hidden_size, config.hidden_size)

    def forward(self, hidden_states):
        out = self.proj(hidden_states)
        # long enough for a retrace to be stopped as it runs
        for _ in range(400):
            out = out * 1.0
        if self.config.output_attentions:
            print("attention weights", out)
        return out


class Other(nn.Module):
    def __init__(self, config: TinyConfig):
        super().__init__()
        self.fc = nn.Linear(config.hidden_size, 2)

    def forward(self, x):
        return self.fc(x)
"#;

/// The server publishes a new session's default traces first and stops before the flagged
/// retraces when the document changes: they stay pending across updates and then run on the
/// newest text, which must give what a full analysis of that text gives.
#[test]
fn retraces_left_pending_run_on_the_newest_text() {
    on_big_stack(|| {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/incremental");
        let path = root.join("flag_only_break_in_memory.py");
        let mut text = FLAG_ONLY_BREAK.to_string();
        let (mut session, _) =
            Session::start(project(&root, &path, &text), &path, &opts(&root)).unwrap();
        assert!(
            session.has_pending_retraces(),
            "the config-built classes have retraces to run"
        );
        let edits = [
            // cut off: nothing traced, the retraces still pending
            (
                "out = self.proj(hidden_states)",
                "out = self.proj( hidden_states )",
            ),
            // inside the branch only the flagged retrace reaches
            (
                "print(\"attention weights\", out)",
                "print(\"weights\", out.sum())",
            ),
            // in a class whose default trace reads it
            ("return self.fc(x)", "return self.fc(x) * 2"),
        ];
        for (k, (find, replace)) in edits.into_iter().enumerate() {
            text = text.replacen(find, replace, 1);
            let partial = session
                .update(Arc::from(text.as_str()), None)
                .unwrap_or_else(|| panic!("edit {k} should be served incrementally"));
            if k == 0 {
                assert!(
                    session.has_pending_retraces(),
                    "a cut-off edit runs no retrace"
                );
                assert!(session.finish_retraces_while(|| false).is_none());
                assert!(
                    session.has_pending_retraces(),
                    "an interrupted finish keeps them"
                );
                // Wanted when the retraces start, no longer once they run: the evaluator
                // stops them midway, and what they did must leave no trace.
                let asked = Arc::new(AtomicUsize::new(0));
                let counter = asked.clone();
                let stopped = session
                    .finish_retraces_while(move || counter.fetch_add(1, Ordering::SeqCst) == 0);
                assert!(stopped.is_none());
                assert!(
                    asked.load(Ordering::SeqCst) > 1,
                    "the evaluator asked as it ran"
                );
                assert!(
                    session.has_pending_retraces(),
                    "a stopped retrace stays pending"
                );
                let _ = partial;
                continue;
            }
            let a = session.finish_retraces().unwrap_or(partial);
            assert_eq!(
                view(&a, &text),
                fresh_view(&root, &path, &text),
                "edit {k}: the retraces after updates differ from a full analysis"
            );
            assert!(!session.has_pending_retraces());
        }
        let full = fresh_view(&root, &path, &text);
        assert!(
            full.contains("print"),
            "the flagged break is in the full analysis:\n{full}"
        );
    });
}
