//! `staticfx check`: graph-break findings for many files, printed the way ruff prints lint
//! results (text, ruff's JSON schema, or SARIF), so editors and CI tools that read ruff read us.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use rayon::prelude::*;
use serde_json::{json, Value};

use crate::diagnostics::{Rule, Severity};
use crate::ide::{self, Settings};
use crate::semantic::project::ParseCache;
use crate::syntax::LineIndex;

#[derive(Clone, Copy, Debug, clap::ValueEnum, PartialEq, Eq)]
pub enum OutputFormat {
    Text,
    Json,
    Sarif,
}

#[derive(clap::Args, Debug, Clone)]
pub struct CheckArgs {
    /// Files or directories (directories are walked, honouring .gitignore).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub output_format: OutputFormat,
    /// Codes or code prefixes to report (default: all, i.e. `FX`). Comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub select: Vec<String>,
    /// Codes or code prefixes to leave out. Comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub ignore: Vec<String>,
    /// Project root for imports (default: per file, the nearest ancestor without __init__.py).
    #[arg(long)]
    pub root: Option<PathBuf>,
}

/// One reported problem, in ruff's terms (1-based rows, 1-based character columns).
#[derive(Clone, Debug, PartialEq)]
pub struct Message {
    pub filename: String,
    pub code: String,
    pub message: String,
    pub hint: String,
    pub gb_id: String,
    pub severity: Severity,
    pub row: usize,
    pub column: usize,
    pub end_row: usize,
    pub end_column: usize,
    pub url: Option<String>,
    /// The preferred fix (ruff's `fix` object), if the finding has one.
    pub fix: Option<MessageFix>,
}

/// A fix in ruff's JSON terms: 1-based rows and character columns.
#[derive(Clone, Debug, PartialEq)]
pub struct MessageFix {
    pub applicability: ide::Applicability,
    pub message: String,
    /// (row, column, end_row, end_column, content)
    pub edits: Vec<(usize, usize, usize, usize, String)>,
}

pub use crate::ide::{collect_files, noqa_allows, settings::matches_any};

/// Every reported finding and analysis-limit diagnostic of one file, in ruff's terms.
pub fn check_file(
    path: &Path,
    settings: &Settings,
    cache: Option<ParseCache>,
) -> Result<Vec<Message>, String> {
    let (text, found) = ide::check::check_file(path, settings, cache)?;
    let filename = path.display().to_string();
    let lines = LineIndex::new(&text);
    let at = |offset: usize| {
        let lc = lines.line_col(&text, offset);
        (lc.line + 1, lc.col + 1)
    };
    let out = found
        .into_iter()
        .map(|d| {
            let fix = d.fixes.main().map(|fx| MessageFix {
                applicability: fx.applicability,
                message: fx.title.clone(),
                edits: fx
                    .edits
                    .iter()
                    .map(|e| {
                        let ((r, c), (er, ec)) = (at(e.span.start), at(e.span.end));
                        (r, c, er, ec, e.new_text.clone())
                    })
                    .collect(),
            });
            let ((row, column), (end_row, end_column)) = (at(d.span.start), at(d.span.end));
            Message {
                filename: filename.clone(),
                code: d.code.to_string(),
                message: d.message,
                hint: d.hint,
                gb_id: d.gb_id.to_string(),
                severity: d.severity,
                row,
                column,
                end_row,
                end_column,
                url: d.url,
                fix,
            }
        })
        .collect();
    Ok(out)
}

/// Checks one file on its own large-stack thread, turning a panic into an error for that
/// file instead of taking the whole run down.
fn guarded(path: &Path, settings: &Settings, cache: &ParseCache) -> Result<Vec<Message>, String> {
    ide::on_large_stack("staticfx-check", || {
        check_file(path, settings, Some(cache.clone()))
    })
    .unwrap_or_else(|_| Err("internal error while analysing this file (a bug in staticfx)".into()))
}

