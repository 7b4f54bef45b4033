//! `staticfx check`: graph-break findings for many files, printed the way ruff prints lint
//! results (text, ruff's JSON schema, or SARIF), so editors and CI tools that read ruff read us.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use rayon::prelude::*;
use serde_json::{json, Value};

use crate::analysis::{self, GraphOptions};
use crate::breaks::version::{Target, TorchVersion};
use crate::diagnostics::Severity;
use crate::semantic::project::ParseCache;
use crate::syntax::Span;

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
    /// The torch whose graph breaks to report, e.g. `torch==2.8` (default: `target-version` in
    /// [tool.staticfx], else 2.15).
    #[arg(long, value_name = "torch==2.x")]
    pub target_version: Option<TorchVersion>,
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
    pub applicability: crate::fixes::Applicability,
    pub message: String,
    /// (row, column, end_row, end_column, content)
    pub edits: Vec<(usize, usize, usize, usize, String)>,
}

/// `[tool.staticfx]` in pyproject.toml.
#[derive(Debug, Default, serde::Deserialize)]
pub struct Config {
    #[serde(default)]
    pub select: Option<Vec<String>>,
    #[serde(default)]
    pub ignore: Vec<String>,
    #[serde(default)]
    pub root: Option<PathBuf>,
    /// `target-version = "torch==2.8"`: the torch whose graph breaks to report.
    #[serde(default, rename = "target-version")]
    pub target_version: Option<String>,
}

/// The nearest pyproject.toml at or above `start` that has a `[tool.staticfx]` table; `root`
/// is made relative to that file's directory.
pub fn find_config(start: &Path) -> Result<Option<Config>, String> {
    let start = std::path::absolute(start).unwrap_or_else(|_| start.to_path_buf());
    let mut dir = if start.is_dir() {
        Some(start.as_path())
    } else {
        start.parent()
    };
    while let Some(d) = dir {
        let candidate = d.join("pyproject.toml");
        if candidate.is_file() {
            let text = std::fs::read_to_string(&candidate)
                .map_err(|e| format!("{}: {e}", candidate.display()))?;
            let doc: toml::Table =
                toml::from_str(&text).map_err(|e| format!("{}: {e}", candidate.display()))?;
            if let Some(t) = doc.get("tool").and_then(|t| t.get("staticfx")) {
                let mut cfg: Config = t
                    .clone()
                    .try_into()
                    .map_err(|e| format!("{}: [tool.staticfx]: {e}", candidate.display()))?;
                cfg.root = cfg.root.map(|r| d.join(r));
                return Ok(Some(cfg));
            }
        }
        dir = d.parent();
    }
    Ok(None)
}

pub fn matches_any(code: &str, prefixes: &[String]) -> bool {
    prefixes
        .iter()
        .any(|p| p == "ALL" || code.starts_with(p.as_str()))
}

/// `# noqa` (everything) or `# noqa: FX101, FX102` on a line.
pub fn noqa_allows(line: &str, code: &str) -> bool {
    let lower = line.to_ascii_lowercase();
    let Some(pos) = lower.find("# noqa") else {
        return false;
    };
    let rest = &line[pos + "# noqa".len()..];
    let Some(list) = rest.trim_start().strip_prefix(':') else {
        return true;
    };
    list.split([',', ' '])
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .take_while(|c| c.chars().all(|ch| ch.is_ascii_alphanumeric()))
        .any(|c| c.eq_ignore_ascii_case(code))
}

