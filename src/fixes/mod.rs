//! Fixes: text edits that remove a graph break (or suppress its finding), computed from the
//! syntax tree and the source text alone. Plain data in (the source, where a finding is, a few
//! facts the analysis proved), plain data out (byte-range edits); the CLI (`staticfx fix`,
//! `check --output-format json`) and the language server's code actions share them, and only
//! the language server turns them into protocol types.
//!
//! One file per fix: `where_rewrite` (data-dependent `if`/`else` and `a if c else b` →
//! `torch.where`), `guard` (wrap `print`/logging/`time.*` in `if not
//! torch.compiler.is_compiling():`, or remove the statement), `item` (drop `.item()` when the
//! scalar only feeds tensor arithmetic), `counter_buffer` (an FX201 counter kept in a buffer
//! updated in place), `noqa` (append `# noqa: FXnnn`).
//!
//! One file per fix (`where_rewrite`, `guard`, `item`, `counter_buffer`, `noqa`): pure functions of the text, its
//! tree, the `Site` (rule, span) and proven `Facts` → `Fix { title, applicability, kind, edits }`
//! or a refusal reason; `fixer(rule)` is the dispatch, checked against `Rule::has_fix`. `pick`
//! chooses non-overlapping edits.

mod counter_buffer;
mod guard;
mod item;
mod noqa;
mod text;
mod where_rewrite;

use serde::Serialize;
use tree_sitter::Tree;

use crate::diagnostics::Rule;
use crate::syntax::Span;

/// ruff's applicability levels: `staticfx fix` applies `Safe` fixes, `--unsafe-fixes` adds
/// `Unsafe` ones; `DisplayOnly` is shown but never applied.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Applicability {
    DisplayOnly,
    Unsafe,
    Safe,
}

impl Applicability {
    pub fn as_str(self) -> &'static str {
        match self {
            Applicability::DisplayOnly => "display-only",
            Applicability::Unsafe => "unsafe",
            Applicability::Safe => "safe",
        }
    }
}

/// What a fix does, so front ends can order and pick them (the noqa suppression is never part
/// of "fix all").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FixKind {
    TorchWhere,
    Guard,
    Remove,
    DropItem,
    /// a module attribute Dynamo guards on, kept in a registered buffer instead
    Buffer,
    Noqa,
}

/// Replace the bytes `span` of the original text with `new_text`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Edit {
    pub span: Span,
    pub new_text: String,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Fix {
    pub title: String,
    pub applicability: Applicability,
    pub kind: FixKind,
    /// Non-overlapping, sorted by position.
    pub edits: Vec<Edit>,
}

/// Where a finding is, and what the analysis proved about it that the syntax cannot show.
#[derive(Clone, Debug, PartialEq)]
pub struct Site {
    pub rule: Rule,
    pub span: Span,
    /// For a `.item()` finding: every use of the Python number ends in tensor arithmetic, so
    /// the value can stay a 0-d tensor.
    pub scalar_feeds_tensors: bool,
}

/// Facts about the whole file: the conditions the analysis found to be tensors (FX101 sites)
/// and the expressions it saw produce tensors.
#[derive(Clone, Debug, Default)]
pub struct Facts {
    pub tensor_conditions: Vec<Span>,
    /// Spans of expressions the traced graph recorded as tensors.
    pub tensor_values: std::collections::HashSet<Span>,
    /// Concrete shapes of those tensors, where the analysis knows them.
    pub tensor_shapes: std::collections::HashMap<Span, Vec<i64>>,
}

/// The fixes for one finding, the preferred one first, and why the main fix was refused when
/// it was.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SiteFixes {
    pub fixes: Vec<Fix>,
    pub refusal: Option<String>,
}

impl SiteFixes {
    /// The preferred fix, if any (never the noqa suppression).
    pub fn main(&self) -> Option<&Fix> {
        self.fixes.iter().find(|f| f.kind != FixKind::Noqa)
    }
}

/// The site of a finding.
pub fn site_of(f: &crate::breaks::Finding) -> Site {
    Site {
        rule: f.rule,
        span: f.span,
        scalar_feeds_tensors: f.rule == Rule::ScalarConversion && f.fix_available,
    }
}

