//! `workspace/executeCommand`: `staticfx.showGraph` (DOT of a traced or optimized graph),
//! `staticfx.runGraph` (the executor on a class) and `staticfx.checkWorkspace` (every
//! unopened file, with `$/progress`).

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use serde_json::{json, Value as Json};
use tower_lsp_server::jsonrpc::{Error, ErrorCode, Result};
use tower_lsp_server::ls_types::*;
use tower_lsp_server::Client;

use super::{convert, host, open_buffers, snapshot, AnalysisHost, Output, Server, Snapshot, State};
use super::{CHECK_WORKSPACE, ENVIRONMENT, RUN_GRAPH, SHOW_GRAPH};
use crate::semantic::EnvironmentHandle;

impl Server {
    /// The class a command is about: `{class}` or the top-level class at `{position}`.
    fn class_arg(&self, args: &Json, out: &Output, tree: &tree_sitter::Tree) -> Result<String> {
        match (
            args.get("class").and_then(Json::as_str),
            args.get("position"),
        ) {
            (Some(c), _) => Ok(c.to_string()),
            (None, Some(p)) => {
                let pos: Position = serde_json::from_value(p.clone())
                    .map_err(|e| Error::invalid_params(e.to_string()))?;
                let enc = *self.state.encoding.read().unwrap();
                let offset = convert::offset_of(&ropey::Rope::from_str(&out.text), pos, enc);
                class_at(tree, &out.text, offset)
                    .ok_or_else(|| Error::invalid_params("no class at that position"))
            }
            (None, None) => Err(Error::invalid_params(
                "expected {uri, position} or {uri, class}",
            )),
        }
    }

