//! The protocol handlers. Document edits are applied synchronously at the top of each handler
//! (tower-lsp-server runs handlers concurrently, so an await before the edit could reorder
//! changes); analysis runs on its own large-stack thread and only the newest version's
//! diagnostics reach the client.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use dashmap::DashMap;
use serde_json::{json, Value as Json};
use tower_lsp_server::jsonrpc::{Error, ErrorCode, Result};
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, LanguageServer};

use super::analysis_bridge::{self, Finding, Output, Snapshot};
use super::config::Config;
use super::document::{Document, Encoding};
use crate::diagnostics::Severity;

pub const SHOW_GRAPH: &str = "staticfx.showGraph";
/// The source action that applies every safe fix of a document.
pub const FIX_ALL: &str = "source.fixAll.staticfx";
pub const RUN_GRAPH: &str = "staticfx.runGraph";
pub const CHECK_WORKSPACE: &str = "staticfx.checkWorkspace";

pub struct Server {
    client: Client,
    state: Arc<State>,
}

#[derive(Default)]
struct State {
    docs: DashMap<Uri, Document>,
    encoding: RwLock<Encoding>,
    workspace: RwLock<Vec<PathBuf>>,
    /// Settings from pyproject.toml and initializationOptions, before workspace/configuration.
    base_config: RwLock<Config>,
    config: RwLock<Config>,
    /// One analysis per document at a time; waiters for older versions give up on waking.
    locks: DashMap<Uri, Arc<tokio::sync::Mutex<()>>>,
    /// The latest finished analysis per document (hover and showGraph reuse it when current).
    results: DashMap<Uri, Arc<Output>>,
    /// Highest (version, configuration generation) whose diagnostics were published, so an old
    /// result never lands last and one result is not published twice.
    published: DashMap<Uri, (i32, u64)>,
    /// Bumped on every settings change: an analysis started under older settings may finish
    /// after the change and must not be reused as current.
    config_gen: AtomicU64,
    /// Parsed workspace files the open documents import, kept across keystrokes (entries
    /// are dropped when the file on disk changes).
    parse_cache: crate::semantic::project::ParseCache,
    /// Whether the client shows `$/progress` (window.workDoneProgress).
    work_done_progress: std::sync::atomic::AtomicBool,
    /// Numbers the progress tokens of workspace checks.
    checks_started: AtomicU64,
}

impl Server {
    pub fn new(client: Client) -> Self {
        Server {
            client,
            state: Arc::new(State::default()),
        }
    }

    /// Test-only: the server's view of a document, to compare with the client's after edits.
    pub async fn document_text(&self, params: Json) -> Result<Json> {
        let uri: Uri = params
            .get("uri")
            .and_then(Json::as_str)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| Error::invalid_params("expected {uri}"))?;
        let doc = self
            .state
            .docs
            .get(&uri)
            .ok_or_else(|| Error::invalid_params("document not open"))?;
        let fresh = crate::syntax::parse(&doc.text, None);
        let tree_ok = fresh.root_node().to_sexp() == doc.tree.root_node().to_sexp();
        Ok(
            json!({"version": doc.version, "text": doc.rope.to_string(), "treeMatchesFreshParse": tree_ok}),
        )
    }

    fn schedule(&self, uri: Uri, version: i32) {
        let state = self.state.clone();
        let client = self.client.clone();
        tokio::spawn(async move {
            let debounce = state.config.read().unwrap().debounce_ms;
            if debounce > 0 {
                tokio::time::sleep(Duration::from_millis(debounce)).await;
            }
            if current_version(&state, &uri) != Some(version) {
                return;
            }
            let Ok(out) = analyze(&state, &client, &uri, version).await else {
                return;
            };
            publish(&state, &client, &uri, &out).await;
        });
    }
}

fn current_version(state: &State, uri: &Uri) -> Option<i32> {
    state.docs.get(uri).map(|d| d.version)
}

/// Analyses `version` of a document unless it is already superseded or done.
async fn analyze(
    state: &Arc<State>,
    client: &Client,
    uri: &Uri,
    version: i32,
) -> std::result::Result<Arc<Output>, String> {
    let lock = state.locks.entry(uri.clone()).or_default().clone();
    let _guard = lock.lock().await;
    let gen = state.config_gen.load(Ordering::SeqCst);
    if let Some(done) = state
        .results
        .get(uri)
        .filter(|o| o.version == version && o.config_gen == gen)
        .map(|o| o.clone())
    {
        return Ok(done);
    }
    if current_version(state, uri) != Some(version) {
        return Err("superseded".into());
    }
    let snap = snapshot(state, uri).ok_or("not analysable")?;
    let job = super::workers::run_keyed(uri, move || analysis_bridge::analyze(&snap));
    let out = match job.await {
        Ok(out) => Arc::new(out),
        Err(panic) => {
            let msg = format!(
                "staticfx: analysis of {} (version {version}) panicked: {panic}",
                uri.as_str()
            );
            eprintln!("{msg}");
            client.log_message(MessageType::ERROR, msg.clone()).await;
            return Err(msg);
        }
    };
    if let Some(f) = &out.failure {
        client
            .log_message(
                MessageType::WARNING,
                format!("staticfx: {}: {f}", uri.as_str()),
            )
            .await;
    }
    state.results.insert(uri.clone(), out.clone());
    Ok(out)
}

