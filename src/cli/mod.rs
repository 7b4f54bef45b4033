//! The command line: a thin adapter from arguments to the analysis API and back to text.

pub mod check;
pub mod fix;
pub mod run;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

use crate::analysis::{self, GraphOptions, InputSpec};

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
        /// Example input shape for forward's argument, e.g. x=1x3x224x224 or ids=2x16:i64.
        #[arg(long = "input", value_name = "NAME=SHAPE[:DTYPE]")]
        inputs: Vec<InputSpec>,
        /// Project root for absolute and relative imports (default: nearest ancestor without __init__.py).
        #[arg(long)]
        root: Option<PathBuf>,
        #[arg(long, value_enum, default_value_t = GraphFormat::Text)]
        format: GraphFormat,
        /// Run the pass pipeline (CSE, constant folding, fusion, DCE) and show the optimized graph and pass log.
        #[arg(long)]
        optimize: bool,
        /// With --optimize: run no passes (debugging aid; shows the traced graph with an empty log).
        #[arg(long, requires = "optimize")]
        no_passes: bool,
        /// With --optimize: skip one pass (cse, constant_fold, fusion, dce); repeatable.
        #[arg(long = "disable-pass", value_name = "NAME", requires = "optimize", value_parser = clap::builder::PossibleValuesParser::new(crate::passes::PASS_NAMES))]
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
        target_version: Option<crate::breaks::version::TorchVersion>,
    },
    /// Report where torch.compile would break the graph, like a linter (ruff-style output).
    Check(check::CheckArgs),
    /// Apply fixes for graph breaks (safe ones by default), like `ruff check --fix`.
    Fix(fix::FixArgs),
    /// Run the model's graph on sample inputs with the bundled CPU executor.
    Run(run::RunArgs),
    /// Run the language server over stdin/stdout.
    Lsp,
}

/// The torch the findings describe: `--target-version`, else `target-version` in
/// `[tool.staticfx]`, else the default, which is then said on stderr.
// The installed torch (`breaks::version::find_torch` over the environment's site-packages)
// slots in between the configured and the assumed version once environment discovery lands.
fn torch_target(
    flag: Option<crate::breaks::version::TorchVersion>,
    config: &check::Config,
) -> Result<crate::breaks::version::Target, String> {
    use crate::breaks::version::Target;
    let configured = match (flag, &config.target_version) {
        (Some(v), _) => Some(v),
        (None, Some(s)) => Some(
            s.parse()
                .map_err(|e| format!("[tool.staticfx] target-version: {e}"))?,
        ),
        (None, None) => None,
    };
    let target = Target::resolve(configured, None);
    if configured.is_none() {
        eprintln!("staticfx: info: {}", target.note());
    }
    Ok(target)
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Command::Lsp = cli.command {
        // The server runs its own runtime and gives analysis its own large-stack threads.
        return crate::lsp::run_stdio();
    }
    // Deep models and deeply nested source need more stack than the default main thread has.
    let handle = std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || run(cli));
    match handle.map(|h| h.join()) {
        Ok(Ok(code)) => code,
        _ => {
            eprintln!(
                "staticfx: internal error (this is a bug; please report it with the input file)"
            );
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> ExitCode {
    match cli.command {
        Command::Check(args) => check::run(args),
        Command::Fix(args) => fix::run(args),
        Command::Run(args) => run::run(args),
        Command::Lsp => unreachable!("handled in main"),
        Command::Graph {
            file,
            class,
            entry,
            inputs,
            root,
            format,
            optimize,
            no_passes,
            disable_pass,
            inference,
            cache_dir,
            no_cache,
            target_version,
        } => {
            let config = match check::find_config(&file) {
                Ok(c) => c.unwrap_or_default(),
                Err(e) => {
                    eprintln!("staticfx: {e}");
                    return ExitCode::from(2);
                }
            };
            let torch_target = match torch_target(target_version, &config) {
                Ok(t) => t,
                Err(e) => {
                    eprintln!("staticfx: {e}");
                    return ExitCode::from(2);
                }
            };
            let opts = GraphOptions {
                root,
                class,
                entry,
                inputs,
                torch_target,
                ..Default::default()
            };
            match analysis::analyze_file(&file, &opts) {
                Ok(mut a) => {
                    if optimize {
                        let cache_dir = if no_cache {
                            None
                        } else {
                            Some(
                                cache_dir
                                    .unwrap_or_else(|| analysis::default_cache_dir(&a.project)),
                            )
                        };
                        let o = analysis::OptimizeOptions {
                            passes: crate::passes::PassOptions {
                                inference,
                                disabled: disable_pass,
                                validate: false,
                            },
                            no_passes,
                            cache_dir,
                        };
                        if let Err(e) = analysis::optimize(&mut a, &opts, &o) {
                            eprintln!("staticfx: internal error: {e} (rerun with --disable-pass to narrow it down)");
                            return ExitCode::from(2);
                        }
                    }
                    let out = match format {
                        GraphFormat::Text => a
                            .graphs
                            .iter()
                            .map(|g| crate::render::text::render(g))
                            .collect::<Vec<_>>()
                            .join("\n"),
                        GraphFormat::Dot => a
                            .graphs
                            .iter()
                            .map(|g| crate::render::dot::render(g))
                            .collect::<Vec<_>>()
                            .join("\n"),
                        GraphFormat::Json => crate::render::json::render(&a.project, &a.graphs),
                    };
                    print!("{out}");
                    if !out.ends_with('\n') {
                        println!();
                    }
                    for d in a.diagnostics.iter().filter(|d| d.file == a.file) {
                        let f = a.project.file(d.file);
                        let lc = f.lines.line_col(&f.text, d.span.start);
                        eprintln!(
                            "{}:{}:{}: {} {}",
                            f.path.display(),
                            lc.line + 1,
                            lc.col + 1,
                            d.code,
                            d.message
                        );
                    }
                    if a.graphs.is_empty() {
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
