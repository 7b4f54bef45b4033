//! Running a traced graph with the executor, as `staticfx run` and the editor's "run graph"
//! report it.

use std::path::PathBuf;

use crate::analysis::{self, GraphOptions};
pub use crate::exec::RunOptions;
use crate::exec::{self, ExecError};
use crate::traced::FileAnalysis;

/// What to run: a class (default constructor arguments) or an entry expression of a file.
#[derive(Clone, Debug, Default)]
pub struct RunRequest {
    pub file: PathBuf,
    pub entry: Option<String>,
    pub class: Option<String>,
    pub root: Option<PathBuf>,
    pub options: RunOptions,
    /// Run the graph as traced, without the inference pass pipeline.
    pub no_optimize: bool,
    /// Write the outputs as safetensors here, after the summary is shown.
    pub output: Option<PathBuf>,
}

pub struct RunReport {
    /// What `staticfx run` prints.
    pub summary: String,
    /// Set when the outputs could not be written to `RunRequest::output`.
    pub write_error: Option<String>,
}

/// Why a run did not happen: a usage problem (exit 2) or a failed execution (exit 1).
#[derive(Debug)]
pub enum RunFailure {
    Setup(String),
    Execution(String),
}

/// Traces the model and runs its graph (optimized for inference unless asked not to).
pub fn run_file(req: &RunRequest) -> Result<RunReport, RunFailure> {
    let opts = GraphOptions {
        root: req.root.clone(),
        class: req.class.clone(),
        entry: req.entry.clone(),
        inputs: req.options.inputs.clone(),
        ..Default::default()
    };
    let a =
        analysis::analyze_file(&req.file, &opts).map_err(|e| RunFailure::Setup(e.to_string()))?;
    let Some(graph) = a.graphs.first() else {
        return Err(RunFailure::Setup(format!(
            "no nn.Module with a forward to run in {}",
            req.file.display()
        )));
    };
    let mut graph = crate::traced::GraphResult::clone(graph);
    if !req.no_optimize {
        let passes = crate::passes::PassOptions {
            inference: true,
            ..Default::default()
        };
        analysis::optimize_graph(&mut graph, &passes).map_err(|e| {
            RunFailure::Setup(format!("the pass pipeline failed (try --no-optimize): {e}"))
        })?;
    }
    let result = exec::run_graph(&graph, &req.options)
        .map_err(|e| RunFailure::Execution(describe_error(&a, &e)))?;
    let write_error = req.output.as_ref().and_then(|out| {
        exec::weights::write_safetensors(out, &result.outputs)
            .err()
            .map(|e| e.to_string())
    });
    Ok(RunReport {
        summary: exec::summary(&graph, &result),
        write_error,
    })
}

/// The error with `path:line:col` of the node's source when it has one.
pub fn describe_error(a: &FileAnalysis, e: &ExecError) -> String {
    match e.origin() {
        Some(o) => {
            let f = a.project.file(o.file);
            let lc = f.lines.line_col(&f.text, o.span.start);
            format!("{}:{}:{}: {e}", f.path.display(), lc.line + 1, lc.col + 1)
        }
        None => e.to_string(),
    }
}
