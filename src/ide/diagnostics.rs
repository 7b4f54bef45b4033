//! The diagnostics policy: what the user sees of one analysis, decided once for `check`,
//! `fix` and the editor. Analysis limits and the graph-break findings of the analysed file
//! become [`Diagnostic`]s with one wording, one severity rule, one de-duplication key, the
//! `select`/`ignore` filter and `# noqa` comments (found on the same rows `LineIndex` counts,
//! so a lone CR ends a line here as it does for positions).

use crate::diagnostics::{codes, Rule, Severity};
use crate::fixes::SiteFixes;
use crate::semantic::FileId;
use crate::syntax::{LineIndex, Span};
use crate::traced::{FileAnalysis, Finding};

use super::settings::Filter;

/// One problem as every front end reports it: byte spans in the analysed file's text as the
/// user has it; the front ends only convert positions.
#[derive(Clone, Debug, PartialEq)]
pub struct Diagnostic {
    pub code: &'static str,
    /// The graph-break rule; None for an analysis limit (FX9xx).
    pub rule: Option<Rule>,
    /// Dynamo's graph-break id; empty for limits and possible breaks.
    pub gb_id: &'static str,
    /// One line: `gb_type: message (gb_id)` for a break, `analysis limit: …` for a limit.
    pub message: String,
    /// What to do about it, ending with why there is no automatic fix when there is none.
    pub hint: String,
    pub severity: Severity,
    /// Always the analysed file.
    pub file: FileId,
    pub span: Span,
    /// Call sites from forward down to the finding, outermost first.
    pub chain: Vec<(FileId, Span)>,
    pub url: Option<String>,
    /// Fixes (byte edits of the user's text), the preferred first; empty for limits.
    pub fixes: SiteFixes,
    /// The classes whose traced forward reaches it (per-class analysis: each class of the
    /// file is built and traced on its own), in the order they were traced. A finding is
    /// checked against what Dynamo does when one of these runs; empty for a limit outside
    /// any trace.
    pub classes: Vec<String>,
}

impl Diagnostic {
    /// The message with its hint, for surfaces with one text field (the editor, SARIF).
    pub fn full_message(&self) -> String {
        Diagnostic::full_text(&self.message, &self.hint)
    }

    /// The one way a message and its hint are joined.
    pub fn full_text(message: &str, hint: &str) -> String {
        if hint.is_empty() {
            message.to_string()
        } else {
            format!("{message}\nHint: {hint}")
        }
    }
}

/// How an analysis limit is reported: a syntax error is an error in the code; every other
/// limit says what the analyser could not see, never above "info".
pub fn limit_severity(code: &str, given: Severity) -> Severity {
    if code == codes::SYNTAX_ERROR {
        Severity::Error
    } else {
        given.max(Severity::Info)
    }
}