    pub(super) async fn on_execute_command(
        &self,
        params: ExecuteCommandParams,
    ) -> Result<Option<LSPAny>> {
        let args = params.arguments.first().cloned().unwrap_or(Json::Null);
        match params.command.as_str() {
            ENVIRONMENT => {
                let workspace = self.state.workspace.read().unwrap().clone();
                let config = self.state.config.read().unwrap().clone();
                let root = match args
                    .get("uri")
                    .and_then(Json::as_str)
                    .and_then(|s| s.parse::<Uri>().ok())
                    .and_then(|u| u.to_file_path().map(|p| p.into_owned()))
                {
                    Some(path) => Some(host::root_for(&path, &workspace, &config)),
                    None => workspace.first().cloned(),
                };
                let Some(root) = root else {
                    return Ok(Some(json!({ "error": "no workspace folder" })));
                };
                let handle = config.environment(&root);
                let (mut answer, _, _) =
                    tokio::task::spawn_blocking(move || environment_report(&handle))
                        .await
                        .map_err(|_| Error::internal_error())?;
                answer["root"] = json!(root);
                Ok(Some(answer))
            }
            SHOW_GRAPH => {
                let uri = arg_uri(&args)?;
                let (out, tree) = self.current_analysis(&uri).await?;
                let class = self.class_arg(&args, &out, &tree)?;
                let g = out
                    .graphs
                    .iter()
                    .find(|g| g.class == class)
                    .ok_or_else(|| {
                        Error::invalid_params(format!(
                            "no traced nn.Module class `{class}` in the document"
                        ))
                    })?;
                if args.get("optimized").and_then(Json::as_bool) == Some(true) {
                    let (dot, removed) = g.optimized_dot(&out.text).map_err(|e| Error {
                        code: ErrorCode::InternalError,
                        message: format!("the pass pipeline failed: {e}").into(),
                        data: None,
                    })?;
                    return Ok(Some(json!({
                        "name": g.name,
                        "dot": dot,
                        "optimized": true,
                        "nodes_removed": removed,
                    })));
                }
                Ok(Some(
                    json!({"name": g.name, "dot": g.dot(&out.text), "optimized": false}),
                ))
            }
            CHECK_WORKSPACE => {
                // `{uri}` of a folder, or every workspace folder. The check runs beside the
                // message loop (it asks the client to create a progress token, and awaiting a
                // client request inside a handler could stall it); the answer says how many
                // files it covers.
                let roots: Vec<PathBuf> = match args.get("uri").and_then(Json::as_str) {
                    Some(u) => {
                        let uri: Uri = u
                            .parse()
                            .map_err(|_| Error::invalid_params("`uri` is not a URI"))?;
                        vec![uri
                            .to_file_path()
                            .ok_or_else(|| Error::invalid_params("`uri` is not a file URI"))?
                            .into_owned()]
                    }
                    None => self.state.workspace.read().unwrap().clone(),
                };
                if roots.is_empty() {
                    return Err(Error::invalid_params("no workspace folder to check"));
                }
                let settings = self.state.config.read().unwrap().clone();
                let files = crate::ide::collect_for(&settings, &roots, false)
                    .map_err(Error::invalid_params)?;
                let n = files.len();
                let state = self.state.clone();
                let client = self.client.clone();
                tokio::spawn(async move { check_workspace(state, client, files).await });
                Ok(Some(json!({"files": n})))
            }
            RUN_GRAPH => {
                let uri = arg_uri(&args)?;
                let (out, tree) = self.current_analysis(&uri).await?;
                let class = self.class_arg(&args, &out, &tree)?;
                let mut inputs = Vec::new();
                if let Some(list) = args.get("inputs") {
                    let list = list.as_array().ok_or_else(|| {
                        Error::invalid_params(
                            "`inputs` must be a list of \"x=1,3,224,224\" strings",
                        )
                    })?;
                    for i in list {
                        let s = i.as_str().ok_or_else(|| {
                            Error::invalid_params("`inputs` must be a list of strings")
                        })?;
                        inputs.push(
                            s.parse::<crate::traced::InputSpec>()
                                .map_err(Error::invalid_params)?,
                        );
                    }
                }
                let seed = match args.get("seed") {
                    None | Some(Json::Null) => 0,
                    Some(v) => v.as_u64().ok_or_else(|| {
                        Error::invalid_params("`seed` must be a non-negative integer")
                    })?,
                };
                let weights = args
                    .get("weights")
                    .and_then(Json::as_str)
                    .map(std::path::PathBuf::from);
                let snap = snapshot(&self.state, &uri)
                    .ok_or_else(|| Error::invalid_params("document not open"))?;
                let job = tokio::task::spawn_blocking(move || {
                    crate::ide::on_large_stack("staticfx-run", move || {
                        host::run_graph(&snap, &class, inputs, weights, seed)
                    })
                    .unwrap_or_else(|_| Err("the executor panicked (this is a bug)".into()))
                });
                let result = job.await.map_err(|e| Error {
                    code: ErrorCode::InternalError,
                    message: e.to_string().into(),
                    data: None,
                })?;
                match result {
                    Ok((summary, outputs)) => Ok(Some(json!({
                        "summary": summary,
                        "outputs": outputs.iter().map(|o| json!({
                            "name": o.name,
                            "shape": o.shape,
                            "dtype": o.dtype,
                            "min": finite(o.min),
                            "mean": finite(o.mean),
                            "max": finite(o.max),
                        })).collect::<Vec<_>>(),
                    }))),
                    Err(message) => Err(Error {
                        code: ErrorCode::ServerError(-32001),
                        message: format!("staticfx.runGraph: {message}").into(),
                        data: None,
                    }),
                }
            }
            other => Err(Error::invalid_params(format!("unknown command `{other}`"))),
        }
    }
}

fn arg_uri(args: &Json) -> Result<Uri> {
    args.get("uri")
        .and_then(Json::as_str)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| Error::invalid_params("expected {uri, position} or {uri, class}"))
}

