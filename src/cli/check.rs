//! `staticfx check`: graph-break findings for many files, printed the way ruff prints lint
//! results (text, ruff's JSON schema, SARIF, and the CI formats in `cli::output`), so editors
//! and CI tools that read ruff read us.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::diagnostics::{Rule, Severity};
use crate::ide::check::Shared;
use crate::ide::check_cache::{self, CheckCache};
use crate::ide::{self, Settings};
use crate::semantic::project::ParseCache;
use crate::syntax::LineIndex;

#[derive(Clone, Copy, Debug, clap::ValueEnum, PartialEq, Eq)]
pub enum OutputFormat {
    Text,
    Json,
    Sarif,
    /// GitHub Actions workflow commands (annotations on the pull request).
    Github,
    /// A GitLab Code Quality report.
    Gitlab,
    Junit,
    JsonLines,
    /// `path:line:col: CODE [*] message` and ruff's summary.
    Concise,
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
    /// The Python environment imports outside the root resolve through: an interpreter or a
    /// venv directory (default: `[tool.staticfx] python`, then $VIRTUAL_ENV, then .venv/venv
    /// in or above the root, then python3 on PATH).
    #[arg(long, value_name = "PATH")]
    pub python: Option<PathBuf>,
    /// The torch whose graph breaks to report, e.g. `torch==2.8` (default: `target-version` in
    /// [tool.staticfx], else 2.15).
    #[arg(long, value_name = "torch==2.x")]
    pub target_version: Option<crate::ide::TorchVersion>,
    /// Print the number of findings per code instead of the findings.
    #[arg(long)]
    pub statistics: bool,
    /// Exit with 0 even when there are findings (2 still means an error).
    #[arg(long)]
    pub exit_zero: bool,
    /// Fail (exit 1) on analysis limits too, the places staticfx could not follow (default:
    /// `strict` in [tool.staticfx], else off: limits are information).
    #[arg(long)]
    pub strict: bool,
    /// Apply `exclude` / `extend-exclude` to files named on the command line too (for
    /// pre-commit, which names every staged file).
    #[arg(long)]
    pub force_exclude: bool,
    /// Report only findings not recorded in this baseline file (default: `baseline` in
    /// `[tool.staticfx]`).
    #[arg(long, value_name = "FILE", conflicts_with = "write_baseline")]
    pub baseline: Option<PathBuf>,
    /// Record every current finding in FILE and exit 0, for adopting staticfx gradually.
    #[arg(long, value_name = "FILE")]
    pub write_baseline: Option<PathBuf>,
    /// Analyse every file again and leave the result cache alone.
    #[arg(long)]
    pub no_cache: bool,
    /// Where results are cached (default: `$STATICFX_CACHE_DIR`, else `.staticfx-cache`
    /// beside the pyproject.toml that configures staticfx, else in the current directory).
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
}

/// One reported problem, in ruff's terms (1-based rows, 1-based character columns).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
    /// The classes whose forward reaches the finding (`ide::Diagnostic::classes`).
    #[serde(default)]
    pub classes: Vec<String>,
}

/// A fix in ruff's JSON terms: 1-based rows and character columns.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
    let shared = Shared {
        parse_cache: cache.unwrap_or_default(),
        reuse_modules: false,
    };
    check_file_cached(path, settings, &shared, None)
}

/// `check_file` through the result cache when one is given.
pub fn check_file_cached(
    path: &Path,
    settings: &Settings,
    shared: &Shared,
    results: Option<&CheckCache>,
) -> Result<Vec<Message>, String> {
    ide::check::check_file_cached(path, settings, shared, results, |text, found| {
        messages(path, text, found)
    })
}

fn messages(path: &Path, text: &str, found: Vec<ide::Diagnostic>) -> Vec<Message> {
    let filename = path.display().to_string();
    let lines = LineIndex::new(text);
    let at = |offset: usize| {
        let lc = lines.line_col(text, offset);
        (lc.line + 1, lc.col + 1)
    };
    found
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
                classes: d.classes,
            }
        })
        .collect()
}