/// The diagnostics of `a`'s own file, in source order. `src` is the file's text as the user
/// has it (the analysed text has lines with syntax errors blanked).
pub fn diagnostics(a: &FileAnalysis, src: &str, filter: &Filter) -> Vec<Diagnostic> {
    let mut out: Vec<Diagnostic> = Vec::new();
    let limit = |code: &'static str, message: String, severity, span, classes| Diagnostic {
        code,
        rule: None,
        gb_id: "",
        message: format!("analysis limit: {message}"),
        hint: String::new(),
        severity: limit_severity(code, severity),
        file: a.file,
        span,
        chain: vec![],
        url: None,
        fixes: SiteFixes::default(),
        classes,
    };
    for (d, message) in folded_limits(a) {
        out.push(limit(d.code, message, d.severity, d.span, vec![]));
    }
    for g in &a.graphs {
        if let Some(b) = g.build_failure.as_ref().filter(|b| b.file == a.file) {
            let classes = vec![g.class.clone()];
            out.push(limit(
                b.code,
                b.message.clone(),
                b.severity,
                b.span,
                classes,
            ));
        }
        let own_error = g.error.as_ref().filter(|e| e.file == a.file);
        if let Some(e) = own_error.filter(|_| !g.error_followed_elsewhere) {
            let message = format!("{} stopped tracing here: {}", g.name, e.message);
            let classes = vec![g.class.clone()];
            out.push(limit(e.code, message, e.severity, e.span, classes));
        }
    }
    let mut resolved = ResolvedCalls::default();
    for (f, fixes) in crate::fixes::for_analysis(a, src) {
        if f.rule == Rule::UnresolvedCall && resolved.elsewhere(a, f) {
            continue;
        }
        let mut hint = f.hint.clone();
        if let (None, Some(r)) = (fixes.main(), &fixes.refusal) {
            hint = if hint.is_empty() {
                format!("no automatic fix: {r}")
            } else {
                format!("{hint} (no automatic fix: {r})")
            };
        }
        let message = if f.gb_id.is_empty() {
            f.message.clone()
        } else {
            format!("{}: {} ({})", f.gb_type, f.message, f.gb_id)
        };
        out.push(Diagnostic {
            code: f.code,
            rule: Some(f.rule),
            gb_id: f.gb_id,
            message,
            hint,
            severity: f.severity,
            file: f.file,
            span: f.span,
            chain: f
                .related
                .iter()
                .map(|&(file, span, _)| (file, span))
                .collect(),
            url: f.url(),
            fixes,
            classes: classes_reaching(a, |b| {
                b.file == f.file && b.span == f.span && b.code == f.code
            }),
        });
    }
    out.extend(breaks_in_called_code(a));
    let lines = LineIndex::new(src);
    // One report per code, gb id and line (`Finding::site_key` for breaks): several classes
    // inline the same helper, and a limit noted by a failed trace is also its graph's error.
    // The report keeps the classes of all.
    out.sort_by_key(|d| (d.span.start, d.code));
    let mut first_of = std::collections::HashMap::new();
    let mut kept: Vec<Diagnostic> = Vec::with_capacity(out.len());
    for d in out {
        let key = (lines.line_of(d.span.start), d.code, d.gb_id);
        match first_of.get(&key) {
            Some(&i) => {
                let first: &mut Diagnostic = &mut kept[i];
                for c in d.classes {
                    if !first.classes.contains(&c) {
                        first.classes.push(c);
                    }
                }
            }
            None => {
                first_of.insert(key, kept.len());
                kept.push(d);
            }
        }
    }
    kept.retain(|d| filter.keeps(d.code) && !suppressed(src, &lines, d));
    kept
}

/// The call sites each graph of a file recorded as nodes, gathered the first time an FX907
/// asks.
#[derive(Default)]
struct ResolvedCalls {
    per_graph: Option<Vec<std::collections::HashSet<(FileId, Span)>>>,
}

impl ResolvedCalls {
    /// Whether the call FX907 `f` could not resolve became a node in a graph of another class
    /// of the file that has no FX907 there: the class was traced alone with unknown
    /// constructor arguments (`Flux2PosEmbed` looping over an unknown `axes_dim`, so
    /// `torch.cat(cos_out).to(...)` is a call on an unknown value), while the class that builds
    /// it with its real arguments followed the call. As `followed_elsewhere` for the
    /// evaluator's limits: the code was followed in the graph that matters.
    fn elsewhere(&mut self, a: &FileAnalysis, f: &Finding) -> bool {
        let per_graph = self.per_graph.get_or_insert_with(|| {
            a.graphs
                .iter()
                .map(|g| {
                    (g.graph.order.iter())
                        .filter_map(|&n| g.graph.node(n).origin.as_ref())
                        .map(|o| (o.file, o.span))
                        .collect()
                })
                .collect()
        });
        a.graphs.iter().zip(per_graph.iter()).any(|(g, calls)| {
            calls.contains(&(f.file, f.span))
                && !(g.breaks.iter())
                    .any(|b| b.rule == f.rule && b.file == f.file && b.span == f.span)
        })
    }
}