/// What the analysis of a file proved that fixes rely on: its tensor conditions (FX101) and
/// the spans of expressions its graphs recorded as tensors.
pub fn facts_for(a: &crate::traced::FileAnalysis) -> Facts {
    let mut facts = Facts::default();
    for g in &a.graphs {
        for f in g
            .breaks
            .iter()
            .filter(|f| f.file == a.file && f.rule == Rule::DataDependentBranch)
        {
            facts.tensor_conditions.push(f.span);
        }
        for (_, n) in g.graph.nodes() {
            if let Some(o) = n.origin.as_ref().filter(|o| o.file == a.file) {
                if let Some(t) = n.meta.as_tensor() {
                    facts.tensor_values.insert(o.span);
                    if let Some(shape) = t.shape.as_ref().and_then(crate::shapes::concrete) {
                        facts.tensor_shapes.insert(o.span, shape);
                    }
                }
            }
        }
    }
    facts
}

/// The graph-break findings of `a` that lie in its own file, one per `Finding::site_key`, each
/// with its fixes computed on `src` (the file's text as the user has it).
pub fn for_analysis<'a>(
    a: &'a crate::traced::FileAnalysis,
    src: &str,
) -> Vec<(&'a crate::breaks::Finding, SiteFixes)> {
    // Facts walk every node of every graph: only worth it when a fixer reads them.
    let needs_facts = (a.graphs.iter())
        .flat_map(|g| &g.breaks)
        .any(|f| f.file == a.file && reads_facts(f.rule));
    let facts = if needs_facts {
        facts_for(a)
    } else {
        Facts::default()
    };
    let file = a.project.file(a.file);
    // The analysed text has lines with syntax errors blanked; fixes need the real text (and
    // its errors, which allow only the noqa suppression).
    let held;
    let fresh;
    let tree = if &*file.text == src {
        held = file.tree();
        &*held
    } else {
        fresh = crate::syntax::parse(src, None);
        &fresh
    };
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for g in &a.graphs {
        for f in g.breaks.iter().filter(|f| f.file == a.file) {
            if !seen.insert(f.site_key()) {
                continue;
            }
            out.push((f, for_site(src, tree, &site_of(f), &facts)));
        }
    }
    out.sort_by_key(|(f, _)| (f.span.start, f.code));
    out
}

type Fixer = fn(&str, &Tree, &Site, &Facts) -> Result<Vec<Fix>, Option<String>>;

/// The fix a rule's findings get; `Rule::has_fix` says the same (checked by a test).
fn fixer(rule: Rule) -> Option<Fixer> {
    match rule {
        Rule::DataDependentBranch => Some(where_rewrite::for_condition),
        Rule::ScalarConversion => Some(item::fixes),
        Rule::RecompileState => Some(counter_buffer::fixes),
        Rule::Print | Rule::Logging | Rule::WallClockTime => {
            Some(|src, tree, site, _| guard::fixes(src, tree, site))
        }
        _ => None,
    }
}

/// Whether the fixer of `rule` reads the [`Facts`] (the where-rewrite, also tried for an
/// `.item()` in a condition; the buffer fix, for the operands a count meets).
fn reads_facts(rule: Rule) -> bool {
    matches!(
        rule,
        Rule::DataDependentBranch | Rule::ScalarConversion | Rule::RecompileState
    )
}

/// Every fix for one finding. `tree` must be the parse of `src`. Never panics on broken input:
/// a file with syntax errors gets the noqa suppression only.
pub fn for_site(src: &str, tree: &Tree, site: &Site, facts: &Facts) -> SiteFixes {
    let mut out = SiteFixes::default();
    if site.span.end > src.len() || !src.is_char_boundary(site.span.start) {
        return out;
    }
    if tree.root_node().has_error() {
        out.refusal = Some("the file has syntax errors".into());
    } else {
        let r = match fixer(site.rule) {
            Some(fix) => fix(src, tree, site, facts),
            None => Err(None),
        };
        match r {
            Ok(fixes) => out.fixes = fixes,
            Err(reason) => out.refusal = reason,
        }
    }
    if let Some(f) = noqa::fix(src, tree, site) {
        out.fixes.push(f);
    }
    out
}

