//! Differential testing of the evaluator against CPython (issue 37): the generated programs of
//! `tests/fixtures/python_differential/programs.json` (written, with what CPython computed for
//! each, by `scripts/expect/gen_python_differential.py`) run through the evaluator, and each
//! one's `r` is compared with CPython's `repr(r)`.
//!
//! `known_failing.txt` beside it lists the programs that do not match yet: the test fails when
//! another one stops matching (a regression) and when a listed one starts to (take it off the
//! list, so the floor rises). `STATICFX_DIFF_BLESS=1` rewrites the list from this run;
//! `STATICFX_DIFF_DUMP=<file>` writes each failing program with both results there.

use std::collections::{BTreeMap, BTreeSet};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use super::test_support::{interp_over, py_repr};
use super::value::Value;
use super::{EvalError, Limits};
use crate::diagnostics::codes;

/// Enough for every generated program (they take a few thousand steps); one that loops ends
/// here as a failure instead of holding up the run.
const STEPS_PER_PROGRAM: u64 = 200_000;

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/python_differential")
}

struct Program {
    id: String,
    construct: String,
    source: String,
    expected: String,
}

fn load_programs() -> Vec<Program> {
    let text = std::fs::read_to_string(fixture_dir().join("programs.json"))
        .expect("programs.json: run scripts/expect/gen_python_differential.py");
    let doc: serde_json::Value = serde_json::from_str(&text).expect("programs.json is JSON");
    let field = |p: &serde_json::Value, k: &str| p[k].as_str().expect(k).to_string();
    doc["programs"]
        .as_array()
        .expect("a `programs` list")
        .iter()
        .map(|p| Program {
            id: field(p, "id"),
            construct: field(p, "construct"),
            source: field(p, "source"),
            expected: field(p, "expected"),
        })
        .collect()
}

/// What the evaluator makes of a program, in the generator's terms: `repr(r)`, or, where
/// CPython stopped at an exception (`expected` is `raise:<type>`), `raise:<type>` of the first
/// raise the evaluator noted (it notes a failing top-level statement and goes on). A program
/// CPython runs through is judged by `r` alone: a noted raise inside it may be one a handler
/// of the evaluator's own took (`hasattr` over a `__getattr__` that raises).
fn run_program(source: &str, expected: &str) -> String {
    let (mut interp, file) = interp_over("prog", source);
    interp.limits = Limits {
        max_steps: STEPS_PER_PROGRAM,
        ..Limits::default()
    };
    let ns = match interp.load_module(file) {
        Ok(ns) => ns,
        Err(e) => return format!("<module failed: {}>", e.message),
    };
    let raised = interp
        .diagnostics
        .iter()
        .find(|d| d.code == codes::RAISED)
        .filter(|_| expected.starts_with("raise:"));
    if let Some(d) = raised {
        let e = EvalError {
            code: d.code,
            message: d.message.clone(),
            file: d.file,
            span: d.span,
            exception: None,
        };
        return match super::stdlib::contextlib::raised_class_names(&interp, &e) {
            Some(names) => format!("raise:{}", names[0]),
            None => format!("<raised: {}>", d.message),
        };
    }
    let r = ns.vars.borrow().get("r").cloned();
    match r {
        Some(Value::Unknown(u)) => format!("<unknown: {}>", u.reason),
        // an instance in `r` shows as its class's `repr` does (a namedtuple's `Cfg(heads=5)`)
        Some(v) if holds_object(&v) => {
            let frame = super::Frame {
                file: ns.file.clone(),
                file_id: ns.file_id,
                globals: ns.clone(),
                locals: None,
                class: None,
                receiver: None,
            };
            match interp.call_builtin(&frame, "repr", vec![v.clone()], vec![], Default::default()) {
                Ok(Value::Str(s)) => s.to_string(),
                _ => py_repr(&v),
            }
        }
        Some(v) => py_repr(&v),
        None => {
            let why = interp.diagnostics.first().map(|d| d.message.as_str());
            format!("<r unbound: {}>", why.unwrap_or("no note"))
        }
    }
}

/// Whether `v` is or holds an instance of a class of the program.
fn holds_object(v: &Value) -> bool {
    match v {
        Value::Object(_) => true,
        Value::Tuple(t) => t.iter().any(holds_object),
        Value::List(l) => l.borrow().iter().any(holds_object),
        Value::Dict(d) => d
            .borrow()
            .iter()
            .any(|(k, x)| holds_object(k) || holds_object(x)),
        _ => false,
    }
}

#[derive(Default)]
struct Tally {
    pass: usize,
    fail: usize,
    first_failures: Vec<String>,
}