pub fn run(args: CheckArgs) -> ExitCode {
    let Some(settings) = super::settings_for(
        &args.paths,
        &args.select,
        &args.ignore,
        args.root.as_deref(),
    ) else {
        return ExitCode::from(2);
    };
    let files = match collect_files(&args.paths) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("staticfx: {e}");
            return ExitCode::from(2);
        }
    };
    // Each file runs on its own big-stack thread; rayon only bounds how many run at once.
    let cache = ParseCache::default();
    let results: Vec<(PathBuf, Result<Vec<Message>, String>)> = files
        .par_iter()
        .map(|p| (p.clone(), guarded(p, &settings, &cache)))
        .collect();
    let mut messages = Vec::new();
    let mut errors = 0;
    for (path, r) in results {
        match r {
            Ok(ms) => messages.extend(ms),
            Err(e) => {
                errors += 1;
                eprintln!("staticfx: {}: {e}", path.display());
            }
        }
    }
    messages.sort_by(|a, b| {
        (&a.filename, a.row, a.column, &a.code).cmp(&(&b.filename, b.row, b.column, &b.code))
    });
    let out = match args.output_format {
        OutputFormat::Text => render_text(&messages),
        OutputFormat::Json => {
            serde_json::to_string_pretty(&render_json(&messages)).expect("json") + "\n"
        }
        OutputFormat::Sarif => {
            serde_json::to_string_pretty(&render_sarif(&messages)).expect("json") + "\n"
        }
    };
    print!("{out}");
    if args.output_format == OutputFormat::Text {
        eprintln!(
            "Checked {} file(s): {} finding(s){}",
            files.len(),
            messages.len(),
            if errors > 0 {
                format!(", {errors} error(s)")
            } else {
                String::new()
            }
        );
    }
    if errors > 0 {
        ExitCode::from(2)
    } else if messages.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

pub fn render_text(ms: &[Message]) -> String {
    ms.iter()
        .map(|m| {
            format!(
                "{}:{}:{}: {} {}\n",
                m.filename, m.row, m.column, m.code, m.message
            )
        })
        .collect()
}

/// ruff's `--output-format json`, plus `gb_id`, `hint` and `severity`, which ruff readers ignore.
pub fn render_json(ms: &[Message]) -> Value {
    Value::Array(
        ms.iter()
            .map(|m| {
                json!({
                    "cell": null,
                    "code": m.code,
                    "end_location": { "column": m.end_column, "row": m.end_row },
                    "filename": m.filename,
                    "fix": m.fix.as_ref().map(|f| json!({
                        "applicability": f.applicability.as_str(),
                        "message": f.message,
                        "edits": f.edits.iter().map(|(r, c, er, ec, content)| json!({
                            "content": content,
                            "location": { "column": c, "row": r },
                            "end_location": { "column": ec, "row": er },
                        })).collect::<Vec<_>>(),
                    })),
                    "location": { "column": m.column, "row": m.row },
                    "message": m.message,
                    "noqa_row": m.row,
                    "url": m.url,
                    "gb_id": if m.gb_id.is_empty() { Value::Null } else { json!(m.gb_id) },
                    "hint": if m.hint.is_empty() { Value::Null } else { json!(m.hint) },
                    "severity": m.severity,
                })
            })
            .collect(),
    )
}

/// SARIF 2.1.0: one run, the rules that occur, one result per message.
pub fn render_sarif(ms: &[Message]) -> Value {
    let mut rule_ids: Vec<&str> = ms.iter().map(|m| m.code.as_str()).collect();
    rule_ids.sort();
    rule_ids.dedup();
    let rules: Vec<Value> = rule_ids
        .iter()
        .map(|id| {
            let title = Rule::from_code(id).map_or("analysis limit", Rule::title);
            json!({ "id": id, "shortDescription": { "text": title } })
        })
        .collect();
    let results: Vec<Value> = ms
        .iter()
        .map(|m| {
            let level = match m.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
                _ => "note",
            };
            let text = ide::Diagnostic::full_text(&m.message, &m.hint);
            let mut r = json!({
                "ruleId": m.code,
                "level": level,
                "message": { "text": text },
                "locations": [{ "physicalLocation": {
                    "artifactLocation": { "uri": m.filename.replace('\\', "/") },
                    "region": { "startLine": m.row, "startColumn": m.column, "endLine": m.end_row, "endColumn": m.end_column }
                }}],
            });
            if let Some(u) = &m.url {
                r["helpUri"] = json!(u);
            }
            r
        })
        .collect();
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": { "name": "staticfx", "version": env!("CARGO_PKG_VERSION"), "rules": rules } },
            "results": results,
        }],
    })
}
