//! Analyses that reuse the modules earlier analyses on the thread evaluated
//! (`analysis::warm`, what `staticfx check` does) report what fresh analyses report: the
//! same messages for every file of a package whose files share imports, an evaluation budget
//! that runs out in the same place, and a file analysed after someone imported it.
//! With `STATICFX_CORPUS` set, the same comparison runs over transformers' model files.

use std::path::{Path, PathBuf};

use staticfx::analysis::{warm, GraphOptions};
use staticfx::cli::check::{check_file_cached, Message};
use staticfx::ide::check::{forget_kept_modules, Shared};
use staticfx::ide::{on_large_stack, Settings, TorchVersion};

mod lazy_package;

const COMMON: &str = "\
import torch
from torch import nn

SCALE = 2
REGISTRY = {}


def helper(x):
    if x.sum() > 0:
        return x * SCALE
    return x


class Base(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        return helper(self.fc(x))
";

/// Its top level costs most of the budget: an analysis that reaches it has little left.
const HEAVY: &str = "\
TOTAL = 0
for i in range(900000):
    TOTAL = i
";

const A: &str = "\
import torch
from torch import nn
from .common import Base, helper
from . import heavy


class A(Base):
    def forward(self, x):
        h = super().forward(x)
        print(h.shape)
        return helper(h) + heavy.TOTAL
";

/// Runs out of budget after `heavy`'s top level, fresh or reused.
const B: &str = "\
import torch
from torch import nn
from .heavy import TOTAL

N = TOTAL
for j in range(900000):
    N = j


class B(nn.Module):
    def forward(self, x):
        return x.item() + N
";

/// Imports `a`, analysed before it as an entry; and a module only it needs, deferred.
const C: &str = "\
import torch
from torch import nn
from .a import A
from .common import Base
from . import lazy


class C(A):
    def forward(self, x):
        y = super().forward(x)
        return y.tolist()


class D(Base):
    def forward(self, x):
        if lazy.LOUD:
            print(x)
        return lazy.f(x)
";

const LAZY: &str = "\
import torch

LOUD = True


def f(x):
    if x.max() > 1:
        return torch.relu(x)
    return x
";

fn package() -> (tempfile::TempDir, Vec<PathBuf>) {
    package_with(HEAVY)
}

fn package_with(heavy: &str) -> (tempfile::TempDir, Vec<PathBuf>) {
    let dir = tempfile::tempdir().unwrap();
    let pkg = dir.path().join("pkg");
    std::fs::create_dir(&pkg).unwrap();
    let files = [
        ("__init__.py", ""),
        ("common.py", COMMON),
        ("heavy.py", heavy),
        ("lazy.py", LAZY),
        ("a.py", A),
        ("b.py", B),
        ("c.py", C),
    ];
    for (name, text) in files {
        std::fs::write(pkg.join(name), text).unwrap();
    }
    let order = ["a.py", "b.py", "common.py", "c.py", "lazy.py", "heavy.py"];
    (dir, order.iter().map(|n| pkg.join(n)).collect())
}

fn settings() -> Settings {
    Settings {
        target_version: Some("torch==2.15".parse::<TorchVersion>().unwrap()),
        ..Default::default()
    }
}

/// Every file's messages, in order, all on one thread, with or without reuse.
fn check_all(files: &[PathBuf], reuse_modules: bool) -> Vec<Vec<Message>> {
    let files = files.to_vec();
    on_large_stack("test", move || {
        let settings = settings();
        let shared = Shared {
            reuse_modules,
            ..Shared::default()
        };
        let out = files
            .iter()
            .map(|f| check_file_cached(f, &settings, &shared, None).unwrap())
            .collect();
        forget_kept_modules();
        out
    })
    .unwrap()
}

fn codes(ms: &[Message]) -> Vec<&str> {
    ms.iter().map(|m| m.code.as_str()).collect()
}

#[test]
fn reused_modules_give_the_findings_of_fresh_analyses() {
    let (_dir, files) = package();
    let fresh = check_all(&files, false);
    let reused = check_all(&files, true);
    for (i, f) in files.iter().enumerate() {
        assert_eq!(reused[i], fresh[i], "{}", f.display());
    }
    // The package is one a difference would show in: breaks through the shared helper,
    // the budget, and breaks in a deferred import's function.
    assert!(codes(&fresh[0]).contains(&"FX105"), "{:?}", fresh[0]);
    assert!(codes(&fresh[1]).contains(&"FX904"), "{:?}", fresh[1]);
    assert!(codes(&fresh[3]).contains(&"FX103"), "{:?}", fresh[3]);
    assert!(
        fresh[3].iter().any(|m| m.code == "FX105" && m.row == 17),
        "the deferred module's break is reported through D: {:?}",
        fresh[3]
    );
}

#[test]
fn the_order_of_the_files_does_not_change_the_findings() {
    let (_dir, files) = package();
    // b is left out: its budget test costs seconds in a debug build.
    let files: Vec<PathBuf> = files.into_iter().filter(|f| !f.ends_with("b.py")).collect();
    let fresh = check_all(&files, false);
    let mut reversed = files.clone();
    reversed.reverse();
    let mut reused = check_all(&reversed, true);
    reused.reverse();
    assert_eq!(reused, fresh);
}

#[test]
fn a_warm_interpreter_serves_the_files_of_one_root() {
    let (dir, files) = package();
    let root = dir.path().to_path_buf();
    let (a, b, common, c, lazy) = (0, 1, 2, 3, 4);
    let _ = b;
    let seen = on_large_stack("test", move || {
        let opts = GraphOptions {
            root: Some(root),
            ..Default::default()
        };
        let mut slot = None;
        let mut seen = vec![];
        // a, lazy, c in one interpreter; then common, which a imported: it starts over, so
        // its own top level is evaluated in its own analysis.
        for &i in &[a, lazy, c, common] {
            let (analysis, read) = warm::analyze_file(&mut slot, &files[i], &opts).unwrap();
            let mut names: Vec<String> = read
                .iter()
                .filter_map(|&id| {
                    let path = analysis.project.file(id).path.clone();
                    Some(path.file_name()?.to_string_lossy().into_owned())
                })
                .collect();
            names.sort();
            seen.push((slot.as_ref().unwrap().analysed(), names));
        }
        seen
    })
    .unwrap();
    let counts: Vec<usize> = seen.iter().map(|s| s.0).collect();
    assert_eq!(counts, [1, 2, 3, 1]);
    let has = |i: usize, name: &str| seen[i].1.iter().any(|n| n == name);
    assert!(has(0, "heavy.py") && has(0, "common.py"), "{:?}", seen[0]);
    // lazy read itself, not a, the other file analysed before it.
    assert!(has(1, "lazy.py") && !has(1, "a.py"), "{:?}", seen[1]);
    // c reached both earlier files.
    assert!(has(2, "a.py") && has(2, "lazy.py"), "{:?}", seen[2]);
}

/// Transformers' model files (`STATICFX_CORPUS/transformers/models`): every one of the first
/// `STATICFX_REUSE_FILES` (default 40) gives the same messages either way.
#[test]
fn transformers_models_give_the_same_messages_with_reuse() {
    let Some(corpus) = std::env::var_os("STATICFX_CORPUS") else {
        eprintln!("skipped: set STATICFX_CORPUS to the unzipped wheels (transformers) to run");
        return;
    };
    let models = Path::new(&corpus).join("transformers/models");
    if !models.is_dir() {
        eprintln!("skipped: no {}", models.display());
        return;
    }
    let limit: usize = std::env::var("STATICFX_REUSE_FILES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(40);
    let mut files: Vec<PathBuf> = walkdir(&models)
        .into_iter()
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("modeling_") && n.ends_with(".py"))
        })
        .collect();
    files.sort();
    files.truncate(limit);
    let fresh = check_all(&files, false);
    let reused = check_all(&files, true);
    for (i, f) in files.iter().enumerate() {
        assert_eq!(reused[i], fresh[i], "{}", f.display());
    }
}

