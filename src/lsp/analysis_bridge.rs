//! Between the analysis library and the protocol: runs one analysis on a text snapshot and
//! turns the result into plain, `Send` data (findings with resolved ranges, per-graph node
//! views, DOT). `diagnostics_for` is the one place that decides what becomes a diagnostic, so
//! the graph-break findings of `crate::breaks` plug in there.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ropey::Rope;
use tower_lsp_server::ls_types::Position;
use tree_sitter::Tree;

use super::document::{position_at, Encoding};
use crate::analysis::{self, FileAnalysis, GraphOptions, GraphResult, InputSpec, ModuleSummary};
use crate::diagnostics::{codes, Severity};
use crate::graph::RegionRole;
use crate::semantic::{FileId, Project};
use crate::syntax::Span;

/// Everything one analysis needs, owned, so it can move to the analysis thread.
pub struct Snapshot {
    pub path: PathBuf,
    pub root: PathBuf,
    pub text: Arc<str>,
    pub tree: Tree,
    pub version: i32,
    pub encoding: Encoding,
    pub class_inputs: HashMap<String, Vec<InputSpec>>,
    /// Other open buffers: imports read the editor's text, not the disk's.
    pub overlays: Vec<(PathBuf, Arc<str>)>,
    /// Which settings the snapshot was taken under; results of older settings are not reused.
    pub config_gen: u64,
    /// Test hook: a marker comment makes analysis panic, to prove the server survives it.
    pub test_hooks: bool,
}