fn snapshot(state: &State, uri: &Uri) -> Option<Snapshot> {
    let path = uri.to_file_path()?.into_owned();
    let workspace = state.workspace.read().unwrap().clone();
    let root = analysis_bridge::root_for(&path, &workspace);
    let config_gen = state.config_gen.load(Ordering::SeqCst);
    let config = state.config.read().unwrap().clone();
    let overlays = open_buffers(state, Some(uri));
    let doc = state.docs.get(uri)?;
    Some(Snapshot {
        path,
        root,
        text: doc.text.clone(),
        tree: doc.tree.clone(),
        version: doc.version,
        encoding: *state.encoding.read().unwrap(),
        class_inputs: config.example_inputs,
        overlays,
        test_hooks: config.test_hooks,
        config_gen,
        parse_cache: state.parse_cache.clone(),
    })
}

async fn publish(state: &State, client: &Client, uri: &Uri, out: &Output) {
    let lock = state.locks.entry(uri.clone()).or_default().clone();
    let _guard = lock.lock().await;
    if current_version(state, uri) != Some(out.version)
        || out.config_gen != state.config_gen.load(Ordering::SeqCst)
    {
        return;
    }
    if state
        .published
        .get(uri)
        .map(|v| *v >= (out.version, out.config_gen))
        .unwrap_or(false)
    {
        return;
    }
    state
        .published
        .insert(uri.clone(), (out.version, out.config_gen));
    let diags = out.findings.iter().map(to_lsp).collect();
    client
        .publish_diagnostics(uri.clone(), diags, Some(out.version))
        .await;
}

pub(super) fn to_lsp(f: &Finding) -> Diagnostic {
    let range = Range {
        start: f.range.start,
        end: f.range.end,
    };
    let severity = match f.severity {
        Severity::Error => DiagnosticSeverity::ERROR,
        Severity::Warning => DiagnosticSeverity::WARNING,
        Severity::Info => DiagnosticSeverity::INFORMATION,
        Severity::Hint => DiagnosticSeverity::HINT,
    };
    let related: Vec<DiagnosticRelatedInformation> = f
        .related
        .iter()
        .filter_map(|r| {
            let uri = Uri::from_file_path(&r.path)?;
            Some(DiagnosticRelatedInformation {
                location: Location {
                    uri,
                    range: Range {
                        start: r.range.start,
                        end: r.range.end,
                    },
                },
                message: r.message.clone(),
            })
        })
        .collect();
    Diagnostic {
        range,
        severity: Some(severity),
        code: Some(NumberOrString::String(f.code.to_string())),
        code_description: f
            .href
            .as_ref()
            .and_then(|h| h.parse().ok())
            .map(|href| CodeDescription { href }),
        source: Some("staticfx".into()),
        message: f.message.clone(),
        related_information: (!related.is_empty()).then_some(related),
        tags: None,
        data: None,
    }
}

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
                let offset =
                    super::document::offset_at(&ropey::Rope::from_str(&out.text), pos, enc);
                class_at(tree, &out.text, offset)
                    .ok_or_else(|| Error::invalid_params("no class at that position"))
            }
            (None, None) => Err(Error::invalid_params(
                "expected {uri, position} or {uri, class}",
            )),
        }
    }

    /// The analysis of the document's current text, reusing the published one when current.
    async fn current_analysis(&self, uri: &Uri) -> Result<(Arc<Output>, tree_sitter::Tree)> {
        loop {
            let (version, tree) = {
                let doc = self
                    .state
                    .docs
                    .get(uri)
                    .ok_or_else(|| Error::invalid_params("document not open"))?;
                (doc.version, doc.tree.clone())
            };
            match analyze(&self.state, &self.client, uri, version).await {
                Ok(out) => return Ok((out, tree)),
                // Edited while we waited: answer for the newer text instead.
                Err(_) if current_version(&self.state, uri) != Some(version) => continue,
                Err(e) => {
                    return Err(Error {
                        code: ErrorCode::InternalError,
                        message: e.into(),
                        data: None,
                    })
                }
            }
        }
    }

    fn reload_config(&self) {
        let state = self.state.clone();
        let client = self.client.clone();
        // Asking the client is a request of our own; awaiting it inside a handler could stall
        // the message loop, so it runs beside it.
        tokio::spawn(async move {
            let items = vec![ConfigurationItem {
                scope_uri: None,
                section: Some("staticfx".into()),
            }];
            // Clients without workspace/configuration keep the initialization settings.
            let values = client.configuration(items).await.unwrap_or_default();
            {
                let mut c = state.base_config.read().unwrap().clone();
                for v in values.iter().filter(|v| !v.is_null()) {
                    for p in c.merge(v) {
                        client
                            .log_message(MessageType::WARNING, format!("staticfx settings: {p}"))
                            .await;
                    }
                }
                *state.config.write().unwrap() = c;
                state.config_gen.fetch_add(1, Ordering::SeqCst);
                let open: Vec<(Uri, i32)> = state
                    .docs
                    .iter()
                    .map(|d| (d.key().clone(), d.version))
                    .collect();
                for (uri, version) in open {
                    if let Ok(out) = analyze(&state, &client, &uri, version).await {
                        publish(&state, &client, &uri, &out).await;
                    }
                }
            }
        });
    }
}