fn walkdir(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![];
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out
}

/// The fixtures of analysis limits and models, each directory checked on one thread: a
/// construction that fails, syntax errors, unknown names and budgets after other files.
#[test]
fn fixtures_give_the_same_messages_with_reuse() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    for dir in ["errors", "models"] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(fixtures.join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "py"))
            .collect();
        files.sort();
        assert!(files.len() > 3, "{dir}");
        let fresh = check_all(&files, false);
        let reused = check_all(&files, true);
        for (i, f) in files.iter().enumerate() {
            assert_eq!(reused[i], fresh[i], "{}", f.display());
        }
    }
}

/// What the editor gets from one output, with file ids as paths (the host's library and a
/// fresh analysis number their files differently).
fn editor_view(out: &staticfx::ide::Output) -> String {
    let path = |f: usize| match out.files.get(&f) {
        Some((p, _)) => p.display().to_string(),
        None => "<the document>".to_string(),
    };
    let mut s = String::new();
    if let Some(f) = &out.failure {
        s.push_str(&format!("failure {f}\n"));
    }
    for d in &out.diagnostics {
        let chain: Vec<String> = (d.chain.iter())
            .map(|&(f, sp)| format!("{}:{}-{}", path(f), sp.start, sp.end))
            .collect();
        s.push_str(&format!(
            "{} {}-{} {:?} {chain:?} {:?}\n",
            d.code, d.span.start, d.span.end, d.message, d.fixes
        ));
    }
    for g in &out.graphs {
        s.push_str(&staticfx::render::text::render(&g.traced));
    }
    s
}