/// Checks one file (on a thread of `pool()`), turning a panic into an error for that file
/// instead of taking the whole run down.
fn guarded(
    path: &Path,
    settings: &Settings,
    shared: &Shared,
    results: Option<&CheckCache>,
) -> Result<Vec<Message>, String> {
    let _clock = crate::phase_clock::enter(crate::phase_clock::Phase::Other);
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        check_file_cached(path, settings, shared, results)
    }))
    .unwrap_or_else(|_| {
        ide::check::forget_kept_modules();
        Err("internal error while analysing this file (a bug in staticfx)".into())
    })
}

/// Whether `check` draws a progress bar: for someone watching a terminal, in the formats
/// people read; never into a pipe or a file, nor between machine-readable findings.
pub fn shows_progress(format: OutputFormat, stderr_is_terminal: bool) -> bool {
    stderr_is_terminal && matches!(format, OutputFormat::Text | OutputFormat::Concise)
}

/// The bar on stderr while `files` files are checked, when `shows_progress`; it is drawn at
/// once and cleared at the end, so the findings and the summary follow as without it.
fn progress_bar(
    format: OutputFormat,
    files: usize,
    stderr_is_terminal: bool,
) -> Option<indicatif::ProgressBar> {
    if !shows_progress(format, stderr_is_terminal) {
        return None;
    }
    let bar = indicatif::ProgressBar::with_draw_target(
        Some(files as u64),
        indicatif::ProgressDrawTarget::stderr(),
    );
    let style =
        indicatif::ProgressStyle::with_template("Checking {bar:30} {pos}/{len} files ({elapsed})")
            .expect("a valid template");
    bar.set_style(style);
    bar.tick();
    Some(bar)
}

/// The threads files are checked on: analysis stacks, and long-lived, so each keeps the
/// modules it evaluated for its next files. Never dropped: tearing those down at the end
/// would only cost time.
fn pool() -> &'static rayon::ThreadPool {
    static POOL: std::sync::OnceLock<rayon::ThreadPool> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .stack_size(ide::stack::STACK_SIZE)
            .thread_name(|i| format!("staticfx-check-{i}"))
            .build()
            .expect("start the check threads")
    })
}

pub fn run(args: CheckArgs) -> ExitCode {
    let Some(mut settings) = super::settings_for(
        &args.paths,
        &args.select,
        &args.ignore,
        args.root.as_deref(),
    ) else {
        return ExitCode::from(2);
    };
    if args.python.is_some() {
        settings.python = args.python.clone();
    }
    let start = args.paths.first().map_or(Path::new("."), |p| p.as_path());
    super::note_target(&mut settings, args.target_version, start);
    let files = match ide::collect_for(&settings, &args.paths, args.force_exclude) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("staticfx: {e}");
            return ExitCode::from(2);
        }
    };
    let shared = Shared::batch();
    let phase_clock = std::env::var_os("STATICFX_PHASE_CLOCK").is_some();
    if phase_clock {
        crate::phase_clock::start();
    }
    let stored = (!args.no_cache).then(|| {
        CheckCache::new(
            args.cache_dir
                .clone()
                .unwrap_or_else(|| check_cache::default_dir(&settings)),
        )
    });
    let bar = progress_bar(
        args.output_format,
        files.len(),
        std::io::stderr().is_terminal(),
    );
    let results: Vec<(PathBuf, Result<Vec<Message>, String>)> = pool().install(|| {
        files
            .par_iter()
            .map(|p| {
                let r = guarded(p, &settings, &shared, stored.as_ref());
                if let Some(bar) = &bar {
                    bar.inc(1);
                }
                (p.clone(), r)
            })
            .collect()
    });
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    if phase_clock {
        eprint!("{}", crate::phase_clock::stop().report());
    }
    super::report_environment();
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
    if let Some(path) = &args.write_baseline {
        return match super::baseline::write(path, &messages) {
            Ok(n) => {
                eprintln!("staticfx: recorded {n} finding(s) in {}", path.display());
                ExitCode::from(if errors > 0 { 2 } else { 0 })
            }
            Err(e) => {
                eprintln!("staticfx: {e}");
                ExitCode::from(2)
            }
        };
    }
    let mut in_baseline = 0;
    if let Some(path) = args.baseline.as_ref().or(settings.baseline.as_ref()) {
        match super::baseline::load(path) {
            Ok(recorded) => in_baseline = super::baseline::filter(&mut messages, path, &recorded),
            Err(e) => {
                eprintln!("staticfx: {e}");
                return ExitCode::from(2);
            }
        }
    }
    let out = if args.statistics {
        let stats = super::output::statistics::collect(&messages);
        match args.output_format {
            OutputFormat::Text | OutputFormat::Concise => {
                super::output::statistics::render_text(&stats)
            }
            OutputFormat::Json => super::output::statistics::render_json(&stats),
            other => {
                eprintln!("staticfx: --statistics prints text or json, not {other:?}");
                return ExitCode::from(2);
            }
        }
    } else {
        render(args.output_format, &messages)
    };
    print!("{out}");
    let limits = count_limits(&messages);
    let recompile_notes = count_recompile_notes(&messages);
    let findings = messages.len() - limits - recompile_notes;
    if matches!(
        args.output_format,
        OutputFormat::Text | OutputFormat::Concise
    ) {
        let mut notes = Vec::new();
        if limits > 0 {
            notes.push(limits_line(limits));
        }
        if recompile_notes > 0 {
            notes.push(recompile_notes_line(recompile_notes));
        }
        if errors > 0 {
            notes.push(format!("{errors} error(s)"));
        }
        if in_baseline > 0 {
            notes.push(format!("{in_baseline} more in the baseline"));
        }
        eprintln!(
            "Checked {} file(s): {findings} finding(s){}",
            files.len(),
            notes.iter().map(|n| format!(", {n}")).collect::<String>()
        );
    }
    let strict = args.strict || settings.strict;
    if errors > 0 {
        ExitCode::from(2)
    } else if args.exit_zero || findings == 0 && (limits + recompile_notes == 0 || !strict) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// How many of the messages are analysis limits rather than findings.