/// Applies non-overlapping edits (in any order) to `src`. Overlapping edits are an error.
pub fn apply(src: &str, edits: &[Edit]) -> Result<String, String> {
    let mut sorted: Vec<&Edit> = edits.iter().collect();
    sorted.sort_by_key(|e| (e.span.start, e.span.end));
    let mut out = String::with_capacity(src.len());
    let mut at = 0;
    for e in sorted {
        if e.span.start < at || e.span.end > src.len() || e.span.start > e.span.end {
            return Err(format!("overlapping or out-of-range edit at {:?}", e.span));
        }
        if !src.is_char_boundary(e.span.start) || !src.is_char_boundary(e.span.end) {
            return Err(format!("edit splits a character at {:?}", e.span));
        }
        out.push_str(&src[at..e.span.start]);
        out.push_str(&e.new_text);
        at = e.span.end;
    }
    out.push_str(&src[at..]);
    Ok(out)
}

/// One "fix all" pass over a file: the preferred fix of each site whose applicability is
/// allowed, skipping any whose edits overlap edits already taken (the next pass gets them).
/// Identical edits (two findings fixed by one edit, e.g. one `import torch`) are taken once.
/// Returns the edits, how many findings they fix, and how many unsafe fixes were held back.
pub fn pick<'a>(
    sites: impl IntoIterator<Item = &'a SiteFixes>,
    unsafe_fixes: bool,
) -> (Vec<Edit>, usize, usize) {
    let mut taken: Vec<Edit> = Vec::new();
    let mut count = 0;
    let mut hidden = 0;
    for fixes in sites {
        let Some(fix) = fixes.fixes.iter().find(|f| {
            f.kind != FixKind::Noqa
                && (f.applicability == Applicability::Safe
                    || (unsafe_fixes && f.applicability == Applicability::Unsafe))
        }) else {
            if fixes
                .fixes
                .iter()
                .any(|f| f.kind != FixKind::Noqa && f.applicability == Applicability::Unsafe)
            {
                hidden += 1;
            }
            continue;
        };
        let new: Vec<&Edit> = fix.edits.iter().filter(|e| !taken.contains(e)).collect();
        let clash = new.iter().any(|e| {
            taken.iter().any(|t| {
                overlaps(t.span, e.span)
                    // Two insertions at one point would depend on order: leave one for later.
                    || (t.span.start == t.span.end
                        && e.span.start == e.span.end
                        && t.span.start == e.span.start)
            })
        });
        if clash {
            continue;
        }
        taken.extend(new.into_iter().cloned());
        count += 1;
    }
    taken.sort_by_key(|e| (e.span.start, e.span.end));
    (taken, count, hidden)
}

/// `pick` over sites computed here.
pub fn fix_all_edits(
    src: &str,
    tree: &Tree,
    sites: &[Site],
    facts: &Facts,
    unsafe_fixes: bool,
) -> (Vec<Edit>, usize) {
    let all: Vec<SiteFixes> = sites
        .iter()
        .map(|s| for_site(src, tree, s, facts))
        .collect();
    let (edits, n, _) = pick(&all, unsafe_fixes);
    (edits, n)
}

fn overlaps(a: Span, b: Span) -> bool {
    a.start < b.end && b.start < a.end
        || (a.start == a.end && b.start < a.start && a.start < b.end)
        || (b.start == b.end && a.start < b.start && b.start < a.end)
}

#[cfg(test)]
pub(crate) mod testing;

#[cfg(test)]
mod rule_tests {
    use super::fixer;
    use crate::diagnostics::Rule;

    /// `fix_available` and the registry's `has_fix` promise exactly the rules `for_site` fixes.
    #[test]
    fn has_fix_names_the_rules_with_a_fixer() {
        for &rule in Rule::ALL {
            assert_eq!(fixer(rule).is_some(), rule.has_fix(), "{rule:?}");
        }
    }
}
