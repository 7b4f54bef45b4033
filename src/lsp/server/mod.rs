//! The protocol handlers. This file holds the server's state, the document lifecycle
//! (open/change/close: edits are applied synchronously at the top of each handler, since
//! tower-lsp-server runs handlers concurrently and an await before the edit could reorder
//! changes) and analysis scheduling: at once (unless `debounce-ms` asks for a quiet time), on
//! a large-stack worker; a version superseded before its analysis starts is dropped, and only
//! the newest version's diagnostics reach the client. A file whose classes are built from a
//! config gets its default traces' diagnostics first and the flagged retraces' after. A
//! document opened as it is on disk, which `staticfx check` cached, gets the cache's
//! diagnostics before its analysis starts (`publish_cached`); the analysis's replace them. The other requests have a file each: `hover`,
//! `code_action`, `commands` (showGraph, runGraph, checkWorkspace), `inlay` (inlay hints and
//! code lenses), `settings`.

mod code_action;
mod commands;
mod hover;
mod inlay;
mod settings;

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use dashmap::DashMap;
use serde_json::{json, Value as Json};
use tower_lsp_server::jsonrpc::{Error, ErrorCode, Result};
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, LanguageServer};

use super::convert;
use super::document::{Document, Encoding};
use crate::ide::host::{self, AnalysisHost, Output, Snapshot};
use crate::ide::Settings;

pub const SHOW_GRAPH: &str = "staticfx.showGraph";
/// The source action that applies every safe fix of a document.
pub const FIX_ALL: &str = "source.fixAll.staticfx";
pub const RUN_GRAPH: &str = "staticfx.runGraph";
pub const CHECK_WORKSPACE: &str = "staticfx.checkWorkspace";
/// The Python environment the server resolves imports through (`:checkhealth staticfx`).
pub const ENVIRONMENT: &str = "staticfx.environment";
/// The command of a code lens that moves the cursor to a place (`{uri, range}`): the editor's
/// own (the extension and the Neovim plugin register it), never sent to the server.
pub const REVEAL_LOCATION: &str = "staticfx.revealLocation";

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
    base_config: RwLock<Settings>,
    config: RwLock<Settings>,
    /// One analysis per document at a time; waiters for older versions give up on waking.
    locks: DashMap<Uri, Arc<tokio::sync::Mutex<()>>>,
    /// The latest finished analysis per document (hover and showGraph reuse it when current),
    /// for the [`KEPT_RESULTS`] documents analysed last, of those only opened the newest alone
    /// (`keep_result`): the graphs of every open file would hold gigabytes, and a request on
    /// another document analyses it again.
    results: DashMap<Uri, Arc<Output>>,
    /// The shape hints of the whole document from the first stage of a staged analysis,
    /// while its flagged retraces run: they add breaks, never bindings, so the hints are
    /// already final, and an editor asking for them as the diagnostics arrive is answered
    /// without waiting for the retraces (`inlay::on_inlay_hint`).
    first_stage_hints: DashMap<Uri, Arc<FirstStageHints>>,
    /// Woken when `first_stage_hints` gains an entry: a request that arrives between the first
    /// stage's publication and its hints waits for them, not for the retraces.
    first_stage_hints_ready: tokio::sync::Notify,
    /// The documents in `results`, least recently analysed first.
    recent: std::sync::Mutex<std::collections::VecDeque<Uri>>,
    /// The highest (version, configuration generation, stage) whose diagnostics were
    /// published, and what was sent: an old result never lands last, one result is not
    /// published twice, and the complete stage of a staged analysis is not sent again when it
    /// found nothing the first stage had not.
    published: DashMap<Uri, (PublishKey, Vec<Diagnostic>)>,
    /// One publication per document at a time (apart from `locks`: the first stage of an
    /// analysis is published while the analysis goes on).
    publishing: DashMap<Uri, Arc<tokio::sync::Mutex<()>>>,
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
    /// Whether the client takes `workspace/inlayHint/refresh` and `workspace/codeLens/refresh`
    /// (asked after a settings change).
    inlay_refresh: std::sync::atomic::AtomicBool,
    lens_refresh: std::sync::atomic::AtomicBool,
}