/// The documents of a package open in the editor, analysed on one thread in the order given
/// (their sessions share the host's library, and each is edited in a function body), and
/// each analysed in a host of its own: the same diagnostics and graphs.
fn host_and_fresh(
    root: PathBuf,
    files: Vec<PathBuf>,
    edit: Option<(&'static str, &'static str)>,
) -> Vec<(PathBuf, String, String)> {
    on_large_stack("test", move || {
        let mut host = staticfx::ide::AnalysisHost::new();
        let texts: Vec<String> = files
            .iter()
            .map(|f| std::fs::read_to_string(f).unwrap())
            .collect();
        let snapshot = |i: usize, text: &str, version: i32| {
            let mut snap = staticfx::ide::Snapshot::new(files[i].clone(), root.clone(), text);
            snap.version = version;
            snap.target_version = Some("torch==2.15".parse::<TorchVersion>().unwrap());
            // the other documents are open too, as on disk
            snap.overlays = (files.iter().zip(&texts))
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, (f, t))| (f.clone(), std::sync::Arc::from(t.as_str())))
                .collect();
            snap
        };
        let mut out = vec![];
        for (i, text) in texts.iter().enumerate() {
            let mut snaps = vec![snapshot(i, text, 1)];
            if let Some((from, to)) = edit.filter(|(from, _)| text.contains(from)) {
                snaps.push(snapshot(i, &text.replacen(from, to, 1), 2));
            }
            for snap in &snaps {
                let kept = editor_view(&host.analyze(snap));
                // a session with nothing before it, as every document had its own
                let fresh = editor_view(&staticfx::ide::AnalysisHost::new().analyze(snap));
                out.push((files[i].clone(), kept, fresh));
            }
        }
        out
    })
    .unwrap()
}

#[test]
fn documents_sharing_a_library_get_the_analysis_of_fresh_ones() {
    // The server's analyses have a time limit: a top level near the budget would stop
    // where the machine's speed says.
    let (dir, files) = package_with("TOTAL = 7\n");
    let root = dir.path().to_path_buf();
    // b is left out: its budget test costs seconds in a debug build. c reaches a as an
    // import after a's own session, common is imported by everyone before its own.
    let files: Vec<PathBuf> = files.into_iter().filter(|f| !f.ends_with("b.py")).collect();
    let seen = host_and_fresh(
        root,
        files,
        Some(("return helper(h)", "return helper(h * 2)")),
    );
    assert!(seen.len() > 5, "{}", seen.len());
    for (i, (path, kept, fresh)) in seen.iter().enumerate() {
        let differs = kept.lines().zip(fresh.lines()).find(|(k, f)| k != f);
        assert!(kept == fresh, "{i} {}: {differs:?}", path.display());
    }
    // A difference would show: breaks through the shared helper and a deferred import.
    assert!(seen[0].2.contains("FX105"), "{}", seen[0].2);
    assert!(seen
        .iter()
        .any(|(p, _, f)| p.ends_with("c.py") && f.contains("FX103")));
}

