//! The command line: a thin adapter from arguments to the analysis API and back to text.

pub mod check;
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
    },
    /// Report where torch.compile would break the graph, like a linter (ruff-style output).
    Check(check::CheckArgs),
    /// Run the model's graph on sample inputs with the bundled CPU executor.
    Run(run::RunArgs),
    /// Run the language server over stdin/stdout.
    Lsp,
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
        Command::Run(args) => run::run(args),
        Command::Lsp => unreachable!("handled in main"),
        Command::Graph {
            file,
            class,
            entry,
            inputs,
            root,
            format,
        } => {
            let opts = GraphOptions {
                root,
                class,
                entry,
                inputs,
                ..Default::default()
            };
            match analysis::analyze_file(&file, &opts) {
                Ok(a) => {
                    let out = match format {
                        GraphFormat::Text => a
                            .graphs
                            .iter()
                            .map(crate::render::text::render)
                            .collect::<Vec<_>>()
                            .join("\n"),
                        GraphFormat::Dot => a
                            .graphs
                            .iter()
                            .map(crate::render::dot::render)
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