/// A diagnostic before conversion: byte spans in analysed files.
#[derive(Clone, Debug)]
pub struct RawFinding {
    pub code: &'static str,
    pub message: String,
    pub severity: Severity,
    pub file: FileId,
    pub span: Span,
    /// Call sites from forward down to the finding, outermost first.
    pub chain: Vec<(FileId, Span)>,
    pub href: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct TextRange {
    pub start: Position,
    pub end: Position,
}

#[derive(Clone, Debug)]
pub struct Related {
    pub path: PathBuf,
    pub range: TextRange,
    pub message: String,
}

#[derive(Clone, Debug)]
pub struct Finding {
    pub code: &'static str,
    pub message: String,
    pub severity: Severity,
    pub range: TextRange,
    pub related: Vec<Related>,
    pub href: Option<String>,
}

/// One graph node as hover shows it.
#[derive(Clone, Debug)]
pub struct NodeView {
    pub name: String,
    pub op: &'static str,
    pub target: String,
    pub shape: Option<String>,
    pub dtype: Option<String>,
    pub region: Option<String>,
    /// The node's origin in the analysed document, if it lies there.
    pub span: Option<Span>,
    /// Call sites in the analysed document that inlined the node.
    pub chain: Vec<Span>,
}

pub struct GraphView {
    pub name: String,
    pub class: String,
    pub class_span: Span,
    pub dot: String,
    pub nodes: Vec<NodeView>,
    pub modules: Vec<ModuleSummary>,
}

pub struct Output {
    pub version: i32,
    pub config_gen: u64,
    pub text: Arc<str>,
    pub findings: Vec<Finding>,
    pub graphs: Vec<GraphView>,
    /// Set when the file could not be analysed at all.
    pub failure: Option<String>,
}

pub const PANIC_MARKER: &str = "# staticfx-test: panic";

/// Runs the analysis; call it on a thread with a large stack (the evaluator recurses).
pub fn analyze(snap: &Snapshot) -> Output {
    if snap.test_hooks && snap.text.contains(PANIC_MARKER) {
        panic!("test hook: panic requested by the document");
    }
    let mut project = Project::new(&snap.root);
    for (path, text) in &snap.overlays {
        project.add_overlay(path, text.clone(), None);
    }
    project.add_overlay(&snap.path, snap.text.clone(), Some(snap.tree.clone()));
    let opts = GraphOptions {
        root: Some(snap.root.clone()),
        class_inputs: snap.class_inputs.clone(),
        ..Default::default()
    };
    let mut out = Output {
        version: snap.version,
        config_gen: snap.config_gen,
        text: snap.text.clone(),
        findings: vec![],
        graphs: vec![],
        failure: None,
    };
    match analysis::analyze_in_project(project, &snap.path, &opts) {
        Ok(a) => {
            let raw = diagnostics_for(&a);
            let mut conv = Converter::new(&a.project, snap.encoding);
            out.findings = raw
                .iter()
                .filter(|f| f.file == a.file)
                .map(|f| conv.finding(f))
                .collect();
            out.graphs = a.graphs.iter().map(|g| graph_view(g, a.file)).collect();
        }
        Err(e) => out.failure = Some(e.to_string()),
    }
    out
}

/// What the editor shows for one analysis: analysis limits (low severity: the analyser could
/// not see, the model is not wrong), tracing errors, graph-break regions and side effects.
pub fn diagnostics_for(a: &FileAnalysis) -> Vec<RawFinding> {
    let mut out: Vec<RawFinding> = Vec::new();
    let push = |f: RawFinding, out: &mut Vec<RawFinding>| {
        if !out
            .iter()
            .any(|o| o.file == f.file && o.span == f.span && o.code == f.code)
        {
            out.push(f);
        }
    };
    for d in &a.diagnostics {
        push(
            RawFinding {
                code: d.code,
                message: d.message.clone(),
                severity: limit_severity(d.code, d.severity),
                file: d.file,
                span: d.span,
                chain: vec![],
                href: None,
            },
            &mut out,
        );
    }
    for g in &a.graphs {
        if let Some(e) = &g.error {
            let message = format!("{} stopped tracing here: {}", g.name, e.message);
            push(
                RawFinding {
                    code: e.code,
                    message,
                    severity: limit_severity(e.code, e.severity),
                    file: e.file,
                    span: e.span,
                    chain: vec![],
                    href: None,
                },
                &mut out,
            );
        }
        for r in &g.regions {
            let message = format!(
                "graph break in {}: data-dependent {} (Dynamo splits the graph here)",
                g.name, r.kind
            );
            push(
                RawFinding {
                    code: "FX101",
                    message,
                    severity: Severity::Warning,
                    file: r.file,
                    span: r.span,
                    chain: r.call_chain.clone(),
                    href: None,
                },
                &mut out,
            );
        }
        for e in &g.events {
            // Until `crate::breaks` classifies events, only the unambiguous ones are shown.
            let (code, what) = match e.kind {
                "print" => ("FX105", "print() in forward".to_string()),
                "log" => ("FX106", format!("logging call `{}` in forward", e.detail)),
                "time" => ("FX107", format!("wall-clock `{}` in forward", e.detail)),
                "graph_break" => ("FX108", "explicit graph break".to_string()),
                "convert" => (
                    "FX102",
                    format!("`{}` converts a tensor to Python data", e.detail),
                ),
                "generator" | "yield" => ("FX111", "generator in forward".to_string()),
                _ => continue,
            };
            let message = format!("graph break in {}: {what}", g.name);
            push(
                RawFinding {
                    code,
                    message,
                    severity: Severity::Warning,
                    file: e.file,
                    span: e.span,
                    chain: e.call_chain.clone(),
                    href: None,
                },
                &mut out,
            );
        }
    }
    out
}

fn limit_severity(code: &str, given: Severity) -> Severity {
    match code {
        codes::SYNTAX_ERROR => Severity::Error,
        c if c.starts_with("FX9") => Severity::Info,
        _ => given,
    }
}

/// Byte spans to positions, one rope per file touched.
struct Converter<'a> {
    project: &'a Project,
    enc: Encoding,
    ropes: HashMap<FileId, Rope>,
}

impl<'a> Converter<'a> {
    fn new(project: &'a Project, enc: Encoding) -> Self {
        Converter {
            project,
            enc,
            ropes: HashMap::new(),
        }
    }

    fn range(&mut self, file: FileId, span: Span) -> TextRange {
        let enc = self.enc;
        let rope = self
            .ropes
            .entry(file)
            .or_insert_with(|| Rope::from_str(&self.project.file(file).text));
        TextRange {
            start: position_at(rope, span.start, enc),
            end: position_at(rope, span.end, enc),
        }
    }

    fn finding(&mut self, f: &RawFinding) -> Finding {
        let related = f
            .chain
            .iter()
            .map(|&(file, span)| Related {
                path: self.project.file(file).path.clone(),
                range: self.range(file, span),
                message: "called from here".into(),
            })
            .collect();
        Finding {
            code: f.code,
            message: f.message.clone(),
            severity: f.severity,
            range: self.range(f.file, f.span),
            related,
            href: f.href.clone(),
        }
    }
}

