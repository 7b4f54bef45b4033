//! The rule documentation (src/breaks/docs/*.md): one entry per code any stage reports, the
//! Dynamo ids each rule emits, examples that staticfx really flags on the marked lines,
//! `staticfx rule`, and docs/rules.md generated from the same source
//! (`STATICFX_UPDATE_DOCS=1 cargo test --test rule_docs` rewrites it).

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use staticfx::breaks::docs::{self, RULES};
use staticfx::diagnostics::Rule;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn docs_rules_md_is_current() {
    let path = repo().join("docs/rules.md");
    let generated = docs::rules_markdown();
    if std::env::var_os("STATICFX_UPDATE_DOCS").is_some() {
        std::fs::write(&path, &generated).unwrap();
        return;
    }
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        on_disk == generated,
        "docs/rules.md is stale; regenerate it with `STATICFX_UPDATE_DOCS=1 cargo test --test rule_docs`"
    );
}

/// Every code a rule or the analysis can report has a page, and no page is for a code nobody
/// reports.
#[test]
fn one_page_per_code() {
    let mut reported: BTreeSet<&str> = staticfx::breaks::CODES.iter().map(|(c, _)| *c).collect();
    let diags = std::fs::read_to_string(repo().join("src/diagnostics/mod.rs")).unwrap();
    for code in diags
        .split('"')
        .filter(|s| s.starts_with("FX9") && s.len() == 5)
    {
        reported.insert(Box::leak(code.to_string().into_boxed_str()));
    }
    assert!(reported.contains("FX901") && reported.contains("FX101"));
    let documented: BTreeSet<&str> = RULES.iter().map(|r| r.code).collect();
    assert_eq!(documented, reported);
    for (code, title) in staticfx::breaks::CODES {
        assert_eq!(docs::lookup(code).unwrap().title(), *title, "{code}");
    }
    for r in RULES {
        assert!(
            r.markdown.starts_with(&format!("# {}: ", r.code)),
            "{}",
            r.code
        );
        let body = r.body();
        for section in ["## What", "## How to fix"] {
            assert!(body.contains(section), "{} lacks {section}", r.code);
        }
        if r.code.starts_with("FX1") || r.code.starts_with("FX3") {
            assert!(r.example().is_some(), "{} has no example", r.code);
        }
    }
    assert!(docs::lookup("fx101").is_some() && docs::lookup("FX999").is_none());
}

