//! The documentation of every code staticfx reports: what Dynamo does, an example, the fix, and
//! the Dynamo graph-break ids with their pages. One markdown file per code beside this module is
//! the single source for `staticfx rule`, for hover on a `# noqa:` code in the editor and for
//! the generated docs/rules.md (`tests/rule_docs.rs` checks it is current, and that each
//! example is flagged on exactly the lines it marks).

use serde_json::{json, Value};

use super::registry;
use crate::diagnostics::{codes, Rule};

pub struct RuleDoc {
    pub code: &'static str,
    /// The Dynamo graph-break ids the rule reports (empty for a possible break and for the
    /// analysis limits, FX9xx).
    pub gb_ids: &'static [&'static str],
    /// The markdown file: `# CODE: title`, then its sections.
    pub markdown: &'static str,
}

/// A graph-break rule's page: its code and gb ids come from the registry (`Rule`), so the two
/// cannot drift; the file is named after the code (`tests/rule_docs.rs` checks the title).
macro_rules! rule {
    ($rule:ident, $file:literal) => {
        RuleDoc {
            code: Rule::$rule.code(),
            gb_ids: Rule::$rule.gb_ids(),
            markdown: include_str!($file),
        }
    };
}

/// An analysis limit's page (FX9xx): no Dynamo id.
macro_rules! limit {
    ($code:path, $file:literal) => {
        RuleDoc {
            code: $code,
            gb_ids: &[],
            markdown: include_str!($file),
        }
    };
}

pub const RULES: &[RuleDoc] = &[
    rule!(DataDependentBranch, "FX101.md"),
    rule!(ScalarConversion, "FX102.md"),
    rule!(Tolist, "FX103.md"),
    rule!(DynamicShapeOp, "FX104.md"),
    rule!(Print, "FX105.md"),
    rule!(Logging, "FX106.md"),
    rule!(WallClockTime, "FX107.md"),
    rule!(ExplicitGraphBreak, "FX108.md"),
    rule!(RequiresGrad, "FX109.md"),
    rule!(Backward, "FX110.md"),
    rule!(Generator, "FX111.md"),
    rule!(ClassInForward, "FX112.md"),
    rule!(Deepcopy, "FX113.md"),
    rule!(Numpy, "FX114.md"),
    rule!(CExtension, "FX115.md"),
    rule!(DisabledCall, "FX116.md"),
    rule!(AutogradApplyDuplicate, "FX117.md"),
    rule!(BufferReassign, "FX118.md"),
    rule!(ModuleInForward, "FX119.md"),
    rule!(UnsupportedContextManager, "FX120.md"),
    rule!(RecurrentModule, "FX121.md"),
    rule!(EagerComprehension, "FX122.md"),
    rule!(MethodAfterBreak, "FX123.md"),
    rule!(RecompileState, "FX201.md"),
    rule!(ArgumentGuard, "FX202.md"),
    rule!(UnknownCall, "FX190.md"),
    rule!(ShapeMismatch, "FX301.md"),
    rule!(UnresolvedCall, "FX907.md"),
    limit!(codes::SYNTAX_ERROR, "FX901.md"),
    limit!(codes::UNRESOLVED_NAME, "FX902.md"),
    limit!(codes::UNSUPPORTED, "FX903.md"),
    limit!(codes::BUDGET, "FX904.md"),
    limit!(codes::RAISED, "FX905.md"),
    limit!(codes::ENTRY, "FX906.md"),
    limit!(codes::BUILD, "FX908.md"),
];

/// The rule for `code` (case-insensitive).
pub fn lookup(code: &str) -> Option<&'static RuleDoc> {
    RULES.iter().find(|r| r.code.eq_ignore_ascii_case(code))
}

