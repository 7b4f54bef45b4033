//! Fixes over every fixture of the graph-break corpus (`tests/fixtures/breaks`) and the fix
//! fixtures (`tests/fixtures/fixes`):
//! - every single fix offered for every finding (main fix, alternatives, noqa) applies and
//!   leaves a file that parses without errors;
//! - `fix --unsafe-fixes` reaches a fixed point that parses, and fixing the result again
//!   changes nothing (idempotence);
//! - the same file with CRLF line endings gets the same fixes with CRLF kept;
//! - the fixed texts equal the ones `scripts/fixes/check_where_rewrites.py` ran in real torch
//!   (`tests/expected/fixes/where_rewrites.json`): eager outputs equal, no graph break left.

use std::path::{Path, PathBuf};

use staticfx::analysis::{analyze_in_project, GraphOptions};
use staticfx::cli::fix::{fix_text, Filter, Outcome};
use staticfx::diagnostics::Rule;
use staticfx::fixes;
use staticfx::semantic::Project;

fn fixtures() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut out = Vec::new();
    for dir in ["breaks", "fixes"] {
        for e in std::fs::read_dir(root.join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "py") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn big_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap()
}

/// Fixes `text` as if it were the content of `path` (written to a temp dir so the project
/// root is clean).
fn fix(name: &str, text: &str, unsafe_fixes: bool) -> Outcome {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    let text = text.to_string();
    big_stack(move || {
        let _keep = dir;
        fix_text(&path, &text, None, &Filter::all(), unsafe_fixes).unwrap()
    })
}

fn parses(text: &str) -> bool {
    !staticfx::syntax::parse(text, None).root_node().has_error()
}

#[test]
fn every_offered_fix_parses() {
    let mut offered = 0;
    for p in fixtures() {
        let text = std::fs::read_to_string(&p).unwrap();
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(&name);
        std::fs::write(&path, &text).unwrap();
        let t = text.clone();
        let all: Vec<(String, fixes::SiteFixes)> = big_stack(move || {
            let mut project = Project::new(path.parent().unwrap());
            project.add_overlay(&path, t.as_str().into(), None);
            let a = analyze_in_project(project, &path, &GraphOptions::default()).unwrap();
            fixes::for_analysis(&a, &t)
                .into_iter()
                .map(|(f, fx)| (f.code.to_string(), fx))
                .collect()
        });
        for (code, fx) in all {
            if ["FX101", "FX102", "FX105", "FX106", "FX107"].contains(&code.as_str()) {
                assert!(
                    fx.main().is_some() || fx.refusal.is_some(),
                    "{name}: {code} has neither a fix nor a reason"
                );
            }
            assert!(
                fx.fixes.iter().any(|f| f.kind == fixes::FixKind::Noqa),
                "{name}: {code} cannot be suppressed"
            );
            for f in &fx.fixes {
                offered += 1;
                let out = fixes::apply(&text, &f.edits).unwrap();
                assert!(
                    parses(&out),
                    "{name}: `{}` breaks the syntax:\n{out}",
                    f.title
                );
                assert_ne!(out, text, "{name}: `{}` changes nothing", f.title);
            }
        }
    }
    assert!(
        offered >= 60,
        "only {offered} fixes offered over the corpus"
    );
}

#[test]
fn fixing_reaches_a_fixed_point_and_is_idempotent() {
    let mut changed = 0;
    for p in fixtures() {
        let text = std::fs::read_to_string(&p).unwrap();
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        for unsafe_fixes in [false, true] {
            let once = fix(&name, &text, unsafe_fixes);
            assert!(parses(&once.text), "{name}: fixed file does not parse");
            assert!(
                once.passes < staticfx::cli::fix::MAX_PASSES,
                "{name}: no fixed point"
            );
            let twice = fix(&name, &once.text, unsafe_fixes);
            assert_eq!(twice.text, once.text, "{name}: fixing twice differs");
            assert_eq!(twice.fixed, 0, "{name}: second run found more to fix");
            assert_eq!(twice.remaining, once.remaining, "{name}");
            if once.text != text {
                changed += 1;
            }
        }
    }
    assert!(
        changed >= 20,
        "only {changed} fixture runs changed anything"
    );
}

