//! `staticfx run`: trace one model and evaluate its graph with the bundled CPU executor.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::ide::run::{run_file, RunFailure, RunOptions, RunRequest};
use crate::traced::InputSpec;

#[derive(Args, Debug)]
pub struct RunArgs {
    pub file: PathBuf,
    /// A constructor expression evaluated in FILE's namespace, e.g. 'ResNet(BasicBlock, [2, 2, 2, 2])'.
    #[arg(long, required_unless_present = "class", conflicts_with = "class")]
    pub entry: Option<String>,
    /// A module class of FILE, built with its default constructor arguments.
    #[arg(long)]
    pub class: Option<String>,
    /// Project root for imports (default: nearest ancestor without __init__.py).
    #[arg(long)]
    pub root: Option<PathBuf>,
    /// The Python environment imports outside the root resolve through: an interpreter or a
    /// venv directory (default: `[tool.staticfx] python`, then $VIRTUAL_ENV, then .venv/venv
    /// in or above the root, then python3 on PATH).
    #[arg(long, value_name = "PATH")]
    pub python: Option<PathBuf>,
    /// Parameters and buffers as safetensors, keyed by state_dict names
    /// (default: PyTorch's initialisers, from --seed).
    #[arg(long)]
    pub weights: Option<PathBuf>,
    /// Inputs as safetensors, keyed by forward's parameter names.
    #[arg(
        long = "inputs",
        value_name = "IN.safetensors",
        conflicts_with = "inputs"
    )]
    pub inputs_file: Option<PathBuf>,
    /// An input for forward's argument NAME, as `graph --input` takes it: a shape (x=1x3x224x224,
    /// ids=2x16:i64) or a Python expression (return_dict=False, 'x=torch.randn(1, 4)'). Tensors
    /// get random data from --seed; Python values are passed as they are.
    #[arg(long = "input", value_name = "NAME=VALUE")]
    pub inputs: Vec<InputSpec>,
    /// Seed for default-initialised weights and random inputs.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Write the outputs as safetensors (`output`, or `output.0`, `output.1`, ... for tuples).
    #[arg(long)]
    pub output: Option<PathBuf>,
    /// Run the graph as traced, without the pass pipeline (by default the graph is optimized
    /// for inference first: CSE, folding, fusion incl. batch norm folded into convolutions).
    #[arg(long)]
    pub no_optimize: bool,
    /// Timed runs after one warm-up run; the summary reports the mean.
    #[arg(long, default_value_t = 1)]
    pub repeat: usize,
}

pub fn run(args: RunArgs) -> ExitCode {
    let req = RunRequest {
        file: args.file.clone(),
        entry: args.entry.clone(),
        class: args.class.clone(),
        root: args.root.clone(),
        python: args
            .python
            .clone()
            .or_else(|| crate::ide::Settings::discover(&args.file).0.python),
        options: RunOptions {
            weights: args.weights.clone(),
            inputs_file: args.inputs_file.clone(),
            inputs: args.inputs.clone(),
            seed: args.seed,
            repeat: args.repeat,
        },
        no_optimize: args.no_optimize,
        output: args.output.clone(),
    };
    let ran = run_file(&req);
    super::report_environment();
    match ran {
        Ok(report) => {
            print!("{}", report.summary);
            match report.write_error {
                Some(e) => {
                    eprintln!("staticfx: {e}");
                    ExitCode::from(1)
                }
                None => ExitCode::SUCCESS,
            }
        }
        Err(RunFailure::Setup(e)) => {
            eprintln!("staticfx: {e}");
            ExitCode::from(2)
        }
        Err(RunFailure::Execution(e)) => {
            eprintln!("staticfx: {e}");
            ExitCode::from(1)
        }
    }
}
