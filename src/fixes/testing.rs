//! Test helpers: a site at the first occurrence of a needle, its fixes, and applying one kind
//! with the checks every fix must pass (the result parses without errors).

use super::{for_site, Facts, FixKind, Site, SiteFixes};
use crate::diagnostics::Rule;
use crate::syntax::{parse, Span};

pub fn site(src: &str, code: &str, needle: &str) -> Site {
    let rule = Rule::from_code(code).unwrap_or_else(|| panic!("no rule {code}"));
    let at = src
        .find(needle)
        .unwrap_or_else(|| panic!("`{needle}` not in the source"));
    Site {
        rule,
        span: Span::new(at, at + needle.len()),
        scalar_feeds_tensors: rule == Rule::ScalarConversion,
    }
}

/// The fixes for a site at `needle`; an FX101 site's condition counts as a tensor, as do the
/// `extra` conditions.
pub fn fixes_with(src: &str, code: &str, needle: &str, extra: &[&str]) -> SiteFixes {
    let s = site(src, code, needle);
    let mut facts = Facts::default();
    if code == "FX101" {
        facts.tensor_conditions.push(s.span);
    }
    for e in extra {
        let at = src.find(e).unwrap();
        facts.tensor_conditions.push(Span::new(at, at + e.len()));
    }
    let tree = parse(src, None);
    for_site(src, &tree, &s, &facts)
}

pub fn fixes(src: &str, code: &str, needle: &str) -> SiteFixes {
    fixes_with(src, code, needle, &[])
}

pub fn apply_fix(src: &str, f: &super::Fix) -> String {
    let out = super::apply(src, &f.edits).expect("edits apply");
    let tree = parse(&out, None);
    assert!(
        !tree.root_node().has_error(),
        "fix `{}` produced a syntax error:\n{out}",
        f.title
    );
    out
}

/// The text after the first fix of `kind`, or None when there is none.
pub fn apply_kind_with(
    src: &str,
    code: &str,
    needle: &str,
    kind: FixKind,
    extra: &[&str],
) -> Option<String> {
    let fs = fixes_with(src, code, needle, extra);
    let f = fs.fixes.iter().find(|f| f.kind == kind)?;
    Some(apply_fix(src, f))
}

pub fn apply_kind(src: &str, code: &str, needle: &str, kind: FixKind) -> Option<String> {
    apply_kind_with(src, code, needle, kind, &[])
}
