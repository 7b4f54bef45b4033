//! The command line: a thin adapter from arguments to `ide` and back to text.
//!
//! Clap arguments → `ide` → ruff-style text, JSON, SARIF; the CI formats in `cli/output/` (one
//! module per format, pure functions of the finished messages); `baseline.rs` fingerprints findings
//! without line numbers. `python/staticfx` + `pyproject.toml` package the binary as a wheel
//! (maturin, `bindings = "bin"`).

pub mod baseline;
pub mod check;
pub mod fix;
pub mod output;
pub mod rule;
pub mod run;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

use crate::ide;
use crate::traced::InputSpec;

#[derive(Parser, Debug)]
#[command(
    name = "staticfx",
    version,
    about = "Static torch.fx graphs and torch.compile graph-break checks for PyTorch source"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum GraphFormat {
    Text,
    Dot,
    Json,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Print the static FX graph of each module class in FILE (or of one instantiated model).
    Graph {
        file: PathBuf,
        /// Only this class (per-class mode).
        #[arg(long, conflicts_with = "entry")]
        class: Option<String>,
        /// A constructor expression evaluated in FILE's namespace, e.g. 'ResNet(BasicBlock, [2, 2, 2, 2])'.
        #[arg(long)]
        entry: Option<String>,
        /// An input for forward's argument NAME, repeatable. VALUE is a tensor's shape (x=1x3x224x224,
        /// ids=2x16:i64, empty for a 0-d tensor) or a Python expression evaluated in forward's
        /// module: return_dict=False, 'img_shapes=[(1, 4, 4)]', "mode='fast'",
        /// 'x=torch.randn(1, 4)', "cond={'text_embeds': torch.randn(2, 8)}". Every tensor an
        /// expression makes is an input of the graph, not a constant. A VALUE that reads both ways
        /// (steps=5) is the Python value for a parameter annotated int, float, bool or str (or
        /// `X | None`), or defaulting to such a value, and the shape otherwise.
        #[arg(long = "input", value_name = "NAME=VALUE")]
        inputs: Vec<InputSpec>,
        /// Project root for absolute and relative imports (default: nearest ancestor without __init__.py).
        #[arg(long)]
        root: Option<PathBuf>,
        /// The Python environment imports outside the root resolve through: an interpreter or a
        /// venv directory (default: `[tool.staticfx] python`, then $VIRTUAL_ENV, then .venv/venv
        /// in or above the root, then python3 on PATH).
        #[arg(long, value_name = "PATH")]
        python: Option<PathBuf>,
        #[arg(long, value_enum, default_value_t = GraphFormat::Text)]
        format: GraphFormat,
        /// Run the pass pipeline (CSE, constant folding, fusion, DCE) and show the optimized graph and pass log.
        #[arg(long)]
        optimize: bool,
        /// With --optimize: run no passes (debugging aid; shows the traced graph with an empty log).
        #[arg(long, requires = "optimize")]
        no_passes: bool,
        /// With --optimize: skip one pass (cse, constant_fold, fusion, dce); repeatable.
        #[arg(long = "disable-pass", value_name = "NAME", requires = "optimize", value_parser = clap::builder::PossibleValuesParser::new(ide::graph::PASS_NAMES))]
        disable_pass: Vec<String>,
        /// With --optimize: eval mode with frozen parameters (folds batch norm into convolutions).
        #[arg(long, requires = "optimize")]
        inference: bool,
        /// With --optimize: where optimized graphs are cached (default: .staticfx-cache under the project root).
        #[arg(long, value_name = "DIR", requires = "optimize")]
        cache_dir: Option<PathBuf>,
        /// With --optimize: neither read nor write the cache.
        #[arg(long, requires = "optimize")]
        no_cache: bool,
        /// The torch whose graph breaks to annotate, e.g. `torch==2.8` (default:
        /// `target-version` in [tool.staticfx], else 2.15).
        #[arg(long, value_name = "torch==2.x")]
        target_version: Option<crate::ide::TorchVersion>,
    },
    /// Report where torch.compile would break the graph, like a linter (ruff-style output).
    Check(check::CheckArgs),
    /// Apply fixes for graph breaks (safe ones by default), like `ruff check --fix`.
    Fix(fix::FixArgs),
    /// Run the model's graph on sample inputs with the bundled CPU executor.
    Run(run::RunArgs),
    /// Explain a rule: what Dynamo does, an example, the fix, the graph-break ids.
    Rule(rule::RuleArgs),
    /// Run the language server over stdin/stdout.
    Lsp,
}