/// Analyses every file that is not open (open ones have their own diagnostics) and publishes
/// its diagnostics, reporting `$/progress` when the client shows it.
async fn check_workspace(state: Arc<State>, client: Client, files: Vec<PathBuf>) {
    let total = files.len().max(1);
    let progress = if state.work_done_progress.load(Ordering::SeqCst) {
        let n = state.checks_started.fetch_add(1, Ordering::SeqCst);
        let token = NumberOrString::String(format!("staticfx-check-{n}"));
        match client.create_work_done_progress(token.clone()).await {
            Ok(()) => Some(
                client
                    .progress(token, "staticfx: checking the workspace")
                    .with_percentage(0)
                    .begin()
                    .await,
            ),
            Err(_) => None,
        }
    } else {
        None
    };
    let (mut findings, mut failed) = (0usize, 0usize);
    for (i, path) in files.iter().enumerate() {
        let Some(uri) = Uri::from_file_path(path) else {
            continue;
        };
        if !state.docs.contains_key(&uri) {
            match disk_snapshot(&state, path) {
                Some(snap) => {
                    match crate::lsp::workers::run(move |_| AnalysisHost::analyze_once(&snap)).await
                    {
                        Ok(out) => {
                            findings += out.diagnostics.len();
                            let diags = convert::diagnostics(&out, *state.encoding.read().unwrap());
                            // Opened while we worked: the document's own analysis wins.
                            if !state.docs.contains_key(&uri) {
                                client.publish_diagnostics(uri, diags, None).await;
                            }
                        }
                        Err(_) => failed += 1,
                    }
                }
                None => failed += 1,
            }
        }
        if let Some(p) = &progress {
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
            p.report_with_message(
                format!("{}/{} {}", i + 1, files.len(), name.unwrap_or_default()),
                ((i + 1) * 100 / total) as u32,
            )
            .await;
        }
    }
    let summary = format!(
        "{} files checked, {findings} diagnostics{}",
        files.len(),
        if failed > 0 {
            format!(", {failed} could not be analysed")
        } else {
            String::new()
        }
    );
    match progress {
        Some(p) => p.finish_with_message(summary).await,
        None => client.log_message(MessageType::INFO, summary).await,
    }
}

/// A snapshot of a file as it is on disk (for files the editor has not opened).
fn disk_snapshot(state: &State, path: &std::path::Path) -> Option<Snapshot> {
    let text: std::sync::Arc<str> = crate::semantic::project::read_lossy(path).ok()?.into();
    let workspace = state.workspace.read().unwrap().clone();
    let config = state.config.read().unwrap().clone();
    let root = host::root_for(path, &workspace, &config);
    let environment = Some(config.environment(&root));
    Some(Snapshot {
        path: path.to_path_buf(),
        root,
        tree: None,
        text,
        version: 0,
        only_opened: true,
        filter: config.filter(),
        class_inputs: config.example_inputs,
        overlays: open_buffers(state, None),
        test_hooks: config.test_hooks,
        target_version: config.target_version,
        config_gen: state.config_gen.load(Ordering::SeqCst),
        parse_cache: state.parse_cache.clone(),
        environment,
    })
}

/// What `staticfx.environment` answers and the log says: the interpreter and search path
/// found, or why there is none. Discovering may start an interpreter: call it off the loop.
pub(super) fn environment_report(handle: &EnvironmentHandle) -> (Json, String, MessageType) {
    match handle.get() {
        Some(env) => (
            json!({
                "interpreter": env.interpreter,
                "origin": env.origin.describe(),
                "version": env.version,
                "prefix": env.prefix,
                "libraryPaths": env.library_paths,
                "editable": env.editable.iter().map(|(m, p)| json!({"module": m, "path": p})).collect::<Vec<_>>(),
                "torch": env.package_version("torch"),
            }),
            format!("staticfx: {}", env.summary()),
            MessageType::INFO,
        ),
        None => {
            let why = match handle.outcome() {
                Some(Err(e)) => e.to_string(),
                _ => "no Python environment".to_string(),
            };
            (
                json!({ "error": why }),
                format!("staticfx: {why}"),
                MessageType::WARNING,
            )
        }
    }
}

/// JSON has no NaN or infinity: those become their names as strings.
fn finite(x: f64) -> Json {
    if x.is_finite() {
        json!(x)
    } else {
        json!(x.to_string())
    }
}

/// The top-level class whose definition contains `offset`.
fn class_at(tree: &tree_sitter::Tree, src: &str, offset: usize) -> Option<String> {
    let root = tree.root_node();
    let mut c = root.walk();
    let found = root
        .named_children(&mut c)
        .find(|n| n.start_byte() <= offset && offset <= n.end_byte())?;
    let class = match found.kind() {
        "decorated_definition" => found.child_by_field_name("definition")?,
        _ => found,
    };
    (class.kind() == "class_definition")
        .then(|| {
            class
                .child_by_field_name("name")
                .map(|n| crate::syntax::text(n, src).to_string())
        })
        .flatten()
}