fn graph_view(g: &GraphResult, file: FileId) -> GraphView {
    let nodes = g
        .graph
        .nodes()
        .map(|(_, n)| {
            let (shape, dtype) = match n.meta.as_tensor() {
                Some(t) => (Some(n.meta.describe()), Some(t.dtype.as_str().to_string())),
                None if matches!(n.meta, crate::shapes::Meta::Unknown) => (None, None),
                None => (Some(n.meta.describe()), None),
            };
            let region = n.region.map(|t| {
                let kind = g
                    .regions
                    .get(t.region)
                    .map(|r| r.kind.as_str())
                    .unwrap_or("branch");
                let role = match t.role {
                    RegionRole::Cause => "decides the branch",
                    RegionRole::ThenBranch => "then branch",
                    RegionRole::ElseBranch => "else branch",
                };
                format!(
                    "graph-break region #{} (data-dependent {kind}; {role})",
                    t.region
                )
            });
            let (span, chain) = match &n.origin {
                Some(o) => (
                    (o.file == file).then_some(o.span),
                    o.call_chain
                        .iter()
                        .filter(|(f, _)| *f == file)
                        .map(|&(_, s)| s)
                        .collect(),
                ),
                None => (None, vec![]),
            };
            NodeView {
                name: n.name.clone(),
                op: n.op.as_str(),
                target: n.target.clone(),
                shape,
                dtype,
                region,
                span,
                chain,
            }
        })
        .collect();
    GraphView {
        name: g.name.clone(),
        class: g.class.clone(),
        class_span: g.class_span,
        dot: crate::render::dot::render(g),
        nodes,
        modules: g.modules.clone(),
    }
}

/// The project root for a file: the workspace folder containing it, else the nearest
/// non-package ancestor.
pub fn root_for(path: &Path, workspace: &[PathBuf]) -> PathBuf {
    workspace
        .iter()
        .filter(|w| path.starts_with(w))
        .max_by_key(|w| w.as_os_str().len())
        .cloned()
        .unwrap_or_else(|| Project::default_root(path))
}

/// One output of `staticfx.runGraph`, as plain data.
#[derive(Clone, Debug)]
pub struct RunOutputView {
    pub name: String,
    pub shape: Vec<usize>,
    pub dtype: &'static str,
    pub min: f64,
    pub mean: f64,
    pub max: f64,
}

/// Traces `class` of the snapshot (per-class mode, default constructor arguments) and runs
/// its graph with the executor: seeded default weights unless `weights` names a
/// safetensors file. Call it on a thread with a large stack, like [`analyze`].
pub fn run_graph(
    snap: &Snapshot,
    class: &str,
    inputs: Vec<InputSpec>,
    weights: Option<PathBuf>,
    seed: u64,
) -> Result<(String, Vec<RunOutputView>), String> {
    let mut project = Project::new(&snap.root);
    for (path, text) in &snap.overlays {
        project.add_overlay(path, text.clone(), None);
    }
    project.add_overlay(&snap.path, snap.text.clone(), Some(snap.tree.clone()));
    let inputs = if inputs.is_empty() {
        snap.class_inputs.get(class).cloned().unwrap_or_default()
    } else {
        inputs
    };
    let opts = GraphOptions {
        root: Some(snap.root.clone()),
        class: Some(class.to_string()),
        inputs: inputs.clone(),
        ..Default::default()
    };
    let a = analysis::analyze_in_project(project, &snap.path, &opts).map_err(|e| e.to_string())?;
    let g = a
        .graphs
        .iter()
        .find(|g| g.class == class)
        .ok_or_else(|| format!("no traced nn.Module class `{class}` in the document"))?;
    let run = crate::exec::RunOptions {
        weights,
        inputs_file: None,
        inputs,
        seed,
        repeat: 1,
    };
    let r = crate::exec::run_graph(g, &run).map_err(|e| crate::cli::run::describe_error(&a, &e))?;
    let outputs = r
        .stats
        .iter()
        .map(|s| RunOutputView {
            name: s.name.clone(),
            shape: s.shape.clone(),
            dtype: s.dtype.as_str(),
            min: s.min,
            mean: s.mean,
            max: s.max,
        })
        .collect();
    Ok((crate::exec::summary(&g.name, &r), outputs))
}
