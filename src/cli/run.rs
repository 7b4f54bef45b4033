//! `staticfx run`: trace one model and evaluate its graph with the bundled CPU executor.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::analysis::{self, GraphOptions, InputSpec};
use crate::exec::{self, RunOptions};
use crate::ide::describe_error;

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
    /// Random input of this shape from --seed, e.g. x=1x3x224x224 or ids=2x16:i64.
    #[arg(long = "input", value_name = "NAME=SHAPE[:DTYPE]")]
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
    let opts = GraphOptions {
        root: args.root.clone(),
        class: args.class.clone(),
        entry: args.entry.clone(),
        inputs: args.inputs.clone(),
        ..Default::default()
    };
    let analysis = match analysis::analyze_file(&args.file, &opts) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("staticfx: {e}");
            return ExitCode::from(2);
        }
    };
    let Some(graph) = analysis.graphs.first() else {
        eprintln!(
            "staticfx: no nn.Module with a forward to run in {}",
            args.file.display()
        );
        return ExitCode::from(2);
    };
    let mut graph = analysis::GraphResult::clone(graph);
    if !args.no_optimize {
        let passes = crate::passes::PassOptions {
            inference: true,
            ..Default::default()
        };
        if let Err(e) = analysis::optimize_graph(&mut graph, &passes) {
            eprintln!("staticfx: the pass pipeline failed (try --no-optimize): {e}");
            return ExitCode::from(2);
        }
    }
    let graph = &graph;
    let run_opts = RunOptions {
        weights: args.weights.clone(),
        inputs_file: args.inputs_file.clone(),
        inputs: args.inputs.clone(),
        seed: args.seed,
        repeat: args.repeat,
    };
    let result = match exec::run_graph(graph, &run_opts) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("staticfx: {}", describe_error(&analysis, &e));
            return ExitCode::from(1);
        }
    };
    print!("{}", exec::summary(graph, &result));
    if let Some(out) = &args.output {
        if let Err(e) = exec::weights::write_safetensors(out, &result.outputs) {
            eprintln!("staticfx: {e}");
            return ExitCode::from(1);
        }
    }
    ExitCode::SUCCESS
}
