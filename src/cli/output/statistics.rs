//! `--statistics`: one line per code with its count, most frequent first, the way ruff (after
//! Flake8) prints it: `count<TAB>code<TAB>[*] title`, `[*]` where `staticfx fix` repairs the
//! findings by default.

use serde::Serialize;

use super::super::check::Message;
use crate::ide::Applicability;

#[derive(Debug, Serialize, PartialEq)]
pub struct Statistic {
    pub code: String,
    pub name: &'static str,
    pub count: usize,
    pub fixable: bool,
}

pub fn collect(ms: &[Message]) -> Vec<Statistic> {
    let mut stats: Vec<Statistic> = Vec::new();
    for m in ms {
        let fixable = m
            .fix
            .as_ref()
            .is_some_and(|f| f.applicability == Applicability::Safe);
        match stats.iter_mut().find(|s| s.code == m.code) {
            Some(s) => {
                s.count += 1;
                s.fixable |= fixable;
            }
            None => stats.push(Statistic {
                code: m.code.clone(),
                name: title(&m.code),
                count: 1,
                fixable,
            }),
        }
    }
    stats.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.code.cmp(&b.code)));
    stats
}

fn title(code: &str) -> &'static str {
    crate::ide::rule_docs::lookup(code).map_or("", |r| r.title())
}

pub fn render_text(stats: &[Statistic]) -> String {
    let count_w = stats
        .iter()
        .map(|s| s.count.to_string().len())
        .max()
        .unwrap_or(1);
    let code_w = stats.iter().map(|s| s.code.len()).max().unwrap_or(0);
    let any_fixable = stats.iter().any(|s| s.fixable);
    stats
        .iter()
        .map(|s| {
            let mark = match (any_fixable, s.fixable) {
                (false, _) => "",
                (true, true) => "[*] ",
                (true, false) => "[ ] ",
            };
            format!(
                "{:>count_w$}\t{:<code_w$}\t{mark}{}\n",
                s.count, s.code, s.name
            )
        })
        .collect()
}

pub fn render_json(stats: &[Statistic]) -> String {
    serde_json::to_string_pretty(stats).expect("json") + "\n"
}