#[test]
fn a_host_shares_one_library_between_documents() {
    let (dir, files) = package();
    let root = dir.path().to_path_buf();
    let kept = on_large_stack("test", move || {
        let mut host = staticfx::ide::AnalysisHost::new();
        let mut kept = vec![];
        // a, lazy and c share a library; common, which a imported, gets a session of its
        // own; closing c leaves the library, which is dropped once idle.
        for name in ["a.py", "lazy.py", "c.py", "common.py"] {
            let path = files.iter().find(|f| f.ends_with(name)).unwrap();
            let text = std::fs::read_to_string(path).unwrap();
            let snap = staticfx::ide::Snapshot::new(path.clone(), root.clone(), &text);
            let out = host.analyze(&snap);
            assert!(out.failure.is_none(), "{name}: {:?}", out.failure);
            kept.push(host.kept());
        }
        let c = files.iter().find(|f| f.ends_with("c.py")).unwrap();
        host.forget(c);
        kept.push(host.kept());
        host.evict_idle(std::time::Duration::ZERO);
        kept.push(host.kept());
        kept
    })
    .unwrap();
    // (sessions, libraries): lazy defines no module, so it has no session; at most two
    // sessions are kept; common's is private.
    assert_eq!(kept, [(1, 1), (1, 1), (2, 1), (2, 1), (1, 1), (0, 0)]);
}

/// A package of `n` documents importing one shared module, each with a graph break of its own
/// and one through the shared helper.
fn documents(n: usize) -> (tempfile::TempDir, Vec<PathBuf>) {
    let dir = tempfile::tempdir().unwrap();
    let pkg = dir.path().join("pkg");
    std::fs::create_dir(&pkg).unwrap();
    std::fs::write(pkg.join("__init__.py"), "").unwrap();
    std::fs::write(pkg.join("common.py"), COMMON).unwrap();
    let files = (0..n)
        .map(|i| {
            let path = pkg.join(format!("d{i}.py"));
            let text = format!(
                "import torch\nfrom torch import nn\nfrom .common import Base, helper\n\n\n\
                 class D{i}(Base):\n    def forward(self, x):\n        h = super().forward(x)\n\
                 \x20       if h.mean() > {i}:\n            h = h * {i}\n        return helper(h)\n"
            );
            std::fs::write(&path, text).unwrap();
            path
        })
        .collect();
    (dir, files)
}

/// Analyses `steps` (document index, appended text) in one host with the given caps; after
/// each, the host's (sessions, libraries) and whether the output is a fresh host's.
fn analyse_with_caps(
    session_cap: usize,
    documents_per_library: usize,
    documents: usize,
    steps: &'static [(usize, &'static str)],
) -> Vec<((usize, usize), bool)> {
    let (dir, files) = self::documents(documents);
    let root = dir.path().to_path_buf();
    on_large_stack("test", move || {
        let mut host = staticfx::ide::AnalysisHost::with_caps(session_cap, documents_per_library);
        let mut seen = vec![];
        for (version, &(i, appended)) in steps.iter().enumerate() {
            let text = std::fs::read_to_string(&files[i]).unwrap() + appended;
            let mut snap = staticfx::ide::Snapshot::new(files[i].clone(), root.clone(), &text);
            snap.version = version as i32 + 1;
            let kept = host.analyze(&snap);
            assert!(kept.failure.is_none(), "{i}: {:?}", kept.failure);
            assert!(kept.diagnostics.iter().any(|d| d.code == "FX101"), "{i}");
            let fresh = staticfx::ide::AnalysisHost::new().analyze(&snap);
            seen.push((host.kept(), editor_view(&kept) == editor_view(&fresh)));
        }
        seen
    })
    .unwrap()
}

#[test]
fn a_host_keeps_at_most_its_cap_of_sessions_and_evicted_documents_analyse_again() {
    // d0 and d1 leave, least recently used first; d0 comes back edited, then d2 is edited
    // in its kept session.
    let steps: &[(usize, &str)] = &[
        (0, ""),
        (1, ""),
        (2, ""),
        (0, "\nX = 1\n"),
        (2, "\nY = 2\n"),
    ];
    let seen = analyse_with_caps(2, 32, 3, steps);
    let kept: Vec<(usize, usize)> = seen.iter().map(|s| s.0).collect();
    assert_eq!(kept, [(1, 1), (2, 1), (2, 1), (2, 1), (2, 1)]);
    for (step, (_, same)) in seen.iter().enumerate() {
        assert!(
            same,
            "step {step}: the kept host's output differs from a fresh one's"
        );
    }
    let one = analyse_with_caps(1, 32, 3, steps);
    assert!(one.iter().all(|(k, same)| *k == (1, 1) && *same), "{one:?}");
}