#[test]
fn crlf_files_get_the_same_fixes_with_crlf_kept() {
    for p in fixtures() {
        let text = std::fs::read_to_string(&p).unwrap();
        if text.contains('\r') {
            continue;
        }
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        let lf = fix(&name, &text, true);
        let crlf = fix(&name, &text.replace('\n', "\r\n"), true);
        assert_eq!(crlf.text, lf.text.replace('\n', "\r\n"), "{name}");
        assert_eq!(crlf.fixed, lf.fixed, "{name}");
    }
}

#[test]
fn fixed_texts_are_the_ones_verified_in_torch() {
    let expected: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/expected/fixes/where_rewrites.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let cases = expected["cases"].as_array().unwrap();
    assert!(cases.len() >= 12, "{} cases", cases.len());
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut where_cases = 0;
    for c in cases {
        let file = c["file"].as_str().unwrap();
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        let name = Path::new(file)
            .file_name()
            .unwrap()
            .to_string_lossy()
            .to_string();
        let ours = fix(&name, &text, true);
        assert_eq!(
            ours.text,
            c["fixed_text"].as_str().unwrap(),
            "{file}: our fix differs from the text verified in torch"
        );
        // What torch said about that text.
        assert_eq!(c["outputs_match"], true, "{file}: eager outputs differ");
        assert_eq!(
            c["breaks_after"], 0,
            "{file}: graph breaks left after the fix"
        );
        assert!(c["breaks_before"].as_u64().unwrap() > 0, "{file}");
        if ours.text.contains(".where(") && !text.contains(".where(") {
            where_cases += 1;
            assert_eq!(c["uses_where"], true, "{file}");
            // The original really went down both sides of the merged branches.
            assert!(
                c["paths_seen"].as_u64().unwrap() >= 2,
                "{file}: the torch run never took the other branch"
            );
        }
        assert!(c["trials"].as_u64().unwrap() >= 50, "{file}");
    }
    assert!(
        where_cases >= 8,
        "only {where_cases} torch.where rewrites verified"
    );
}

/// Sites at arbitrary nodes (every code, conditions claimed to be tensors) and on truncated,
/// half-typed files: no panic, and whatever fix comes back applies and parses (or, for a file
/// that did not parse to begin with, is only the noqa comment).
#[test]
fn arbitrary_sites_and_broken_files_never_panic() {
    let codes = [
        Rule::DataDependentBranch,
        Rule::ScalarConversion,
        Rule::Print,
        Rule::Logging,
        Rule::WallClockTime,
        Rule::Tolist,
    ];
    let mut checked = 0;
    for p in fixtures() {
        let text = std::fs::read_to_string(&p).unwrap();
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        let tree = staticfx::syntax::parse(&text, None);
        let mut nodes = Vec::new();
        let mut stack = vec![tree.root_node()];
        while let Some(n) = stack.pop() {
            nodes.push(staticfx::syntax::Span::of(n));
            let mut c = n.walk();
            stack.extend(n.named_children(&mut c));
        }
        for (i, span) in nodes.iter().enumerate() {
            let code = codes[i % codes.len()];
            let mut facts = fixes::Facts::default();
            facts.tensor_conditions.push(*span);
            facts.tensor_values.insert(*span);
            let site = fixes::Site {
                rule: code,
                span: *span,
                scalar_feeds_tensors: true,
            };
            for f in fixes::for_site(&text, &tree, &site, &facts).fixes {
                let out = fixes::apply(&text, &f.edits).unwrap();
                assert!(
                    parses(&out),
                    "{name}: {code} at {span:?}: `{}`:\n{out}",
                    f.title
                );
                checked += 1;
            }
        }
        // Half-typed versions of the file.
        let mut cut = 7;
        while cut < text.len() {
            if text.is_char_boundary(cut) {
                let t = &text[..cut];
                let tree = staticfx::syntax::parse(t, None);
                for code in codes {
                    let site = fixes::Site {
                        rule: code,
                        span: staticfx::syntax::Span::new(cut / 2, cut),
                        scalar_feeds_tensors: true,
                    };
                    let fx = fixes::for_site(t, &tree, &site, &fixes::Facts::default());
                    if tree.root_node().has_error() {
                        assert!(fx.fixes.iter().all(|f| f.kind == fixes::FixKind::Noqa));
                    }
                    for f in fx.fixes {
                        fixes::apply(t, &f.edits).unwrap();
                    }
                }
            }
            cut += 53;
        }
    }
    assert!(checked > 1000, "{checked}");
}
