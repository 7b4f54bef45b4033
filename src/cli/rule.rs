//! `staticfx rule CODE` / `staticfx rule --all`: the rule documentation, like `ruff rule`.

use std::process::ExitCode;

use crate::ide::rule_docs::{self as docs, RULES};

#[derive(Clone, Copy, Debug, clap::ValueEnum, PartialEq, Eq)]
pub enum RuleFormat {
    Text,
    Json,
}

#[derive(clap::Args, Debug, Clone)]
pub struct RuleArgs {
    /// A code such as FX101.
    #[arg(required_unless_present = "all", conflicts_with = "all")]
    pub code: Option<String>,
    /// Every rule.
    #[arg(long)]
    pub all: bool,
    #[arg(long, value_enum, default_value_t = RuleFormat::Text)]
    pub output_format: RuleFormat,
}

pub fn run(args: RuleArgs) -> ExitCode {
    let rules: Vec<&docs::RuleDoc> = if args.all {
        RULES.iter().collect()
    } else {
        let code = args.code.unwrap_or_default();
        match docs::lookup(&code) {
            Some(r) => vec![r],
            None => {
                let known: Vec<&str> = RULES.iter().map(|r| r.code).collect();
                eprintln!(
                    "staticfx: unknown rule `{code}`; the codes are {}",
                    known.join(", ")
                );
                return ExitCode::from(2);
            }
        }
    };
    match args.output_format {
        RuleFormat::Text => {
            let texts: Vec<String> = rules.iter().map(|r| r.to_markdown("#")).collect();
            print!("{}", texts.join("\n"));
        }
        RuleFormat::Json => {
            let v: Vec<serde_json::Value> = rules.iter().map(|r| r.to_json()).collect();
            let out = if args.all {
                serde_json::Value::Array(v)
            } else {
                v.into_iter().next().unwrap_or_default()
            };
            println!("{}", serde_json::to_string_pretty(&out).expect("json"));
        }
    }
    ExitCode::SUCCESS
}
