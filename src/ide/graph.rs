//! `staticfx graph`: the traced (or optimized) graphs of a file, rendered as text, DOT or
//! JSON, with the analysis limits of the file as `path:line:col: CODE message` lines.

use std::path::PathBuf;

use crate::analysis::{self, GraphOptions};
use crate::traced::InputSpec;

pub use crate::passes::PASS_NAMES;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GraphFormat {
    Text,
    Dot,
    Json,
}

#[derive(Clone, Debug)]
pub struct GraphRequest {
    pub file: PathBuf,
    pub class: Option<String>,
    pub entry: Option<String>,
    pub inputs: Vec<InputSpec>,
    pub root: Option<PathBuf>,
    pub format: GraphFormat,
    /// Run the pass pipeline first.
    pub optimize: Option<OptimizeRequest>,
}

#[derive(Clone, Debug, Default)]
pub struct OptimizeRequest {
    /// Run no passes (the traced graph with an empty pass log).
    pub no_passes: bool,
    pub disabled: Vec<String>,
    /// Eval mode with frozen parameters.
    pub inference: bool,
    /// Where optimized graphs are cached (default: `.staticfx-cache` under the root).
    pub cache_dir: Option<PathBuf>,
    pub no_cache: bool,
}

pub struct GraphOutput {
    pub rendered: String,
    /// The file's analysis limits, one `path:line:col: CODE message` line each.
    pub limits: Vec<String>,
    /// No module class with a forward was found.
    pub no_graphs: bool,
}

pub fn graph_file(req: &GraphRequest) -> Result<GraphOutput, String> {
    let opts = GraphOptions {
        root: req.root.clone(),
        class: req.class.clone(),
        entry: req.entry.clone(),
        inputs: req.inputs.clone(),
        ..Default::default()
    };
    let mut a = analysis::analyze_file(&req.file, &opts).map_err(|e| e.to_string())?;
    if let Some(o) = &req.optimize {
        let cache_dir = if o.no_cache {
            None
        } else {
            Some(
                o.cache_dir
                    .clone()
                    .unwrap_or_else(|| analysis::default_cache_dir(&a.project)),
            )
        };
        let options = analysis::OptimizeOptions {
            passes: crate::passes::PassOptions {
                inference: o.inference,
                disabled: o.disabled.clone(),
                validate: false,
            },
            no_passes: o.no_passes,
            cache_dir,
        };
        analysis::optimize(&mut a, &opts, &options).map_err(|e| {
            format!("internal error: {e} (rerun with --disable-pass to narrow it down)")
        })?;
    }
    let rendered = match req.format {
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
    let limits = a
        .diagnostics
        .iter()
        .filter(|d| d.file == a.file)
        .map(|d| {
            let f = a.project.file(d.file);
            let lc = f.lines.line_col(&f.text, d.span.start);
            format!(
                "{}:{}:{}: {} {}",
                f.path.display(),
                lc.line + 1,
                lc.col + 1,
                d.code,
                d.message
            )
        })
        .collect();
    Ok(GraphOutput {
        rendered,
        limits,
        no_graphs: a.graphs.is_empty(),
    })
}