#[test]
fn of_documents_only_opened_the_newest_keeps_its_session_and_edited_ones_stay() {
    // (document, appended text, only opened): d1 replaces d0, which comes back edited and
    // then stays while d2 and d3 are opened; its next edit runs in its kept session.
    let steps: &[(usize, &str, bool)] = &[
        (0, "", true),
        (1, "", true),
        (0, "\nX = 1\n", false),
        (2, "", true),
        (3, "", true),
        (0, "\nX = 2\n", false),
    ];
    let (dir, files) = documents(4);
    let root = dir.path().to_path_buf();
    let seen = on_large_stack("test", move || {
        let mut host = staticfx::ide::AnalysisHost::with_caps(2, 32);
        let mut seen = vec![];
        for (version, &(i, appended, only_opened)) in steps.iter().enumerate() {
            let text = std::fs::read_to_string(&files[i]).unwrap() + appended;
            let mut snap = staticfx::ide::Snapshot::new(files[i].clone(), root.clone(), &text);
            snap.version = version as i32 + 1;
            snap.only_opened = only_opened;
            let kept = editor_view(&host.analyze(&snap));
            let fresh = editor_view(&staticfx::ide::AnalysisHost::new().analyze(&snap));
            assert!(kept.contains("FX101"), "{i}: {kept}");
            let names: Vec<String> = (host.kept_documents().iter())
                .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
                .collect();
            seen.push((names.join(" "), kept == fresh));
        }
        seen
    })
    .unwrap();
    let kept: Vec<&str> = seen.iter().map(|s| s.0.as_str()).collect();
    assert_eq!(
        kept,
        [
            "d0.py",
            "d1.py",
            "d1.py d0.py",
            "d0.py d2.py",
            "d0.py d3.py",
            "d3.py d0.py"
        ]
    );
    assert!(seen.iter().all(|(_, same)| *same), "{seen:?}");
}

#[test]
fn once_idle_the_hosts_of_a_server_keep_only_the_newest_opened_documents_session() {
    // Two hosts sharing an order, as the server's two analysis threads: d0 on the first,
    // d1 on the second, then d2 on the first. Idle, the first keeps d2 and the second drops
    // d1; an edited document stays whatever was opened after it, and a document whose
    // session went is analysed again alike.
    let (dir, files) = documents(4);
    let root = dir.path().to_path_buf();
    let seen = on_large_stack("test", move || {
        let order = staticfx::ide::OpenedOrder::default();
        let mut hosts = [0, 1]
            .map(|_| staticfx::ide::AnalysisHost::with_caps(2, 32).in_opened_order(order.clone()));
        let names = |h: &staticfx::ide::AnalysisHost| -> String {
            (h.kept_documents().iter())
                .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join(" ")
        };
        let mut seen = vec![];
        let mut version = 0;
        let mut analyse = |host: &mut staticfx::ide::AnalysisHost, i: usize, only_opened| {
            version += 1;
            let text = std::fs::read_to_string(&files[i]).unwrap();
            let mut snap = staticfx::ide::Snapshot::new(files[i].clone(), root.clone(), &text);
            snap.version = version;
            snap.only_opened = only_opened;
            let kept = editor_view(&host.analyze(&snap));
            let fresh = editor_view(&staticfx::ide::AnalysisHost::new().analyze(&snap));
            assert!(kept.contains("FX101"), "{i}: {kept}");
            kept == fresh
        };
        let [first, second] = &mut hosts;
        let mut same = vec![];
        same.push(analyse(first, 3, false));
        same.push(analyse(first, 0, true));
        same.push(analyse(second, 1, true));
        seen.push(format!("{} | {}", names(first), names(second)));
        same.push(analyse(first, 2, true));
        for host in [&mut *first, &mut *second] {
            host.trim_only_opened();
        }
        seen.push(format!("{} | {}", names(first), names(second)));
        // The library stays for the next document; d1 comes back, now the newest.
        seen.push(format!("{:?} {:?}", first.kept(), second.kept()));
        same.push(analyse(second, 1, true));
        for host in [&mut *first, &mut *second] {
            host.trim_only_opened();
        }
        seen.push(format!("{} | {}", names(first), names(second)));
        (seen, same)
    })
    .unwrap();
    assert_eq!(
        seen.0,
        [
            "d3.py d0.py | d1.py",
            "d3.py d2.py | ",
            "(2, 1) (0, 1)",
            "d3.py | d1.py"
        ]
    );
    assert!(seen.1.iter().all(|same| *same), "{seen:?}");
}