/// The Python files under `paths`; an explicitly named file is always included.
pub fn collect_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_file() {
            out.push(p.clone());
            continue;
        }
        if !p.exists() {
            return Err(format!("{}: no such file or directory", p.display()));
        }
        for entry in ignore::WalkBuilder::new(p).build() {
            let entry = entry.map_err(|e| e.to_string())?;
            if entry.file_type().is_some_and(|t| t.is_file())
                && entry.path().extension().is_some_and(|e| e == "py")
            {
                out.push(entry.into_path());
            }
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// Every finding and analysis-limit diagnostic of one file, before filtering, for the default
/// torch target.
pub fn check_file(
    path: &Path,
    root: Option<PathBuf>,
    cache: Option<ParseCache>,
) -> Result<Vec<Message>, String> {
    check_file_for(path, root, cache, &Target::default())
}

/// [`check_file`] for the graph breaks of one torch version.
pub fn check_file_for(
    path: &Path,
    root: Option<PathBuf>,
    cache: Option<ParseCache>,
    target: &Target,
) -> Result<Vec<Message>, String> {
    // Only module classes with a `forward` (or Sequential subclasses) are traced, and a break is
    // reported in the file that contains it; evaluating a tokenizer's or config's imports just
    // to find no class would cost as much as a model file.
    let text =
        crate::semantic::project::read_lossy(path).map_err(|e| format!("cannot read: {e}"))?;
    if !text.contains("def forward") && !text.contains("Sequential") {
        return Ok(vec![]);
    }
    let opts = GraphOptions {
        root,
        parse_cache: cache,
        torch_target: target.clone(),
        ..Default::default()
    };
    let a = analysis::analyze_file(path, &opts).map_err(|e| e.to_string())?;
    let filename = path.display().to_string();
    let mut out = Vec::new();
    let file = a.project.file(a.file);
    let original: std::sync::Arc<str> = if file.syntax_errors.is_empty() {
        file.text.clone()
    } else {
        std::fs::read_to_string(path)
            .map(Into::into)
            .unwrap_or_else(|_| file.text.clone())
    };
    let fixes: Vec<(Span, &'static str, crate::fixes::SiteFixes)> =
        crate::fixes::for_analysis(&a, &original)
            .into_iter()
            .map(|(f, fx)| (f.span, f.code, fx))
            .collect();
    for g in &a.graphs {
        for f in &g.breaks {
            // Only breaks located in this file: a helper elsewhere gets its own report when
            // that file is checked.
            if f.file != a.file {
                continue;
            }
            let site_fixes = fixes
                .iter()
                .find(|(s, c, _)| *s == f.span && *c == f.code)
                .map(|(_, _, fx)| fx);
            let fix = site_fixes.and_then(|fx| fx.main()).map(|fx| MessageFix {
                applicability: fx.applicability,
                message: fx.title.clone(),
                edits: fx
                    .edits
                    .iter()
                    .map(|e| {
                        let (a, b) = (
                            file.lines.line_col(&original, e.span.start),
                            file.lines.line_col(&original, e.span.end),
                        );
                        (
                            a.line + 1,
                            a.col + 1,
                            b.line + 1,
                            b.col + 1,
                            e.new_text.clone(),
                        )
                    })
                    .collect(),
            });
            let mut hint = f.hint.clone();
            if let Some(r) = site_fixes.and_then(|fx| fx.refusal.as_ref()) {
                if fix.is_none() {
                    hint = if hint.is_empty() {
                        format!("no automatic fix: {r}")
                    } else {
                        format!("{hint} (no automatic fix: {r})")
                    };
                }
            }
            let message = if f.gb_id.is_empty() {
                f.message.clone()
            } else {
                format!("{}: {} ({})", f.gb_type, f.message, f.gb_id)
            };
            out.push(Message {
                filename: filename.clone(),
                code: f.code.to_string(),
                message,
                hint,
                gb_id: f.gb_id.to_string(),
                severity: f.severity,
                row: f.line,
                column: f.column,
                end_row: f.end_line,
                end_column: f.end_column,
                url: f.url(),
                fix,
            });
        }
    }
    for d in a.diagnostics.iter().filter(|d| d.file == a.file) {
        let (s, e) = (
            file.lines.line_col(&file.text, d.span.start),
            file.lines.line_col(&file.text, d.span.end),
        );
        out.push(Message {
            filename: filename.clone(),
            code: d.code.to_string(),
            message: format!("analysis limit: {}", d.message),
            hint: String::new(),
            gb_id: String::new(),
            // Limits of the analyser, not problems in the code: never above "info".
            severity: d.severity.max(Severity::Info),
            row: s.line + 1,
            column: s.col + 1,
            end_row: e.line + 1,
            end_column: e.col + 1,
            url: None,
            fix: None,
        });
    }
    // Several classes in one file can inline the same helper: report each site once.
    out.sort_by(|a, b| (a.row, a.column, &a.code).cmp(&(b.row, b.column, &b.code)));
    out.dedup_by(|a, b| a.row == b.row && a.code == b.code && a.gb_id == b.gb_id);
    let lines: Vec<&str> = file.text.lines().collect();
    out.retain(|m| {
        !lines
            .get(m.row - 1)
            .is_some_and(|l| noqa_allows(l, &m.code))
    });
    Ok(out)
}

/// Runs `f` on its own thread with a stack large enough for the recursive evaluator, and
/// turns a panic into an error for that file instead of taking the whole run down.
fn guarded(
    path: &Path,
    root: Option<PathBuf>,
    cache: &ParseCache,
    target: &Target,
) -> Result<Vec<Message>, String> {
    let p = path.to_path_buf();
    let cache = cache.clone();
    let target = target.clone();
    let handle = std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || check_file_for(&p, root, Some(cache), &target));
    match handle {
        Ok(h) => h.join().unwrap_or_else(|_| {
            Err("internal error while analysing this file (a bug in staticfx)".into())
        }),
        Err(e) => Err(format!("cannot start analysis thread: {e}")),
    }
}

pub fn run(args: CheckArgs) -> ExitCode {
    let config = match find_config(
        args.paths
            .first()
            .map(|p| p.as_path())
            .unwrap_or(Path::new(".")),
    ) {
        Ok(c) => c.unwrap_or_default(),
        Err(e) => {
            eprintln!("staticfx: {e}");
            return ExitCode::from(2);
        }
    };
    let select = if !args.select.is_empty() {
        args.select.clone()
    } else {
        config.select.clone().unwrap_or_else(|| vec!["FX".into()])
    };
    let ignore: Vec<String> = config
        .ignore
        .iter()
        .chain(args.ignore.iter())
        .cloned()
        .collect();
    let root = args.root.clone().or(config.root.clone());
    let target = match super::torch_target(args.target_version, &config) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("staticfx: {e}");
            return ExitCode::from(2);
        }
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
        .map(|p| (p.clone(), guarded(p, root.clone(), &cache, &target)))
        .collect();
    let mut messages = Vec::new();
    let mut errors = 0;
    for (path, r) in results {
        match r {
            Ok(ms) => messages.extend(
                ms.into_iter()
                    .filter(|m| matches_any(&m.code, &select) && !matches_any(&m.code, &ignore)),
            ),
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
            let title = crate::breaks::CODES
                .iter()
                .find(|(c, _)| c == id)
                .map(|(_, t)| *t)
                .unwrap_or("analysis limit");
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
            let mut text = m.message.clone();
            if !m.hint.is_empty() {
                text.push_str(&format!("\nHint: {}", m.hint));
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn noqa_forms() {
        assert!(noqa_allows("x = 1  # noqa", "FX101"));
        assert!(noqa_allows("x = 1  # noqa: FX101", "FX101"));
        assert!(noqa_allows("x = 1  # NOQA:FX102,FX101", "FX101"));
        assert!(!noqa_allows("x = 1  # noqa: FX102", "FX101"));
        assert!(!noqa_allows("x = 1", "FX101"));
    }

    #[test]
    fn select_prefixes() {
        assert!(matches_any("FX101", &["FX1".into()]));
        assert!(matches_any("FX903", &["ALL".into()]));
        assert!(!matches_any("FX903", &["FX1".into()]));
    }
}