/// The evaluator's limits in `a`'s own file, one per root cause within a class: a limit whose
/// message names the same root (its innermost reason naming something, `constructor argument
/// `depth``) as an earlier one of the same class follows from it, and is folded into it, its
/// lines listed. An unknown constructor argument used by three loops and the calls they make
/// is one limit, not six; limits naming no such root (two loops over inputs of unknown
/// length) stay apart.
fn folded_limits(a: &FileAnalysis) -> Vec<(&crate::diagnostics::Diagnostic, String)> {
    let mut own: Vec<_> = a.diagnostics.iter().filter(|d| d.file == a.file).collect();
    own.sort_by_key(|d| d.span.start);
    let lines = &a.project.file(a.file).lines;
    // the innermost class (per-class mode's sites) a limit lies in
    let class_of = |d: &crate::diagnostics::Diagnostic| {
        a.graphs
            .iter()
            .filter(|g| g.file == a.file)
            .map(|g| g.class_span)
            .filter(|s| s.start <= d.span.start && d.span.end <= s.end)
            .min_by_key(|s| s.end - s.start)
            .map(|s| s.start)
    };
    let mut first_of: std::collections::HashMap<(Option<usize>, &str), usize> =
        std::collections::HashMap::new();
    let mut kept: Vec<(&crate::diagnostics::Diagnostic, Vec<usize>)> = Vec::new();
    for d in own {
        let key = root_cause(&d.message).map(|root| (class_of(d), root));
        match key.and_then(|k| first_of.get(&k).copied()) {
            Some(i) => kept[i].1.push(lines.line_of(d.span.start) + 1),
            None => {
                if let Some(k) = key {
                    first_of.insert(k, kept.len());
                }
                kept.push((d, vec![]));
            }
        }
    }
    kept.into_iter()
        .map(|(d, mut more)| {
            more.dedup();
            let first = lines.line_of(d.span.start) + 1;
            more.retain(|&l| l != first);
            let message = match more.as_slice() {
                [] => d.message.clone(),
                [l] => format!("{}; line {l} follows from it too", d.message),
                ls => {
                    let ls: Vec<String> = ls.iter().map(|l| l.to_string()).collect();
                    format!("{}; lines {} follow from it too", d.message, ls.join(", "))
                }
            };
            (d, message)
        })
        .collect()
}

/// The root cause a limit's message names: its innermost parenthesised reason that names
/// something in backticks (`range() with a bound ... (constructor argument `depth`)` gives
/// `constructor argument `depth``), else the message itself when it names something. None
/// when it names nothing.
fn root_cause(message: &str) -> Option<&str> {
    let mut open = Vec::new();
    let mut best: Option<(usize, &str)> = None;
    let mut in_ticks = false;
    for (i, c) in message.char_indices() {
        match c {
            '`' => in_ticks = !in_ticks,
            '(' if !in_ticks => open.push(i),
            ')' if !in_ticks => {
                let Some(start) = open.pop() else { continue };
                let inner = &message[start + 1..i];
                if inner.contains('`') && best.is_none_or(|(depth, _)| open.len() >= depth) {
                    best = Some((open.len(), inner));
                }
            }
            _ => {}
        }
    }
    // a limit naming what it could not follow is its own root (`name `z` is not defined`,
    // `iterating `xs`, a traced value of unknown length`)
    best.map(|(_, root)| root)
        .or_else(|| message.contains('`').then_some(message))
}

/// The classes whose traced forward has a break `is_it` matches (in the default trace or a
/// retrace under a flag), in the order they were traced.
fn classes_reaching(a: &FileAnalysis, is_it: impl Fn(&Finding) -> bool) -> Vec<String> {
    let mut classes: Vec<String> = Vec::new();
    for g in &a.graphs {
        if g.breaks.iter().chain(&g.flagged_breaks).any(&is_it) && !classes.contains(&g.class) {
            classes.push(g.class.clone());
        }
    }
    classes
}