/// The Dynamo ids listed for a rule are exactly the ids its rule file emits, and each is in
/// the registry table (so it has a gb_type and a page).
#[test]
fn graph_break_ids_match_the_rule_files() {
    let known: BTreeSet<&str> = staticfx::breaks::registry::GB_TYPES
        .iter()
        .map(|(id, _)| *id)
        .collect();
    let mut emitted: std::collections::BTreeMap<String, BTreeSet<String>> = Default::default();
    for entry in std::fs::read_dir(repo().join("src/breaks")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if path.extension().is_none_or(|e| e != "rs")
            || ["mod.rs", "registry.rs"].contains(&name.as_str())
        {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        // The rule, not its tests (which may assert other rules' ids on the same line).
        let code_part = text.split("#[cfg(test)]").next().unwrap();
        let literals: Vec<&str> = code_part.split('"').skip(1).step_by(2).collect();
        // Rules name their `Rule` variant (`cx.finding(Rule::Print, ..)`).
        let codes: BTreeSet<&str> = Rule::ALL
            .iter()
            .filter(|r| code_part.contains(&format!("Rule::{r:?},")))
            .map(|r| r.code())
            .collect();
        let gbs: BTreeSet<String> = literals
            .iter()
            .filter(|s| {
                s.len() == 6 && s.starts_with("GB") && s[2..].chars().all(|c| c.is_ascii_digit())
            })
            .map(|s| s.to_string())
            .collect();
        assert!(codes.len() <= 1, "{name} emits several codes: {codes:?}");
        if let Some(code) = codes.first() {
            emitted.entry(code.to_string()).or_default().extend(gbs);
        }
    }
    assert!(emitted.len() >= 15, "{emitted:?}");
    for r in RULES {
        let listed: BTreeSet<String> = r.gb_ids.iter().map(|s| s.to_string()).collect();
        assert_eq!(
            listed,
            emitted.get(r.code).cloned().unwrap_or_default(),
            "{}: the page lists other ids than the rule file emits",
            r.code
        );
        for id in r.gb_ids {
            assert!(
                known.contains(id),
                "{}: {id} is not in the registry table",
                r.code
            );
        }
    }
}

/// Each FX1xx and FX3xx example, checked by the real binary, is flagged with its code on
/// exactly the lines marked `# FXnnn`, and with no other proven break but the ones it marks
/// with their own code (a finding that exists because of another break: FX122).
#[test]
fn examples_are_flagged_where_they_say() {
    let dir = tempfile::tempdir().unwrap();
    for r in RULES
        .iter()
        .filter(|r| r.code.starts_with("FX1") || r.code.starts_with("FX3"))
    {
        let example = r.example().unwrap();
        let marked: Vec<usize> = example
            .lines()
            .enumerate()
            .filter(|(_, l)| l.trim_end().ends_with(&format!("# {}", r.code)))
            .map(|(i, _)| i + 1)
            .collect();
        assert!(
            !marked.is_empty(),
            "{}: no line marked `# {}`",
            r.code,
            r.code
        );
        let file = dir.path().join(format!("{}.py", r.code.to_lowercase()));
        std::fs::write(&file, example).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_staticfx"))
            .args(["check", "--output-format", "json"])
            .arg(&file)
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!("{}: {e}: {}", r.code, String::from_utf8_lossy(&out.stderr))
        });
        let found = |code: &str| -> Vec<usize> {
            let mut rows: Vec<usize> = v
                .as_array()
                .unwrap()
                .iter()
                .filter(|m| m["code"] == code)
                .map(|m| m["location"]["row"].as_u64().unwrap() as usize)
                .collect();
            rows.dedup();
            rows
        };
        assert_eq!(found(r.code), marked, "{}: {v}", r.code);
        let others: Vec<&str> = v
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|m| m["code"].as_str())
            .filter(|c| c.starts_with("FX1") && *c != r.code && *c != "FX190")
            .filter(|c| !example.contains(&format!("# {c}\n")))
            .collect();
        assert!(
            others.is_empty(),
            "{}: the example also shows {others:?}",
            r.code
        );
    }
}

#[test]
fn rule_command() {
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_staticfx"))
            .arg("rule")
            .args(args)
            .output()
            .unwrap();
        (
            out.status.code().unwrap(),
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let (code, out, _) = run(&["FX101"]);
    assert_eq!(code, 0);
    assert!(out.starts_with("# FX101: data-dependent branch\n"), "{out}");
    for needle in [
        "GB0170 \"Data-dependent branching\": https://meta-pytorch.org/compile-graph-break-site/gb/gb0170.html",
        "## What Dynamo does",
        "## Example",
        "## How to fix",
        "torch.where",
    ] {
        assert!(out.contains(needle), "missing {needle:?}: {out}");
    }
    let (code, out, _) = run(&["fx106"]);
    assert_eq!(code, 0);
    assert!(out.contains("GB0291") && out.contains("GB4841"), "{out}");
    let (code, _, err) = run(&["FX999"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("unknown rule `FX999`") && err.contains("FX101"),
        "{err}"
    );

    let (code, out, _) = run(&["--all", "--output-format", "json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let all = v.as_array().unwrap();
    assert_eq!(all.len(), RULES.len());
    for (entry, r) in all.iter().zip(RULES) {
        assert_eq!(entry["code"], r.code);
        assert_eq!(entry["title"], r.title());
        assert_eq!(entry["gb"].as_array().unwrap().len(), r.gb_ids.len());
        assert!(entry["explanation"]
            .as_str()
            .unwrap()
            .contains("## How to fix"));
    }
    assert_eq!(
        all[0]["gb"][0]["url"],
        "https://meta-pytorch.org/compile-graph-break-site/gb/gb0170.html"
    );
    let (code, out, _) = run(&["FX902", "--output-format", "json"]);
    assert_eq!(code, 0);
    let one: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (one["code"].as_str(), one["gb"].as_array().map(Vec::len)),
        (Some("FX902"), Some(0))
    );
}