pub fn count_limits(ms: &[Message]) -> usize {
    ms.iter()
        .filter(|m| crate::diagnostics::codes::is_limit(&m.code))
        .count()
}

/// How many of the messages are recompile risks at information or hint level (FX202: a call
/// with another value of an argument compiles again). They say what Dynamo will guard on, not
/// that anything recompiles while callers keep their values, so, like analysis limits, they
/// are counted apart and fail `check` only under `--strict`.
pub fn count_recompile_notes(ms: &[Message]) -> usize {
    ms.iter()
        .filter(|m| matches!(m.severity, Severity::Info | Severity::Hint))
        .filter(|m| Rule::from_code(&m.code).is_some_and(|r| r.recompiles()))
        .count()
}

pub fn recompile_notes_line(n: usize) -> String {
    format!(
        "{n} recompile note{} (a guard on an argument's value)",
        if n == 1 { "" } else { "s" }
    )
}

/// How the analysis limits among the messages are counted, apart from findings: they say
/// where staticfx could not see, not that the code is wrong.
pub fn limits_line(n: usize) -> String {
    format!(
        "{n} place{} staticfx could not follow",
        if n == 1 { "" } else { "s" }
    )
}

/// The findings in `format` (the text after the findings is the caller's).
pub fn render(format: OutputFormat, ms: &[Message]) -> String {
    let pretty = |v: &Value| serde_json::to_string_pretty(v).expect("json") + "\n";
    match format {
        OutputFormat::Text => render_text(ms),
        OutputFormat::Json => pretty(&render_json(ms)),
        OutputFormat::Sarif => pretty(&render_sarif(ms)),
        OutputFormat::Github => super::output::github::render(ms),
        OutputFormat::Gitlab => {
            let project_dir = std::env::var_os("CI_PROJECT_DIR").map(PathBuf::from);
            let base = project_dir.clone().unwrap_or_else(|| PathBuf::from("."));
            let prints = super::baseline::fingerprints(ms, &base);
            pretty(&super::output::gitlab::render(
                ms,
                &prints,
                project_dir.as_deref(),
            ))
        }
        OutputFormat::Junit => super::output::junit::render(ms),
        OutputFormat::JsonLines => super::output::json_lines::render(ms),
        OutputFormat::Concise => super::output::concise::render(ms),
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

/// ruff's `--output-format json`, plus `gb_id`, `hint`, `severity` and `classes` (the classes
/// whose forward reaches the finding), which ruff readers ignore.
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
                    "classes": m.classes,
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