fn arg_uri(args: &Json) -> Result<Uri> {
    args.get("uri")
        .and_then(Json::as_str)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| Error::invalid_params("expected {uri, position} or {uri, class}"))
}

impl LanguageServer for Server {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        let offered = params
            .capabilities
            .general
            .as_ref()
            .and_then(|g| g.position_encodings.clone())
            .unwrap_or_default();
        let encoding = if offered.contains(&PositionEncodingKind::UTF8) {
            Encoding::Utf8
        } else {
            Encoding::Utf16
        };
        *self.state.encoding.write().unwrap() = encoding;
        let progress = params
            .capabilities
            .window
            .as_ref()
            .and_then(|w| w.work_done_progress)
            .unwrap_or(false);
        self.state
            .work_done_progress
            .store(progress, Ordering::SeqCst);
        let mut folders: Vec<PathBuf> = params
            .workspace_folders
            .iter()
            .flatten()
            .filter_map(|f| f.uri.to_file_path().map(|p| p.into_owned()))
            .collect();
        #[allow(deprecated)]
        if folders.is_empty() {
            folders.extend(
                params
                    .root_uri
                    .as_ref()
                    .and_then(|u| u.to_file_path())
                    .map(|p| p.into_owned()),
            );
        }
        let mut config = Config::default();
        let mut problems = Vec::new();
        if let Some(root) = folders.first() {
            problems.extend(config.merge_pyproject(root));
        }
        if let Some(opts) = &params.initialization_options {
            problems.extend(config.merge(opts));
        }
        for p in problems {
            eprintln!("staticfx settings: {p}");
        }
        *self.state.workspace.write().unwrap() = folders;
        *self.state.base_config.write().unwrap() = config.clone();
        *self.state.config.write().unwrap() = config;
        Ok(InitializeResult {
            capabilities: ServerCapabilities {
                position_encoding: Some(if encoding == Encoding::Utf8 {
                    PositionEncodingKind::UTF8
                } else {
                    PositionEncodingKind::UTF16
                }),
                text_document_sync: Some(TextDocumentSyncCapability::Kind(
                    TextDocumentSyncKind::INCREMENTAL,
                )),
                hover_provider: Some(HoverProviderCapability::Simple(true)),
                code_action_provider: Some(CodeActionProviderCapability::Options(
                    CodeActionOptions {
                        code_action_kinds: Some(vec![
                            CodeActionKind::QUICKFIX,
                            CodeActionKind::new(FIX_ALL),
                        ]),
                        resolve_provider: Some(false),
                        work_done_progress_options: Default::default(),
                    },
                )),
                execute_command_provider: Some(ExecuteCommandOptions {
                    commands: vec![SHOW_GRAPH.into(), RUN_GRAPH.into(), CHECK_WORKSPACE.into()],
                    ..Default::default()
                }),
                ..Default::default()
            },
            server_info: Some(ServerInfo {
                name: "staticfx".into(),
                version: Some(env!("CARGO_PKG_VERSION").into()),
            }),
            offset_encoding: None,
        })
    }

    async fn initialized(&self, _: InitializedParams) {
        self.reload_config();
        // The editor's analyses use the default torch target until settings carry one.
        let target = crate::breaks::version::Target::default();
        self.client
            .log_message(MessageType::INFO, format!("staticfx: {}", target.note()))
            .await;
    }

    async fn shutdown(&self) -> Result<()> {
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        let d = params.text_document;
        self.state
            .docs
            .insert(d.uri.clone(), Document::new(&d.text, d.version));
        self.state.results.remove(&d.uri);
        self.state.published.remove(&d.uri);
        self.schedule(d.uri, d.version);
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        let uri = params.text_document.uri;
        let version = params.text_document.version;
        let enc = *self.state.encoding.read().unwrap();
        match self.state.docs.get_mut(&uri) {
            Some(mut doc) => doc.apply_changes(&params.content_changes, version, enc),
            None => return,
        }
        self.schedule(uri, version);
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        let uri = params.text_document.uri;
        self.state.docs.remove(&uri);
        self.state.results.remove(&uri);
        self.state.published.remove(&uri);
        self.state.locks.remove(&uri);
        self.client.publish_diagnostics(uri, vec![], None).await;
    }

    async fn did_change_configuration(&self, params: DidChangeConfigurationParams) {
        let mut c = self.state.base_config.read().unwrap().clone();
        let problems = c.merge(&params.settings);
        *self.state.config.write().unwrap() = c;
        self.state.config_gen.fetch_add(1, Ordering::SeqCst);
        for p in problems {
            self.client
                .log_message(MessageType::WARNING, format!("staticfx settings: {p}"))
                .await;
        }
        self.reload_config();
    }

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        let pos = params.text_document_position_params;
        let uri = pos.text_document.uri;
        let (out, tree) = self.current_analysis(&uri).await?;
        if self.state.config.read().unwrap().test_hooks
            && out.text.contains(analysis_bridge::HOVER_PANIC_MARKER)
        {
            panic!("test hook: a panic in the hover handler");
        }
        let enc = *self.state.encoding.read().unwrap();
        let rope = ropey::Rope::from_str(&out.text);
        let offset = super::document::offset_at(&rope, pos.position, enc);
        let Some((markdown, span)) = super::hover::hover(&out, &tree, offset) else {
            return Ok(None);
        };
        let range = Range {
            start: super::document::position_at(&rope, span.start, enc),
            end: super::document::position_at(&rope, span.end, enc),
        };
        Ok(Some(Hover {
            contents: HoverContents::Markup(MarkupContent {
                kind: MarkupKind::Markdown,
                value: markdown,
            }),
            range: Some(range),
        }))
    }

    async fn code_action(&self, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        let uri = params.text_document.uri;
        let (out, _) = self.current_analysis(&uri).await?;
        let enc = *self.state.encoding.read().unwrap();
        let actions = super::code_actions::actions(
            &uri,
            &out,
            params.range,
            params.context.only.as_deref(),
            enc,
            to_lsp,
        );
        Ok(Some(actions))
    }

    async fn execute_command(&self, params: ExecuteCommandParams) -> Result<Option<LSPAny>> {
        let args = params.arguments.first().cloned().unwrap_or(Json::Null);
        match params.command.as_str() {
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
                let files = crate::cli::check::collect_files(&roots)
                    .map_err(|e| Error::invalid_params(e))?;
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
                            s.parse::<crate::analysis::InputSpec>()
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
                    let worker = std::thread::Builder::new()
                        .name("staticfx-run".into())
                        .stack_size(256 << 20)
                        .spawn(move || {
                            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                                analysis_bridge::run_graph(&snap, &class, inputs, weights, seed)
                            }))
                            .unwrap_or_else(|_| Err("the executor panicked (this is a bug)".into()))
                        });
                    match worker {
                        Ok(h) => h
                            .join()
                            .unwrap_or_else(|_| Err("executor thread died".into())),
                        Err(e) => Err(format!("cannot start executor thread: {e}")),
                    }
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
                    match super::workers::run(move || analysis_bridge::analyze_once(&snap)).await {
                        Ok(out) => {
                            findings += out.findings.len();
                            let diags = out.findings.iter().map(to_lsp).collect();
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

/// The text of every open document but `except`: imports read the editor's buffers.
/// The open documents' texts, by path in path order (an analysis session is kept while they
/// stay the same).
fn open_buffers(state: &State, except: Option<&Uri>) -> Vec<(PathBuf, Arc<str>)> {
    let mut out: Vec<(PathBuf, Arc<str>)> = state
        .docs
        .iter()
        .filter(|e| Some(e.key()) != except)
        .filter_map(|e| Some((e.key().to_file_path()?.into_owned(), e.value().text.clone())))
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// A snapshot of a file as it is on disk (for files the editor has not opened).
fn disk_snapshot(state: &State, path: &std::path::Path) -> Option<Snapshot> {
    let text: std::sync::Arc<str> = crate::semantic::project::read_lossy(path).ok()?.into();
    let workspace = state.workspace.read().unwrap().clone();
    let config = state.config.read().unwrap().clone();
    Some(Snapshot {
        path: path.to_path_buf(),
        root: analysis_bridge::root_for(path, &workspace),
        tree: crate::syntax::parse(&text, None),
        text,
        version: 0,
        encoding: *state.encoding.read().unwrap(),
        class_inputs: config.example_inputs,
        overlays: open_buffers(&state, None),
        test_hooks: config.test_hooks,
        config_gen: state.config_gen.load(Ordering::SeqCst),
        parse_cache: state.parse_cache.clone(),
    })
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