/// Runs a command other than `lsp` (which `main.rs` hands to the server).
pub fn main(cli: Cli) -> ExitCode {
    // Deep models and deeply nested source need more stack than the default main thread has.
    crate::ide::on_large_stack("staticfx", || run(cli)).unwrap_or_else(|_| {
        eprintln!("staticfx: internal error (this is a bug; please report it with the input file)");
        ExitCode::from(2)
    })
}

/// The settings for a run over `paths`: `[tool.staticfx]` of the nearest pyproject.toml above
/// the first path, then the flags. None (after saying why) when the configuration is broken.
pub fn settings_for(
    paths: &[PathBuf],
    select: &[String],
    ignore: &[String],
    root: Option<&Path>,
) -> Option<crate::ide::Settings> {
    let start = paths.first().map(|p| p.as_path()).unwrap_or(Path::new("."));
    let (mut settings, problems) = crate::ide::Settings::discover(start);
    if !problems.is_empty() {
        for p in problems {
            eprintln!("staticfx: {p}");
        }
        return None;
    }
    settings.apply_flags(select, ignore, root);
    Some(settings)
}

/// One line on stderr per environment that was needed and could not be used (a missing or
/// failing interpreter); nothing when no import needed one or none exists at all.
pub fn report_environment() {
    for e in crate::semantic::EnvironmentHandle::failures() {
        eprintln!("staticfx: warning: {e}");
    }
}

/// `--target-version` over `target-version`; when neither is given and no torch is installed
/// in the environment of `start`'s project, says on stderr which torch is assumed.
pub fn note_target(
    settings: &mut crate::ide::Settings,
    flag: Option<crate::ide::TorchVersion>,
    start: &Path,
) {
    if flag.is_some() {
        settings.target_version = flag;
    }
    if settings.target_version.is_none() {
        let root = settings
            .root
            .clone()
            .unwrap_or_else(|| crate::semantic::Project::default_root(start));
        let target = settings.torch_target_for(&root);
        if target.source == crate::ide::TargetSource::Assumed {
            eprintln!("staticfx: info: {}", target.note());
        }
    }
}

fn run(cli: Cli) -> ExitCode {
    match cli.command {
        Command::Check(args) => check::run(args),
        Command::Fix(args) => fix::run(args),
        Command::Run(args) => run::run(args),
        Command::Rule(args) => rule::run(args),
        Command::Lsp => unreachable!("main.rs runs the language server"),
        Command::Graph {
            file,
            class,
            entry,
            inputs,
            root,
            python,
            format,
            optimize,
            no_passes,
            disable_pass,
            inference,
            cache_dir,
            no_cache,
            target_version,
        } => {
            let Some(mut settings) = settings_for(std::slice::from_ref(&file), &[], &[], None)
            else {
                return ExitCode::from(2);
            };
            // The flags first: the torch the note names is the one in `--python`'s environment.
            if python.is_some() {
                settings.python = python;
            }
            if root.is_some() {
                settings.root = root.clone();
            }
            note_target(&mut settings, target_version, &file);
            let req = ide::graph::GraphRequest {
                target_version: settings.target_version,
                file: file.clone(),
                class,
                entry,
                inputs,
                root,
                python: settings.python.clone(),
                format: match format {
                    GraphFormat::Text => ide::graph::GraphFormat::Text,
                    GraphFormat::Dot => ide::graph::GraphFormat::Dot,
                    GraphFormat::Json => ide::graph::GraphFormat::Json,
                },
                optimize: optimize.then_some(ide::graph::OptimizeRequest {
                    no_passes,
                    disabled: disable_pass,
                    inference,
                    cache_dir,
                    no_cache,
                }),
            };
            let graphed = ide::graph::graph_file(&req);
            report_environment();
            match graphed {
                Ok(out) => {
                    print!("{}", out.rendered);
                    if !out.rendered.ends_with('\n') {
                        println!();
                    }
                    for line in &out.limits {
                        eprintln!("{line}");
                    }
                    if out.no_graphs {
                        eprintln!(
                            "staticfx: no nn.Module classes with a forward in {}",
                            file.display()
                        );
                    }
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("staticfx: {e}");
                    ExitCode::from(2)
                }
            }
        }
    }
}