#[test]
fn a_retired_library_goes_with_its_sessions_before_the_next_one_starts() {
    // Two documents per library: d2 retires the first, whose sessions (d0, d1) are dropped
    // rather than kept beside a second library; d0 then starts in the second.
    let steps: &[(usize, &str)] = &[(0, ""), (1, ""), (2, ""), (0, "\nX = 1\n")];
    let seen = analyse_with_caps(2, 2, 3, steps);
    let kept: Vec<(usize, usize)> = seen.iter().map(|s| s.0).collect();
    assert_eq!(kept, [(1, 1), (2, 1), (1, 1), (2, 1)]);
    assert!(seen.iter().all(|(_, same)| *same), "{seen:?}");
}

/// A library found a name through a lazy package's star imports, searching the text of the
/// sources that could not bind it without loading them. One of them then binds the name on
/// disk: the next document's analysis is a fresh analysis's, not the library's stale lookup.
#[test]
fn a_star_source_the_library_searched_changing_on_disk_retires_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    let pkg = lazy_package::write(
        &root,
        &[
            ("early", "def other(h):\n    return h\n"),
            ("late", "def scale(h):\n    return h * 2\n"),
        ],
    );
    let documents: Vec<PathBuf> = (0..2)
        .map(|i| {
            let path = root.join(format!("d{i}.py"));
            std::fs::write(
                &path,
                format!("from torch import nn\nfrom pkg import scale\n\n\nclass D{i}(nn.Module):\n    def forward(self, x):\n        return scale(x)\n"),
            )
            .unwrap();
            path
        })
        .collect();
    let early = pkg.join("early.py");
    let seen = on_large_stack("test", move || {
        let mut host = staticfx::ide::AnalysisHost::new();
        let snap = |path: &PathBuf| {
            let text = std::fs::read_to_string(path).unwrap();
            staticfx::ide::Snapshot::new(path.clone(), root.clone(), &text)
        };
        let first = editor_view(&host.analyze(&snap(&documents[0])));
        std::fs::write(&early, "def scale(h):\n    print(h)\n    return h\n").unwrap();
        let second = snap(&documents[1]);
        let kept = editor_view(&host.analyze(&second));
        let fresh = editor_view(&staticfx::ide::AnalysisHost::new().analyze(&second));
        (first, kept, fresh)
    })
    .unwrap();
    let (first, kept, fresh) = seen;
    assert!(!first.contains("FX105"), "{first}");
    assert!(
        fresh.contains("FX105"),
        "the edited source binds it now: {fresh}"
    );
    assert_eq!(kept, fresh);
}

/// A document calls a helper of a module the next documents do not read: the library drops
/// that module's tree (`analysis::shared::TREE_KEEPING_ANALYSES`) and parses it again when the
/// document is analysed once more, edited: the helper's break and everything else as a fresh
/// analysis has them.
#[test]
fn a_module_whose_tree_the_library_dropped_is_traced_again_alike() {
    let (dir, files) = documents(6);
    let root = dir.path().to_path_buf();
    let pkg = root.join("pkg");
    std::fs::write(
        pkg.join("rare.py"),
        "def rare(h):\n    if h.max() > 3:\n        return h * 3\n    return h\n",
    )
    .unwrap();
    let reader = pkg.join("reader.py");
    let text = "from .common import Base\nfrom .rare import rare\n\n\nclass R(Base):\n    def forward(self, x):\n        return rare(super().forward(x))\n";
    std::fs::write(&reader, text).unwrap();
    let seen = on_large_stack("test", move || {
        let mut host = staticfx::ide::AnalysisHost::new();
        let snap = |path: &PathBuf, text: &str, version: i32| {
            let mut snap = staticfx::ide::Snapshot::new(path.clone(), root.clone(), text);
            snap.version = version;
            snap
        };
        host.analyze(&snap(&reader, text, 1));
        for f in &files {
            host.analyze(&snap(f, &std::fs::read_to_string(f).unwrap(), 1));
        }
        let edited = snap(
            &reader,
            &text.replace("rare(super()", "rare(2 * super()"),
            2,
        );
        let kept = editor_view(&host.analyze(&edited));
        let fresh = editor_view(&staticfx::ide::AnalysisHost::new().analyze(&edited));
        (kept, fresh)
    })
    .unwrap();
    let (kept, fresh) = seen;
    assert_eq!(kept, fresh);
    assert!(fresh.contains("`h.max() > 3`"), "{fresh}");
}