/// See [`State::first_stage_hints`].
pub(super) struct FirstStageHints {
    pub version: i32,
    pub config_gen: u64,
    pub text: Arc<str>,
    pub hints: Vec<crate::ide::inlay::InlayHint>,
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
        let mut doc = self
            .state
            .docs
            .get_mut(&uri)
            .ok_or_else(|| Error::invalid_params("document not open"))?;
        let fresh = crate::syntax::parse(&doc.text, None);
        let tree_ok = fresh.root_node().to_sexp() == doc.tree().root_node().to_sexp();
        Ok(
            json!({"version": doc.version, "text": doc.text.to_string(), "treeMatchesFreshParse": tree_ok}),
        )
    }

    /// How many incremental sessions and libraries the analysis threads keep, in all, how
    /// many sessions have an interpreter of their own (after the jobs queued before this
    /// request), and how many analyses the server keeps for requests (for tests and the
    /// memory bench).
    pub async fn kept_analyses(&self, _: Json) -> Result<Json> {
        let (mut sessions, mut libraries, mut own) = (0, 0, 0);
        let counts =
            super::workers::on_every_thread(|host| (host.kept(), host.kept_own_interpreters()));
        for ((s, l), o) in counts.await {
            sessions += s;
            libraries += l;
            own += o;
        }
        let results = self.state.results.len();
        Ok(
            json!({"sessions": sessions, "libraries": libraries, "ownInterpreters": own, "results": results}),
        )
    }

    fn schedule(&self, uri: Uri, version: i32) {
        self.schedule_after(uri, version, None);
    }

    /// Like `schedule`, once `first` (a cached publication) is done.
    fn schedule_after(&self, uri: Uri, version: i32, first: Option<tokio::task::JoinHandle<()>>) {
        let state = self.state.clone();
        let client = self.client.clone();
        tokio::spawn(async move {
            if let Some(first) = first {
                let _ = first.await;
            }
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

impl Server {
    /// Publishes what `check` cached for a document just opened, when the cache holds the
    /// diagnostics the analysis scheduled beside will find (`ide::check::cached_shown`): the
    /// first diagnostics of a large file then come before its analysis ends. Looked up beside
    /// the message loop; the analysis starts once the lookup (reading one entry and hashing
    /// the files it depends on) is done, so a hit is published before any analysis of the
    /// version (one published first would win).
    fn publish_cached(&self, uri: Uri, version: i32) -> Option<tokio::task::JoinHandle<()>> {
        let path = uri.to_file_path()?.into_owned();
        let text = self.state.docs.get(&uri)?.text.clone();
        let workspace = self.state.workspace.read().unwrap().clone();
        let config_gen = self.state.config_gen.load(Ordering::SeqCst);
        let config = self.state.config.read().unwrap().clone();
        let root = host::root_for(&path, &workspace, &config);
        let overlays = open_buffers(&self.state, Some(&uri));
        let state = self.state.clone();
        let client = self.client.clone();
        Some(tokio::spawn(async move {
            let doc_text = text.clone();
            let found = tokio::task::spawn_blocking(move || {
                crate::ide::check::cached_shown(&path, &doc_text, &config, &root, &overlays)
            })
            .await;
            let Ok(Some(shown)) = found else {
                return;
            };
            let lock = state.publishing.entry(uri.clone()).or_default().clone();
            let _guard = lock.lock().await;
            if current_version(&state, &uri) != Some(version)
                || config_gen != state.config_gen.load(Ordering::SeqCst)
                || state.published.contains_key(&uri)
            {
                return;
            }
            let enc = *state.encoding.read().unwrap();
            let diags = convert::shown_diagnostics(&text, &shown, enc);
            let key: PublishKey = (version, config_gen, Stage::Cached);
            state.published.insert(uri.clone(), (key, diags.clone()));
            client.publish_diagnostics(uri, diags, Some(version)).await;
        }))
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
    if uri.to_file_path().is_none() {
        return Err("not analysable: not a file".into());
    }
    // The superseded result is never served again (requests ask for the current version),
    // and while it holds the kept graphs, the session must copy every graph an edit moves
    // instead of moving its spans in place: all of them for a keystroke near the top of a
    // large transformers file, four times the rest of the keystroke's work.
    state.results.remove_if(uri, |_, old| {
        old.version != version || old.config_gen != gen
    });
    // The job may queue behind other documents' analyses on its thread: it checks again
    // when it starts, so an edit made meanwhile costs nothing here. It takes its snapshot
    // then too: a snapshot holds every other open buffer's path, and with a package's files
    // opened at once, hundreds of jobs wait in the queue.
    let current = state.clone();
    let key = uri.clone();
    let job_uri = uri.clone();
    // The first stage of a staged analysis (the default traces' findings, before the flagged
    // retraces) is published while the analysis goes on, and the retraces wait until it is
    // handed to the client: on a machine with few cores they would slow the publication.
    let (first_tx, mut first_rx) =
        tokio::sync::mpsc::unbounded_channel::<(Output, std::sync::mpsc::SyncSender<()>)>();
    {
        let (state, client, uri) = (state.clone(), client.clone(), uri.clone());
        tokio::spawn(async move {
            if let Some((first, published)) = first_rx.recv().await {
                publish(&state, &client, &uri, &first).await;
                let _ = published.send(());
            }
        });
    }
    let job = super::workers::run_keyed(uri, move |host| {
        let docs = current.clone();
        let still_current = move || current_version(&current, &key) == Some(version);
        let mut snap = snapshot(&docs, &job_uri).filter(|s| s.version == version)?;
        Some({
            if snap.tree.is_none() {
                // Parsed here, off the editor's path, and handed to the document as well.
                let tree = crate::syntax::parse(&snap.text, None);
                if let Some(mut doc) = docs.docs.get_mut(&job_uri) {
                    doc.adopt_tree(&snap.text, &tree);
                }
                snap.tree = Some(tree);
            }
            host.analyze_staged(
                &snap,
                |first| {
                    let (published_tx, published) = std::sync::mpsc::sync_channel(1);
                    if first_tx
                        .send((first.diagnostics_only(), published_tx))
                        .is_ok()
                    {
                        let _ = published.recv_timeout(Duration::from_millis(200));
                    }
                    // After the publication, so it costs the keystroke nothing.
                    keep_first_stage_hints(&docs, &job_uri, first);
                    quiet_after_first_stage(&still_current)
                },
                still_current.clone(),
            )
        })
    });
    let out = match job.await {
        Ok(Some(out)) => Arc::new(out),
        Ok(None) => return Err("superseded".into()),
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
    if !out.complete {
        // Superseded between the stages: the newer version's analysis finishes it.
        return Err("superseded".into());
    }
    keep_result(state, uri, out.clone());
    Ok(out)
}

/// How long the document must stay unchanged after the first stage of a staged analysis is
/// handed to the client before the flagged retraces start. Writing the publication and the
/// editor reading it need the CPU the retraces would take, and a keystroke typed meanwhile
/// would have to stop them first.
const SECOND_STAGE_QUIET: Duration = Duration::from_millis(20);

/// Whether the document stayed at the analysed version for [`SECOND_STAGE_QUIET`].
fn quiet_after_first_stage(still_current: &dyn Fn() -> bool) -> bool {
    let until = std::time::Instant::now() + SECOND_STAGE_QUIET;
    while std::time::Instant::now() < until {
        if !still_current() {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    still_current()
}

/// Orders publications of one document: a later version, settings generation or stage is
/// newer.
type PublishKey = (i32, u64, Stage);

/// What a publication of one version of a document holds, in the order they come.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Stage {
    /// What `check` cached for the text as opened (`publish_cached`), before any analysis.
    Cached,
    /// The first stage of a staged analysis: the flagged retraces are to come.
    First,
    Complete,
}

/// Analyses kept for requests: the documents analysed last (being edited or looked at), as
/// many as the analysis threads keep sessions for by default (a request on another document
/// analyses it again, from its session while that lasts). Each holds its document's graphs,
/// tens of megabytes for a large transformers file. The others' trees are dropped too, until
/// they are edited or analysed again.
const KEPT_RESULTS: usize = 4;

/// Keeps `out` for requests. Of the documents only opened, not edited, the newest alone keeps
/// its result, as the analysis threads keep its session alone: with a package's files opened
/// at once, the last four analysed were files nobody looked at, each holding its graphs.
/// Keeps the whole document's shape hints of a first stage for `State::first_stage_hints`.
/// Computed with hints on: the request applies the setting.
fn keep_first_stage_hints(state: &State, uri: &Uri, first: &Output) {
    let whole = crate::syntax::Span::new(0, first.text.len());
    let hints = crate::ide::inlay::inlay_hints(first, whole, &Default::default());
    state.first_stage_hints.insert(
        uri.clone(),
        Arc::new(FirstStageHints {
            version: first.version,
            config_gen: first.config_gen,
            text: first.text.clone(),
            hints,
        }),
    );
    state.first_stage_hints_ready.notify_waiters();
}

fn keep_result(state: &State, uri: &Uri, out: Arc<Output>) {
    // The complete result answers for its version from now on.
    state.first_stage_hints.remove(uri);
    state.results.insert(uri.clone(), out);
    let only_opened = |u: &Uri| state.docs.get(u).is_some_and(|d| !d.edited);
    let mut recent = state.recent.lock().unwrap();
    recent.retain(|u| u != uri);
    let mut dropped: Vec<Uri> = vec![];
    if only_opened(uri) {
        recent.retain(|u| {
            let keep = !only_opened(u);
            if !keep {
                dropped.push(u.clone());
            }
            keep
        });
    }
    recent.push_back(uri.clone());
    while recent.len() > KEPT_RESULTS {
        dropped.extend(recent.pop_front());
    }
    drop(recent);
    for old in dropped {
        state.results.remove(&old);
        if let Some(mut doc) = state.docs.get_mut(&old) {
            doc.forget_derived();
        }
    }
}

fn snapshot(state: &State, uri: &Uri) -> Option<Snapshot> {
    let path = uri.to_file_path()?.into_owned();
    let workspace = state.workspace.read().unwrap().clone();
    let config_gen = state.config_gen.load(Ordering::SeqCst);
    let config = state.config.read().unwrap().clone();
    let root = host::root_for(&path, &workspace, &config);
    let overlays = open_buffers(state, Some(uri));
    let environment = Some(config.environment(&root));
    let doc = state.docs.get(uri)?;
    let tree = doc.parsed_tree();
    Some(Snapshot {
        path,
        root,
        text: doc.text.clone(),
        tree,
        version: doc.version,
        only_opened: !doc.edited,
        filter: config.filter(),
        class_inputs: config.example_inputs,
        overlays,
        test_hooks: config.test_hooks,
        target_version: config.target_version,
        config_gen,
        parse_cache: state.parse_cache.clone(),
        environment,
    })
}

async fn publish(state: &State, client: &Client, uri: &Uri, out: &Output) {
    let lock = state.publishing.entry(uri.clone()).or_default().clone();
    let _guard = lock.lock().await;
    if current_version(state, uri) != Some(out.version)
        || out.config_gen != state.config_gen.load(Ordering::SeqCst)
    {
        return;
    }
    let stage = if out.complete {
        Stage::Complete
    } else {
        Stage::First
    };
    let key: PublishKey = (out.version, out.config_gen, stage);
    let diags = convert::diagnostics(out, *state.encoding.read().unwrap());
    let repeat = match state.published.get(uri) {
        Some(last) if last.0 >= key => return,
        Some(last) if last.0 .0 == key.0 && last.0 .1 == key.1 => match last.0 .2 {
            // The cache's diagnostics are the complete analysis's: the first stage's would
            // take the flagged retraces' findings away until the analysis completes. The
            // complete one replaces them, sent even when the same.
            Stage::Cached if stage == Stage::First => return,
            Stage::Cached => false,
            // the same version's first stage said it all already
            _ => last.1 == diags,
        },
        _ => false,
    };
    state.published.insert(uri.clone(), (key, diags.clone()));
    if !repeat {
        client
            .publish_diagnostics(uri.clone(), diags, Some(out.version))
            .await;
    }
}

impl Server {
    /// The analysis of the document's current text, reusing the published one when current.
    async fn current_analysis(&self, uri: &Uri) -> Result<(Arc<Output>, tree_sitter::Tree)> {
        loop {
            let (version, tree) = {
                let mut doc = self
                    .state
                    .docs
                    .get_mut(uri)
                    .ok_or_else(|| Error::invalid_params("document not open"))?;
                (doc.version, doc.tree())
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
        let workspace_caps = params.capabilities.workspace.as_ref();
        let inlay_refresh = workspace_caps
            .and_then(|w| w.inlay_hint.as_ref())
            .and_then(|h| h.refresh_support)
            .unwrap_or(false);
        let lens_refresh = workspace_caps
            .and_then(|w| w.code_lens.as_ref())
            .and_then(|h| h.refresh_support)
            .unwrap_or(false);
        self.state
            .inlay_refresh
            .store(inlay_refresh, Ordering::SeqCst);
        self.state
            .lens_refresh
            .store(lens_refresh, Ordering::SeqCst);
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
        let mut config = Settings::default();
        let mut problems = Vec::new();
        if let Some(root) = folders.first() {
            problems.extend(config.merge_pyproject(root));
        }
        if let Some(opts) = &params.initialization_options {
            problems.extend(config.merge(opts, folders.first().map(|f| f.as_path())));
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
                inlay_hint_provider: Some(OneOf::Right(InlayHintServerCapabilities::Options(
                    InlayHintOptions {
                        resolve_provider: Some(true),
                        work_done_progress_options: Default::default(),
                    },
                ))),
                code_lens_provider: Some(CodeLensOptions {
                    resolve_provider: Some(false),
                }),
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
                    commands: vec![
                        SHOW_GRAPH.into(),
                        RUN_GRAPH.into(),
                        CHECK_WORKSPACE.into(),
                        ENVIRONMENT.into(),
                    ],
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

    async fn did_change_configuration(&self, params: DidChangeConfigurationParams) {
        self.on_did_change_configuration(params).await
    }

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        self.on_hover(params).await
    }

    async fn inlay_hint(&self, params: InlayHintParams) -> Result<Option<Vec<InlayHint>>> {
        self.on_inlay_hint(params).await
    }

    async fn inlay_hint_resolve(&self, params: InlayHint) -> Result<InlayHint> {
        self.on_inlay_hint_resolve(params).await
    }

    async fn code_lens(&self, params: CodeLensParams) -> Result<Option<Vec<CodeLens>>> {
        self.on_code_lens(params).await
    }

    async fn code_action(&self, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        self.on_code_action(params).await
    }

    async fn execute_command(&self, params: ExecuteCommandParams) -> Result<Option<LSPAny>> {
        self.on_execute_command(params).await
    }

    async fn initialized(&self, _: InitializedParams) {
        self.reload_config(false);
        self.log_environment();
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
        let cached = self.publish_cached(d.uri.clone(), d.version);
        self.schedule_after(d.uri, d.version, cached);
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
        self.state.first_stage_hints.remove(&uri);
        self.state.published.remove(&uri);
        self.state.locks.remove(&uri);
        self.state.publishing.remove(&uri);
        if let Some(path) = uri.to_file_path().map(|p| p.into_owned()) {
            // Its session, on the thread that analysed it, once that thread is free.
            let key = uri.clone();
            tokio::spawn(async move {
                let _ = super::workers::run_keyed(&key, move |host| host.forget(&path)).await;
            });
        }
        self.client.publish_diagnostics(uri, vec![], None).await;
    }
}

/// The text of every open document but `except`, by path in path order: imports read the
/// editor's buffers (and an analysis session is kept while they stay the same).
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