impl RuleDoc {
    /// The text after `# CODE: ` on the first line.
    pub fn title(&self) -> &'static str {
        let first = self.markdown.lines().next().unwrap_or("");
        first
            .strip_prefix("# ")
            .and_then(|t| t.strip_prefix(self.code))
            .and_then(|t| t.strip_prefix(": "))
            .unwrap_or(first)
    }

    /// Everything after the title line.
    pub fn body(&self) -> &'static str {
        let skip = self
            .markdown
            .find('\n')
            .map_or(self.markdown.len(), |i| i + 1);
        self.markdown[skip..].trim_start_matches('\n')
    }

    /// The python block under `## Example`, when there is one.
    pub fn example(&self) -> Option<&'static str> {
        let section = &self.markdown[self.markdown.find("## Example")?..];
        let start = section.find("```python\n")? + "```python\n".len();
        let len = section[start..].find("```")?;
        Some(&section[start..start + len])
    }

    /// `Dynamo: GB0170 "Data-dependent branching", https://…` lines, one per id.
    fn gb_lines(&self) -> Vec<String> {
        self.gb_ids
            .iter()
            .map(|id| {
                format!(
                    "{id} \"{}\": {}",
                    registry::gb_type(id),
                    registry::url(id).unwrap_or_default()
                )
            })
            .collect()
    }

    /// The rule as `staticfx rule CODE` prints it and hover shows it: the markdown with the
    /// Dynamo ids after the title.
    pub fn to_markdown(&self, heading: &str) -> String {
        let mut out = format!("{heading} {}: {}\n\n", self.code, self.title());
        match self.gb_lines().as_slice() {
            [] if self.code.starts_with("FX9") => {
                out.push_str("Analysis limit: not a Dynamo graph break.\n\n")
            }
            [] if self.code.starts_with("FX3") => out.push_str(
                "Raises at run time, eagerly as under `torch.compile`: not a Dynamo graph break.\n\n",
            ),
            [] if self.code.starts_with("FX2") => out.push_str(
                "Recompile risk: the graph compiles, and a guard fails on a later call: not a \
                 Dynamo graph break.\n\n",
            ),
            [] => out.push_str("No Dynamo graph-break id: a possible break.\n\n"),
            lines => {
                for l in lines {
                    out.push_str(&format!("Dynamo graph break {l}  \n"));
                }
                out.push('\n');
            }
        }
        let sub = format!("{heading}#");
        for line in self.body().lines() {
            // Demote the file's `##` sections under the given heading level.
            match line.strip_prefix("## ") {
                Some(rest) => out.push_str(&format!("{sub} {rest}\n")),
                None => {
                    out.push_str(line);
                    out.push('\n');
                }
            }
        }
        out
    }

    pub fn to_json(&self) -> Value {
        json!({
            "code": self.code,
            "title": self.title(),
            "gb": self.gb_ids.iter().map(|id| json!({
                "id": id,
                "gb_type": registry::gb_type(id),
                "url": registry::url(id),
            })).collect::<Vec<_>>(),
            "explanation": self.body(),
        })
    }
}

/// docs/rules.md: an index, then every rule.
pub fn rules_markdown() -> String {
    let mut out = String::from(
        "# Rules\n\n<!-- Generated from src/breaks/docs/*.md by `STATICFX_UPDATE_DOCS=1 cargo test --test rule_docs`; do not edit. -->\n\n\
         Every code `staticfx check` reports. `staticfx rule CODE` prints one of them, \
         `staticfx rule --all --output-format json` all of them.\n\n\
         | code | title | Dynamo ids |\n|---|---|---|\n",
    );
    for r in RULES {
        let ids: Vec<String> = r
            .gb_ids
            .iter()
            .map(|id| format!("[{id}]({})", registry::url(id).unwrap_or_default()))
            .collect();
        out.push_str(&format!(
            "| [{}](#{}) | {} | {} |\n",
            r.code,
            r.code.to_ascii_lowercase(),
            r.title(),
            if ids.is_empty() {
                "—".into()
            } else {
                ids.join(", ")
            }
        ));
    }
    for r in RULES {
        out.push('\n');
        out.push_str(&format!(
            "<a id=\"{}\"></a>\n\n",
            r.code.to_ascii_lowercase()
        ));
        out.push_str(&r.to_markdown("##"));
    }
    out
}