#[test]
fn generated_programs_match_cpython() {
    // The evaluator recurses per nested call and expression: a thread of its own gets the
    // stack a deep program needs in a debug build.
    let worker = std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(check_programs)
        .unwrap();
    if let Err(panic) = worker.join() {
        std::panic::resume_unwind(panic);
    }
}

fn check_programs() {
    let programs = load_programs();
    let known_path = fixture_dir().join("known_failing.txt");
    let known: BTreeSet<String> = std::fs::read_to_string(&known_path)
        .unwrap_or_default()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(String::from)
        .collect();
    let mut by_construct: BTreeMap<&str, Tally> = BTreeMap::new();
    let mut failing = BTreeSet::new();
    let mut details = BTreeMap::new();
    for p in &programs {
        let got = catch_unwind(AssertUnwindSafe(|| run_program(&p.source, &p.expected)))
            .unwrap_or_else(|_| "<panicked>".to_string());
        let tally = by_construct.entry(&p.construct).or_default();
        if got == p.expected {
            tally.pass += 1;
        } else {
            tally.fail += 1;
            if tally.first_failures.len() < 4 {
                tally.first_failures.push(p.id.clone());
            }
            failing.insert(p.id.clone());
            details.insert(p.id.clone(), (got, p.expected.clone()));
        }
    }

    let total_pass: usize = by_construct.values().map(|t| t.pass).sum();
    let mut table = format!(
        "{:<26} {:>5} {:>5}  first failing\n",
        "construct", "pass", "fail"
    );
    for (construct, t) in &by_construct {
        table += &format!(
            "{construct:<26} {:>5} {:>5}  {}\n",
            t.pass,
            t.fail,
            t.first_failures.join(" ")
        );
    }
    table += &format!(
        "{:<26} {:>5} {:>5}  ({:.1}% equal)\n",
        "all",
        total_pass,
        programs.len() - total_pass,
        100.0 * total_pass as f64 / programs.len() as f64
    );
    println!("{table}");
    // For working on the evaluator: every failing program's source and both results.
    if let Some(path) = std::env::var_os("STATICFX_DIFF_DUMP") {
        let mut text = String::new();
        for p in programs.iter().filter(|p| failing.contains(&p.id)) {
            let (got, want) = &details[&p.id];
            text += &format!(
                "=== {}\n{}--- got\n{got}\n--- CPython\n{want}\n",
                p.id, p.source
            );
        }
        std::fs::write(path, text).unwrap();
    }
    if std::env::var_os("STATICFX_DIFF_BLESS").is_some() {
        let mut text = String::from(
            "# Generated programs whose result differs from CPython's \
             (src/eval/differential_tests.rs).\n",
        );
        for id in &failing {
            text += id;
            text.push('\n');
        }
        std::fs::write(&known_path, text).unwrap();
        return;
    }

    let ids: BTreeSet<&String> = programs.iter().map(|p| &p.id).collect();
    let mut problems = Vec::new();
    for id in failing.difference(&known) {
        let (got, want) = &details[id];
        problems.push(format!("{id}: got {got}\n    CPython {want}"));
    }
    for id in known.difference(&failing) {
        if ids.contains(id) {
            problems.push(format!(
                "{id} now matches CPython: take it off known_failing.txt"
            ));
        } else {
            problems.push(format!(
                "{id} is listed in known_failing.txt but no such program"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "{table}\n{}",
        problems
            .iter()
            .take(60)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn repr_follows_cpython() {
    let cases = [
        (Value::Float(0.1), "0.1"),
        (Value::Float(2.0), "2.0"),
        (Value::Float(-0.0), "-0.0"),
        (Value::Float(1e16), "1e+16"),
        (Value::Float(1.5e-5), "1.5e-05"),
        (Value::Float(0.0001), "0.0001"),
        (Value::Float(123456.75), "123456.75"),
        (Value::Float(1e15), "1000000000000000.0"),
        (Value::str("it's"), "\"it's\""),
        (Value::str("a\nb"), "'a\\nb'"),
        (Value::str("q\"'"), "'q\"\\''"),
    ];
    for (v, want) in cases {
        assert_eq!(py_repr(&v), want);
    }
}

/// For working on the evaluator: `STATICFX_DIFF_SNIPPET=<file.py> cargo test --lib
/// differential_tests::snippet -- --ignored --nocapture` prints what the evaluator makes of
/// one program, and its notes.
#[test]
#[ignore]
fn snippet() {
    let path = std::env::var("STATICFX_DIFF_SNIPPET").expect("STATICFX_DIFF_SNIPPET=<file.py>");
    let source = std::fs::read_to_string(path).unwrap();
    println!("{}", run_program(&source, ""));
    let (mut interp, file) = interp_over("prog", &source);
    let _ = interp.load_module(file);
    for d in &interp.diagnostics {
        println!("note {}: {}", d.code, d.message);
    }
}