/// The graph breaks in code of another file (a library helper such as transformers'
/// `torch_compilable_check`) that forward reaches through a call in this one, reported at the
/// innermost such call: Dynamo's stack names that call as the last frame in this file, and it
/// is the line the user can change. The message names where the break itself is.
fn breaks_in_called_code(a: &FileAnalysis) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for (g, f) in a
        .graphs
        .iter()
        .flat_map(|g| g.breaks.iter().map(move |f| (g, f)))
    {
        // A library's logging sits behind its own state: a config a standalone per-class
        // build leaves unset (`_attn_implementation` None makes transformers' attention
        // lookup warn), package checks a process runs once. The user's call does not cause
        // those, and Dynamo's run of the whole model does not meet them.
        if f.file == a.file || f.gb_id.is_empty() || f.rule == Rule::Logging {
            continue;
        }
        let Some(site) = f.related.iter().rposition(|(file, ..)| *file == a.file) else {
            continue;
        };
        let inner = a.project.file(f.file);
        let name = inner.path.file_name().unwrap_or_default().to_string_lossy();
        let mut chain: Vec<(FileId, Span)> = f.related[site + 1..]
            .iter()
            .map(|&(file, span, _)| (file, span))
            .collect();
        chain.push((f.file, f.span));
        out.push(Diagnostic {
            code: f.code,
            rule: Some(f.rule),
            gb_id: f.gb_id,
            message: format!(
                "{}: {} ({}), in code this call runs ({name}:{})",
                f.gb_type, f.message, f.gb_id, f.line
            ),
            hint: f.hint.clone(),
            severity: f.severity,
            file: a.file,
            span: f.related[site].1,
            chain,
            url: f.url(),
            fixes: SiteFixes::default(),
            classes: vec![g.class.clone()],
        });
    }
    out
}

/// Whether a `# noqa` comment on the diagnostic's first row silences it.
fn suppressed(src: &str, lines: &LineIndex, d: &Diagnostic) -> bool {
    let row = lines.line_of(d.span.start.min(src.len()));
    let (start, end) = (lines.line_start(row), lines.line_start(row + 1));
    src.get(start..end)
        .is_some_and(|line| noqa_allows(line, d.code))
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
    list.split([',', ' ', '\r', '\n'])
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .take_while(|c| c.chars().all(|ch| ch.is_ascii_alphanumeric()))
        .any(|c| c.eq_ignore_ascii_case(code))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_limit_names_its_innermost_reason() {
        assert_eq!(
            super::root_cause(
                "cannot iterate over an unknown value (`self.blocks` could not be evaluated: \
                 range() with a bound (constructor argument `depth`))"
            ),
            Some("constructor argument `depth`")
        );
        assert_eq!(
            super::root_cause("iterating a traced value of unknown length"),
            None
        );
        assert_eq!(
            super::root_cause("name `z` is not defined"),
            Some("name `z` is not defined")
        );
        assert_eq!(super::root_cause("min() over values (arithmetic)"), None);
    }

    #[test]
    fn noqa_forms() {
        assert!(noqa_allows("x = 1  # noqa", "FX101"));
        assert!(noqa_allows("x = 1  # noqa: FX101", "FX101"));
        assert!(noqa_allows("x = 1  # NOQA:FX102,FX101", "FX101"));
        assert!(noqa_allows("x = 1  # noqa: FX101\r", "FX101"));
        assert!(!noqa_allows("x = 1  # noqa: FX102", "FX101"));
        assert!(!noqa_allows("x = 1", "FX101"));
    }

    #[test]
    fn limits_never_above_info_except_syntax_errors() {
        assert_eq!(
            limit_severity(codes::SYNTAX_ERROR, Severity::Warning),
            Severity::Error
        );
        assert_eq!(
            limit_severity(codes::UNRESOLVED_NAME, Severity::Warning),
            Severity::Info
        );
        assert_eq!(
            limit_severity(codes::BUDGET, Severity::Hint),
            Severity::Hint
        );
    }
}
